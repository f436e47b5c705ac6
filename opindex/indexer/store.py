"""store: write facts into a temporary SQLite file, in one transaction, then move it over the index.

Why SQLite's own driver here: the build is a bulk load (executemany of plain tuples), where the driver's speed is
the point. The tables come from the SQLAlchemy schema, compiled ahead into opindex/sqlite_ddl.py (a build does not
import SQLAlchemy), and the same schema serves PostgreSQL.
"""
from __future__ import annotations

import itertools
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

from ..records import (FACT_ROWS, DerivativeFormulaRow, DerivativeRow, DispatchRegistrationRow, NativeDispatchRow,
                       NativeFunctionRow, NativeUfuncLoopRow)
from ..sqlite_ddl import PER_FILE_TABLES, REGISTRY_TABLES, SCHEMA_VERSION, TABLES, VIEWS

CHECKOUT_ID = 1  # one checkout per database file for now; every row still carries it


def table_counts(con: sqlite3.Connection) -> dict[str, int]:
    """Rows per table of the schema (table names come from our metadata, never from users)."""
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def insert_sql(table: str, row_type) -> str:
    """Rows of a row type (opindex.records), inserted by its field names; checkout_id is a literal, so no tuple is
    copied to add it."""
    columns = row_type._fields
    return (f"INSERT INTO {table} ({', '.join(columns)}, checkout_id) "
            f"VALUES ({', '.join('?' * len(columns))}, {CHECKOUT_ID})")


_PER_STATEMENT = 64  # rows per INSERT statement in insert_rows


def insert_rows(con: sqlite3.Connection, table: str, rows: list[tuple]) -> None:
    """Fact rows (opindex.records tuples) into `table`, in order, 64 to an INSERT statement: one statement per row
    costs the driver a reset and a step per row, a quarter of the time of loading the facts (measured on a third
    of the PyTorch 2.4 tree: 0.95 s one row per statement, 0.67-0.71 s with 64)."""
    fields = FACT_ROWS[table]._fields
    whole = len(rows) - len(rows) % _PER_STATEMENT
    if whole:
        one = f"({', '.join('?' * len(fields))}, {CHECKOUT_ID})"
        sql = f"INSERT INTO {table} ({', '.join(fields)}, checkout_id) VALUES {', '.join([one] * _PER_STATEMENT)}"
        flat = itertools.chain.from_iterable
        con.executemany(sql, (tuple(flat(rows[i:i + _PER_STATEMENT])) for i in range(0, whole, _PER_STATEMENT)))
    if whole < len(rows):
        con.executemany(insert_sql(table, FACT_ROWS[table]), rows[whole:])


