"""pipeline: discover -> parse/extract (worker processes) -> store -> link, into a file that replaces the index only
when complete. Rebuilds re-extract only files whose content changed (size+mtime, then SHA-1)."""
from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import gc
import os
import re
import sqlite3
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from .. import sqlite_ddl as schema  # the schema compiled ahead: no SQLAlchemy import
from ..db import Broken, build_target, integrity, is_index_file, readonly_uri
from ..model import OpindexError
from . import checkout as co
from ..extract import fingerprint
from .discover import SourceFile, discover
from .progress import Progress
from .store import Writer, is_interrupt, table_counts
from .pool import WorkerDied, WorkerPool
from .workers import FileResult, work


@dataclass
class BuildReport:
    db: Path
    checkout: co.Checkout
    pytorch_version: str | None
    files_by_layer: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    parsed: int = 0
    reused: int = 0
    removed: int = 0
    up_to_date: bool = False
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # layers this checkout lacks
    # seconds per phase, in the order they run: discover, extract (read, parse, extract: the workers), merge (the
    # workers' shards into the index), finish (indexes, views, meta; the link step not counted), link
    phases: dict[str, float] = field(default_factory=dict)


def absent_layers(sources: list[SourceFile]) -> list[str]:
    """What a trace cannot reach here: an installed wheel ships headers, not ATen's .cpp/.cu kernels."""
    native = {os.path.splitext(s.path)[1] for s in sources if "/native/" in s.path}
    names = {os.path.basename(s.path) for s in sources}
    out = []
    if not native & {".cpp", ".cc", ".cxx"}:
        out.append("ATen C++ sources (native/*.cpp)")
    if not native & {".cu", ".cuh"}:
        out.append("ATen CUDA sources (native/**/*.cu)")
    if not any(s.path.endswith(".py") for s in sources):
        out.append("Python sources (.py)")
    out += [registry for registry in ("native_functions.yaml", "derivatives.yaml") if registry not in names]
    return out


