"""A profile annotated against an index: the rows (one per kernel name), the totals and the warnings.

`annotate()` is what Index.profile and `opindex profile` call. The result is a list of dicts (so it prints, filters
and serializes like any other opindex answer) that also carries the totals, the caps applied and the warnings."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from ..pytorch import jiterator
from ..trace.facts import native_by_name
from ..trace.model import Hop, bare_name
from .attribute import Attributor
from .chrome import read_profile
from .reading import MAX_SIZE_MB
from .kernel_name import demangle_many, is_mangled, parse_kernel_name
from .op_call import call_of

CHAIN_CAP = 16          # hops kept per kernel (the chain of one kernel is rarely longer than 10)
TRACE_CALLS = 20        # distinct recorded calls traced per profile, by GPU time (--trace-calls; 0: none):
# about 60 ms each after the first (~1 s, the index's resident facts): 1.5 s for the shared profile, 4.3 s for all 58


CHAIN_KEYS = ("layer", "kind", "name", "file", "line", "detail")   # a chain entry of the JSON (docs/profile.md)


def chain_entry(h: Hop) -> dict:
    """A hop of a kernel's chain as JSON has it: the trace's layer and kind (docs/json.md), name, file, line, detail."""
    return {"layer": str(h.layer), "kind": str(h.kind), "name": h.name, "file": h.file, "line": h.line,
            "detail": h.detail}


def row_dict(row: dict) -> dict:
    """A row with its chain as plain dicts (what to_json writes)."""
    return {**row, "chain": [chain_entry(h) for h in row["chain"]]}


class ProfileRows(list):
    """Rows of an annotated profile (dicts), largest GPU time first, with the profile's facts as attributes. A row's
    `chain` is a list of trace.model.Hop, bottom-up (row_dict: the same row with plain-dict hops)."""
    profile: str = ""
    format: str = "chrome"
    total_us: float = 0.0
    attributed_us: float = 0.0
    kernels_total: int = 0          # distinct kernel names in the profile, before --limit
    limit: int | None = None
    torch_version: str | None = None
    version_source: str | None = None
    index_version: str | None = None
    checkout_root: str | None = None
    index_file: str | None = None   # the index that answered
    warnings: list
    unlinked: int = 0
    trace_calls: int = TRACE_CALLS  # the cap on distinct recorded calls traced
    calls_traced: int = 0           # distinct recorded calls traced (some may reach no device code)
    calls_untraced: int = 0         # distinct recorded calls past the cap

    @property
    def attributed_share(self) -> float:
        return self.attributed_us / self.total_us if self.total_us else 0.0

    @property
    def caps(self) -> list[str]:
        out = []
        if self.limit is not None and self.kernels_total > len(self):
            out.append(f"showing the {len(self)} kernels with the most GPU time of {self.kernels_total} (--limit)")
        out.append(f"a chain keeps at most {CHAIN_CAP} hops; launch sites and library calls at most 5 each")
        if self.calls_untraced:
            out.append(f"traced the first {self.calls_traced} distinct recorded op calls, by GPU time; "
                       f"{self.calls_untraced} more not traced (--trace-calls N raises the cap)")
        return out

    @property
    def traced(self) -> dict:
        """The rows whose op call was traced with its recorded inputs: how many, and of them those whose trace holds
        the kernel that ran (`in_trace`) and whose main chain ends at it (`ends_here`: an op that runs several
        kernels ends at one)."""
        rows = [r for r in self if r.get("traced")]
        return {"rows": len(rows), "in_trace": sum(1 for r in rows if r["traced"]["in_trace"]),
                "ends_here": sum(1 for r in rows if r["traced"]["ends_here"]),
                "not_in_checkout": sum(1 for r in rows if r["status"] == "not in this checkout"),
                "gpu_us": round(sum(r["gpu_us"] for r in rows), 3),
                "in_trace_gpu_us": round(sum(r["gpu_us"] for r in rows if r["traced"]["in_trace"]), 3)}

    def summary(self) -> dict:
        return {"profile": self.profile, "format": self.format, "torch_version": self.torch_version,
                "torch_version_from": self.version_source, "index_pytorch_version": self.index_version,
                "checkout_root": self.checkout_root, "index": self.index_file, "total_gpu_us": round(self.total_us, 3),
                "attributed_gpu_us": round(self.attributed_us, 3), "attributed_share": round(self.attributed_share, 4),
                "kernels": self.kernels_total, "shown": len(self), "unlinked_launches": self.unlinked,
                "traced_calls": self.traced, "warnings": list(self.warnings), "caps": self.caps}

    def with_absolute_paths(self) -> "ProfileRows":
        """The same rows with every location absolute, the checkout root joined (--absolute): definition,
        registration, launch_sites, library_calls, the body's definition and each chain hop's file."""
        from dataclasses import replace

        from ..render.links import absolute
        root = self.checkout_root
        whole = lambda loc: absolute(root, loc) if isinstance(loc, str) else loc  # noqa: E731

        def row(r: dict) -> dict:
            out = {**r, "definition": whole(r.get("definition")), "registration": whole(r.get("registration")),
                   "launch_sites": [whole(x) for x in r.get("launch_sites") or []],
                   "library_calls": [whole(x) for x in r.get("library_calls") or []],
                   "chain": [replace(h, file=whole(h.file)) for h in r.get("chain") or []]}
            if r.get("body"):
                out["body"] = {**r["body"], "definition": whole(r["body"].get("definition"))}
            return out
        copy = ProfileRows(row(r) for r in self)
        copy.__dict__.update(self.__dict__)
        return copy

    def to_dataframe(self):
        from ..model import require_pandas
        return require_pandas().DataFrame([{k: v for k, v in r.items() if k != "chain"} for r in self])


def annotate(con: sqlite3.Connection, path: str | Path, *, root: str | None = None, index_version: str | None = None,
             limit: int | None = None, progress=None, max_size_mb: float | None = MAX_SIZE_MB,
             index_file: str | None = None, trace_calls: int = TRACE_CALLS, build: dict | None = None) -> ProfileRows:
    """Read the profile at `path` (at most `max_size_mb` MB after gunzip; None or 0: no limit) and attribute each
    kernel name to the indexed checkout. `progress(done, total)` is called after each kernel when given. A profile
    recorded with shapes also gives each kernel's op call: the first `trace_calls` distinct ones (by GPU time; 0:
    none) are traced with those inputs, for the build `build` states (pytorch/build_config.settings_from: as a
    trace's), and the row says where that main chain ends, whether the kernel that ran is in that trace and
    whether it is the chain's end (`call`, `traced`)."""
    prof = read_profile(path, max_size_mb)
    att = Attributor(con, root, build)
    groups = prof.kernels
    # one c++filt run for every mangled name of the profile
    demangled = demangle_many([g.name for g in groups if is_mangled(g.name)])
    rows = ProfileRows()
    rows.warnings = []
    rows.profile, rows.format = str(path), prof.format
    rows.total_us, rows.kernels_total, rows.limit = prof.total_us, len(groups), limit
    rows.torch_version, rows.version_source = prof.torch_version, prof.version_source
    rows.index_version, rows.checkout_root, rows.unlinked = index_version, root, prof.unlinked
    rows.index_file, rows.trace_calls = index_file, trace_calls
    tracer = CallTracer(con, root, index_file, build, trace_calls)
    if prof.torch_version and index_version and _minor(prof.torch_version) != _minor(index_version):
        rows.warnings.append(
            f"the profile was recorded with torch {prof.torch_version} (from its {prof.version_source}) but the index "
            f"holds PyTorch {index_version}: kernels that are not in this checkout are reported as such")
    if prof.format == "list":
        rows.warnings.append("a plain list of kernel names: no GPU times and no ops, so library kernels cannot be "
                             "tied to their call sites and shared kernels are answered from their names alone")
    for i, g in enumerate(groups):
        kn = parse_kernel_name(g.name, demangled.get(g.name))
        row = att.attribute(g, kn)
        if row["attributed"]:
            rows.attributed_us += g.total_us
        row["rank"] = i + 1
        if g.inner_calls and kn.kind in ("global", "library") and (limit is None or i < limit):
            tracer.annotate(g, kn, row)  # (the rows shown only: --limit bounds the tracing too)
        if len(row["chain"]) > CHAIN_CAP:
            row["chain"] = row["chain"][:CHAIN_CAP]
            row["chain_capped"] = True
        if limit is None or i < limit:
            rows.append(row)
        if progress:
            progress(i + 1, len(groups))
    rows.calls_traced, rows.calls_untraced = len(tracer.found), len(tracer.skipped)
    if prof.skipped:
        rows.warnings.append(f"{prof.skipped} events skipped: their cat or name is not a string, as the profiler "
                             f"writes them")
    if prof.unlinked:
        rows.warnings.append(f"{prof.unlinked} kernel launches could not be tied to a CPU op (no matching "
                             f"correlation id in the trace)")
    return rows


class CallTracer:
    """Traces the op calls a profile recorded (op_call.py), each distinct call once, at most `cap` of them (0:
    none): `found` holds each traced call's end (None: no device code reached), `skipped` the calls past the cap."""

    def __init__(self, con, root, index_file, build: dict | None, cap: int):
        self.con, self.root, self.index_file, self.build, self.cap = con, root, index_file, build, cap
        self.found: dict[str, dict | None] = {}
        self.skipped: set[str] = set()

    def annotate(self, g, kn, row: dict) -> None:
        """`call` (the kernel's op with its recorded inputs) and `traced` {end, file, line, ends_here, in_trace}
        where that trace reaches device code."""
        (op, inputs), _ = g.inner_calls.most_common(1)[0]
        schemas = [r["schema"] for r in native_by_name(self.con, op.removeprefix("aten::"))]
        call = call_of(op, inputs, schemas)
        if call is None:
            return
        row["call"] = call
        if call not in self.found:
            if len(self.found) >= self.cap:
                self.skipped.add(call)
                return
            self.found[call] = _traced_end(self.con, self.root, self.index_file, call, self.build)
        found = self.found[call]
        if found is not None:
            end = found["end"]
            row["traced"] = {"end": end["name"], "file": end["file"], "line": end["line"],
                             "ends_here": _names_kernel([end], kn), "in_trace": _names_kernel(found["device"], kn)}


def _traced_end(con, root, index_file, call: str, build: dict | None) -> dict | None:
    """The main chain's end of `call` and the device code of its whole trace ({"end", "device"}: dicts of name,
    kernel, layer, kind, file, line); None when it reaches no device code (its arguments fit no overload, a name
    the index lacks)."""
    from ..trace import trace  # noqa: PLC0415 - the trace machinery loads only for a profile with shapes
    from ..trace.rank import switch  # noqa: PLC0415
    try:
        t = trace(con, call, device="cuda", root=root, index=index_file, build=build)
    except Exception:  # noqa: BLE001 - a call this reading cannot bind is a row without a traced path
        return None
    chain = t.main_chain()
    if not chain or (str(chain[-1].layer) not in ("cuda", "library") and switch(t) is None):
        return None  # (a chain that stops at a switch the inputs leave open ends at the launcher that switches)
    as_dict = lambda h: {"name": h.name, "bare": bare_name(h), "kernel": h.kernel, "layer": str(h.layer),  # noqa
                         "kind": str(h.kind), "file": h.file, "line": h.line}
    return {"end": as_dict(chain[-1]), "device": [as_dict(h) for h in t.ends()]}


def _names_kernel(hops: list[dict], kn) -> bool:
    """Whether one of `hops` is the kernel that ran: a library hop of its library, or a __global__ (or the kernel
    a launch names) of its name, or the jitted kernel whose name the trace gives (`exp_kernel_vectorized<N>_kernel`)."""
    for h in hops:
        if kn.kind == "library":
            if h["layer"] == "library" and h["kind"].lower() == (kn.library or "").lower():
                return True
            continue
        names = {h["bare"], h["kernel"] or ""}
        if kn.name in names or ("<N>" in (h["kernel"] or "") and jiterator.matches(h["kernel"], kn.name)):
            return True
    return False


def _minor(version: str) -> tuple:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else (version,)
