#!/usr/bin/env python3
"""Trace truth: do opindex's traces reach the code that really runs? (issue 13)

Two tiers, one measuring stick each:

  expert   benchmarks/expert_traces_2_4.json holds traces an engineer wrote by reading the PyTorch 2.4 source:
           for a query ("torch.add", "nn.LSTM", ...) the hops an expert would name, each a file:line, plus
           `must_not` names that would be wrong in that trace (and `wrong_at` locations: a stub that only raises).  For every expert trace we run opindex's trace and
           count the expert locations it reaches (a hop in the same file whose line is within +-2, or a hop of
           the same name in the same file) and the wrong hops it shows.  Targets: >= 95% reached, 0 wrong.

  runtime  a torch.profiler Chrome trace of a real training step (shared/fixtures/profiles).  Every GPU kernel
           event is tied to the CPU-side aten op that launched it (kernel "correlation" -> cuda runtime/driver
           launch event -> the aten:: cpu_op events enclosing the launch on the same thread).  Library kernels
           (cuBLAS, cuDNN, CUB, ...) score a hit when the op's trace has a `library` hop of that library; PyTorch
           kernels score a hit when a hop names their `__global__` (kernels the checkout does not define are
           listed as absent and not scored).  A kernel launched by an op nested in the traced one (the profile's
           innermost aten op: aten::fill_ inside aten::nll_loss_backward) counts only when reached below a hop of
           that op: vectorized_elementwise_kernel is shared by every elementwise op, and reaching it through
           another op is not reaching this launch.  Targets: >= 95% by count and by GPU time.

usage:
  python benchmarks/trace_truth.py --db /tmp/pt24.sqlite
  python benchmarks/trace_truth.py --db /tmp/pt24.sqlite --depth 5 --json /tmp/truth.json -v
  python benchmarks/trace_truth.py --db IDX --opindex-src /tmp/opindex-head   # a snapshot of opindex (git archive)
  python benchmarks/trace_truth.py --db IDX --cli                             # `opindex trace --json`, subprocess
  python benchmarks/trace_truth.py --db IDX --tier expert --config default     # 2.4 fork: its USE_MACA expectations

The traces come from opindex's library (`opindex.Index(db).trace(...)`); when that API cannot be imported or
called (the query side is being refactored) the script falls back to `opindex trace NAME --json` in a subprocess.
Main-chain ends (issue 28), with the expert tier: each expert trace's `main_end` lists where the call really ends
(device code, for default arguments and float32; several only where the inputs cannot settle it).  The trace's
`main_chain` (hop ids root-first) scores a hit when its last hop is at one of them (same file and line within +-2, or
same file and the same bare name, the hop's name or the kernel it launches).  Where the expert states the call's
arguments (`call`: `torch.repeat_interleave(torch.randn(8, 16), 2)`, an int repeats), the main chain is the trace of
that call; the whole-trace tier traces the name.  --config default scores the 2.4 fork
against `main_end_default` (USE_MACA defined) where a trace gives one.  Target: >= 95% per expert set.

Only the stable trace JSON shape is used: {hops: [{id, parent, layer, kind, name, file, line, detail, absent,
called_at}]} (called_at: where a helper hop was called from, also a location).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_EXPERTS = HERE / "expert_traces_2_4.json"
DEFAULT_PROFILE = Path(os.environ.get("OPINDEX_SHARED", "/work/shared")) / "fixtures/profiles/train_step_h200_torch2.11.json.gz"
LINE_SLACK = 2          # an expert line and a hop line this close (same file) are the same location
CLI_DEPTH_FALLBACK = 1  # what `opindex trace --depth` defaults to when the CLI cannot be introspected


# ------------------------------------------------------------------------------------------------------------------
# Getting traces
# ------------------------------------------------------------------------------------------------------------------

class Tracer:
    """Runs opindex traces through the library, else through the CLI; caches by (query, device, depth)."""

    def __init__(self, db: str, force_cli: bool = False, build: dict | None = None):
        self.db = db
        self.build = {k: v for k, v in (build or {}).items() if v}  # -D/-U of the build traced
        self.cache: dict[tuple, dict] = {}
        self.ix = None
        self.mode = "cli"
        self.why_cli = "--cli given" if force_cli else ""
        if not force_cli:
            try:
                import opindex  # noqa: PLC0415
                self.ix = opindex.Index(db)
                self.ix.trace("torch.add", device="cuda", depth=0)   # the query side may be mid-refactor
                self.mode = "library"
            except Exception as e:  # noqa: BLE001 - any failure of the library means: use the CLI
                self.ix, self.why_cli = None, f"library unusable ({type(e).__name__}: {e})"

    def trace(self, query: str, device: str, depth: int) -> dict:
        key = (query, device, depth)
        if key not in self.cache:
            self.cache[key] = self._trace(query, device, depth)
        return self.cache[key]

    def _trace(self, query: str, device: str, depth: int) -> dict:
        t0 = time.perf_counter()
        if self.ix is not None:
            try:
                d = self.ix.trace(query, device=device, depth=depth, **self.build).to_dict()
            except Exception as e:  # noqa: BLE001 - an unknown name is a result, not a crash
                d = {"hops": [], "error": f"{type(e).__name__}: {e}"}
        else:
            d = self._cli(query, device, depth)
        d["seconds"] = time.perf_counter() - t0
        return d

    def _cli(self, query: str, device: str, depth: int) -> dict:
        exe = shutil.which("opindex")
        cmd = ([exe] if exe else [sys.executable, "-m", "opindex.cli"]) + [
            "trace", query, "--device", device, "--depth", str(depth), "--json", "--db", self.db] + [
            f for d in self.build.get("defines", []) for f in ("-D", d)] + [
            f for u in self.build.get("undefines", []) for f in ("-U", u)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        try:
            d = json.loads(p.stdout)
        except json.JSONDecodeError:
            return {"hops": [], "error": (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]}
        if p.returncode != 0 and not d.get("hops"):
            d["error"] = d.get("message") or f"exit {p.returncode}"
        return d


def cli_default_depth() -> int:
    """The CLI's --depth default, read from its click option so the benchmark follows the CLI."""
    try:
        from opindex.cli import trace as trace_cmd  # noqa: PLC0415
        for p in trace_cmd.params:
            if p.name == "depth":
                return int(p.default)
    except Exception:  # noqa: BLE001
        pass
    return CLI_DEPTH_FALLBACK


