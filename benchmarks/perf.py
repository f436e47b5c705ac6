"""Build and query speed, side by side with the floor (tree-sitter parsing alone) and the baselines (ctags, rg, grep).

    python benchmarks/perf.py CHECKOUT [--out benchmarks/results/perf.json] [--rounds 5] [--skip-baselines]

Everything runs in one go on the same files and machine, so the ratios hold on a noisy machine. The checkout is
changed for the one-file rebuild (a comment line appended to one .cu and one .py file) and restored after.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPS = ["relu", "add", "mm", "nn.LSTM", "F.layer_norm", "F.softmax", "F.cross_entropy", "F.conv2d", "nn.Linear",
       "F.gelu"]


def run(cmd: list[str], env=None) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB, the process and the workers it waited for) and stderr of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err[-2000:]}")
    return seconds, usage.ru_maxrss, err


def floor(root: Path, processes: int = 1, half: int | None = None) -> tuple[float, int, int]:
    """tree-sitter parsing every file the build indexes, one process, nothing else.

    With half=0 or 1, only every other file (from the first or the second): the two halves, timed one before
    and one after a build, add up to the floor as the machine was around that build.

    With processes=2 the files are dealt out to two forked processes (what two workers could win back at best:
    on a shared VM two processes rarely run twice as fast as one)."""
    import tree_sitter as ts
    import tree_sitter_cpp
    import tree_sitter_cuda
    import tree_sitter_python
    from opindex.indexer.checkout import resolve
    from opindex.indexer.discover import discover
    from opindex.extract.objc import prepare
    from opindex.pytorch.devices import in_dialect
    ck = resolve(str(root))
    files = [s for s in discover(ck.root, ck.scope, ck.excludes) if s.language in ("python", "cpp", "cuda")]
    if half is not None:
        files = files[half::2]
    parsers = {"python": ts.Parser(ts.Language(tree_sitter_python.language())),
               "cpp": ts.Parser(ts.Language(tree_sitter_cpp.language())),
               "cuda": ts.Parser(ts.Language(tree_sitter_cuda.language()))}
    # read first: time parsing only. Objective-C++ (.mm, mps/ headers) is parsed as the build parses it: rewritten
    # to C++ first (opindex/extract/objc.py; the grammar's error recovery on the raw text would inflate the floor)
    datas = [(s.language, prepare(data) if in_dialect(s.path) else data)
             for s in files for data in [(ck.root / s.path).read_bytes()]]
    start = time.perf_counter()
    if processes == 1:
        for language, data in datas:
            parsers[language].parse(data)
    else:
        children = []
        for k in range(processes):
            pid = os.fork()
            if pid == 0:
                for language, data in datas[k::processes]:
                    parsers[language].parse(data)
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)
    return time.perf_counter() - start, len(files), sum(len(d) for _, d in datas)


def cpu_times() -> tuple[int, int] | None:
    """(steal, total) jiffies of all CPUs from /proc/stat (Linux), or None: steal is the time the hypervisor gave
    this VM's CPUs to others, which slows everything measured by wall time in between."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def touch(path: Path, suffix: bytes) -> bytes:
    original = path.read_bytes()
    path.write_bytes(original + suffix)
    return original


def pick(root: Path, ext: str, under: str) -> Path:
    for p in sorted((root / under).rglob(f"*{ext}")):
        if p.is_file() and p.stat().st_size > 1000:
            return p
    raise SystemExit(f"no {ext} file under {under}")


def trace_inprocess(db: Path, ops: list[str], repeat: int) -> dict:
    from opindex.api import Index
    times, ends = [], {}
    with Index(db) as ix:
        for name in ops:
            for i in range(repeat):
                start = time.perf_counter()
                t = ix.trace(name)
                times.append(time.perf_counter() - start)
            ends[name] = [f"{h.layer}:{h.name}" for h in t.ends()][:4] or [t.message or "no device code reached"]
    times.sort()
    return {"p50_ms": 1000 * statistics.median(times), "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
            "ends": ends}


def grep_sequence(root: Path, op: str, tool: str) -> list[list[str]]:
    """The seed document's greps for one op (Python, YAML, C++, registrations, CUDA, autograd)."""
    name = op.split(".")[-1]
    low = name.lower()
    rec = ["rg", "-n"] if tool == "rg" else ["grep", "-rn"]
    one = ["rg", "-n"] if tool == "rg" else ["grep", "-n"]
    nf = "aten/src/ATen/native/native_functions.yaml"
    return [rec + [f"class {name}", "torch/nn/modules/"], one + [f"def {low}", "torch/nn/functional.py"],
            one + [f"func:.*{low}", nf], rec + [f"{low}\\b", "aten/src/ATen/native/"],
            rec + [f"REGISTER_DISPATCH.*{low}", "aten/src/ATen/native/"],
            rec + [f"__global__.*{low}", "aten/src/ATen/native/cuda/"],
            rec + [f"cudnn.*{low}", "aten/src/ATen/native/cudnn/"],
            one + [f"name:.*{low}", "tools/autograd/derivatives.yaml"]]


