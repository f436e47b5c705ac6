"""The crash sweep over malformed profiles (issue 33, item 13): N profiles made from real ones by seeded mutations,
each read, attributed against an index and rendered in
every format (table, JSON, CSV, Markdown, HTML); every result must be rows or one clean error (OpindexError), never
another exception.

    python benchmarks/profile_sweep.py --db INDEX [--count 1000] [--seed 0] [--json OUT] [SEED_PROFILE ...]

Seed profiles: the given ones, else tests/data's torch.profiler traces (.json.gz). Each mutant applies one to three
mutations, picked by the seeded generator: a field of an event given another JSON type (name, cat, args, ts, dur,
pid, tid, correlation, External id, ph: a number, a list, an object, null, a bool, a string), the event list or
the top level replaced, events that are not objects, deep nesting (JSON arrays, template arguments of a kernel
name), kernel names with control characters, 100 KB names or `_Z` garbage, bytes flipped or cut off, a BOM, a
gzip stream cut short or wrapped twice. Reports per outcome (rows, clean error, exception) and the slowest files;
exits 1 when any exception escaped. Mutants run in-process: each is written to a temporary folder and removed."""
from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from opindex.api import Index  # noqa: E402
from opindex.model import OpindexError  # noqa: E402
from opindex.profile import render  # noqa: E402

FIELDS = ("name", "cat", "args", "ts", "dur", "pid", "tid", "ph")
ARG_FIELDS = ("correlation", "External id")


def other_value(rng: random.Random):
    """A JSON value of any type (what a field of another type looks like)."""
    return rng.choice([rng.randint(-2**63, 2**63), rng.random() * 1e308, [1, "x"], {"a": [1]}, None, True, "",
                       "x" * rng.randint(1, 50), [], {}, -1, 0, "nan", "1e999"])


def deep_name(rng: random.Random) -> str:
    n = rng.choice([200, 5_000, 50_000])
    return "void k<" * n + "int" + ">" * n + "(int)"


def odd_name(rng: random.Random) -> str:
    return rng.choice([deep_name(rng), "\x1b]52;c;aGVsbG8=\x07evil\x1b[2J", "<script>alert(1)</script>",
                       "x" * 100_000, "_Z" + "".join(rng.choice("NIEL0123456789_ZSvT") for _ in range(200)),
                       "void f(" * 3000, "operator" * 500, "\udcff\ud800", "\x00\x01\x02", "{lambda" * 1000])


def mutate_events(events: list, rng: random.Random) -> tuple[list, str]:
    """One mutation of the event list; its description."""
    events = list(events)
    kind = rng.choice(["field", "field", "field", "arg", "not_object", "name", "name", "drop", "duplicate"])
    if not events:
        return [other_value(rng)], "event list emptied"
    i = rng.randrange(len(events))
    e = events[i] if isinstance(events[i], dict) else {}
    if kind == "field":
        f = rng.choice(FIELDS)
        events[i] = {**e, f: other_value(rng)}
        return events, f"event {i}: {f} of another type"
    if kind == "arg":
        f = rng.choice(ARG_FIELDS)
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        events[i] = {**e, "args": {**args, f: other_value(rng)}}
        return events, f"event {i}: args.{f} of another type"
    if kind == "not_object":
        events[i] = other_value(rng)
        return events, f"event {i} not an object"
    if kind == "name":
        kernels = [j for j, x in enumerate(events) if isinstance(x, dict) and x.get("cat") == "kernel"] or [i]
        j = rng.choice(kernels)
        events[j] = {**events[j], "name": odd_name(rng)} if isinstance(events[j], dict) else events[j]
        return events, f"event {j}: an odd kernel name"
    if kind == "drop":
        del events[i:i + rng.randint(1, 50)]
        return events, f"events from {i} dropped"
    events.insert(i, e)
    return events, f"event {i} repeated"