# ------------------------------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------------------------------

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_templates(s: str) -> str:
    """Drops balanced <...> groups (template arguments), leaving operators such as '<<<' alone."""
    s = re.sub(r"<<<.*?>>>", "", s)
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def norm_name(name: str) -> str:
    """A comparable short name for expert hops and trace hops alike.

    'REGISTER_DISPATCH(exp_stub)' -> 'exp_stub'; 'CUDA: exp_kernel_cuda' -> 'exp_kernel_cuda';
    'derivatives.yaml: add.Tensor' -> 'add.Tensor'; 'aten::add.out' -> 'add.out';
    '__global__ at::native::reduce_kernel' -> 'reduce_kernel'; 'at::cuda::blas::gemm<float>' -> 'gemm';
    'at::native::structured_exp_out' -> 'exp_out'; 'torch._C._nn.linear' -> 'linear'."""
    s = name.strip()
    m = re.match(r"REGISTER_\w*DISPATCH\(\s*(\w+)", s)
    if m:
        return m.group(1)
    s = re.sub(r"^(derivatives\.yaml|[A-Za-z][A-Za-z0-9_, ]*):\s+", "", s)      # 'CUDA: x', 'derivatives.yaml: x'
    s = re.sub(r"^(__global__|template|void|static|inline)\s+", "", s)
    s = strip_templates(s).split("(")[0].strip()
    s = s.split()[-1] if s.split() else s
    last = s.split("::")[-1]
    if s.startswith(("torch.", "F.", "nn.", "_VF.", "input.", "self.")):
        last = s.rsplit(".", 1)[-1]                                             # Python dotted names
    return re.sub(r"^structured_", "", last)


def op_base(name: str) -> str:
    """'aten::index.Tensor' -> 'index'."""
    return norm_name(name).split(".")[0]


def template_args(name: str) -> str:
    """The first <...> of a name, spaces dropped ('gemm<float>' -> 'float'); '' when none."""
    m = re.search(r"<([^<>]*(?:<[^<>]*>[^<>]*)*)>", re.sub(r"<<<.*?>>>", "", name))
    return re.sub(r"\s+", "", m.group(1)) if m else ""


def names_match(expert: str, hop: str, file: str) -> bool:
    """Same short name.  In Python files compare the last dotted part ('LSTM.forward' ~ 'torch...LSTM.forward');
    elsewhere a dot is an overload ('add.out' must not match 'sum.out')."""
    a, b = norm_name(expert), norm_name(hop)
    ta, tb = template_args(expert), template_args(hop)
    if ta and ta != tb:                 # 'gemm_internal_cublas<float>' is not 'gemm_internal_cublas<at::Half>'
        return False
    if file.endswith((".py", ".pyi")):
        a, b = a.rsplit(".", 1)[-1], b.rsplit(".", 1)[-1]
    return bool(a) and a == b


