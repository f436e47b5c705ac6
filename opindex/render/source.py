"""Read a few lines of source for a hop, only from inside the recorded checkout root."""
from __future__ import annotations

import functools
import os

from ..paths import safe_path  # noqa: F401  (tests and callers use render.source.safe_path)


def snippet(root: str | None, rel: str | None, line: int | None, before: int = 0, after: int = 2) -> list[str]:
    """Lines [line-before, line+after] as 'NNNN | text'; [] when unreadable or outside the root."""
    path = safe_path(root, rel)
    if path is None or not line or line < 1:
        return []
    try:
        st = os.stat(path)
    except OSError:
        return []
    lines = _lines(str(path), st.st_mtime_ns, st.st_size)
    lo, hi = max(1, line - before), min(line + after, len(lines))
    return [f"{i:5d} | {lines[i - 1]}" for i in range(lo, hi + 1)]


@functools.lru_cache(maxsize=64)
def _lines(path: str, mtime_ns: int, size: int) -> list[str]:
    """A file's lines, read once for all the hops a render shows in it (a trace of 1,000 hops has ~100 files);
    keyed by the file's stat, so an edited file is read again."""
    try:
        with open(path, "rb") as fh:
            return [raw.decode("utf-8", "replace").rstrip() for raw in fh]
    except OSError:
        return []