def mutant(seed: dict, rng: random.Random) -> tuple[bytes, bool, list[str]]:
    """(bytes, gzipped, what was done) of one malformed profile made from `seed` (a Chrome trace as JSON)."""
    top = dict(seed)
    events = list(top.get("traceEvents") or [])
    done = []
    for _ in range(rng.randint(1, 3)):
        events, what = mutate_events(events, rng)
        done.append(what)
    top["traceEvents"] = events
    structural = rng.random()
    if structural < 0.05:
        top["traceEvents"], done = other_value(rng), done + ["traceEvents of another type"]
    elif structural < 0.08:
        top, done = other_value(rng), done + ["top level of another type"]
    elif structural < 0.10:
        top, done = events, done + ["a bare event list"]
    text = json.dumps(top).encode()
    byte = rng.random()
    if byte < 0.05:
        depth = rng.choice([2_000, 100_000])
        text, done = b'{"traceEvents": ' + b"[" * depth + b"]" * depth + b"}", done + [f"arrays nested {depth} deep"]
    elif byte < 0.12:
        cut = rng.randrange(len(text) + 1)
        text, done = text[:cut], done + [f"cut at byte {cut}"]
    elif byte < 0.20:
        raw = bytearray(text)
        for _ in range(rng.randint(1, 20)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        text, done = bytes(raw), done + ["bytes flipped"]
    elif byte < 0.24:
        text, done = b"\xef\xbb\xbf" + text, done + ["a UTF-8 BOM"]
    gz = rng.random() < 0.5
    if gz:
        text = gzip.compress(text, compresslevel=1)
        g = rng.random()
        if g < 0.1:
            text, done = text[:rng.randrange(len(text))], done + ["gzip cut short"]
        elif g < 0.15:
            text, done = gzip.compress(text, compresslevel=1), done + ["gzip twice"]
    return text, gz, done


def seeds(paths: list[str]) -> list[dict]:
    files = [Path(p) for p in paths] or sorted((REPO / "tests" / "data").rglob("*.json.gz"))
    return [json.loads(gzip.decompress(p.read_bytes())) for p in files]


def sweep(ix: Index, seed_docs: list[dict], count: int, seed: int, log=None) -> dict:
    rng = random.Random(seed)
    outcomes, exceptions, slowest = Counter(), [], []
    with tempfile.TemporaryDirectory(prefix="opindex-profile-sweep-") as tmp:
        for n in range(count):
            data, gz, done = mutant(rng.choice(seed_docs), rng)
            path = Path(tmp) / f"mutant{n}.json{'.gz' if gz else ''}"
            path.write_bytes(data)
            started = time.monotonic()
            try:
                rows = ix.profile(path)
                for fmt in (render.to_table, render.to_json, render.to_csv, render.to_markdown, render.to_html):
                    fmt(rows).encode("utf-8")  # what stdout writes: a lone surrogate would fail here
                outcomes["rows"] += 1
            except OpindexError:
                outcomes["clean error"] += 1
            except Exception:  # noqa: BLE001 - the point: anything else is a crash
                outcomes["exception"] += 1
                exceptions.append({"mutant": n, "done": done, "traceback": traceback.format_exc(limit=-3)})
            took = time.monotonic() - started
            slowest = sorted(slowest + [(took, n, done)], reverse=True)[:5]
            path.unlink()
            if log and (n + 1) % 100 == 0:
                log(f"{n + 1}/{count}: {dict(outcomes)}")
    return {"count": count, "seed": seed, "outcomes": dict(outcomes), "exceptions": exceptions,
            "slowest": [{"seconds": round(t, 2), "mutant": n, "done": d} for t, n, d in slowest]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profiles", nargs="*", help="seed profiles (.json.gz); default: tests/data's")
    ap.add_argument("--db", required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the result here")
    args = ap.parse_args(argv)
    started = time.monotonic()
    with Index(args.db) as ix:
        result = sweep(ix, seeds(args.profiles), args.count, args.seed, log=lambda s: print(s, file=sys.stderr))
    result["seconds"] = round(time.monotonic() - started, 1)
    print(f"{args.count} malformed profiles (seed {args.seed}) in {result['seconds']} s: "
          + ", ".join(f"{k} {v}" for k, v in sorted(result["outcomes"].items())))
    for s in result["slowest"]:
        print(f"  slowest: {s['seconds']} s, mutant {s['mutant']}: {'; '.join(s['done'])}")
    for e in result["exceptions"][:10]:
        print(f"EXCEPTION in mutant {e['mutant']} ({'; '.join(e['done'])}):\n{e['traceback']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 1 if result["exceptions"] else 0


if __name__ == "__main__":
    sys.exit(main())