def must_not_hit(bad: str, hop: dict) -> bool:
    """Is `hop` the wrong thing named by the must_not entry `bad`?
    'aten::X' names an op: it matches native/dispatch hops of op X (any overload) and X's structured kernel.
    A plain name matches a hop whose short name is that name. Annotated forms, as experts write them: `name at
    file:line (why)` is that location only; `name (dir/file.cpp)` that name in a file ending so; `name (a note)` the
    name."""
    if hop.get("absent"):
        return False
    name = hop.get("name") or ""
    at = re.match(r"^(\S+) at (\S+):(\d+)(?: \(.*\))?$", bad)
    if at:
        return hop.get("file") == at.group(2) and hop.get("line") == int(at.group(3))
    noted = re.match(r"^(\S+) \((.*)\)$", bad)
    if noted:
        bad, note = noted.group(1), noted.group(2)
        if re.fullmatch(r"[\w./-]+\.\w+", note) and not (hop.get("file") or "").endswith(note):
            return False  # `threshold_kernel (cpu/Activation.cpp)`: not cuda/Activation.cu's
    if bad.startswith("aten::"):
        base = bad[len("aten::"):]
        if hop.get("kind") == "calls_op":  # `at::max(...)`, `index.max()` (a Tensor named index): the op called
            return re.split(r"::|\.", name.split(" on ")[0])[-1].removesuffix("_symint") == base
        if hop.get("layer") in ("native", "dispatch"):
            return op_base(name) == base
        return norm_name(name) in (base + "_out", base) and hop.get("layer") == "cpp"
    if "::" in bad and norm_name(name) == norm_name(bad):
        # a qualified name (cpublas::gemm, the CPU BLAS) is not another namespace's function of that name
        # (at::cuda::blas::gemm): the hop's qualified name, templates dropped, must end with it
        plain = re.sub(r"<[^<>]*>", "", name.removeprefix("__global__ ").split("(")[0]).strip()
        return plain == bad or plain.endswith("::" + bad) or plain.endswith(" " + bad)
    return norm_name(name) == norm_name(bad)


# ------------------------------------------------------------------------------------------------------------------
# Expert tier
# ------------------------------------------------------------------------------------------------------------------

def hop_reached(eh: dict, hops: list[dict]) -> dict | None:
    """The first trace hop at the expert location: same file and line within LINE_SLACK, or same file and name."""
    same_file = [h for h in hops if not h.get("absent") and h.get("file") == eh["file"]]
    for h in same_file:
        if h.get("line") is not None and abs(h["line"] - eh["line"]) <= LINE_SLACK:
            return h
    for h in same_file:
        if names_match(eh["name"], h.get("name") or "", eh["file"]):
            return h
    for h in hops:  # a helper hop says where it was called from (called_at "file:line"): that call is a location
        file, _, line = (h.get("called_at") or "").rpartition(":")
        if not h.get("absent") and file == eh["file"] and line.isdigit() and abs(int(line) - eh["line"]) <= LINE_SLACK:
            return h
    return None


def via(hop: dict, by_id: dict, n: int = 4) -> str:
    """The hops a hop was reached from (nearest first), as 'name file:line <- ...'."""
    out, h = [], by_id.get(hop.get("parent"))
    while h is not None and len(out) < n:
        out.append(f"{h.get('name')} {h.get('file')}:{h.get('line')}")
        h = by_id.get(h.get("parent"))
    return " <- ".join(out)


LAYER_ORDER = ["python", "bridge", "native", "dispatch", "cpp", "stub", "registration", "cuda", "library", "backward"]


def expert_layer(eh: dict) -> str:
    """The layer an expert hop belongs to (for 'where does the trace stop')."""
    f, n = eh["file"], eh["name"]
    if f.endswith("derivatives.yaml"):
        return "backward"
    if f.endswith("native_functions.yaml"):
        return "native"
    if f.endswith(".py"):
        return "python"
    if n.startswith("REGISTER_"):
        return "registration"
    if re.search(r"(^|::)(cublas|cudnn|cub::|cufft|cusolver|cusparse)", n) or n.startswith("cudnn") or n.startswith("cublas"):
        return "library"
    if f.endswith((".cuh", ".cu")) or "/cuda/" in f and f.endswith(".h"):
        return "cuda"
    return "cpp"


