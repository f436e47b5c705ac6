"""One coverage question as the CLI and the library ask it: which keys (a --device name as a person writes it:
cuda, mps, QuantizedCPU), which ops (--op, --for PROFILE|NAME), gaps only (--missing), an out-of-tree backend on
top (--with DIR). Index.coverage calls `answer`; the trace of a --for NAME comes in as the op names it reached."""
from __future__ import annotations

from pathlib import Path

from ..db import UsageError
from ..pytorch.dispatch_keys import (ALIAS_KEYS, BACKENDS, DEFAULT_KEYS, OTHER_BACKEND_KEYS, PER_BACKEND,
                                     is_pytorch_key)
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


def vendor_keys(con, overlay=None) -> tuple[str, ...]:
    """Keys the index (and an out-of-tree backend) registers kernels for that PyTorch does not name."""
    from . import facts
    from .registrations import blocks
    seen = {r["dispatch_key"] for r in facts.dispatch_rows(con)}
    rows = facts.library_blocks(con) + (overlay.blocks if overlay is not None else [])
    seen |= {b.key for b in blocks(rows) if b.key}
    seen |= {key for _, key, _, _ in (overlay.backend_rows if overlay is not None else ())}
    return tuple(sorted(k for k in seen if not is_pytorch_key(k)))


def answer(con, devices=(), *, ops=(), missing: bool = False, reached: list[str] | None = None,
           reached_exact: bool = False, with_dir: str | Path | None = None) -> Coverage:
    """`reached`: the ops a --for profile or trace reaches (None: no --for); `reached_exact`: they are overloads
    (a trace's), not names of every overload (a profile's)."""
    overlay = None
    if with_dir is not None:
        from .overlay import Overlay
        overlay = Overlay.read(with_dir)
    vendor = vendor_keys(con, overlay) if devices else ()
    keys = tuple(dict.fromkeys(key_of(d, vendor) for d in devices))
    if missing:
        if len(keys) != 1 or keys[0] in ALIAS_KEYS:
            raise UsageError("--missing needs one backend: --device mps (what MPS lacks that CUDA has)")
        keys = tuple(dict.fromkeys((keys[0], needs.REFERENCE)))
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