def time_greps(root: Path, tool: str) -> float:
    if shutil.which(tool) is None:
        return float("nan")
    start = time.perf_counter()
    for op in OPS:
        for cmd in grep_sequence(root, op, tool):
            subprocess.run(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def ctags(root: Path, scope: tuple[str, ...], out: Path) -> float:
    if shutil.which("ctags") is None:
        return float("nan")
    folders = [s for s in scope if (root / s).exists()]
    start = time.perf_counter()
    subprocess.run(["ctags", "-R", "-f", str(out), "--exclude=third_party", "--exclude=build", *folders], cwd=root,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout")
    ap.add_argument("--out", default="benchmarks/results/perf.json")
    ap.add_argument("--repeat", type=int, default=10, help="in-process traces per op")
    ap.add_argument("--skip-baselines", action="store_true")
    ap.add_argument("--rounds", type=int, default=5, help="alternating floor/build rounds (per-round ratios)")
    args = ap.parse_args()
    root = Path(args.checkout).resolve()
    work = Path(tempfile.mkdtemp(prefix="opindex-perf-"))
    opindex = [sys.executable, "-m", "opindex"]
    res: dict = {"checkout": str(root), "date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count()}

    # The floor and the cold builds alternate, `--rounds` times: on a noisy machine (this one's speed drifts by a
    # third within minutes) each gets the same weather. Each round's build is divided by the same round's floor.
    # The floor is timed in two halves (every other file), one just before and one just after the --jobs 2 build,
    # so a drift during the round moves both sides of that ratio alike; the order of the rest flips every round.
    # The headline ratio is the median of the per-round ratios. Medians and minimums of the times are reported.
    samples: dict[str, list[float]] = {"floor_s": [], "floor_two_processes_s": [], "cold_jobs1_s": [],
                                       "cold_jobs2_s": []}
    ratios: dict[str, list[float]] = {"floor_two_processes_s": [], "cold_jobs1_s": [], "cold_jobs2_s": []}
    steal: list[float | None] = []  # the hypervisor's share of the CPUs during each round
    for i in range(args.rounds):
        round_start = cpu_times()
        times = {"floor_s": 0.0}
        halves = files = size = 0
        for step in (["half", 2, "half", "two", 1] if i % 2 == 0 else [1, "two", "half", 2, "half"]):
            if step == "half":  # the floor in two halves, one on each side of the --jobs 2 build
                seconds, n, b = floor(root, half=halves)
                halves += 1
                times["floor_s"] += seconds
                files, size = files + n, size + b
                continue
            if step == "two":
                times["floor_two_processes_s"], _, _ = floor(root, processes=2)
                continue
            db = work / f"cold{step}.sqlite"
            db.unlink(missing_ok=True)
            times[f"cold_jobs{step}_s"], res[f"cold_jobs{step}_rss_kib"], _ = run(
                opindex + ["build", str(root), "--db", str(db), "--jobs", str(step), "-q"])
        res["files"], res["bytes"] = files, size
        steal.append(steal_share(round_start, cpu_times()))
        for key, seconds in times.items():
            samples[key].append(seconds)
        for key in ratios:
            ratios[key].append(times[key] / times["floor_s"])
        print(f"round {i + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in times.items())
              + (f", steal {100 * steal[-1]:.1f}%" if steal[-1] is not None else ""), file=sys.stderr)
    for key, values in samples.items():
        res[key] = statistics.median(values)
        res[key.replace("_s", "_min_s")] = min(values)
        res[key.replace("_s", "_all_s")] = values
    for key, values in ratios.items():
        res[key.replace("_s", "_ratio")] = statistics.median(values)
        res[key.replace("_s", "_ratios")] = values
    res["rounds"] = args.rounds
    res["steal_shares"] = steal
    db = work / "cold2.sqlite"
    res["rebuild_nochange_s"], _, _ = run(opindex + ["build", str(root), "--db", str(db), "-q"])
    cu, py = pick(root, ".cu", "aten"), pick(root, ".py", "torch/nn")
    originals = {cu: touch(cu, b"\n// opindex benchmark\n"), py: touch(py, b"\n# opindex benchmark\n")}
    try:
        res["rebuild_two_files_s"], _, _ = run(opindex + ["build", str(root), "--db", str(db), "-q"])
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
    run(opindex + ["build", str(root), "--db", str(db), "-q"])  # back to the checkout as it is
    res["db_mib"] = db.stat().st_size / 2**20
    from opindex.api import Index
    with Index(db) as ix:
        res["rows"] = {r["what"][5:-1]: r["value"] for r in ix.stats() if r["what"].startswith("rows[")}

    res["trace"] = trace_inprocess(db, OPS, args.repeat)
    cli = [run(opindex + ["trace", op, "--db", str(db), "--context", "0"])[0] for op in OPS]
    res["trace_cli_p50_s"] = statistics.median(cli)
    res["trace_cli_max_s"] = max(cli)
    res["help_s"] = statistics.median(run(opindex + ["--help"])[0] for _ in range(5))

    if not args.skip_baselines:
        from opindex.indexer.discover import DEFAULT_SCOPE
        res["ctags_s"] = ctags(root, DEFAULT_SCOPE, work / "tags")
        res["rg_ten_ops_s"] = time_greps(root, "rg")
        res["grep_ten_ops_s"] = time_greps(root, "grep")
    shutil.rmtree(work, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2))
    print(table(res))


def _steal(shares: list | None) -> str:
    """The CPU time the hypervisor took per round: a round with steal was not measured on the machine's own cores."""
    if not shares or all(x is None for x in shares):
        return ""
    return "; CPU steal per round " + " ".join("?" if x is None else f"{100 * x:.1f}%" for x in shares)


def _ratios(values: list[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def table(r: dict) -> str:
    """Times are medians over the rounds; build ratios are medians of the per-round ratios to the floor."""
    f = r["floor_s"]
    fm = r["floor_min_s"]
    rows = [
        ("tree-sitter parse floor (1 process)", f"{f:.1f} s", "1.00x", f"{r['files']} files, "
         f"{r['bytes'] / 2**20:.0f} MB; two halves around the --jobs 2 build; median of {r['rounds']}, "
         f"min {fm:.1f} s"),
        ("tree-sitter parse, the same files dealt to 2 processes", f"{r['floor_two_processes_s']:.1f} s",
         f"{r['floor_two_processes_ratio']:.2f}x", "what two workers can win back here: speedup "
         f"{1 / r['floor_two_processes_ratio']:.2f}x, not 2x; per round " + _ratios(r["floor_two_processes_ratios"])),
        ("opindex build cold --jobs 1", f"{r['cold_jobs1_s']:.1f} s", f"{r['cold_jobs1_ratio']:.2f}x",
         f"peak RSS {r['cold_jobs1_rss_kib'] / 1024:.0f} MB; per round " + _ratios(r["cold_jobs1_ratios"])),
        ("opindex build cold --jobs 2", f"{r['cold_jobs2_s']:.1f} s", f"{r['cold_jobs2_ratio']:.2f}x",
         f"peak RSS {r['cold_jobs2_rss_kib'] / 1024:.0f} MB; per round " + _ratios(r["cold_jobs2_ratios"])
         + f"; {sum(x <= 1.5 for x in r['cold_jobs2_ratios'])} of {r['rounds']} rounds at or under the target"
         " 1.5x" + _steal(r.get("steal_shares"))),
        ("rebuild, nothing changed", f"{r['rebuild_nochange_s']:.2f} s", "", "target <= 2 s"),
        ("rebuild, one .cu + one .py changed", f"{r['rebuild_two_files_s']:.2f} s", "", "target <= 3 s"),
        ("trace in-process p50 / p95", f"{r['trace']['p50_ms']:.0f} / {r['trace']['p95_ms']:.0f} ms", "",
         "target p50 <= 50 ms"),
        ("trace as a CLI process (p50 / max)", f"{r['trace_cli_p50_s']:.2f} / {r['trace_cli_max_s']:.2f} s", "",
         "target <= 0.6 s"),
        ("opindex --help", f"{r['help_s']:.2f} s", "", "target <= 0.3 s"),
        ("database size", f"{r['db_mib']:.0f} MB", "", "target <= 250 MB"),
    ]
    if "ctags_s" in r:
        rows += [("universal-ctags -R (same folders)", f"{r['ctags_s']:.1f} s", f"{r['ctags_s'] / f:.2f}x", ""),
                 ("seed greps for 10 ops, rg", f"{r['rg_ten_ops_s']:.1f} s", "", "80 commands"),
                 ("seed greps for 10 ops, grep -rn", f"{r['grep_ten_ops_s']:.1f} s", "", "80 commands")]
    w = [max(len(x[i]) for x in rows) for i in range(4)]
    out = [f"checkout {r['checkout']}  ({r['date']}, {r['cpus']} CPUs)", ""]
    out += ["  ".join(c.ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in rows]
    out += ["", "rows: " + ", ".join(f"{k} {v}" for k, v in r["rows"].items())]
    out += ["", "trace ends:"] + [f"  {k}: {', '.join(v)}" for k, v in r["trace"]["ends"].items()]
    return "\n".join(out)


if __name__ == "__main__":
    main()