def run_expert(tracer: Tracer, experts: dict, depth: int, verbose: bool) -> dict:
    rows, total, reached, wrong_total = [], 0, 0, 0
    for t in experts["traces"]:
        tr = tracer.trace(t["query"], t.get("device", "cuda"), depth)
        hops = tr.get("hops", [])
        got, miss = [], []
        for eh in t["hops"]:
            h = hop_reached(eh, hops)
            (got if h else miss).append((eh, h))
        by_id = {h.get("id"): h for h in hops}
        wrong = [(bad, h.get("name"), h.get("file"), h.get("line"), via(h, by_id))
                 for bad in t.get("must_not", []) for h in hops if must_not_hit(bad, h)]
        # wrong_at: locations that are wrong whatever their name (a stub that only raises, a Dimname overload)
        for w in t.get("wrong_at", []):
            for h in hops:
                if not h.get("absent") and h.get("file") == w["file"] and h.get("line") is not None \
                        and abs(h["line"] - w["line"]) <= LINE_SLACK:
                    wrong.append((f"{w['name']} at {w['file']}:{w['line']} ({w['why']})", h.get("name"),
                                  h.get("file"), h.get("line"), via(h, by_id)))
        # one wrong hop per (what, name, file, line): the same hop reached along several paths counts once
        seen = {}
        for w in wrong:
            seen.setdefault(w[:4], w)
        wrong = sorted(seen.values(), key=lambda x: (x[0], str(x[2]), x[3] or 0))
        total += len(t["hops"])
        reached += len(got)
        wrong_total += len(wrong)
        # where the trace stops: the deepest layer it reaches, and the first layer with a missed expert hop
        layers_missing = sorted({expert_layer(eh) for eh, _ in miss}, key=lambda x: LAYER_ORDER.index(x)
                                if x in LAYER_ORDER else 99)
        rows.append({
            "query": t["query"], "device": t.get("device", "cuda"), "hops_in_trace": len(hops),
            "error": tr.get("error"), "seconds": round(tr.get("seconds", 0), 3),
            "expert": len(t["hops"]), "reached": len(got),
            "missing": [{"name": eh["name"], "file": eh["file"], "line": eh["line"], "layer": expert_layer(eh),
                         **({"conditional": eh["conditional"]} if eh.get("conditional") else {})} for eh, _ in miss],
            "missing_layers": layers_missing,
            "wrong": [{"must_not": b, "name": n, "file": f, "line": ln, "via": v} for b, n, f, ln, v in wrong],
        })
    print(f"\n== Expert tier: {len(rows)} traces, depth {depth}, device per trace (all cuda) ==")
    print(f"{'query':<46} {'reached':>9} {'%':>5} {'wrong':>5}  stops short in")
    for r in rows:
        pct = 100.0 * r["reached"] / r["expert"] if r["expert"] else 0.0
        stop = ", ".join(r["missing_layers"]) or "-"
        err = f"  [{r['error'][:60]}]" if r["error"] else ""
        print(f"{r['query']:<46} {r['reached']:>4}/{r['expert']:<4} {pct:>5.0f} {len(r['wrong']):>5}  {stop}{err}")
        if verbose:
            for m in r["missing"]:
                print(f"      miss  {m['layer']:<12} {m['name']}  {m['file']}:{m['line']}")
            for w in r["wrong"]:
                print(f"      WRONG {w['must_not']}: {w['name']}  {w['file']}:{w['line']}\n            via {w['via']}")
    pct = 100.0 * reached / total if total else 0.0
    print(f"TOTAL expert locations reached: {reached}/{total} = {pct:.1f}%  (target >= 95%)")
    print(f"TOTAL wrong hops (must_not present): {wrong_total}  (target 0)")
    return {"depth": depth, "traces": rows, "reached": reached, "total": total, "percent": round(pct, 2),
            "wrong": wrong_total}


# ------------------------------------------------------------------------------------------------------------------
# Main-chain tier (issue 28): does the main chain end at the expert's device code?
# ------------------------------------------------------------------------------------------------------------------

def expected_ends(t: dict, config: str = "stock") -> list[dict] | None:
    """The `main_end` locations of an expert trace; with config 'default', the fork's own configuration
    (`main_end_default`, USE_MACA defined) where the trace gives one.  None when the trace has no main_end."""
    if config == "default" and t.get("main_end_default"):
        return t["main_end_default"]
    return t.get("main_end")


def end_matches(hop: dict, end: dict) -> bool:
    """A hop is at an expected end: same file and line within LINE_SLACK, or same file and the same bare name
    (the hop's name or, for a launch or launcher hop, the kernel it names)."""
    if not hop or hop.get("absent") or hop.get("file") != end["file"]:
        return False
    if hop.get("line") is not None and abs(hop["line"] - end["line"]) <= LINE_SLACK:
        return True
    want = norm_name(end["name"])
    return bool(want) and want in {norm_name(hop.get("name") or ""), norm_name(hop.get("kernel") or "")}


def main_chain_end(tr: dict) -> dict | None:
    """The last hop of the trace's main chain (hop ids root-first), None when the trace has no main chain."""
    chain = tr.get("main_chain") or []
    by_id = {h.get("id"): h for h in tr.get("hops", [])}
    return by_id.get(chain[-1]) if chain else None


def score_main_end(tr: dict, ends: list[dict]) -> dict:
    """{'hit': bool, 'end': the chain's last hop (name, file, line) or None, 'matched': the end it matched}."""
    last = main_chain_end(tr)
    matched = next((e for e in ends if end_matches(last, e)), None) if last else None
    end = None if last is None else {"name": last.get("name"), "file": last.get("file"), "line": last.get("line")}
    return {"hit": matched is not None, "end": end, "matched": matched}


