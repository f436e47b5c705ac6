"""Worker processes: read, hash and extract a batch of files; return plain rows (cheap to pickle)."""
from __future__ import annotations

import gc
import hashlib
import os
from dataclasses import dataclass

from ..extract import FileFacts, extract
from .discover import SourceFile

MAX_FILE_BYTES = 16 * 1024 * 1024  # generated blobs past this are recorded, not parsed


@dataclass
class FileResult:
    source: SourceFile
    sha1: str
    unchanged: bool  # same content as the previous index: its rows are kept
    facts: FileFacts | None  # None for unchanged files and registries
    registry: tuple | None = None  # (entries, warnings) for a YAML registry


def work(root: str, batch: list[tuple[SourceFile, str | None]]) -> list[FileResult]:
    # Extraction allocates millions of small tuples and makes no reference cycles worth collecting: the cyclic
    # GC only costs time here (about 10% of extraction on a PyTorch tree).
    gc.disable()
    try:
        return [_one(root, src, old_sha1) for src, old_sha1 in batch]
    finally:
        gc.enable()


def _one(root: str, src: SourceFile, old_sha1: str | None) -> FileResult:
    try:
        with open(os.path.join(root, src.path), "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return FileResult(src, "", False, FileFacts(message=f"unreadable: {exc.strerror}"))
    sha1 = hashlib.sha1(data).hexdigest()
    if sha1 == old_sha1:
        return FileResult(src, sha1, True, None)
    if not src.parsed:
        return FileResult(src, sha1, False, FileFacts())
    if len(data) > MAX_FILE_BYTES:
        return FileResult(src, sha1, False, FileFacts(message=f"{len(data) >> 20} MB, over the "
                                                              f"{MAX_FILE_BYTES >> 20} MB limit: not parsed"))
    if src.language == "yaml":
        return FileResult(src, sha1, False, FileFacts(), registry=_registry(src, data))
    try:
        facts = extract(src.path, data, src.language, src.module)
    except RecursionError:
        facts = FileFacts(message="nested too deeply to extract: not indexed")
    except Exception as exc:  # an extractor bug must not sink the build; the file says what happened
        facts = FileFacts(message=f"extractor failed: {type(exc).__name__}: {exc}")
    return FileResult(src, sha1, False, facts)


def _registry(src: SourceFile, data: bytes):
    from ..extract import derivatives_yaml, native_yaml
    from ..model import SourceError
    parser = native_yaml if src.path.endswith("native_functions.yaml") else derivatives_yaml
    try:
        return parser.parse(data, src.path)
    except SourceError as exc:
        return [], [str(exc)]
