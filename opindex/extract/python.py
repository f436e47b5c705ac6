"""Python extraction (placeholder until the Python layer lands)."""
from __future__ import annotations

from . import FileFacts


def extract(path: str, data: bytes, module: str | None) -> FileFacts:
    return FileFacts()