def unbuildable(tr: dict) -> bool:
    """The main chain stops where the build lacks the code the call takes: every condition of the trace JSON's
    `ruled_out` is an #if or #include (the fork's launcher under `#ifdef USE_MACA` on -U USE_MACA); counted apart."""
    stop = tr.get("ruled_out") or {}
    return bool(stop.get("conditions")) and all(c.get("kind") in ("#if", "#include") for c in stop["conditions"])


def run_main_chain(tracer: Tracer, experts: dict, depth: int, config: str, verbose: bool) -> dict:
    rows, hits, scored = [], 0, 0
    for t in experts["traces"]:
        ends = expected_ends(t, config)
        if not ends:
            continue
        tr = tracer.trace(t.get("call") or t["query"], t.get("device", "cuda"), depth)
        r = score_main_end(tr, ends)
        scored += 1
        hits += r["hit"]
        rows.append({"query": t.get("call") or t["query"], "device": t.get("device", "cuda"), "hit": r["hit"],
                     "end": r["end"],
                     "unbuildable": unbuildable(tr) and not r["hit"],
                     "expected": [{k: e[k] for k in ("name", "file", "line")} for e in ends],
                     "open": t.get("open_default" if config == "default" and t.get("main_end_default") else "open"),
                     "error": tr.get("error")})
    pct = 100.0 * hits / scored if scored else 0.0
    print(f"\n== Main chain ends ({config} configuration): {hits}/{scored} = {pct:.1f}%  (target >= 95%) ==")
    lacking = sum(r["unbuildable"] for r in rows)
    if lacking:
        print(f"   of the {scored - hits} misses, {lacking} stop where this build lacks the code the call takes "
              f"(the trace names the #if); of the rest: {hits}/{scored - lacking}")
    for r in rows:
        if r["hit"] and not verbose:
            continue
        got = (f"{r['end']['name']} {r['end']['file']}:{r['end']['line']}" if r["end"] else
               f"no main chain{' (' + r['error'][:60] + ')' if r['error'] else ''}")
        want = " | ".join(f"{e['name']} {e['file']}:{e['line']}" for e in r["expected"])
        tag = "hit " if r["hit"] else "MISS (build lacks it)" if r["unbuildable"] else "MISS"
        print(f"  {tag} {r['query']:<40} ended at {got}\n       expected {want}")
    return {"config": config, "hits": hits, "traces": scored, "percent": round(pct, 2), "unbuildable": lacking,
            "rows": rows}


# ------------------------------------------------------------------------------------------------------------------
# Runtime tier
# ------------------------------------------------------------------------------------------------------------------

# Library kernels, by name (the demangled name, or the raw one).  First match wins; order matters: '_cudnn'
# suffixed xmma kernels are cuDNN even though they are gemms.
LIBRARY_PATTERNS = [
    ("cudnn", re.compile(r"_cudnn$|\bcudnn::|^(void )?(RNN_|LSTM_|GENERIC_elementWise|GRU_|elemWise_RNN)|"
                         r"implicit_convolve|winograd|bn_fw|bn_bw|nchwToNhwc|nhwcToNchw|cudnn", re.I)),
    # CUTLASS gemms shipped inside cuBLAS *and* cuDNN (cuDNN's RNNs run them too): either library's call is a hit
    ("gemm-engine", re.compile(r"cutlass::Kernel2?<cutlass_\d+_", re.I)),
    ("cublas", re.compile(r"_cublas$|cublasLt::|cublas|\bgemmSN_|\bgemmk1_|\bgemv2?[NT]?_kernel|nvjet|"
                          r"^sm\d+_xmma_gemm|xmma_gemm|splitKreduce", re.I)),
    ("cub", re.compile(r"\bcub::|DeviceRadixSort|DeviceScan|DeviceReduce|DeviceSelect|DeviceSegmented", re.I)),
    ("cufft", re.compile(r"\bcufft|fft_?kernel|regular_fft|vector_fft", re.I)),
]
# opindex library names that count as the same library as the profile's class
LIBRARY_ALIASES = {"cublas": {"cublas", "cublaslt"}, "gemm-engine": {"cublas", "cublaslt", "cudnn", "cudnn_frontend"}, "cudnn": {"cudnn", "cudnn_frontend"}, "cub": {"cub", "thrust"},
                   "cufft": {"cufft"}}