def _lock(db: Path):
    db.parent.mkdir(parents=True, exist_ok=True)
    fh = open(db.with_name(f".{db.name}.lock"), "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise Broken(f"{db}: another `opindex build` is writing this index; wait for it to finish") from None
    return fh


def clean_stale_temps(db: Path) -> None:
    """A build or migrate killed before its rename leaves its temporary file; we hold the lock, so none is in use."""
    for stale in leftovers(db, "build", "shard", "migrate"):
        stale.unlink(missing_ok=True)


def leftovers(db: Path, *kinds: str) -> list[Path]:
    """This index's temporary files (.NAME.build-PID, .NAME.shard-PID, ...) and SQLite's journals of them
    (-journal, -wal, -shm: a migrate killed with -9 leaves its copy's journal), sorted. Names are compared, never
    globbed: an index named x*.db or x[1].db must not match the files of another index's build."""
    pattern = re.compile(re.escape(f".{db.name}.") + f"(?:{'|'.join(kinds)})" + r"-\d+(?:-own)?(?:-journal|-wal|-shm)?")
    try:
        names = os.listdir(db.parent)
    except OSError:
        return []
    return [db.parent / n for n in sorted(names) if pattern.fullmatch(n)]


def _previous(db: Path, ck: co.Checkout, warn) -> dict[str, tuple[int, int, str]] | None:
    """The files of the current index when it can be updated in place of a cold build: not when it was built
    differently (another checkout, scope, opindex or schema). Whether it is sound is _start_check's question."""
    if not db.is_file() or db.stat().st_size == 0:
        return None
    try:
        con = sqlite3.connect(readonly_uri(db), uri=True)
        try:
            from ..db import schema_version
            if schema_version(con) != schema.SCHEMA_VERSION:
                return None
            meta = dict(con.execute("SELECT key, value FROM meta"))
            if (meta.get("checkout_root") != str(ck.root) or meta.get("scope") != _scope_text(ck)
                    or meta.get("opindex_version") != __version__ or not _same_tables(con)
                    or meta.get("extractor_fingerprint") != fingerprint()
                    or meta.get("views_fingerprint") != _views_fingerprint()):
                return None
            return {p: (s, m, h) for p, s, m, h in con.execute("SELECT path, size, mtime_ns, sha1 FROM files")}
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        if is_index_file(db):  # not a file replaced with --force
            warn(f"{db}: the previous index is damaged ({exc}); rebuilding it from scratch")
        return None  # not a usable index: a cold build replaces it


def _start_check(db: Path):
    """PRAGMA quick_check of the previous index in a thread, while the checkout is walked (SQLite runs it
    without the GIL): about 0.4 s for the PyTorch 2.4 index, hidden behind the discovery. Returns a function that
    waits for the findings ([] when sound)."""
    import threading
    found: list[str] = []
    thread = threading.Thread(target=lambda: found.extend(integrity(db, quick=True)), name="opindex-quick-check",
                              daemon=True)
    thread.start()

    def wait() -> list[str]:
        thread.join()
        return found
    return wait


def _views_fingerprint() -> str:
    import hashlib
    return hashlib.sha1(repr(sorted(schema.VIEWS.items())).encode()).hexdigest()


def _same_tables(con: sqlite3.Connection) -> bool:
    """The index's columns are this code's (a development build may differ under the same version)."""
    for table, (columns, _, _) in schema.TABLES.items():
        have = tuple(r[1] for r in con.execute(f"PRAGMA table_info({table})"))
        if have != columns:
            return False
    return True


def _scope_text(ck: co.Checkout) -> str:
    return f"include={','.join(ck.scope)}; exclude={','.join(ck.excludes)}"


def _batches(tasks: list[tuple[SourceFile, str | None]], jobs: int) -> list[list]:
    """Batches of about equal bytes, big files first, so two workers finish together."""
    tasks = sorted(tasks, key=lambda t: -t[0].size)
    target = max(sum(t[0].size for t in tasks) // (jobs * 16), 1)
    batches, cur, size = [], [], 0
    for t in tasks:
        cur.append(t)
        size += t[0].size
        if size >= target or len(cur) >= 64:
            batches.append(cur)
            cur, size = [], 0
    if cur:
        batches.append(cur)
    return batches


def _prefetch(root: Path, batches: list[list]) -> None:
    """Ask the kernel to read the files ahead, in the order the workers take them: a page cache that was trimmed
    since the last build (a VM reclaims idle pages) then costs no waits on the cores doing the parsing."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    for batch in batches:
        for src, _ in batch:
            try:
                fd = os.open(root / src.path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block
            except OSError:
                continue  # the worker reports it
            try:
                advise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
            except OSError:
                pass
            finally:
                os.close(fd)


def _run_workers(root: Path, tasks, jobs: int, shard: str | None, pool=None, lock_fd: int | None = None):
    """Results per file; with several workers the fact rows travel through shard files (see workers.work)."""
    batches = _batches(tasks, jobs)
    if jobs <= 1 or len(batches) <= 1:
        _start_prefetch(root, batches)
        for batch in batches:
            yield from work(str(root), batch)
        return
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(_pool(jobs, lock_fd))
        _start_prefetch(root, batches)  # after the fork: a thread must not be running while a process forks
        for results in pool.run(str(root), batches, shard):
            yield from results


def _pool(jobs: int, lock_fd: int | None = None) -> WorkerPool:
    """The worker processes. Each compiles the tree-sitter queries as it starts (warm_up): a cold build forks
    them before discovering the files, so that work overlaps the main process's directory walk. A worker that
    dies fails the build cleanly instead of hanging it (pool.WorkerPool)."""
    return WorkerPool(jobs, lock_fd)


def _start_prefetch(root: Path, batches: list[list]) -> None:
    import threading
    threading.Thread(target=_prefetch, args=(root, batches), name="opindex-prefetch", daemon=True).start()


def build(ck: co.Checkout, db: Path, jobs: int | None = None, progress: bool = True,
          force: bool = False) -> BuildReport:
    """Build or update the index at `db`. It must be an opindex index or a new file (see db.build_target: a
    symlink is followed; `force` lets a build replace a regular file that is not an index)."""
    start = time.monotonic()
    db = build_target(db, force)
    jobs = jobs or os.cpu_count() or 1
    version = co.pytorch_version(ck.root)
    report = BuildReport(db=db, checkout=ck, pytorch_version=version)
    warn = report.warnings.append
    lock = _lock(db)
    existed = db.exists()
    try:
        with contextlib.ExitStack() as stack:
            clean_stale_temps(db)
            previous = _previous(db, ck, warn)
            damage = _start_check(db) if previous is not None else None
            # a cold build will need its workers: they start (and compile their queries) during the discovery
            pool = stack.enter_context(_pool(jobs, lock.fileno())) if previous is None and jobs > 1 else None
            sources = discover(ck.root, ck.scope, ck.excludes, warn)
            if not sources:
                raise OpindexError(f"{ck.root}: nothing to index under {', '.join(ck.scope)} "
                                   f"(is this a PyTorch checkout?)")
            if damage is not None and damage():  # a damaged page would be copied into the new index
                warn(f"{db}: the previous index is damaged ({damage()[0]}); rebuilding it from scratch")
                previous = None
            report.files_by_layer = dict(Counter(s.layer for s in sources))
            report.absent = absent_layers(sources)
            tasks, same = _plan(sources, previous)
            removed = sorted(set(previous or ()) - {s.path for s in sources})
            report.reused, report.removed = len(same), len(removed)
            if previous is not None and not tasks and not removed:
                report.up_to_date = True
                report.rows = _row_counts(db)
                report.seconds = time.monotonic() - start
                return report
            _write(db, ck, version, previous, tasks, removed, jobs, pool, report, progress, start, existed,
                   lock.fileno())
    finally:
        clean_stale_temps(db)  # the workers are stopped: what a failed or interrupted build left goes
        lock.close()
    report.seconds = time.monotonic() - start
    return report


def _write(db: Path, ck: co.Checkout, version, previous, tasks, removed, jobs, pool, report: BuildReport,
           progress: bool, start: float, existed: bool = True, lock_fd: int | None = None) -> None:
    """Extract and store into the temporary file; publish it, or remove it and leave the index as it was."""
    try:
        writer = Writer(db, base=db if previous is not None else None)
    except (sqlite3.Error, OSError) as exc:
        if is_interrupt(exc):
            raise KeyboardInterrupt from None
        raise Broken(f"{db.parent}: cannot write the index there ({_reason(exc)}); {_left(db, existed)}") \
            from None
    try:
        report.phases["discover"] = time.monotonic() - start
        writer.forget(removed)
        _load(writer, ck.root, tasks, jobs, report, progress, report.warnings.append, pool, lock_fd)
        report.rows = writer.counts()
        # with a second core, a cold build derives its call graph in a forked process beside the indexes
        writer.finish(_checkout_row(ck, version), _meta(ck, version, start, report.absent),
                      beside=jobs > 1 and previous is None and sys.platform.startswith("linux"), lock_fd=lock_fd)
        report.rows.update(writer.links)
        report.phases["finish"] = time.monotonic() - start - sum(report.phases.values()) - writer.link_seconds
        report.phases["link"] = writer.link_seconds
    except BaseException as exc:
        writer.abort()
        if isinstance(exc, WorkerDied):
            raise Broken(f"{db}: the build failed: {exc}; {_left(db, existed)} (if that file crashes the parser, "
                         f"--exclude it)") from None
        if is_interrupt(exc):  # SIGTERM, SIGHUP or Ctrl-C during a statement
            raise KeyboardInterrupt from None
        if isinstance(exc, (sqlite3.Error, OSError)):
            raise Broken(f"{db}: the build could not be written ({_reason(exc)}); {_left(db, existed)}") from None
        raise


def _left(db: Path, existed: bool) -> str:
    """What a failed build left at `db`, said as it is: a build never touches an index it did not finish."""
    if existed and db.exists():
        return "the previous index is unchanged"
    if not db.parent.exists():
        return "no index was written (its folder is gone)"
    return "the previous index is gone too (removed during the build)" if existed else "no index was written"


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _plan(sources, previous):
    """Files to (re)extract, with the old hash to compare against; files whose stat is unchanged are kept."""
    tasks, same = [], []
    for src in sources:
        old = previous.get(src.path) if previous else None
        if old is not None and old[0] == src.size and old[1] == src.mtime_ns:
            same.append(src)
        else:
            tasks.append((src, old[2] if old else None))
    return tasks, same


def _load(writer: Writer, root: Path, tasks, jobs: int, report: BuildReport, show: bool, warn,
          pool=None, lock_fd: int | None = None) -> None:
    """Stream worker results into the writer; then drop the previous rows of the files that really changed."""
    bar = Progress(len(tasks), "indexing", enabled=show)
    changed: list[str] = []
    shard = str(writer.target.with_name(f".{writer.target.name}.shard-"))
    extract_start = time.monotonic()
    gc.disable()  # unpickling rows allocates many tuples and no cycles: see workers.work
    results = _run_workers(root, tasks, jobs, shard, pool, lock_fd)
    try:
        for result in results:
            bar.advance()
            if result.unchanged:
                writer.touch_file(result.source)
                continue
            changed.append(result.source.path)
            _store(writer, result, warn)
            report.parsed += 1
    finally:
        results.close()  # on an error or Ctrl-C: a pool of its own is stopped now, before the shards are removed
        gc.enable()
        bar.close()
    merge_start = time.monotonic()
    report.phases["extract"] = merge_start - extract_start
    writer.merge(leftovers(writer.target, "shard"))
    writer.write_codegen_registrations()
    report.phases["merge"] = time.monotonic() - merge_start
    writer.forget(changed)


def _store(writer: Writer, result: FileResult, warn) -> None:
    facts, path = result.facts, result.source.path
    errors, message = facts.parse_errors, facts.message
    if result.registry is not None:
        entries, warnings = result.registry
        for w in warnings:
            warn(w)
        errors = len(warnings)
        if path.endswith("native_functions.yaml"):
            writer.add_native_functions(path, entries)
        else:
            writer.add_derivatives(path, entries)
    else:
        writer.add_facts(facts.rows)
    if message:
        warn(f"{path}: {message}")
    writer.add_file(result.source, result.sha1, errors, message)


def _row_counts(db: Path) -> dict[str, int]:
    con = sqlite3.connect(readonly_uri(db), uri=True)
    try:
        return table_counts(con)
    finally:
        con.close()


def _checkout_row(ck: co.Checkout, version: str | None) -> dict:
    return {"root": str(ck.root), "kind": ck.kind, "pytorch_version": version,
            "git_commit": co.git_commit(ck.root), "built_at": _now()}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _meta(ck: co.Checkout, version: str | None, start: float, absent: list[str]) -> dict[str, str]:
    meta = {"checkout_root": str(ck.root), "checkout_kind": ck.kind, "pytorch_version": version or "",
            "git_commit": co.git_commit(ck.root) or "", "built_at": _now(),
            "build_seconds": f"{time.monotonic() - start:.2f}", "opindex_version": __version__,
            "schema_version": schema.SCHEMA_VERSION, "scope": _scope_text(ck),
            "extractor_fingerprint": fingerprint(), "views_fingerprint": _views_fingerprint(),
            "installed_torch_version": co.installed_torch_version() or "",
            "absent_layers": ", ".join(absent)}
    return meta
