"""C++ and CUDA extraction (placeholder until the C++ layer lands)."""
from __future__ import annotations

from . import FileFacts


def extract(path: str, data: bytes, language: str) -> FileFacts:
    return FileFacts()