def demangle(names: list[str]) -> dict[str, str]:
    """Demangles '_Z...' names with c++filt when it is installed (names usually arrive demangled)."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    out = {}
    if mangled and shutil.which("c++filt"):
        p = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True)
        out = dict(zip(mangled, p.stdout.splitlines()))
    return out


def kernel_identifier(name: str) -> str:
    """The __global__ name in a demangled kernel name: the last identifier before the template '<' or the '(' of
    the parameter list, after namespaces.  'void at::native::(anonymous namespace)::foo<1, F>(int)' -> 'foo'."""
    s = name.strip()
    s = s.replace("(anonymous namespace)", "anon")
    s = re.sub(r"^(void|__global__)\s+", "", s)
    cut = len(s)
    for i, ch in enumerate(s):
        if ch in "<(":
            cut = i
            break
    head = s[:cut].strip().split()[-1] if s[:cut].strip() else s
    return head.split("::")[-1]


def classify(name: str) -> tuple[str, str]:
    """('library', lib) or ('source', __global__ name)."""
    for lib, pat in LIBRARY_PATTERNS:
        if pat.search(name):
            return "library", lib
    return "source", kernel_identifier(name)


def load_profile(path: Path) -> list[dict]:
    """GPU kernels of a Chrome trace, each with the aten ops (outermost, innermost) that launched it."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    launches = {}                                   # correlation -> runtime/driver launch event
    cpu_ops = defaultdict(list)                     # (pid, tid) -> aten cpu ops
    ext_ops = {}                                    # External id -> cpu_op (fallback)
    kernels = []
    for e in events:
        cat, args = e.get("cat"), e.get("args") or {}
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launches[args["correlation"]] = e
        elif cat == "cpu_op":
            if str(e.get("name", "")).startswith("aten::"):
                cpu_ops[(e["pid"], e["tid"])].append(e)
            if "External id" in args:
                ext_ops[args["External id"]] = e
        elif cat == "kernel":
            kernels.append(e)
    for ops in cpu_ops.values():
        ops.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    names = demangle([k["name"] for k in kernels])
    out = []
    for k in kernels:
        args = k.get("args") or {}
        launch = launches.get(args.get("correlation"))
        outer = inner = None
        if launch is not None:
            t0, t1 = launch["ts"], launch["ts"] + launch.get("dur", 0)
            enclosing = [op for op in cpu_ops.get((launch["pid"], launch["tid"]), [])
                         if op["ts"] <= t0 and op["ts"] + op.get("dur", 0) >= t1]
            if enclosing:
                outer, inner = enclosing[0]["name"], enclosing[-1]["name"]
        if outer is None:                           # no launch event: the op with the same External id
            op = ext_ops.get(args.get("External id"))
            if op is not None and op["name"].startswith("aten::"):
                outer = inner = op["name"]
        name = names.get(k["name"], k["name"])
        out.append({"name": name, "dur": float(k.get("dur", 0)), "outer": outer, "inner": inner})
    return out


def device_code(hops: list[dict]) -> bool:
    return any(h.get("layer") in ("cuda", "library") and not h.get("absent") for h in hops)


def kernel_hit(kind: str, what: str, hops: list[dict], through: str | None = None) -> bool:
    """True when a hop names the kernel (a `library` hop of its library); with `through` (the nested op that
    launched it, aten::fill_ inside aten::nll_loss_backward), only a hop below one naming that op counts: the
    shared kernels (vectorized_elementwise_kernel) are launched by many ops, and the trace must reach this one
    through the op that really launched it."""
    if kind == "library":
        libs = LIBRARY_ALIASES.get(what, {what})
        found = [h for h in hops if h.get("layer") == "library" and not h.get("absent")
                 and (h.get("kind") or "").lower() in libs]
    else:
        pat = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(what)}(?![A-Za-z0-9_])")
        found = [h for h in hops if not h.get("absent") and pat.search(h.get("name") or "")]
    if through is None:
        return bool(found)
    op = re.compile(rf"^aten::{re.escape(through.removeprefix('aten::'))}(\.|$)")
    found_ids = {h["id"] for h in found}
    return any(op.match(h.get("name") or "") and found_ids & below(h["id"], hops)
               for h in hops if h.get("layer") == "native")


def below(top: int, hops: list[dict]) -> set[int]:
    """The hops under `top`; a hop marked "(shown above)" (a trace shows a repeated definition once) stands for
    what is under the first hop of the same name and place."""
    children: dict[int | None, list[int]] = {}
    first: dict[tuple, int] = {}
    by_id = {}
    for h in hops:
        by_id[h["id"]] = h
        children.setdefault(h.get("parent"), []).append(h["id"])
        if "(shown above)" not in (h.get("detail") or ""):
            first.setdefault((h.get("layer"), h.get("name"), h.get("file"), h.get("line")), h["id"])
    out, todo = set(), [top]
    while todo:
        h = by_id[todo.pop()]
        nxt = list(children.get(h["id"], ()))
        if "(shown above)" in (h.get("detail") or ""):
            original = first.get((h.get("layer"), h.get("name"), h.get("file"), h.get("line")))
            if original is not None:
                nxt.append(original)
        for j in nxt:
            if j not in out:
                out.add(j)
                todo.append(j)
    return out


def short_kernel(name: str, width: int = 60) -> str:
    s = name.replace("(anonymous namespace)::", "")
    s = re.sub(r"^void ", "", s)
    return s if len(s) <= width else s[:width - 3] + "..."


