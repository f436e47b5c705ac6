"""Issue 33, item 4: one huge value defeated `opindex sql --timeout` (randomblob(5e7) or a doubling CTE ran 5 s and
1.2-1.4 GB under --timeout 1; three randomblob(3e8) under --timeout 2 ran 92 s and 18.6 GB). A query now runs
under a length limit for each value, a memory limit for SQLite and a watchdog for the time."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from opindex.api import Index
from opindex.query import QueryTimeout
from opindex.sql_limits import QueryLimit

DOUBLING = ("WITH RECURSIVE r(x, n) AS (SELECT 'ab', 0 UNION ALL SELECT x || x, n + 1 FROM r WHERE n < 40) "
            "SELECT length(x) FROM r")
SIX_ROWS = "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6"
VALUE_STOP = ("Error: the query made a string or blob longer than 1,000,000 bytes and was stopped (--max-value BYTES "
              "raises the limit, --max-value 0 lifts it)\n")
MEMORY_STOP = ("Error: the query needed more than 256 MB of SQLite's memory and was stopped (--max-memory MB raises "
               "the limit, --max-memory 0 lifts it)\n")

# the command in a child that reports its own peak memory (VmHWM, KB: ru_maxrss would count the forking
# parent's pages too) as the last line of stderr
MEASURED = ("import sys\nfrom opindex.cli import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
            "    print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0],\n"
            "          file=sys.stderr)\n")


def sql(db, *args) -> tuple[int, str, float, int]:
    """(exit code, stderr without the memory line, seconds, peak RSS in MB) of `opindex sql ARGS`."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", MEASURED, "sql", *args, "--db", str(db)], capture_output=True,
                          text=True, timeout=120)
    *err, rss = proc.stderr.splitlines()
    return proc.returncode, "".join(line + "\n" for line in err), time.monotonic() - started, int(rss) // 1024


@pytest.mark.parametrize("query, timeout", [("SELECT randomblob(5e7)", "1"), (DOUBLING, "1"),
                                            ("SELECT randomblob(3e8), randomblob(3e8), randomblob(3e8)", "2")])
def test_one_huge_value_is_stopped_at_the_value_limit(sample_db, query, timeout):
    code, err, seconds, rss = sql(sample_db, query, "--timeout", timeout)
    assert (code, err) == (4, VALUE_STOP)
    assert seconds < 10 and rss < 150, (seconds, rss)


@pytest.mark.parametrize("query", [DOUBLING, "SELECT randomblob(3e8), randomblob(3e8), randomblob(3e8)"])
def test_with_the_value_limit_lifted_the_memory_limit_holds(sample_db, query):
    code, err, seconds, rss = sql(sample_db, query, "--timeout", "2", "--max-value", "0")
    assert (code, err) == (4, MEMORY_STOP)
    assert rss < 256 + 150, rss


def test_a_value_under_the_limits_is_written(sample_db):
    code, err, _, _ = sql(sample_db, "SELECT length(randomblob(1000000)) AS n, length(randomblob(2e8)) AS m",
                          "--max-value", "0", "--ndjson")
    assert (code, err) == (0, "")


def test_the_watchdog_stops_a_query_whose_steps_are_slow(sample_db):
    """Six steps of 0.3 s or more each: the progress handler (every 1,000 VM steps) never runs, the watchdog does."""
    with Index(sample_db) as ix:
        started = time.monotonic()
        with pytest.raises(QueryTimeout, match="ran past its time limit of 0.5 s"):
            ix.rows(f"SELECT length(randomblob(1e8)) FROM ({SIX_ROWS})", timeout=0.5, max_value=0, max_memory_mb=0)
        assert time.monotonic() - started < 1.5
        assert ix.rows("SELECT 1 AS x") == [{"x": 1}]  # the connection is usable after it


def test_the_library_takes_the_same_limits_and_puts_them_back(sample_db):
    import sqlite3
    with Index(sample_db) as ix:
        with pytest.raises(QueryLimit, match="longer than 1,000 bytes"):
            ix.rows("SELECT randomblob(2000)", max_value=1000)
        assert ix.con.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 1_000_000_000  # the trace's queries run unlimited
        assert ix.rows("SELECT length(randomblob(2000)) AS n") == [{"n": 2000}]


def test_long_values_are_fetched_a_few_at_a_time(ix):
    """A fetch takes as many rows as fit 4 MB: 500 rows of 1 MB would be 500 MB in Python at once."""
    with ix.stream(f"SELECT randomblob(1000000) AS b FROM ({SIX_ROWS})") as found:
        sizes = []
        for row in found:
            sizes.append(found._batch)
    assert len(sizes) == 6 and sizes[0] == 4
    with ix.stream("SELECT 1 AS x") as found:
        list(found)
    assert found._batch == 500


def test_queries_of_two_threads_leave_no_heap_limit_behind():
    """Two queries at once (threads on two Index objects) end in either order: the most permissive limit holds
    while both run, and the limit from before comes back after the last (each putting back the limit it found, as
    a first version did, left B's behind when A ended first)."""
    from opindex import sql_limits
    set_limit = sql_limits._HEAP[0]
    before = set_limit(-1)
    heap = sql_limits._HeapLimits()
    a = heap.ask(300 << 20)
    b = heap.ask(200 << 20)
    assert set_limit(-1) == 300 << 20
    heap.done(a)
    assert set_limit(-1) == 200 << 20
    heap.done(b)
    assert set_limit(-1) == before
