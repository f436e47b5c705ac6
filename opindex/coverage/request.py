"""One coverage question as the CLI and the library ask it: which keys (a --device name as a person writes it:
cuda, mps, QuantizedCPU), which ops (--op, --for PROFILE|NAME), gaps only (--missing), an out-of-tree backend on
top (--with DIR). Index.coverage calls `answer`; the trace of a --for NAME comes in as the op names it reached."""
from __future__ import annotations

from pathlib import Path

from ..db import UsageError
from ..pytorch.dispatch_keys import ALIAS_KEYS, BACKENDS, DEFAULT_KEYS, OTHER_BACKEND_KEYS, PER_BACKEND
from . import Coverage, coverage, needs

KNOWN_KEYS = tuple(dict.fromkeys((*DEFAULT_KEYS, *(f + b for f in PER_BACKEND for b in BACKENDS),
                                  *OTHER_BACKEND_KEYS, *ALIAS_KEYS)))


def key_of(text: str, extra=()) -> str:
    """The dispatch key a --device names, case-insensitively (mps -> MPS, sparsecuda -> SparseCUDA)."""
    for key in (*KNOWN_KEYS, *extra):
        if key.lower() == text.strip().lower():
            return key
    raise UsageError(f"unknown dispatch key {text!r}: one of {', '.join(DEFAULT_KEYS)} (or another of "
                     f"PyTorch's backend keys: QuantizedMPS, SparseCsrMeta, MkldnnCPU, ...)")


def answer(con, devices=(), *, ops=(), missing: bool = False, reached: list[str] | None = None,
           reached_exact: bool = False, with_dir: str | Path | None = None, vendor_keys=()) -> Coverage:
    """`reached`: the ops a --for profile or trace reaches (None: no --for); `reached_exact`: they are overloads
    (a trace's), not names of every overload (a profile's)."""
    keys = tuple(dict.fromkeys(key_of(d, vendor_keys) for d in devices))
    if missing:
        if len(keys) != 1 or keys[0] in ALIAS_KEYS:
            raise UsageError("--missing needs one backend: --device mps (what MPS lacks that CUDA has)")
        keys = tuple(dict.fromkeys((keys[0], needs.REFERENCE)))
    overlay = None
    if with_dir is not None:
        from .overlay import Overlay
        overlay = Overlay.read(with_dir)
    if reached is not None and not reached:
        raise UsageError("--for reached no op (a profile without CPU op events, or a name nothing traces to)")
    reached = list(reached or ())
    names = list(ops) + ([] if reached_exact else reached)
    exact = reached if reached_exact else []
    cov = coverage(con, keys or None, ops=names or None, exact=exact, overlay=overlay)
    if reached:  # the ops their composites lack are needed too
        lacking = needs.with_lacks(cov.rows, {r if "::" in r else f"aten::{r}" for r in reached})
        cov = coverage(con, keys or None, ops=sorted(set(names) | (lacking - set(exact))), exact=exact,
                       overlay=overlay)
    if overlay is not None:
        cov.notes.append(f"out-of-tree backend {overlay.root}: {overlay.summary()}")
    if missing:
        cov.rows = needs.gaps(cov.rows, keys[0])
        cov.notes.append(f"{len(cov.rows)} ops {keys[0]} lacks (missing, or only its fallback) that "
                         f"{needs.REFERENCE} has, most Python APIs first")
    return cov