def run_runtime(tracer: Tracer, profile: Path, db: str, device: str, depth: int, verbose: bool) -> dict:
    kernels = load_profile(profile)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    defined = {}

    def in_index(ident: str) -> bool:
        if ident not in defined:
            defined[ident] = con.execute("SELECT 1 FROM symbols WHERE kind = 'global_kernel' AND name = ? LIMIT 1",
                                         (ident,)).fetchone() is not None
        return defined[ident]

    # group identical (kernel name, op) pairs: one row each, GPU time summed
    groups: dict[tuple, dict] = {}
    for k in kernels:
        key = (k["name"], k["outer"], k["inner"])
        g = groups.setdefault(key, {"name": k["name"], "outer": k["outer"], "inner": k["inner"], "count": 0,
                                    "gpu_us": 0.0})
        g["count"] += 1
        g["gpu_us"] += k["dur"]
    rows = []
    for g in sorted(groups.values(), key=lambda g: -g["gpu_us"]):
        kind, what = classify(g["name"])
        row = dict(g, kind=kind, target=what, status="", op=None)
        if g["outer"] is None:
            row["status"] = "no-op"            # launched outside any aten op: nothing to trace
        elif kind == "source" and not in_index(what):
            row["status"] = "absent-2.4"       # the kernel does not exist in this checkout
        else:
            op = g["outer"]
            hops = tracer.trace(op, device, depth).get("hops", [])
            if not device_code(hops) and g["inner"] and g["inner"] != op:
                op = g["inner"]
                hops = tracer.trace(op, device, depth).get("hops", [])
            row["op"] = op
            # launched by a nested op (nll_loss_backward > zero_ > fill_): reached through that op, or not at all
            through = g["inner"] if g["inner"] and g["inner"] != op else None
            row["status"] = "hit" if kernel_hit(kind, what, hops, through) else "miss"
            row["by_name"] = "hit" if kernel_hit(kind, what, hops) else "miss"  # the kernel named anywhere
            if row["status"] == "miss" and through:
                entry = re.compile(rf"^aten::{re.escape(through.removeprefix('aten::'))}(\.|$)")
                if not any(h.get("layer") == "native" and entry.match(h.get("name") or "") for h in hops):
                    row["why"] = f"the trace never reaches {through}"
                elif kernel_hit(kind, what, tracer.trace(through, device, depth).get("hops", [])):
                    # shown by its default path, which in this checkout runs another kernel (a fork's own copy
                    # kernels); the full trace of `through` reaches this one
                    row["why"] = f"reached by the trace of {through}, not on its default path"
        rows.append(row)

    scored = [r for r in rows if r["status"] in ("hit", "miss")]
    hits = [r for r in scored if r["status"] == "hit"]
    n_sc, n_hit = sum(r["count"] for r in scored), sum(r["count"] for r in hits)
    t_sc, t_hit = sum(r["gpu_us"] for r in scored), sum(r["gpu_us"] for r in hits)
    print(f"\n== Runtime tier: {profile.name}: {len(kernels)} kernel launches, {len(rows)} (kernel, op) rows, "
          f"depth {depth} ==")
    print(f"{'kernel':<62} {'class':<14} {'op (traced)':<40} {'n':>3} {'GPU us':>8}  result")
    for r in rows:
        cls = r["target"] if r["kind"] == "library" else "source"
        op = r["op"] or r["outer"] or "-"
        if r["op"] and r["op"] != r["outer"]:
            op += " (inner)"
        if verbose or r["status"] in ("hit", "miss"):
            print(f"{short_kernel(r['name']):<62} {cls:<14} {op[:40]:<40} {r['count']:>3} {r['gpu_us']:>8.1f}  "
                  f"{r['status']}" + (f" (inner {r['inner']}: {r['why']})" if r.get("why") else
                                      f" (inner {r['inner']})" if r["status"] == "miss" and r["inner"] != r["op"]
                                      else ""))
    absent = sorted({r["target"] for r in rows if r["status"] == "absent-2.4"})
    no_op = [r for r in rows if r["status"] == "no-op"]
    print(f"kernels absent from the checkout (not scored): {len(absent)}: {', '.join(absent)}")
    if no_op:
        print(f"kernels with no enclosing aten op (not scored): {sum(r['count'] for r in no_op)}")

    def pct(a, b):
        return 100.0 * a / b if b else 0.0

    by_kind = {}
    for kind in ("source", "library"):
        ks = [r for r in scored if r["kind"] == kind]
        kh = [r for r in ks if r["status"] == "hit"]
        by_kind[kind] = {"count": sum(r["count"] for r in ks), "hit": sum(r["count"] for r in kh),
                         "gpu_us": round(sum(r["gpu_us"] for r in ks), 1),
                         "hit_us": round(sum(r["gpu_us"] for r in kh), 1)}
        b = by_kind[kind]
        print(f"  {kind:<8} kernels: {b['hit']}/{b['count']} launches ({pct(b['hit'], b['count']):.1f}%), "
              f"{b['hit_us']:.1f}/{b['gpu_us']:.1f} us ({pct(b['hit_us'], b['gpu_us']):.1f}%)")
    print(f"TOTAL by count: {n_hit}/{n_sc} = {pct(n_hit, n_sc):.1f}%   by GPU time: {t_hit:.1f}/{t_sc:.1f} us = "
          f"{pct(t_hit, t_sc):.1f}%  (targets >= 95%)")
    named = [r for r in scored if r.get("by_name") == "hit"]
    n_named, t_named = sum(r["count"] for r in named), sum(r["gpu_us"] for r in named)
    print(f"  (the kernel named anywhere in the trace, not necessarily below the op that launched it: "
          f"{n_named}/{n_sc} = {pct(n_named, n_sc):.1f}% by count, {pct(t_named, t_sc):.1f}% by GPU time)")
    return {"profile": str(profile), "depth": depth, "rows": rows, "absent": absent,
            "count": {"hit": n_hit, "scored": n_sc, "percent": round(pct(n_hit, n_sc), 2)},
            "gpu_time": {"hit_us": round(t_hit, 1), "scored_us": round(t_sc, 1), "percent": round(pct(t_hit, t_sc), 2)},
            "by_name": {"hit": n_named, "percent": round(pct(n_named, n_sc), 2),
                        "gpu_time_percent": round(pct(t_named, t_sc), 2)},
            "by_kind": by_kind}


