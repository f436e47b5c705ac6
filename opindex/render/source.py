"""Read a few lines of source for a hop, only from inside the recorded checkout root."""
from __future__ import annotations

from ..paths import safe_path  # noqa: F401  (tests and callers use render.source.safe_path)


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
