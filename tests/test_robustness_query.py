"""Issue 16, the query side (and issue 15's CLI conventions): literal names, any encoding, a damaged index, streamed
and interruptible SQL with a time limit, bounded name resolution, `::name`, one exit-code convention."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE

from opindex.api import Index, build
from opindex.cli import main
from opindex.db import Broken

FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
COUNT_FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

ODD_CU = """namespace at { namespace native {

struct Vec {
  float operator[](int i) const { return 0.f; }
  Vec operator*(const Vec& other) const { return other; }
};

float operator_plain(float x) { return x; }

__global__ void shared_name_kernel(float* out) { out[0] = 1.f; }

void launch_namespaced(float* out) { shared_name_kernel<<<1, 1>>>(out); }

}}  // namespace at::native

__global__ void shared_name_kernel(float* out) { out[0] = 2.f; }

void launch_global(float* out) { ::shared_name_kernel<<<1, 1>>>(out); }
"""

ODD_PY = """class LSTM:
    def forward(self, x):
        return x


def café(x):
    return x


def turn_τ(x):
    return x
"""


@pytest.fixture(scope="module")
def odd_db(tmp_path_factory) -> Path:
    """The sample plus names that are hard to look up: operator[] and operator*, a __global__ kernel in the global
    namespace and in at::native, a second Python class LSTM, a non-ASCII def, and a torch that imports itself."""
    root = tmp_path_factory.mktemp("odd")
    co = root / "checkout"
    shutil.copytree(SAMPLE, co)
    (co / "aten/src/ATen/native/cuda/Odd.cu").write_text(ODD_CU)
    (co / "torch/ao/quantized").mkdir(parents=True)
    for init in ("torch/ao/__init__.py", "torch/ao/quantized/__init__.py"):
        (co / init).write_text("")
    (co / "torch/ao/quantized/rnn.py").write_text(ODD_PY, encoding="utf-8")
    with open(co / "torch/__init__.py", "a") as fh:
        fh.write("import torch\n")
    db = root / "odd.sqlite"
    build(str(co), db, jobs=1)
    return db


def cli(db: Path, *args: str):
    return CliRunner().invoke(main, [*args, "--db", str(db)])


def run(db: Path, *args, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """The real `opindex` in a fresh interpreter (argv bytes, locale and output encoding as a shell gives them)."""
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "opindex", *args, "--db", str(db)], capture_output=True,
                          env=full, timeout=timeout)


def names(result) -> list[str]:
    return [line.split(",")[0] for line in result.output.splitlines()[1:]]


# -- 4: find is literal but for * and ? ----------------------------------------------------------------------------
def test_find_brackets_are_literal(odd_db):
    result = cli(odd_db, "find", "operator[]", "--csv")
    assert result.exit_code == 0, result.output
    assert names(result) == ["operator[]"]


def test_find_star_is_a_wildcard_unless_escaped_or_exact(odd_db):
    wild = cli(odd_db, "find", "operator*", "--kind", "method", "--csv")
    assert "operator[]" in names(wild) and "operator*" in names(wild)
    assert names(cli(odd_db, "find", r"operator\*", "--csv")) == ["operator*"]
    assert names(cli(odd_db, "find", "operator*", "--exact", "--csv")) == ["operator*"]
    assert names(cli(odd_db, "find", "operator?", "--csv")) == ["operator*"]  # ? is one character


@pytest.mark.parametrize("pattern, expected", [
    ("operator[]", ("=", "operator[]")),
    ("relu", ("=", "relu")),
    ("*lstm*", ("GLOB", "*lstm*")),
    (r"operator\*", ("=", "operator*")),
    (r"a\?b", ("=", "a?b")),
    (r"x\\y", ("=", "x\\y")),
    ("a[b*", ("GLOB", "a[[]b*")),
    (r"a\*b*", ("GLOB", "a[*]b*")),
])
def test_name_pattern(pattern, expected):
    from opindex.query import name_pattern
    assert name_pattern(pattern) == expected


def test_find_exact_in_the_library(odd_db):
    with Index(odd_db) as ix:
        assert [s.name for s in ix.find("operator*", exact=True)] == ["operator*"]
        assert [s.name for s in ix.find("operator[]")] == ["operator[]"]


@pytest.mark.parametrize("name", ["%", "%%", "%_", "\\%"])
def test_suggestions_treat_like_characters_literally(odd_db, name):
    result = cli(odd_db, "trace", name)
    assert result.exit_code == 1, result.output
    assert "did you mean" not in result.output  # `%` suggested every op (t, eq, ge, ...) before


# -- 5: no UnicodeEncodeError -----------------------------------------------------------------------------------
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


@pytest.mark.parametrize("args", [
    ["trace", b"\xff"], ["find", b"\xff"], ["callers", b"\xff"], ["callees", b"\xff"], ["op", b"\xff"],
    ["stub", b"\xff"], ["trace", "é".encode()], ["sql", "SELECT :n AS n", "-p", "n", b"\xff"],
])
def test_non_utf8_names_under_the_c_locale(odd_db, args):
    proc = run(odd_db, *args, env=C_LOCALE)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == (0 if args[0] == "sql" else 1)


def test_a_non_ascii_name_typed_under_the_c_locale_is_found(odd_db):
    proc = run(odd_db, "find", "café".encode(), "--csv", env=C_LOCALE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().splitlines()[1].startswith("café,torch.ao.quantized.rnn.café,function,")


def test_lone_surrogates_in_the_library(odd_db):
    with Index(odd_db) as ix:
        assert not ix.trace("\ud800").hops
        assert ix.trace("\udcff").unknown
        assert ix.find("\ud800x") == [] and ix.op("\ud800") == [] and ix.stub("\ud800") is None
        assert ix.callers("\ud800") == [] and ix.callees("\ud800") == []
        assert ix.rows("SELECT :n AS n", {"n": "a\ud800"}) == [{"n": "a\ufffd\ufffd\ufffd"}]
        assert ix.rows("SELECT '\udcff' AS n") == [{"n": "\ufffd"}]


# -- 6: a damaged index is one message, never a sqlite3 traceback --------------------------------------------------
def _damage_all_tables(db: Path) -> None:
    """Overwrite the root page of every table but alembic_version: the file opens and passes the schema check."""
    con = sqlite3.connect(db)
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    roots = [r for (r,) in con.execute("SELECT rootpage FROM sqlite_master WHERE type IN ('table', 'index') "
                                       "AND name != 'alembic_version' AND rootpage > 1")]
    con.close()
    with open(db, "r+b") as fh:
        for root in roots:
            fh.seek((root - 1) * page_size)
            fh.write(b"\xff" * page_size)


@pytest.fixture(scope="module")
def damaged_db(sample_db, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("damaged") / "i.sqlite"
    db.write_bytes(sample_db.read_bytes())
    _damage_all_tables(db)
    return db


@pytest.mark.parametrize("args", [
    ["trace", "relu"], ["trace", "nn.LSTM"], ["trace", "add_stub"], ["trace", "relu", "--up"],
    ["trace", "relu", "--json"], ["find", "relu"], ["find", "*relu*"], ["callers", "relu"], ["callees", "relu"],
    ["op", "relu"], ["stub", "add_stub"], ["kernels"], ["stats"], ["sql", "SELECT * FROM symbols"],
    ["sql", "SELECT count(*) FROM calls"],
])
def test_every_query_path_reports_a_damaged_index(damaged_db, args):
    result = cli(damaged_db, *args)
    assert result.exit_code == 3, result.output
    assert result.output.startswith(f"Error: {damaged_db}: index damaged: run `opindex build` to rebuild it (")
    assert len(result.output.splitlines()) == 1
    assert not isinstance(result.exception, sqlite3.Error)


def test_the_library_raises_broken_on_a_damaged_index(damaged_db):
    with Index(damaged_db) as ix:
        for call in (lambda: ix.trace("relu"), lambda: ix.find("relu"), lambda: ix.callers("relu"),
                     lambda: ix.op("relu"), lambda: ix.stub("add_stub"), lambda: ix.rows("SELECT * FROM calls"),
                     lambda: ix.stats(), lambda: ix.meta):
            with pytest.raises(Broken, match="index damaged: run `opindex build` to rebuild it"):
                call()


# -- 8: streamed SQL, any output encoding, BrokenPipe, a clear TypeError ----------------------------------------------
def test_sql_streams_rows_while_the_query_runs(sample_db):
    """An endless query: the first rows arrive at once (nothing is collected first), the reader can stop it."""
    proc = subprocess.Popen([sys.executable, "-m", "opindex", "sql", FOREVER, "--ndjson", "--timeout", "0",
                             "--db", str(sample_db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = [proc.stdout.readline() for _ in range(3)]
        assert [json.loads(line)["x"] for line in first] == [1, 2, 3]  # each row also names its index
        proc.stdout.close()  # the reader goes away: EPIPE ends the command, quietly
        assert proc.wait(timeout=30) == 141
        assert b"Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("fmt", ["json", "ndjson", "csv", "tsv", "table"])
def test_streamed_output_is_what_the_listing_renderer_prints(ix, fmt):
    from opindex.render.rows import render
    from opindex.render.stream import write_rows
    query = "SELECT name, qualified_name, kind, file, line FROM symbols ORDER BY id LIMIT 50"
    out: list[str] = []
    with ix.stream(query) as found:
        assert write_rows(found, found.columns, fmt, out.append) == 50
    assert "".join(out) == render(ix.rows(query), fmt)


def test_a_long_table_keeps_its_first_widths(monkeypatch):
    from opindex.render import stream
    monkeypatch.setattr(stream, "BLOCK", 3)
    out: list[str] = []
    rows = [{"a": "x" * n, "b": n} for n in (1, 2, 3, 9)]
    assert stream.write_rows(iter(rows), ["a", "b"], "table", out.append) == 4
    assert "".join(out) == "a    b\n---  -\nx    1\nxx   2\nxxx  3\nxxxxxxxxx  9\n(4 rows)\n"


@pytest.mark.parametrize("args", [["trace", "nn.LSTM"], ["trace", "relu", "--markdown"], ["find", "*", "--table"],
                                  ["sql", "SELECT 'a…b' AS x", "--table"]])
def test_any_output_encoding_works(odd_db, args):
    proc = run(odd_db, *args, env={"PYTHONIOENCODING": "latin-1"})
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in proc.stderr
    if args[0] == "sql":
        assert proc.stdout.startswith(b"x\n---\na?b\n(1 row)\nindex ")
    if args[0] == "find":  # turn_τ: τ is not latin-1
        assert b" torch.ao.quantized.rnn.turn_? " in proc.stdout


@pytest.mark.parametrize("bad", [None, 3, b"relu"])
def test_a_name_that_is_not_a_str(ix, bad):
    for call in (ix.trace, ix.find, ix.op, ix.stub, ix.callers, ix.callees):
        with pytest.raises(TypeError, match=f"name must be a str, not {type(bad).__name__}"):
            call(bad)


# -- 9: name resolution is bounded --------------------------------------------------------------------------------
@pytest.fixture
def within():
    """Fail (instead of running for minutes) when the block takes longer than `seconds`."""
    def timeout(signum, frame):
        raise TimeoutError("took too long")
    previous = signal.signal(signal.SIGALRM, timeout)

    class Budget:
        def __init__(self, seconds: float):
            self.seconds = seconds

        def __enter__(self):
            self.started = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, self.seconds * 20)

        def __exit__(self, *exc):
            signal.setitimer(signal.ITIMER_REAL, 0)
            took = time.monotonic() - self.started
            assert took < self.seconds, f"{took:.2f} s"
    yield Budget
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name", ["torch." * 26 + "relu", "torch." * 26 + "nothing", "torch.torch." * 12 + "nn.LSTMM",
                                  "a." * 1600 + "relu", "nn." * 400 + "nothing", "F." * 1000 + "x"])
def test_names_through_a_self_importing_module_answer_at_once(odd_db, within, name):
    from opindex.trace.names import resolve
    with Index(odd_db) as ix:
        resolve(ix.con, "nn.LSTM")  # warm: the module list is read once per index
        with within(1.0):
            resolve(ix.con, name)
        with within(3.0):  # the whole trace: lookup, suggestions, walk
            ix.trace(name)


def test_a_self_import_still_resolves(odd_db):
    from opindex.trace.names import resolve
    with Index(odd_db) as ix:
        found = resolve(ix.con, "torch.torch.torch.nn.LSTM")
    assert [(r.kind, r.qualified_name) for r in found] == [("python_class", "torch.nn.modules.rnn.LSTM")]
    assert found[0].via[:3] == ("torch.torch.torch.nn.LSTM", "torch.torch.nn.LSTM", "torch.nn.LSTM")


# -- 10: SQL has a time limit and stops on Ctrl-C -------------------------------------------------------------------
def test_sql_timeout(sample_db):
    started = time.monotonic()
    result = cli(sample_db, "sql", COUNT_FOREVER, "--timeout", "0.5")
    assert time.monotonic() - started < 5
    assert result.exit_code == 4
    assert result.output == ("Error: the query ran past its time limit of 0.5 s and was stopped (--timeout SECONDS "
                             "raises it, --timeout 0 lifts it)\n")


def test_sql_default_timeout_is_documented():
    result = CliRunner().invoke(main, ["sql", "--help"])
    assert "--timeout SECONDS" in result.output and "[default: 30; x>=0]" in result.output


@pytest.fixture
def watchdog(ix):
    """Stop a query that runs on past 15 s (an opindex that cannot stop one would hang the suite)."""
    import threading
    timer = threading.Timer(15, ix.con.interrupt)
    timer.start()
    yield
    timer.cancel()


def test_library_timeout(ix, watchdog):
    from opindex.query import QueryTimeout
    with pytest.raises(QueryTimeout, match="time limit of 0.3 s"):
        ix.sql(COUNT_FOREVER, timeout=0.3)
    with pytest.raises(QueryTimeout):
        ix.rows(COUNT_FOREVER, timeout=0.3)
    assert ix.rows("SELECT 1 AS one") == [{"one": 1}]  # the connection is usable afterwards


def test_the_time_limit_counts_sqlite_time_not_the_reader(ix, watchdog):
    with ix.stream("SELECT x FROM (" + FOREVER + ") LIMIT 3", timeout=0.2) as found:
        got = []
        for row in found:
            time.sleep(0.15)  # a slow reader (a pager) is not the query running long
            got.append(row["x"])
    assert got == [1, 2, 3]


def test_ctrl_c_stops_a_running_query(sample_db):
    proc = subprocess.Popen([sys.executable, "-m", "opindex", "sql", COUNT_FOREVER, "--timeout", "0", "--db",
                             str(sample_db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(2)  # the interpreter has started and SQLite is counting
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 130
        assert proc.stderr.read() == b"interrupted\n"
    finally:
        proc.kill()
        proc.wait()


def test_ctrl_c_in_the_library(ix, watchdog):
    import threading
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        ix.rows(COUNT_FOREVER)
    assert time.monotonic() - started < 3
    timer.join()


# -- 15: `::name` is the global namespace ---------------------------------------------------------------------------
def test_a_global_kernel_is_selected_with_leading_colons(odd_db):
    both = cli(odd_db, "trace", "shared_name_kernel")
    assert both.exit_code == 2
    assert both.output.splitlines()[1:] == [
        "  at::native::shared_name_kernel (global_kernel, aten/src/ATen/native/cuda/Odd.cu:10)",
        "  ::shared_name_kernel (global_kernel, aten/src/ATen/native/cuda/Odd.cu:16)"]
    with Index(odd_db) as ix:
        from opindex.trace.targets import lookup
        assert [(t.label, t.obj["line"]) for t in lookup(ix.con, "::shared_name_kernel")] == [
            ("::shared_name_kernel", 16)]
        assert [(t.label, t.obj["line"]) for t in lookup(ix.con, "at::native::shared_name_kernel")] == [
            ("at::native::shared_name_kernel", 10)]
        t = ix.trace("::shared_name_kernel")
    assert t.direction == "up" and (t.hops[0].kind, t.hops[0].file, t.hops[0].line) == (
        "global_kernel", "aten/src/ATen/native/cuda/Odd.cu", 16)


# -- issue 15: a CLI that behaves like its neighbours ------------------------------------------------------------
def test_sql_keeps_every_column(sample_db):
    result = cli(sample_db, "sql", "SELECT 1 AS x, 2 AS x, 3 AS x_2", "--csv")
    assert result.output == "x,x_3,x_2\n1,2,3\n"
    result = cli(sample_db, "sql", "SELECT 1 AS x, 2 AS x", "--json")
    assert json.loads(result.output) == [{"x": 1, "x_2": 2, "index": {"file": str(sample_db),
                                                                     "checkout": str(SAMPLE)}}]
    from opindex.query import unique_columns
    assert unique_columns(["line", "file", "line", "line"]) == ["line", "file", "line_2", "line_3"]


def test_sql_join_with_two_line_columns(ix):
    rows = ix.rows("SELECT s.line, c.line FROM symbols s JOIN calls c ON c.caller = s.qualified_name "
                   "ORDER BY s.id, c.id LIMIT 1")
    assert list(rows[0]) == ["line", "line_2"] and rows[0]["line"] != rows[0]["line_2"]


@pytest.mark.parametrize("args, code", [
    (["find", "relu"], 0), (["find", "no_such_name"], 1), (["callers", "no_such_name"], 1),
    (["callees", "no_such_name"], 1), (["op", "no_such_op"], 1), (["stub", "no_such_stub"], 1),
    (["trace", "no_such_name"], 1), (["trace", "relu"], 0), (["op", "relu"], 0), (["stub", "add_stub"], 0),
    (["trace", "LSTM"], 2), (["trace", "shared_name_kernel"], 2), (["find", "relu", "--nope"], 2),
    (["trace", "relu", "--device", "tpu"], 2), (["sql", "SELEC 1"], 2), (["sql", "DELETE FROM symbols"], 2),
    (["sql", "SELECT 1 WHERE 0"], 0),
])
def test_exit_codes(odd_db, args, code):
    result = cli(odd_db, *args)
    assert result.exit_code == code, result.output


def test_exit_codes_of_a_missing_index(tmp_path):
    for args in (["trace", "relu"], ["find", "relu"], ["sql", "SELECT 1"]):
        result = cli(tmp_path / "none.sqlite", *args)
        assert result.exit_code == 3 and "no index here" in result.output


def test_exit_codes_are_in_the_help_and_the_readme():
    text = CliRunner().invoke(main, ["--help"]).output
    assert "0 found; 1 nothing found (find, callers, callees, op, stub, trace,\n      kernels --op);" in text
    assert "2 usage error, or a name that is ambiguous" in text and "3 broken index or environment" in text
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert "0 found, 1 nothing found" in readme
    commands = (Path(__file__).resolve().parent.parent / "docs" / "commands.md").read_text()  # in full
    assert "0 found, 1 nothing found" in commands and "130 interrupted (Ctrl-C)" in commands


@pytest.mark.parametrize("args", [["trace", "relu", "--json", "--markdown"], ["find", "relu", "--json", "--csv"],
                                  ["sql", "SELECT 1", "--fmt", "csv", "--json"], ["callers", "relu", "--table",
                                                                                  "--ndjson"]])
def test_two_output_formats_are_refused(sample_db, args):
    result = cli(sample_db, *args)
    assert result.exit_code == 2
    given = [a for a in args if a.startswith("--")]
    assert f"Error: {given[0]} and {given[1]} are mutually exclusive: give one output format" in result.output


def test_one_format_given_twice_is_fine(sample_db):
    assert cli(sample_db, "find", "relu", "--csv", "--csv").exit_code == 0


def test_an_ambiguous_name_lists_candidates_once_that_work(odd_db):
    result = cli(odd_db, "trace", "LSTM")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "'LSTM' is ambiguous; name one of the candidates",
        "  torch.ao.quantized.rnn.LSTM (python_class, torch/ao/quantized/rnn.py:1)",
        "  torch.nn.modules.rnn.LSTM (python_class, torch/nn/modules/rnn.py:25)"]
    for line in result.output.splitlines()[1:]:
        assert cli(odd_db, "trace", line.split()[0], "--json").exit_code == 0


@pytest.mark.parametrize("typo, first", [("nn.LSTMM", "nn.LSTM"), ("F.reluu", "F.relu"), ("torch.nn.Linearr",
                                                                                          "torch.nn.Linear")])
def test_suggestions_work_when_typed_back(odd_db, typo, first):
    result = cli(odd_db, "trace", typo)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].endswith("did you mean one of these?")
    suggested = [line.strip() for line in lines[1:]]
    assert suggested[0] == first and len(suggested) == len(set(suggested))
    for name in suggested:
        assert cli(odd_db, "trace", name, "--json").exit_code == 0, name


# -- the same on a real tree (OPINDEX_REAL_CHECKOUT) ------------------------------------------------------------------
def test_real_tree_names(real_index, within):
    from opindex.trace.names import resolve
    brackets = real_index.find("operator[]", limit=0)
    assert len(brackets) >= 50 and {s.name for s in brackets} == {"operator[]"}  # 80 on PyTorch 2.4
    stars = real_index.find("operator*", exact=True, limit=0)
    assert stars and {s.name for s in stars} == {"operator*"}
    assert not real_index.trace("%").candidates  # `%` suggested t, eq, ge, ... before
    lstm = real_index.trace("LSTM")
    assert not lstm.unknown and "torch.nn.modules.rnn.LSTM (python_class, torch/nn/modules/rnn.py:" in "\n".join(
        lstm.candidates)
    for candidate in lstm.candidates:
        assert real_index.trace(candidate.split()[0]).hops, candidate
    for suggested in real_index.trace("nn.LSTMM").candidates:
        assert real_index.trace(suggested).hops, suggested
    resolve(real_index.con, "nn.LSTM")
    for name in ("torch." * 26 + "relu", "torch." * 26 + "nothing", "a." * 1600 + "relu"):
        with within(1.0):
            resolve(real_index.con, name)