# ------------------------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--db", default=os.environ.get("OPINDEX_DB"), help="index of the checkout the experts read")
    ap.add_argument("--experts", type=Path, default=DEFAULT_EXPERTS)
    ap.add_argument("--profile", type=Path, default=DEFAULT_PROFILE, help="torch.profiler Chrome trace (.json[.gz])")
    ap.add_argument("--depth", type=int, default=None, help="trace depth (default: the CLI's default)")
    ap.add_argument("--device", default="cuda", help="device for the runtime tier's traces")
    ap.add_argument("--tier", choices=["expert", "runtime", "both"], default="both")
    ap.add_argument("--config", choices=["stock", "default"], default="stock",
                    help="2.4 fork: score the main chain against main_end (stock CUDA, USE_MACA undefined) or "
                         "main_end_default (the fork's USE_MACA configuration)")
    ap.add_argument("-U", "--undefine", action="append", default=[],
                    help="trace for a build without this macro (as `opindex trace -U`; e.g. -U USE_MACA with "
                         "--config stock on the 2.4 fork); repeatable")
    ap.add_argument("-D", "--define", action="append", default=[], help="as `opindex trace -D`; repeatable")
    ap.add_argument("--cli", action="store_true", help="run `opindex trace --json` in a subprocess")
    ap.add_argument("--opindex-src", type=Path, help="import opindex from this folder (e.g. a `git archive` of HEAD)")
    ap.add_argument("--json", type=Path, help="write all results here")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each missing and wrong hop, every kernel row")
    a = ap.parse_args(argv)
    if not a.db:
        ap.error("--db (or $OPINDEX_DB) is required")
    if a.opindex_src:
        sys.path.insert(0, str(a.opindex_src.resolve()))
        os.environ["PYTHONPATH"] = str(a.opindex_src.resolve()) + os.pathsep + os.environ.get("PYTHONPATH", "")
    t0 = time.perf_counter()
    tracer = Tracer(a.db, force_cli=a.cli, build={"defines": a.define, "undefines": a.undefine})
    depth = a.depth if a.depth is not None else cli_default_depth()
    print(f"opindex traces via {tracer.mode}" + (f" ({tracer.why_cli})" if tracer.mode == "cli" else "")
          + f"; index {a.db}; depth {depth}" + ("" if a.depth is not None else " (the CLI default)"))
    result = {"db": a.db, "depth": depth, "mode": tracer.mode}
    if a.tier in ("expert", "both"):
        experts = json.loads(a.experts.read_text())
        result["expert"] = run_expert(tracer, experts, depth, a.verbose)
        result["main_chain"] = run_main_chain(tracer, experts, depth, a.config, a.verbose)
    if a.tier in ("runtime", "both"):
        if a.profile.exists():
            result["runtime"] = run_runtime(tracer, a.profile, a.db, a.device, depth, a.verbose)
        else:
            print(f"\nruntime tier skipped: {a.profile} not found")
    result["seconds"] = round(time.perf_counter() - t0, 1)
    failed = {q: d["error"] for q, d in tracer.cache.items() if d.get("error")}
    result["failed_traces"] = {f"{q[0]} ({q[1]}, depth {q[2]})": e for q, e in failed.items()}
    print(f"\n{len(tracer.cache)} traces in {result['seconds']} s")
    if failed:
        (q, e), = list(failed.items())[:1]
        print(f"WARNING: {len(failed)} of {len(tracer.cache)} traces failed (they score as misses); "
              f"first: {q[0]}: {e}")
    if a.json:
        a.json.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
