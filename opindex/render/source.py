"""Read a few lines of source for a hop, only from inside the recorded checkout root."""
from __future__ import annotations

import os


def safe_path(root: str | None, rel: str | None) -> str | None:
    """The absolute path of `rel` when it stays inside `root` (no absolute paths, no .., no symlink escapes)."""
    if not root or not rel or os.path.isabs(rel) or "\x00" in rel:
        return None
    base = os.path.realpath(root)
    full = os.path.realpath(os.path.join(base, rel))
    if os.path.commonpath([base, full]) != base or not os.path.isfile(full):
        return None
    return full


def snippet(root: str | None, rel: str | None, line: int | None, before: int = 0, after: int = 2) -> list[str]:
    """Lines [line-before, line+after] as 'NNNN | text'; [] when unreadable or outside the root."""
    path = safe_path(root, rel)
    if path is None or not line or line < 1:
        return []
    lo, hi = max(1, line - before), line + after
    out = []
    try:
        with open(path, "rb") as fh:
            for i, raw in enumerate(fh, 1):
                if i > hi:
                    break
                if i >= lo:
                    out.append(f"{i:5d} | {raw.decode('utf-8', 'replace').rstrip()}")
    except OSError:
        return []
    return out
