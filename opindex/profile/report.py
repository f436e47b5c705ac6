"""A profile annotated against an index: the rows (one per kernel name), the totals and the warnings.

`annotate()` is what Index.profile and `opindex profile` call. The result is a list of dicts (so it prints, filters
and serializes like any other opindex answer) that also carries the totals, the caps applied and the warnings."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from ..trace.model import Hop
from .attribute import Attributor
from .chrome import read_profile
from .reading import MAX_SIZE_MB
from .kernel_name import demangle_many, is_mangled, parse_kernel_name

CHAIN_CAP = 16          # hops kept per kernel (the chain of one kernel is rarely longer than 10)


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

    @property
    def attributed_share(self) -> float:
        return self.attributed_us / self.total_us if self.total_us else 0.0

    @property
    def caps(self) -> list[str]:
        out = []
        if self.limit is not None and self.kernels_total > len(self):
            out.append(f"showing the {len(self)} kernels with the most GPU time of {self.kernels_total} (--limit)")
        out.append(f"a chain keeps at most {CHAIN_CAP} hops; launch sites and library calls at most 5 each")
        return out

    def summary(self) -> dict:
        return {"profile": self.profile, "format": self.format, "torch_version": self.torch_version,
                "torch_version_from": self.version_source, "index_pytorch_version": self.index_version,
                "checkout_root": self.checkout_root, "index": self.index_file, "total_gpu_us": round(self.total_us, 3),
                "attributed_gpu_us": round(self.attributed_us, 3), "attributed_share": round(self.attributed_share, 4),
                "kernels": self.kernels_total, "shown": len(self), "unlinked_launches": self.unlinked,
                "warnings": list(self.warnings), "caps": self.caps}

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
             index_file: str | None = None) -> ProfileRows:
    """Read the profile at `path` (at most `max_size_mb` MB after gunzip; None or 0: no limit) and attribute each
    kernel name to the indexed checkout. `progress(done, total)` is called after each kernel when given."""
    prof = read_profile(path, max_size_mb)
    att = Attributor(con, root)
    groups = prof.kernels
    # one c++filt run for every mangled name of the profile
    demangled = demangle_many([g.name for g in groups if is_mangled(g.name)])
    rows = ProfileRows()
    rows.warnings = []
    rows.profile, rows.format = str(path), prof.format
    rows.total_us, rows.kernels_total, rows.limit = prof.total_us, len(groups), limit
    rows.torch_version, rows.version_source = prof.torch_version, prof.version_source
    rows.index_version, rows.checkout_root, rows.unlinked = index_version, root, prof.unlinked
    rows.index_file = index_file
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
        if len(row["chain"]) > CHAIN_CAP:
            row["chain"] = row["chain"][:CHAIN_CAP]
            row["chain_capped"] = True
        if limit is None or i < limit:
            rows.append(row)
        if progress:
            progress(i + 1, len(groups))
    if prof.skipped:
        rows.warnings.append(f"{prof.skipped} events skipped: their cat or name is not a string, as the profiler "
                             f"writes them")
    if prof.unlinked:
        rows.warnings.append(f"{prof.unlinked} kernel launches could not be tied to a CPU op (no matching "
                             f"correlation id in the trace)")
    return rows


def _minor(version: str) -> tuple:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else (version,)
