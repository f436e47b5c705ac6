"""extract: one source file in, plain rows out (tuples in schema.FACT_COLUMNS order).

Each language has its own module and its tree-sitter patterns in queries/*.scm; this module only routes.
Extractors never raise on bad input: a file that cannot be read or parsed yields what could be found plus a message.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field


@dataclass
class FileFacts:
    rows: dict[str, list[tuple]] = field(default_factory=dict)
    parse_errors: int = 0
    message: str | None = None


@functools.lru_cache(maxsize=1)  # asked twice per build (compare, then record); the files do not change
def fingerprint() -> str:
    """SHA-1 of the extractors' code and queries and the PyTorch rules they use (opindex/pytorch/): an index built by
    other extractors is rebuilt, not updated."""
    import hashlib
    from pathlib import Path
    here = Path(__file__).parent
    digest = hashlib.sha1()
    for path in sorted([*here.glob("*.py"), *here.glob("queries/*.scm"), *here.parent.glob("pytorch/*.py")]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def extract(path: str, data: bytes, language: str, module: str | None) -> FileFacts:
    if language in ("cpp", "cuda"):
        from . import cpp
        return cpp.extract(path, data, language)
    if language == "python":
        from . import python
        return python.extract(path, data, module)
    return FileFacts()
