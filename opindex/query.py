"""Running SQL over an open index the way a user's query needs it: rows streamed (never all in memory), every column
kept under a unique name, a time limit, Ctrl-C honoured while SQLite runs, and a damaged index told apart from a
mistake in the SQL. `Index.rows`, `Index.sql` and `opindex sql` all go through here."""
from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from .db import Broken, UsageError
from .sql_limits import Limits, QueryLimit, Running, is_too_big

_BATCH = 500  # rows per fetch at most: memory stays flat however many rows a query returns
_BATCH_BYTES = 4 << 20  # text and blob bytes per fetch: fewer rows a fetch when they are long (they can be 1 MB each)
_CHECK_EVERY = 1000  # SQLite VM instructions between two looks at the clock (and at Ctrl-C)
_DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


class QueryTimeout(QueryLimit):
    """A query ran past its time limit: exit 4."""


def damaged(path: Path | str, exc: BaseException) -> Broken:
    """The one message for an index SQLite cannot read although it opened (a damaged page, a missing table)."""
    return Broken(f"{path}: index damaged: run `opindex build` to rebuild it ({exc})")


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _DAMAGE_CODES
    text = str(exc)
    return "malformed" in text or "not a database" in text


def unique_columns(names: list[str]) -> list[str]:
    """Every column kept, in order; a repeated name gets _2, _3, ... (as sqlite-utils and datasette show them),
    never a name another column has or was given (`x, x, x_2` -> x, x_3, x_2)."""
    given, taken = set(names), set()
    out = []
    for name in names:
        candidate, n = name, 1
        while candidate in taken or (n > 1 and candidate in given):
            n += 1
            candidate = f"{name}_{n}"
        taken.add(candidate)
        out.append(candidate)
    return out


