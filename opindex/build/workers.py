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


def work(root: str, batch: list[tuple[SourceFile, str | None]], shard: str | None = None) -> list[FileResult]:
    """Extract a batch. With `shard` (a path prefix), the fact rows go into this process's own SQLite shard file
    instead of back through the pipe: the writing process then merges shards in C (INSERT ... SELECT) rather than
    unpickling and binding every row in Python while the workers need the same cores."""
    # Extraction allocates millions of small tuples and makes no reference cycles worth collecting: the cyclic
    # GC only costs time here (about 10% of extraction on a PyTorch tree).
    was_enabled = gc.isenabled()  # in-process (--jobs 1) the caller has disabled it for the whole load
    gc.disable()
    try:
        results = [_one(root, src, old_sha1) for src, old_sha1 in batch]
        if shard is not None:
            _to_shard(shard, results)
        return results
    finally:
        if was_enabled:
            gc.enable()


def warm_up() -> None:
    """Pool initializer: load the grammars and compile the queries before the first batch arrives.

    Ctrl-C reaches the whole process group: the workers ignore it, and the writing process, which gets it too,
    stops them and leaves the index as it was (no traceback from every worker)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        from ..extract import cpp, python
        cpp._engine()
        python._setup()
    except Exception:  # noqa: BLE001 - the first file will report the same error, where it can be seen
        pass


_SHARD = None  # (path, connection) of this worker process's shard


def shard_tables() -> list[str]:
    """The whole schema without indexes: the writer may adopt the biggest shard as the index (see Writer.merge)."""
    from ..sqlite_ddl import TABLES
    return [create for _, create, _ in TABLES.values()]


def _to_shard(prefix: str, results: list[FileResult]) -> None:
    global _SHARD
    import sqlite3
    from ..sqlite_ddl import FACT_COLUMNS
    from .store import insert_sql
    if _SHARD is None or _SHARD[0] != f"{prefix}{os.getpid()}":
        path = f"{prefix}{os.getpid()}"
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        for ddl in shard_tables():
            con.execute(ddl)
        _SHARD = (path, con)
    con = _SHARD[1]
    by_table: dict[str, list[tuple]] = {}  # one executemany per table and batch, not per file
    for r in results:
        if r.facts is not None and r.facts.rows:
            for table, rows in r.facts.rows.items():
                if rows:
                    by_table.setdefault(table, []).extend(rows)
            r.facts.rows = {}
    con.execute("BEGIN")
    for table, rows in by_table.items():
        con.executemany(insert_sql(table, FACT_COLUMNS[table]), rows)
    con.execute("COMMIT")  # committed before the batch is reported done: the merge only reads finished batches


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
