"""Nothing lost, nothing let in: bad input, crashes, concurrency, read-only SQL, confined source reads."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE_ENTRIES

from opindex.api import Index, build
from opindex.cli import main
from opindex.model import OpindexError


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def native_count(db: Path) -> int:
    return sqlite3.connect(db).execute("SELECT count(*) FROM native_functions").fetchone()[0]


# -- bad input ------------------------------------------------------------------------------------------------------
def test_nonexistent_checkout(tmp_path):
    result = cli("build", str(tmp_path / "nope"), "--db", str(tmp_path / "i.sqlite"))
    assert result.exit_code == 2  # a usage error
    assert result.output.strip() == f"Error: {tmp_path / 'nope'}: no such folder"
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_checkout_that_is_not_pytorch_shaped(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    result = cli("build", str(tmp_path), "--db", str(tmp_path / "i.sqlite"))
    assert result.exit_code == 2  # a usage error
    assert "nothing to index under torch, aten, c10, tools, torchgen, functorch" in result.output
    assert "is this a PyTorch checkout?" in result.output
    assert not (tmp_path / "i.sqlite").exists()


def test_malformed_native_functions_yaml_names_file_and_line(sample_copy, tmp_path):
    yaml = sample_copy / "aten/src/ATen/native/native_functions.yaml"
    lines = yaml.read_text().splitlines()
    lines.insert(6, "  dispatch: [unclosed")
    yaml.write_text("\n".join(lines) + "\n")
    db = tmp_path / "i.sqlite"
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    assert result.exit_code == 0  # the other layers are still indexed
    assert "warning: aten/src/ATen/native/native_functions.yaml:" in result.output
    assert "malformed YAML" in result.output
    con = sqlite3.connect(db)
    assert con.execute("SELECT parse_errors, message IS NULL FROM files WHERE path LIKE '%native_functions.yaml'") \
        .fetchone() == (1, 1)
    assert con.execute("SELECT count(*) FROM derivatives").fetchone()[0] == 7


def test_entry_without_func_is_skipped_with_its_line(sample_copy, tmp_path):
    yaml = sample_copy / "tools/autograd/derivatives.yaml"
    yaml.write_text(yaml.read_text() + "\n- self: grad\n")
    n = len(yaml.read_text().splitlines())
    db = tmp_path / "i.sqlite"
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    assert result.exit_code == 0
    assert f"warning: tools/autograd/derivatives.yaml:{n}: entry without name: skipped" in result.output


def test_odd_files_are_reported_and_the_build_goes_on(sample_copy, tmp_path):
    nn = sample_copy / "torch" / "odd"
    nn.mkdir(parents=True)
    (nn / "binary.py").write_bytes(bytes(range(256)) * 40)
    (nn / "latin1.py").write_bytes("def caf\xe9():\n    pass\n".encode("latin-1"))
    (nn / "empty.py").write_bytes(b"")
    (nn / "deep.py").write_text("x = " + "(" * 3000 + "1" + ")" * 3000 + "\ndef after():\n    pass\n")
    (nn / "huge.cpp").write_bytes(b"int f() { return 0; }\n" * (17 * 1024 * 1024 // 22))
    os.symlink(nn, nn / "loop")  # a symlink loop: folders are not followed
    unreadable = nn / "secret.py"
    unreadable.write_text("def hidden():\n    pass\n")
    unreadable.chmod(0)
    db = tmp_path / "i.sqlite"
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    unreadable.chmod(0o644)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    con = sqlite3.connect(db)
    msgs = dict(con.execute("SELECT path, message FROM files WHERE path LIKE 'torch/odd/%'"))
    assert msgs["torch/odd/huge.cpp"].endswith("MB limit: not parsed")
    assert msgs["torch/odd/empty.py"] is None
    if os.geteuid() != 0:  # root reads anything
        assert msgs["torch/odd/secret.py"].startswith("unreadable")
    assert not any(p.startswith("torch/odd/loop/") for p in msgs)
    names = {n for (n,) in con.execute("SELECT name FROM symbols WHERE file LIKE 'torch/odd/%'")}
    assert "after" in names  # facts after deep nesting survive


def test_unwritable_target_keeps_the_old_index(sample_db, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "i.sqlite"
    db.write_bytes(sample_db.read_bytes())
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: permissions are not enforced")
        result = cli("build", "--db", str(db), "-q")
        assert result.exit_code == 3
        assert "Error:" in result.output and "Traceback" not in result.output
    finally:
        folder.chmod(0o755)
    assert native_count(db) == SAMPLE_ENTRIES


def test_unwritable_target_simulated(sample_copy, tmp_path, monkeypatch):
    """As root the folder test above cannot run; refuse the temporary file the way a read-only folder would."""
    import opindex.indexer.store as store
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db)
    yaml = sample_copy / "tools/autograd/derivatives.yaml"
    yaml.write_text(yaml.read_text() + "\n")

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied", str(tmp_path))
    monkeypatch.setattr(store.shutil, "copyfile", refuse)  # an incremental build starts with a copy
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    assert result.exit_code == 3
    assert result.output.endswith(f"Error: {tmp_path}: cannot write the index there (Permission denied); "
                                  f"the previous index is unchanged\n")
    assert native_count(db) == SAMPLE_ENTRIES


def test_full_disk_keeps_the_old_index(sample_copy, sample_db, tmp_path, monkeypatch):
    import opindex.indexer.store as store
    db = tmp_path / "i.sqlite"
    db.write_bytes(sample_db.read_bytes())

    def full(*a, **k):
        raise OSError(28, "No space left on device", str(db) + ".tmp")
    monkeypatch.setattr(store.Writer, "add_facts", full)
    monkeypatch.setattr(store.Writer, "add_native_functions", full)
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    assert result.exit_code == 3
    assert result.output == f"Error: {db}: the build could not be written (No space left on device); " \
                            "the previous index is unchanged\n"
    assert native_count(db) == SAMPLE_ENTRIES
    assert list(tmp_path.glob(".i.sqlite.build-*")) == []


def test_missing_index_is_a_clear_error(tmp_path):
    result = cli("sql", "SELECT 1", "--db", str(tmp_path / "none.sqlite"))
    assert result.exit_code == 3  # a broken environment: no index
    assert "no index here; run `opindex build` first" in result.output


def test_not_an_index(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"hello, this is not sqlite" * 100)
    result = cli("sql", "SELECT 1", "--db", str(bad))
    assert result.exit_code == 3
    assert "not an opindex database" in result.output


# -- schema versions ------------------------------------------------------------------------------------------------
def test_newer_schema_is_refused(sample_db, tmp_path):
    db = tmp_path / "new.sqlite"
    db.write_bytes(sample_db.read_bytes())
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = '9999'")
    con.commit()
    con.close()
    with pytest.raises(OpindexError, match="newer than this opindex knows"):
        Index(db)


# -- read-only SQL --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("statement", [
    "INSERT INTO meta VALUES ('x', 'y')",
    "UPDATE meta SET value = 'x'",
    "DELETE FROM native_functions",
    "DROP TABLE native_functions",
    "CREATE TABLE t (x)",
    "ATTACH DATABASE ':memory:' AS other",
    "VACUUM INTO '/tmp/opindex-stolen.sqlite'",
    "PRAGMA journal_mode = WAL",
    "PRAGMA writable_schema = 1",
    "SELECT load_extension('/nonexistent')",
    "SELECT fts3_tokenizer('simple')",  # a process address (issue 33, 2)
    "SELECT fts3_tokenizer('simple', x'0000000000000000')",  # a function pointer written
    "SELECT readfile('/etc/passwd')",
])
def test_sql_cannot_change_the_database(sample_db, statement):
    before = sample_db.read_bytes()
    result = cli("sql", statement, "--db", str(sample_db))
    assert result.exit_code == 2, result.output  # a usage error
    assert "Error:" in result.output
    assert sample_db.read_bytes() == before
    assert not Path("/tmp/opindex-stolen.sqlite").exists()


def test_sql_calls_only_the_functions_of_the_allow_list(sample_db):
    """db.SQL_FUNCTIONS: SQLite's core, aggregate, date, math, JSON and window functions answer; the rest is refused
    by name, with the usage exit code."""
    ok = cli("sql", "SELECT upper('a'), json_array(1), round(pi(), 2), count(*) OVER () FROM meta LIMIT 1",
             "--db", str(sample_db), "--csv")
    assert ok.exit_code == 0 and ok.output.splitlines()[1].startswith("A,[1],3.14,")
    refused = cli("sql", "SELECT fts3_tokenizer('simple')", "--db", str(sample_db))
    assert refused.exit_code == 2 and "not authorized" in refused.output


def test_sql_bound_parameters(sample_db):
    result = cli("sql", "SELECT kernel FROM native_dispatch WHERE function = :f AND dispatch_key = :k", "-p", "f",
                 "relu", "-p", "k", "MPS", "--db", str(sample_db), "--csv")
    assert result.output == "kernel\nrelu_mps\n"


def test_names_are_bound_never_formatted(ix):
    hostile = "x' OR '1'='1"
    assert ix.find(hostile) == []
    assert ix.op(hostile) == []
    assert ix.callers(hostile) == []
    assert ix.trace(hostile).hops == []


# -- source reads stay inside the checkout --------------------------------------------------------------------------
def test_snippets_only_from_inside_the_checkout(sample_db, tmp_path):
    from opindex.render.source import snippet
    root = str(Path(sample_db).parent)
    assert snippet(root, "../../etc/passwd", 1) == []
    assert snippet(root, "/etc/passwd", 1) == []
    (tmp_path / "inside.txt").write_text("a\nb\n")
    os.symlink("/etc/passwd", tmp_path / "escape.txt")
    assert snippet(str(tmp_path), "escape.txt", 1) == []
    assert snippet(str(tmp_path), "inside.txt", 1, 0, 1) == ["    1 | a", "    2 | b"]


def test_crafted_database_shows_no_outside_content(sample_db, tmp_path):
    db = tmp_path / "crafted.sqlite"
    db.write_bytes(sample_db.read_bytes())
    con = sqlite3.connect(db)
    con.execute("UPDATE native_functions SET file = '../../../../etc/passwd', line = 1 WHERE name = 'relu'")
    con.execute("UPDATE native_dispatch SET file = '/etc/passwd', line = 1")
    con.commit()
    con.close()
    result = cli("trace", "relu", "--db", str(db), "--context", "3")
    assert "root:" not in result.output


# -- crashes and concurrency ----------------------------------------------------------------------------------------
def _build_proc(checkout: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "opindex", "build", str(checkout), "--db", str(db), "-q",
                             "--jobs", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8])
def test_sigkill_during_build_keeps_the_previous_index(sample_copy, sample_db, tmp_path, delay):
    db = tmp_path / "i.sqlite"
    db.write_bytes(sample_db.read_bytes())
    (sample_copy / "version.txt").write_text("9.9.9\n")  # a different root: a full rebuild
    proc = _build_proc(sample_copy, db)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert native_count(db) == SAMPLE_ENTRIES
    Index(db).close()
    rerun = _build_proc(sample_copy, db)
    assert rerun.wait() == 0, rerun.stderr.read()
    assert list(tmp_path.glob(".i.sqlite.build-*")) == []
    assert Index(db).meta["pytorch_version"] == "9.9.9"


def test_two_builds_at_once(sample_copy, tmp_path):
    from opindex.indexer.pipeline import _lock
    db = tmp_path / "i.sqlite"
    held = _lock(db)
    try:
        result = cli("build", str(sample_copy), "--db", str(db), "-q")
    finally:
        held.close()
    assert result.exit_code == 3  # the environment: another build holds the index
    assert "another `opindex build` is writing this index" in result.output
    assert cli("build", str(sample_copy), "--db", str(db), "-q").exit_code == 0


READER = r"""
import sys
from opindex.api import Index
db, n, ENTRIES = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
errors = 0
for i in range(n):
    try:
        with Index(db) as ix:
            rows = ix.rows("SELECT count(*) AS n FROM native_functions")
            assert rows[0]["n"] in (ENTRIES, ENTRIES + 1), rows
            if i % 50 == 0:
                ix.trace("relu")
    except Exception as exc:
        errors += 1
        print(repr(exc), file=sys.stderr)