def text(value, what: str = "name") -> str:
    """A str SQLite can bind. Bytes a non-UTF-8 locale turned into surrogates (a name typed under LC_ALL=C) are
    read back as the UTF-8 they were; anything else that cannot be UTF-8 becomes U+FFFD, so it matches nothing."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        pass
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # lone surrogates that no decoding made
        raw = value.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def _params(params):
    if isinstance(params, dict):
        return {k: text(v, f"parameter {k}") if isinstance(v, str) else v for k, v in params.items()}
    return tuple(text(v, "parameter") if isinstance(v, str) else v for v in params)


class RowStream:
    """The rows of one read-only query, fetched as they are read. `columns` is known before the first row.

    `timeout` (seconds; None or 0: none) limits the time spent inside SQLite, not the time the reader takes over
    each row (a pager may wait for a person); `max_value` (bytes) the longest string or blob the query may make and
    `max_memory_mb` the memory SQLite may take for it (sql_limits; None or 0: none). Ctrl-C stops SQLite within a
    few thousand VM steps and arrives as KeyboardInterrupt; a query past a limit raises QueryLimit (QueryTimeout
    for the time)."""

    def __init__(self, con: sqlite3.Connection, path, query: str, params=(), timeout: float | None = None,
                 max_value: int | None = Limits.max_value, max_memory_mb: float | None = Limits.max_memory_mb):
        self.con, self.path, self.timeout = con, path, timeout or None
        self.limits = Limits(self.timeout, max_value, max_memory_mb)
        self.spent, self._started = 0.0, None
        self.cur, self._batch = None, 1  # the first fetch takes one row: its size sets how many the next take
        query = self.query = text(query, "query")  # kept: an unknown column is looked for in its tables first
        params = _params(params)
        with self._running():
            self.cur = con.execute(query, params)
        self.columns = unique_columns([d[0] for d in self.cur.description or ()])

    def _check(self) -> int:
        # a Python callback, so a pending Ctrl-C is raised here: sqlite3 then stops the statement ("interrupted")
        if self.timeout and self.spent + time.monotonic() - self._started > self.timeout:
            return 1
        return 0

    def _running(self):
        stream = self

        class Stretch:
            def __enter__(self):
                stream._started = time.monotonic()
                left = stream.timeout - stream.spent if stream.timeout else None
                self.limits = Running(stream.con, stream.limits, left).__enter__()
                stream.con.set_progress_handler(stream._check, _CHECK_EVERY)

            def __exit__(self, kind, exc, tb):
                stream.con.set_progress_handler(None, 0)
                self.limits.__exit__(kind, exc, tb)
                stream.spent += time.monotonic() - stream._started
                if isinstance(exc, MemoryError) and stream.limits.max_memory_mb:
                    raise stream.limits.memory_error() from None  # SQLITE_NOMEM at the heap limit
                if isinstance(exc, sqlite3.DatabaseError):
                    raise stream._error(exc, self.limits.expired) from None
                return False
        return Stretch()

    def _error(self, exc: sqlite3.DatabaseError, expired: bool = False) -> BaseException:
        msg = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and msg == "interrupted":
            if expired or (self.timeout and self.spent > self.timeout):
                return QueryTimeout(f"the query ran past its time limit of {self.timeout:g} s and was stopped "
                                    f"(--timeout SECONDS raises it, --timeout 0 lifts it)")
            return KeyboardInterrupt()
        if is_too_big(exc) and self.limits.max_value:
            return self.limits.value_error()
        if is_damage(exc):
            return damaged(self.path, exc)
        if "not authorized" in msg or "prohibited" in msg or "readonly" in msg:
            return UsageError(f"opindex sql is read-only: {msg}")
        return UsageError(f"SQL error: {msg}{_near(self.con, msg, getattr(self, 'query', ''))}")

    def _next_batch(self, batch: list) -> int:
        """Rows for the next fetch: as many as fit _BATCH_BYTES at the size of this batch's longest end row."""
        size = max(_row_bytes(batch[0]), _row_bytes(batch[-1]), 1)
        return max(1, min(_BATCH, _BATCH_BYTES // size))

    def __iter__(self) -> Iterator[dict]:
        cols = self.columns
        while True:
            with self._running():
                batch = self.cur.fetchmany(self._batch)
            if not batch:
                return
            self._batch = self._next_batch(batch)
            for row in batch:
                yield dict(zip(cols, row))

    def close(self) -> None:
        if self.cur is not None:
            self.cur.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _row_bytes(row) -> int:
    return sum(len(v) for v in row if isinstance(v, (str, bytes)))


def _near(con: sqlite3.Connection, msg: str, query: str = "") -> str:
    """For "no such table: X" and "no such column: X": the tables (views) or columns named like X, and where they
    are all listed. A column is looked for first among the columns of the tables `query` names (said so)."""
    import re
    for what in ("table", "column"):
        if msg.startswith(f"no such {what}: "):
            wrong = msg.split(": ", 1)[1].rpartition(".")[2]
            break
    else:
        return ""
    try:
        tables = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND "
                                            "name NOT LIKE 'sqlite%' ORDER BY name")]
        columns = lambda among: sorted({c for t in among for (c,) in con.execute(  # noqa: E731
            "SELECT name FROM pragma_table_info(?)", (t,))})
        if what == "table":
            near, where = _close(wrong, tables), ""
        else:
            named = [t for t in tables if re.search(rf"\b{re.escape(t)}\b", query, re.IGNORECASE)]
            near = _close(wrong, columns(named)) if named else []
            where = f" (columns of {', '.join(named)})" if near else ""
            near = near or _close(wrong, columns(tables))
    except sqlite3.DatabaseError:
        return ""
    return (f"; did you mean {', '.join(near)}{where}?" if near else "") + \
        " (`opindex schema` lists every table, column and view)"


def _close(wrong: str, names: list[str]) -> list[str]:
    """At most five of `names` like `wrong`: ending in _wrong (stubs -> dispatch_stubs), close in spelling,
    holding it."""
    import difflib
    low = wrong.lower().rstrip("s")
    near = [n for n in names if n.lower().endswith(f"_{wrong.lower()}")]
    near += difflib.get_close_matches(wrong, names, n=3, cutoff=0.6)
    near += sorted((n for n in names if low and low in n.lower()), key=len)
    return list(dict.fromkeys(near))[:5]


def name_pattern(pattern: str, exact: bool = False) -> tuple[str, str]:
    """(SQL operator, operand) for a name as `opindex find` takes it: literal, except `*` (any run of characters)
    and `?` (one character); `\\*`, `\\?` and `\\\\` are a literal star, question mark and backslash. `[`, `]` and
    every other character match themselves (`operator[]`). With `exact`, the whole name is literal."""
    if exact:
        return "=", pattern
    glob, literal, wild, i = [], [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*?\\":
            c = pattern[i + 1]
            i += 2
            glob.append({"*": "[*]", "?": "[?]"}.get(c, c))
            literal.append(c)
            continue
        i += 1
        if c in "*?":
            wild = True
            glob.append(c)
        else:
            glob.append("[[]" if c == "[" else c)
        literal.append(c)
    return ("GLOB", "".join(glob)) if wild else ("=", "".join(literal))
