"""coverage: per operator overload and dispatch key, what a backend has (its own kernel, one inherited, a
composite, a fallback) or lacks, read from the index's facts the way the dispatcher resolves them
(docs/coverage.md). `coverage(con, ...)` returns rows of plain data; render/ and the CLI format them."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from ..pytorch.dispatch_keys import ALIAS_KEYS, DEFAULT_KEYS, IMPLICIT, canonical, is_pytorch_key
from . import composite, dtypes, facts, ops as ops_mod
from .status import STATUSES, status

ROW_FIELDS = ("op", "key", "status", "file", "line", "kernel", "via", "registered_line", "dtypes", "lacks",
              "python_apis")


@dataclass
class Coverage:
    rows: list[dict]
    keys: tuple[str, ...]
    ops: int  # operator overloads known
    notes: list[str] = field(default_factory=list)

    def to_dataframe(self):
        """The rows as a pandas DataFrame, one row per op overload and key (columns ROW_FIELDS)."""
        from ..model import require_pandas
        return require_pandas().DataFrame(self.rows, columns=list(ROW_FIELDS))


@dataclass
class Facts:
    """Everything coverage reads, in the shapes facts.py returns (an out-of-tree backend adds its own: overlay)."""
    native: list[dict]
    dispatch: list[dict]
    blocks: list[dict]
    calls: list[dict]
    python: list[dict]
    composite_calls: list[dict]
    kernel_dtypes: list[dict]
    stub_dtypes: list[dict]
    python_apis: dict[str, int]
    python_libraries: dict[str, list[dict]]
    version: str | None = None  # the checkout's PyTorch version

    @classmethod
    def read(cls, con: sqlite3.Connection) -> "Facts":
        return cls(facts.native_functions(con), facts.dispatch_rows(con), facts.library_blocks(con),
                   facts.library_calls(con), facts.python_registrations(con),
                   facts.composite_calls(con, (IMPLICIT, "Math")), facts.kernel_dtypes(con), facts.stub_dtypes(con),
                   facts.python_api_counts(con),
                   {m: facts.python_defined_ops(con, m) for m in ops_mod.PYTHON_LIBRARIES},
                   facts.checkout_meta(con).get("pytorch_version") or None)


def coverage(con: sqlite3.Connection, keys=None, *, ops=None, exact=(), overlay=None) -> Coverage:
    """Rows (ROW_FIELDS) for every operator overload the index knows and each of `keys` (None: DEFAULT_KEYS and
    any key of a backend the index registers that PyTorch does not name, a vendor's own). `ops`: only these op
    names (aten::add, add.Tensor: every overload of a name, or one); `exact`: op overloads taken as they are
    (aten::_cudnn_rnn is that overload only: what a trace reached). `overlay`: facts of an out-of-tree backend
    (overlay.read(DIR)) registered on top of the index's."""
    f = Facts.read(con)
    if overlay is not None:
        overlay.merge_into(f)
    known, fallbacks = ops_mod.gather(f.native, f.dispatch, f.blocks, f.calls, f.python, f.python_libraries,
                                      f.version)
    chosen = tuple(canonical(k) for k in keys) if keys else DEFAULT_KEYS + _vendor_keys(known)
    cache: dict = {}

    def status_of(op, key):
        found = cache.get((op.name, key))
        if found is None:
            found = cache[(op.name, key)] = status(op, key, known, fallbacks)
        return found

    effective = composite.Effective(known, composite.called_ops(f.composite_calls, known), status_of)
    types = dtypes.Dtypes(f.kernel_dtypes, f.stub_dtypes)
    selected = _select(known, ops, exact)
    rows = [_row(op, key, status_of(op, key), effective, types, f.python_apis) for op in selected for key in chosen]
    return Coverage(rows, chosen, len(selected))


def _row(op, key: str, s, effective, types, python_apis: dict[str, int]) -> dict:
    k = s.kernel
    lacks = sorted(effective.lacks(op, key)) if s.status == "composite_implicit" and key not in ALIAS_KEYS else None
    return {"op": op.name, "key": key, "status": s.status, "file": k.file if k else None,
            "line": k.line if k else None, "kernel": k.kernel if k else None, "via": s.via or None,
            "registered_line": k.block_line if k else None, "dtypes": types.of(k, key) if k else None,
            "lacks": lacks, "python_apis": python_apis.get(op.base, 0) if op.namespace == "aten" else 0}


def _vendor_keys(known) -> tuple[str, ...]:
    """Keys the index registers kernels for that PyTorch does not name (a fork's own backend key)."""
    seen = {k for op in known.values() for k in op.kernels}
    return tuple(sorted(k for k in seen if not is_pytorch_key(k)))


def _select(known: dict, names, exact=()) -> list:
    if not names and not exact:
        return sorted(known.values(), key=lambda o: o.name)
    wanted = {n if "::" in n else f"aten::{n}" for n in names or ()}
    overloads = {n if "::" in n else f"aten::{n}" for n in exact}
    return sorted((o for o in known.values() if o.name in wanted or o.name in overloads
                   or f"{o.namespace}::{o.base}" in wanted), key=lambda o: o.name)


__all__ = ["coverage", "Coverage", "ROW_FIELDS", "STATUSES"]