print(errors)
"""


@pytest.mark.slow  # 3.5-5.5 s on 2 cores: 6 rebuilds under 8 reader processes
def test_readers_during_rebuilds_see_old_or_new(sample_copy, sample_db, tmp_path):
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    yaml = sample_copy / "aten/src/ATen/native/native_functions.yaml"
    original = yaml.read_text()
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(db), "1000", str(SAMPLE_ENTRIES)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for i in range(6):  # rebuilds while the readers run: N and N+1 entries in turn
        yaml.write_text(original + ("\n- func: extra_op(Tensor self) -> Tensor\n" if i % 2 == 0 else ""))
        build(str(sample_copy), db, jobs=1)
    outs = [r.communicate() for r in readers]
    assert [o[0].strip() for o in outs] == ["0"] * 8, [o[1][-500:] for o in outs]


def test_unreadable_and_vanished_files_are_reported(sample_copy, tmp_path, monkeypatch):
    """As root nothing is unreadable and files do not vanish on cue: both are simulated at the read."""
    import opindex.indexer.pipeline as pipeline
    import opindex.indexer.workers as workers
    from opindex.indexer.discover import SourceFile

    real_discover = pipeline.discover

    def discover_plus_ghost(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        return found + [SourceFile("torch/ghost.py", "python", "python", "torch.ghost", 10, 1)]

    real_open = workers.open_source

    def guarded_open(path):
        if str(path).endswith("torch/nn/functional.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path)

    monkeypatch.setattr(pipeline, "discover", discover_plus_ghost)
    monkeypatch.setattr(workers, "open_source", guarded_open)
    report = build(str(sample_copy), tmp_path / "i.sqlite", jobs=1)
    assert "torch/ghost.py: unreadable: No such file or directory" in report.warnings
    assert "torch/nn/functional.py: unreadable: Permission denied" in report.warnings
    con = sqlite3.connect(tmp_path / "i.sqlite")
    assert con.execute("SELECT count(*) FROM symbols WHERE file = 'torch/nn/functional.py'").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM native_functions").fetchone() == (SAMPLE_ENTRIES,)


def test_interrupted_parallel_build_leaves_nothing_behind(sample_copy, sample_db, tmp_path, monkeypatch):
    """Ctrl-C while two workers are writing their shards: the index stays, and no shard or temporary file does."""
    import opindex.indexer.pipeline as pipeline
    db = tmp_path / "i.sqlite"
    db.write_bytes(sample_db.read_bytes())
    before = db.read_bytes()
    (sample_copy / "version.txt").write_text("9.9.9\n")  # a different root: a cold build, with the early pool
    seen = []

    def interrupt(writer, result, warn):
        seen.append(sorted(p.name for p in tmp_path.glob(".i.sqlite.shard-*")))
        raise KeyboardInterrupt
    monkeypatch.setattr(pipeline, "_store", interrupt)
    with pytest.raises(KeyboardInterrupt):
        build(str(sample_copy), db, jobs=2)
    assert len(seen[0]) >= 1  # a worker had written its shard when the build was interrupted
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.glob("*i.sqlite*")) == [".i.sqlite.lock", "i.sqlite"]


def test_workers_leave_ctrl_c_to_the_writing_process():
    from opindex.indexer.workers import warm_up
    previous = signal.getsignal(signal.SIGINT)
    try:
        warm_up()  # the pool initializer
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
