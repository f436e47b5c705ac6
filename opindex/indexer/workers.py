"""Worker processes: read, hash and extract a batch of files; return plain rows (cheap to pickle)."""
from __future__ import annotations

import dataclasses
import gc
import hashlib
import os
import stat
from dataclasses import dataclass

from ..extract import FileFacts, extract
from .children import join_parent
from .discover import SourceFile

MAX_FILE_BYTES = 16 * 1024 * 1024  # generated blobs past this are recorded, not parsed


@dataclass
class FileResult:
    source: SourceFile  # with the size and mtime of the bytes read (size -1: read again on the next build)
    sha1: str
    unchanged: bool  # same content as the previous index: its rows are kept
    facts: FileFacts | None  # None for unchanged files and registries
    registry: tuple | None = None  # (entries, warnings) for a YAML registry


def work(root: str, batch: list[tuple[SourceFile, str | None]], shard: str | None = None,
         batch_id: int | None = None) -> list[FileResult]:
    """Extract a batch. With `shard` (a path prefix), the fact rows go into this process's own SQLite shard file
    instead of back through the pipe: the writing process then merges shards in C (INSERT ... SELECT) rather than
    unpickling and binding every row in Python while the workers need the same cores."""
    # Extraction allocates millions of small tuples and makes no reference cycles worth collecting: the cyclic
    # GC only costs time here (about 10% of extraction on a PyTorch tree).
    was_enabled = gc.isenabled()  # in-process (--jobs 1) the caller has disabled it for the whole load
    gc.disable()
    try:
        if batch_id is None:
            results = [_one(root, src, old_sha1) for src, old_sha1 in batch]
        else:  # in a pool: note which file this is, so a death is reported with its name (pool.WorkerPool)
            results = []
            for index, (src, old_sha1) in enumerate(batch):
                note(batch_id, index)
                results.append(_one(root, src, old_sha1))
        if shard is not None:
            _to_shard(shard, results)
        return results
    finally:
        if was_enabled:
            gc.enable()


_AT = None  # this worker's shared (batch, index) slot


def note(batch: int | None, index: int) -> None:
    """Tell the writing process which file this worker is extracting (read only if the worker dies)."""
    if _AT is not None and batch is not None:
        _AT[0], _AT[1] = batch, index


def warm_up(parent: int | None = None, lock_fd: int | None = None) -> None:
    """Pool initializer: load the grammars and compile the queries before the first batch arrives.

    Ctrl-C reaches the whole process group: the workers ignore it, and the writing process, which gets it too,
    stops them and leaves the index as it was (no traceback from every worker). A worker dies with the writing
    process and does not hold the build lock (join_parent)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    join_parent(parent, lock_fd)
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
    from .store import insert_rows
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
        insert_rows(con, table, rows)
    con.execute("COMMIT")  # committed before the batch is reported done: the merge only reads finished batches


RETRY = -1  # the size recorded for a file whose read failed or raced a change: the next build reads it again


def _one(root: str, src: SourceFile, old_sha1: str | None) -> FileResult:
    try:
        data, st, note = read_source(os.path.join(root, src.path))
    except OSError as exc:
        return FileResult(dataclasses.replace(src, size=RETRY), "", False,
                          FileFacts(message=f"unreadable: {exc.strerror or exc}"))
    # the stat of the bytes read, not the listing's: the file may have changed since (or while being read)
    src = dataclasses.replace(src, size=st.st_size if note != _RACED else RETRY, mtime_ns=st.st_mtime_ns)
    if data is None:
        if note == _NOT_REGULAR:
            src = dataclasses.replace(src, size=RETRY)
            return FileResult(src, "", False, FileFacts(message="not a regular file: skipped"))
        return FileResult(src, "", False, FileFacts(message=f"{st.st_size >> 20} MB, over the "
                                                            f"{MAX_FILE_BYTES >> 20} MB limit: not parsed"))
    sha1 = hashlib.sha1(data).hexdigest()
    if sha1 == old_sha1 and note is None:
        return FileResult(src, sha1, True, None)
    raced = "changed while it was read: indexed as read, read again on the next build" if note else None
    if not src.parsed:
        return FileResult(src, sha1, False, FileFacts(message=raced))
    if src.language == "yaml":
        return FileResult(src, sha1, False, FileFacts(message=raced), registry=_registry(src, data))
    try:
        facts = extract(src.path, data, src.language, src.module)
    except RecursionError:
        facts = FileFacts(message="nested too deeply to extract: not indexed")
    except Exception as exc:  # an extractor bug must not sink the build; the file says what happened
        facts = FileFacts(message=f"extractor failed: {type(exc).__name__}: {exc}")
    if raced and not facts.message:
        facts.message = raced
    return FileResult(src, sha1, False, facts)


_NOT_REGULAR, _TOO_BIG, _RACED = "not regular", "too big", "raced"


def open_source(path: str) -> int:
    """The file descriptor of a source file. O_NONBLOCK: a FIFO put in its place since the listing does not block
    the open (read_source then skips it by its type); regular files ignore the flag."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))


def read_source(path: str, limit: int | None = None) -> tuple[bytes | None, os.stat_result, str | None]:
    """(content, the stat of that content, note). The type and size are checked on the open file before any read
    (content None: not a regular file, or over `limit` bytes), and the read stops past `limit`. The stat is taken
    before and after the read: when they differ the file was being written, and it is read once more; if it
    changed again the note says so (_RACED) and the build records it to be read on the next build."""
    limit = MAX_FILE_BYTES if limit is None else limit
    fd = open_source(path)
    try:
        for attempt in (1, 2):
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                return None, before, _NOT_REGULAR
            if before.st_size > limit:
                return None, before, _TOO_BIG
            data = read_bytes(fd, before.st_size, limit)
            after = os.fstat(fd)
            if len(data) > limit:
                return None, after, _TOO_BIG
            if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == \
                    (before.st_size, before.st_mtime_ns, before.st_ctime_ns) and len(data) == after.st_size:
                return data, after, None
        return data, after, _RACED
    finally:
        os.close(fd)


def read_bytes(fd: int, size: int, limit: int) -> bytes:
    """The file from its start, at most limit + 1 bytes (one past the limit tells that it grew past it)."""
    want = min(size, limit) + 1
    data = os.pread(fd, want, 0)
    if len(data) < want:
        return data  # the end of the file: the usual case, one read
    parts, got = [data], len(data)
    while got <= limit:
        more = os.pread(fd, min(1 << 20, limit + 1 - got), got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _registry(src: SourceFile, data: bytes):
    from ..extract import derivatives_yaml, native_yaml
    from ..model import SourceError
    parser = native_yaml if src.path.endswith("native_functions.yaml") else derivatives_yaml
    try:
        return parser.parse(data, src.path)
    except SourceError as exc:
        return [], [str(exc)]