class Writer:
    """Holds the temporary file. ``commit`` publishes it; ``abort`` removes it. The old index is never touched."""

    def __init__(self, target: Path, base: Path | None):
        self.target = target
        self.temp = target.with_name(f".{target.name}.build-{os.getpid()}")
        self.fresh = base is None
        self.changed: set[str] = set()  # files re-extracted or removed by an incremental build (the link step)
        if base is not None:
            shutil.copyfile(base, self.temp)  # incremental: start from the previous index
        elif self.temp.exists():
            self.temp.unlink()
        self._connect()
        self.con.execute("BEGIN")
        if self.fresh:
            for _, create, _ in TABLES.values():  # indexes come after the load: faster
                self.con.execute(create)
        # Rows present before this build: forget() deletes only these, so it may run after the new rows went in.
        self._old_max = {t: self._max_id(t) for t in PER_FILE_TABLES + REGISTRY_TABLES + ["files"]}
        self._next_id = {t: self._old_max[t] + 1 for t in REGISTRY_TABLES + ["files"]}

    def _connect(self) -> None:
        self.con = sqlite3.connect(self.temp, isolation_level=None)
        # A private file until the rename: no journal, no syncs until the end (then one fsync).
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=MEMORY", "cache_size=-262144",
                       "locking_mode=EXCLUSIVE"):
            self.con.execute(f"PRAGMA {pragma}")
        # a Python callback every 100,000 VM steps: a SIGTERM, SIGHUP or Ctrl-C handler runs in it, and its
        # KeyboardInterrupt stops the statement (sqlite3 says "interrupted"), instead of waiting for a CREATE INDEX
        # of the 2.4 tree to end (up to 8 s)
        self.con.set_progress_handler(_let_signals_in, SIGNAL_STEPS)

    def _max_id(self, table: str) -> int:
        return self.con.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]

    def _take_ids(self, table: str, n: int) -> int:
        first = self._next_id[table]
        self._next_id[table] += n
        return first

    # -- per file --------------------------------------------------------------------------------------------
    def forget(self, paths: list[str]) -> None:
        """Delete the previous index's rows that came from these files (changed or removed)."""
        self.changed.update(paths)
        if not paths:
            return
        self.con.execute("CREATE TEMP TABLE IF NOT EXISTS gone (path TEXT PRIMARY KEY)")
        self.con.execute("DELETE FROM gone")
        self.con.executemany("INSERT OR IGNORE INTO gone VALUES (?)", [(p,) for p in paths])
        for table in PER_FILE_TABLES + REGISTRY_TABLES[::-1]:
            self.con.execute(f"DELETE FROM {table} WHERE id <= ? AND file IN (SELECT path FROM gone)",
                             (self._old_max[table],))
        self.con.execute("DELETE FROM files WHERE id <= ? AND path IN (SELECT path FROM gone)",
                         (self._old_max["files"],))

    def add_file(self, src, sha1: str, parse_errors: int, message: str | None) -> None:
        if not self.fresh:  # the old row goes now (paths are unique); its facts go in forget()
            self.con.execute("DELETE FROM files WHERE path = ? AND id <= ?", (src.path, self._old_max["files"]))
        self.con.execute(
            "INSERT INTO files (id, checkout_id, path, language, layer, module, size, mtime_ns, sha1, parse_errors,"
            " message) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (self._take_ids("files", 1), CHECKOUT_ID, src.path, src.language, src.layer, src.module, src.size,
             src.mtime_ns, sha1, parse_errors, message))

    def touch_file(self, src) -> None:
        """Same content, new stat: remember the new mtime so the next rebuild need not hash it again."""
        self.con.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (src.size, src.mtime_ns, src.path))

    def add_facts(self, rows: dict[str, list[tuple]]) -> None:
        for table, tuples in rows.items():
            if tuples:
                insert_rows(self.con, table, tuples)

    def add_native_functions(self, path: str, entries) -> None:
        """model.NativeFunction records -> native_functions rows (ids taken here), with their dispatch rows and
        ufunc loops pointing at them."""
        first = self._take_ids("native_functions", len(entries))
        fns, rows, loops = [], [], []
        for fid, e in enumerate(entries, first):
            fns.append((fid, NativeFunctionRow(
                name=e.name, overload=e.overload, full_name=e.full_name, schema=e.schema, variants=e.variants,
                structured=e.structured, structured_delegate=e.structured_delegate,
                structured_inherits=e.structured_inherits, python_module=e.python_module, tags=e.tags,
                autogen=e.autogen, category_override=e.category_override, ufunc_inner_loop=e.ufunc_inner_loop,
                is_out=e.is_out, file=path, line=e.location.line)))
            rows += [NativeDispatchRow(native_function_id=fid, function=e.full_name, dispatch_key=d.dispatch_key,
                                       kernel=d.kernel, implicit=d.implicit, file=path, line=d.location.line)
                     for d in e.dispatch]
            loops += [NativeUfuncLoopRow(native_function_id=fid, function=e.full_name, ufunc_key=u.ufunc_key,
                                         loop=u.loop, dtypes=u.dtypes, file=path, line=u.location.line)
                      for u in e.ufunc_loops]
        self._insert_with_ids("native_functions", NativeFunctionRow, fns)
        self.con.executemany(insert_sql("native_dispatch", NativeDispatchRow), rows)
        self.con.executemany(insert_sql("native_ufunc_loops", NativeUfuncLoopRow), loops)
        from ..extract.native_yaml import UFUNC_CODEGEN, ufunc_registrations
        # written after the merge (write_codegen_registrations): dispatch_registrations is a table of the workers'
        # shards, and a fresh build adopts a shard as its file
        self.codegen_registrations = [
            DispatchRegistrationRow(file=path, line=line, stub=stub, kernel=kernel, macro="REGISTER_DISPATCH",
                                    device=device, cpu_capability=None, from_macro=UFUNC_CODEGEN)
            for stub, kernel, device, line in ufunc_registrations(entries)]

    def write_codegen_registrations(self) -> None:
        """The registrations ufunc codegen writes for native_functions.yaml's ufunc_inner_loop entries (read when
        that file was parsed), once the shards are in."""
        rows = self.__dict__.pop("codegen_registrations", [])
        self.con.executemany(insert_sql("dispatch_registrations", DispatchRegistrationRow), rows)

    def add_derivatives(self, path: str, entries) -> None:
        """model.Derivative records -> derivatives rows (ids taken here), with their formulas pointing at them."""
        first = self._take_ids("derivatives", len(entries))
        ders, formulas = [], []
        for did, e in enumerate(entries, first):
            ders.append((did, DerivativeRow(
                name=e.name, overload=e.overload, full_name=e.full_name, schema=e.schema,
                output_differentiability=e.output_differentiability, dispatch=e.dispatch, file=path,
                line=e.location.line)))
            formulas += [DerivativeFormulaRow(
                derivative_id=did, function=e.full_name, dispatch_key=f.dispatch_key, inputs=f.inputs,
                formula=f.formula, is_forward=f.is_forward, uses_result=f.uses_result, uses_grads=f.uses_grads,
                file=path, line=f.location.line) for f in e.formulas]
        self._insert_with_ids("derivatives", DerivativeRow, ders)
        self.con.executemany(insert_sql("derivative_formulas", DerivativeFormulaRow), formulas)

    def _insert_with_ids(self, table: str, row_type, rows: list[tuple[int, tuple]]) -> None:
        """(id, row) pairs: an entry's id is taken here, before its dispatch rows and formulas point at it."""
        self.con.executemany(
            f"INSERT INTO {table} (id, {', '.join(row_type._fields)}, checkout_id) "
            f"VALUES (?, {', '.join('?' * len(row_type._fields))}, {CHECKOUT_ID})",
            [(rid, *row) for rid, row in rows])

    def merge(self, shards: list[Path]) -> None:
        """Bring the workers' shard files in, then delete them. A fresh build adopts the biggest shard as its file
        (it has the whole schema) and copies only the other shards and its own few rows (files, registries) into
        it: the biggest share of the rows is never copied. INSERT ... SELECT runs in C."""
        if not shards:
            return
        self.con.execute("COMMIT")  # ATTACH is not allowed inside a transaction; the file is still private
        try:
            if self.fresh:
                shards = sorted(shards, key=lambda p: p.stat().st_size, reverse=True)
                self._adopt(shards.pop(0))
            for shard in shards:
                self._copy_from(shard, PER_FILE_TABLES)
        finally:
            for shard in shards:
                shard.unlink(missing_ok=True)
            if not self.con.in_transaction:
                self.con.execute("BEGIN")

    def _adopt(self, shard: Path) -> None:
        """The shard becomes the temporary file; what this process wrote so far moves into it."""
        own = self.temp.with_name(self.temp.name + "-own")
        self.con.close()
        os.replace(self.temp, own)
        os.replace(shard, self.temp)
        self._connect()
        try:
            self._copy_from(own, [t for t in TABLES if t not in PER_FILE_TABLES], keep_ids=True)
        finally:
            own.unlink(missing_ok=True)

    def _copy_from(self, path: Path, tables: list[str], keep_ids: bool = False) -> None:
        self.con.execute("ATTACH DATABASE ? AS shard", (str(path),))
        try:
            self.con.execute("BEGIN")
            for table in tables:
                if keep_ids:
                    self.con.execute(f"INSERT INTO main.{table} SELECT * FROM shard.{table}")
                    continue
                cols = ", ".join(FACT_ROWS[table]._fields)
                self.con.execute(f"INSERT INTO main.{table} ({cols}, checkout_id) "
                                 f"SELECT {cols}, {CHECKOUT_ID} FROM shard.{table}")
            self.con.execute("COMMIT")
        finally:
            self.con.execute("DETACH DATABASE shard")

    # -- finishing -------------------------------------------------------------------------------------------
    def finish(self, checkout_row: dict, meta: dict[str, str], beside: bool = False,
               lock_fd: int | None = None) -> None:
        """Indexes, views, links and meta, then publish. `beside` (a cold build with a core to spare): the call
        graph of the link step is derived in a forked process while this one creates the indexes (link.Beside)."""
        from . import link
        call_graph = flushing = None
        try:
            if self.fresh:
                if beside:
                    # the facts are complete: committed, and the file's lock let go, so that a forked process can
                    # read them while the indexes are created here. The cache stays big: a write that spilled it
                    # would have to wait for that reader (and may, rather than fail).
                    self.con.execute("COMMIT")
                    self.con.execute("PRAGMA locking_mode=NORMAL")
                    self.con.execute("SELECT count(*) FROM sqlite_master").fetchone()  # lets the lock go
                    self.con.execute("PRAGMA busy_timeout=600000")
                    call_graph = link.Beside(self.temp, checkout_row.get("root"), lock_fd)
                    # the committed facts, most of the file, go to disk now, while the indexes are created: the
                    # fsync before the rename then has only the rest to write (0.1 s of the tail on the 2.4 tree)
                    flushing = threading.Thread(target=_flush, args=(self.temp,), daemon=True)
                    flushing.start()
                    self.con.execute("BEGIN")
                else:
                    # A small cache makes the sorter sort several runs and merge them, which beat one big
                    # in-memory sort by 10-15% on the PyTorch 2.4 index (1.8 s instead of 2.1 s for all indexes;
                    # docs/benchmarks.md, "What made it faster").
                    self.con.execute("PRAGMA cache_size=-16384")
                # the workers are done: index sorts may use the idle cores (SQLite's sorter threads)
                self.con.execute(f"PRAGMA threads={min(4, os.cpu_count() or 1)}")
                for _, _, indexes in TABLES.values():
                    for index in indexes:
                        self.con.execute(index)
                self.con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)")
                self.con.execute("INSERT INTO alembic_version VALUES (?)", (SCHEMA_VERSION,))
            for name in VIEWS:
                self.con.execute(f"DROP VIEW IF EXISTS {name}")
            for name, sql in VIEWS.items():
                self.con.execute(f"CREATE VIEW {name} AS {sql}")
            started = time.monotonic()
            self.links = link.derive(self.con, checkout_row.get("root"), None if self.fresh else self.changed,
                                     beside=call_graph)
            self.link_seconds = time.monotonic() - started
            self.con.execute("DELETE FROM checkouts")
            self.con.execute("INSERT INTO checkouts (id, root, kind, pytorch_version, git_commit, built_at) "
                             "VALUES (:id, :root, :kind, :pytorch_version, :git_commit, :built_at)",
                             {"id": CHECKOUT_ID, **checkout_row})
            self.con.execute("DELETE FROM meta")
            self.con.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            self.con.execute("COMMIT")
            self.con.execute("PRAGMA journal_mode=DELETE")
            self.con.close()
            if flushing is not None:
                flushing.join()
            fd = os.open(self.temp, os.O_RDONLY)
            try:
                os.fsync(fd)  # the data is on disk before the rename makes it the index
            finally:
                os.close(fd)
            os.replace(self.temp, self.target)
        except BaseException:
            if call_graph is not None:
                call_graph.stop()  # interrupted or failed: its rows will not be read
                call_graph = None
            raise
        finally:
            if call_graph is not None:
                call_graph.close()  # it ended while this process committed: reaped now, without a wait

    def counts(self) -> dict[str, int]:
        return table_counts(self.con)

    def abort(self) -> None:
        try:
            self.con.close()
        finally:
            self.temp.unlink(missing_ok=True)


SIGNAL_STEPS = 100_000  # VM steps between two chances for a signal handler: a few ms of a CREATE INDEX


def _let_signals_in() -> int:
    return 0


def is_interrupt(exc: BaseException) -> bool:
    """A statement stopped by a signal handler's KeyboardInterrupt in _let_signals_in."""
    return isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted"


def _flush(path: Path) -> None:
    """Write a file's dirty pages to disk (a head start for the fsync that publishes it; any error shows there)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
