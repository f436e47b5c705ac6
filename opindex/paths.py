"""Checkout paths: what opindex reads from a checkout stays inside its root (the build's link step and the
snippets a trace prints both read files through here)."""
from __future__ import annotations

import functools
import os


@functools.lru_cache(maxsize=16)
def _real_root(root: str) -> str:
    return os.path.realpath(root)  # asked once per file the link step reads: the root's components are lstat'ed


def safe_path(root: str | None, rel: str | None) -> str | None:
    """The absolute path of `rel` when it stays inside `root` (no absolute paths, no .., no symlink escapes) and is
    a regular file; else None."""
    if not root or not rel or os.path.isabs(rel) or "\x00" in rel:
        return None
    base = _real_root(root)
    full = os.path.realpath(os.path.join(base, rel))
    if os.path.commonpath([base, full]) != base or not os.path.isfile(full):
        return None
    return full
