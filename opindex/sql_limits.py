"""The limits a user's query runs under (`opindex sql`, `Index.rows/sql/stream`), so that no single value defeats
them: SQLite's own clock check runs between VM instructions, and one instruction can take seconds and gigabytes
(`randomblob(3e8)`, `x || x` of a doubling CTE). Each limit is stated in the error that stops a query and can be
lifted (0).

- time: a watchdog thread interrupts SQLite at the deadline (sqlite3_interrupt is safe from another thread), so
  the limit holds whatever the instructions cost; the progress handler stays for Ctrl-C.
- a value's length: SQLite's length limit (SQLITE_LIMIT_LENGTH) on the connection while the query runs; the
  longest value an index holds is a few KB (20 KB at most on the 2.4 tree), so the default is far above any real one.
- memory: SQLite's hard heap limit while the query runs, counted on top of what SQLite held before it started
  (the limit is process-wide in SQLite: it is set for the query and put back after)."""
from __future__ import annotations

import ctypes
import sqlite3
import threading
from dataclasses import dataclass

from .model import OpindexError

MAX_VALUE = 1_000_000  # bytes of one string or blob a query may make (--max-value)
MAX_MEMORY_MB = 256  # SQLite memory a query may take, in MB (--max-memory)
_SQLITE_MAX_LENGTH = 1_000_000_000  # SQLite's compiled-in length limit: what --max-value 0 gives back


class QueryLimit(OpindexError):
    """A query stopped at one of its limits (time, a value's length, memory): exit 4."""
    exit_code = 4


@dataclass(frozen=True)
class Limits:
    timeout: float | None = None  # seconds spent in SQLite; None or 0: none
    max_value: int | None = MAX_VALUE  # bytes; None or 0: SQLite's own limit
    max_memory_mb: float | None = MAX_MEMORY_MB  # None or 0: none

    def value_error(self) -> QueryLimit:
        return QueryLimit(f"the query made a string or blob longer than {self.max_value:,} bytes and was stopped "
                          f"(--max-value BYTES raises the limit, --max-value 0 lifts it)")

    def memory_error(self) -> QueryLimit:
        return QueryLimit(f"the query needed more than {self.max_memory_mb:g} MB of SQLite's memory and was "
                          f"stopped (--max-memory MB raises the limit, --max-memory 0 lifts it)")


def _heap_functions():
    """sqlite3_hard_heap_limit64 and sqlite3_memory_used of the SQLite the sqlite3 module runs on (linked into
    _sqlite3 or loaded with it), or None where they cannot be reached."""
    try:
        import _sqlite3
        lib = ctypes.CDLL(_sqlite3.__file__)
        limit, used = lib.sqlite3_hard_heap_limit64, lib.sqlite3_memory_used
    except (ImportError, OSError, AttributeError):
        return None
    limit.restype, limit.argtypes = ctypes.c_int64, [ctypes.c_int64]
    used.restype, used.argtypes = ctypes.c_int64, []
    return limit, used


_HEAP = _heap_functions()


class _HeapLimits:
    """The heap limit is one per process: queries running at once (threads, open streams) each ask for theirs, the
    most permissive holds while any runs, and the limit set before the first comes back after the last (put back in
    turn by each, interleaved streams would leave a stale limit behind)."""

    def __init__(self):
        self.lock, self.asked, self.before, self.n = threading.Lock(), {}, None, 0

    def ask(self, limit: int) -> int:
        with self.lock:
            self.n += 1
            if not self.asked:
                self.before = _HEAP[0](-1)  # a negative argument reads the limit without changing it
            self.asked[self.n] = limit
            _HEAP[0](max(self.asked.values()))
            return self.n

    def done(self, key: int) -> None:
        with self.lock:
            self.asked.pop(key, None)
            _HEAP[0](max(self.asked.values()) if self.asked else self.before)


_heap = _HeapLimits()


class Running:
    """One stretch of a query inside SQLite (its first step, or one fetch) under `limits`: the length limit and the
    heap limit set, a watchdog armed with the time left. `expired` says whether the watchdog stopped it."""

    def __init__(self, con: sqlite3.Connection, limits: Limits, time_left: float | None):
        self.con, self.limits, self.time_left = con, limits, time_left
        self.expired = False
        self._timer = self._old_length = self._heap_key = None

    def __enter__(self):
        lim = self.limits
        self._old_length = self.con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, lim.max_value or _SQLITE_MAX_LENGTH)
        if lim.max_memory_mb and _HEAP:
            self._heap_key = _heap.ask(_HEAP[1]() + int(lim.max_memory_mb * 2**20))
        if self.time_left is not None:
            self._timer = threading.Timer(max(self.time_left, 0.0), self._expire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _expire(self):
        self.expired = True
        self.con.interrupt()

    def __exit__(self, *exc):
        if self._timer is not None:
            self._timer.cancel()
        if self._heap_key is not None:
            _heap.done(self._heap_key)
        self.con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self._old_length)
        return False


def is_too_big(exc: BaseException) -> bool:
    """SQLite's SQLITE_TOOBIG: a value past the length limit (the sqlite3 module raises DataError)."""
    return isinstance(exc, sqlite3.DatabaseError) and "too big" in str(exc)
