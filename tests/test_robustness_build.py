"""Issue 16, the build and database side: nothing overwritten, nothing silently stale, no hang, messages that say
what happened. Failures root would not see (unreadable files, dying workers) are simulated at the point they occur."""
from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE_ENTRIES

from opindex.api import Index, build
from opindex.cli import main
from opindex.db import SCHEMA_REVISIONS
from opindex.model import OpindexError


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def native_count(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM native_functions").fetchone()[0]
    finally:
        con.close()


def copy_index(sample_db: Path, dest: Path) -> Path:
    dest.write_bytes(sample_db.read_bytes())
    return dest


# -- 13: read-only PRAGMAs are reads --------------------------------------------------------------------------------
@pytest.mark.parametrize("statement, expected", [
    ("PRAGMA table_info(calls)", "caller"),
    ("SELECT name FROM pragma_table_info('calls')", "caller"),
    ("PRAGMA integrity_check", "ok"),
    ("PRAGMA quick_check", "ok"),
    ("PRAGMA journal_mode", "delete"),
    ("PRAGMA user_version", "0"),
])
def test_reading_pragmas_are_allowed(sample_db, statement, expected):
    result = cli("sql", statement, "--db", str(sample_db), "--csv")
    assert result.exit_code == 0, result.output
    assert expected in result.output


@pytest.mark.parametrize("statement", ["PRAGMA journal_mode = WAL", "PRAGMA user_version = 7",
                                       "PRAGMA schema_version = 99", "PRAGMA application_id = 1",
                                       "PRAGMA writable_schema = 1"])
def test_setting_pragmas_stay_refused(sample_db, statement):
    before = sample_db.read_bytes()
    result = cli("sql", statement, "--db", str(sample_db))
    assert result.exit_code != 0
    assert "read-only" in result.output
    assert sample_db.read_bytes() == before


# -- 1: a build replaces only an opindex index ----------------------------------------------------------------------
def test_build_refuses_a_file_that_is_not_an_index(sample_copy, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    result = cli("build", str(sample_copy), "--db", str(notes), "-q")
    assert result.exit_code == 2
    assert result.output == f"Error: {notes}: not an opindex index; refused to replace it (--force to overwrite it)\n"
    assert notes.read_text() == "my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkout", "notes.txt"]  # not even a lock file
    assert cli("build", str(sample_copy), "--db", str(notes), "-q", "--force").exit_code == 0
    assert native_count(notes) == SAMPLE_ENTRIES


def test_build_refuses_a_foreign_sqlite_database(sample_copy, tmp_path):
    foreign = tmp_path / "app.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE customers (name TEXT)")
    con.execute("INSERT INTO customers VALUES ('ada')")
    con.commit()
    con.close()
    before = foreign.read_bytes()
    with pytest.raises(OpindexError, match="not an opindex index; refused"):
        build(str(sample_copy), foreign)
    assert foreign.read_bytes() == before


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_build_never_replaces_a_non_regular_file(sample_copy, tmp_path, kind):
    if kind == "device":  # never /dev/null itself: a build that got this wrong would replace it
        target = tmp_path / "null.sqlite"
        try:
            os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("creating a device file needs root")
    elif kind == "fifo":
        target = tmp_path / "pipe.sqlite"
        os.mkfifo(target)
    else:
        target = tmp_path / "folder.sqlite"
        target.mkdir()
    for extra in ((), ("--force",)):
        result = cli("build", str(sample_copy), "--db", str(target), "-q", *extra)
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"Error: {target}: a ")
        assert "not an index file; refused" in result.output
    assert target.exists() and not target.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["checkout", target.name])  # no lock file either


def test_a_symlinked_db_is_followed(sample_copy, sample_db, tmp_path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = copy_index(sample_db, real_dir / "index.sqlite")
    link = tmp_path / "link.sqlite"
    link.symlink_to(real)
    (sample_copy / "version.txt").write_text("9.9.9\n")
    result = cli("build", str(sample_copy), "--db", str(link), "-q")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert Index(real).meta["pytorch_version"] == "9.9.9"  # the target is what was rebuilt
    assert sorted(p.name for p in real_dir.iterdir()) == [".index.sqlite.lock", "index.sqlite"]


def test_a_symlink_to_a_non_index_is_refused(sample_copy, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("x\n")
    link = tmp_path / "i.sqlite"
    link.symlink_to(notes)
    result = cli("build", str(sample_copy), "--db", str(link), "-q")
    assert result.exit_code == 2
    assert f"{link} (-> {notes}): not an opindex index; refused" in result.output
    assert link.is_symlink() and notes.read_text() == "x\n"


def test_empty_db_is_a_usage_error(sample_copy, tmp_path, monkeypatch):
    default = tmp_path / "default.sqlite"
    monkeypatch.setenv("OPINDEX_DB", str(default))
    for command in (["build", str(sample_copy)], ["sql", "SELECT 1"], ["migrate"]):
        result = cli(*command, "--db", "", "-q") if command[0] == "build" else cli(*command, "--db", "")
        assert result.exit_code == 2, (command, result.output)
        assert "--db: empty path" in result.output
    assert not default.exists()


def test_an_empty_file_may_become_the_index(sample_copy, tmp_path):
    db = tmp_path / "i.sqlite"
    db.touch()
    assert cli("build", str(sample_copy), "--db", str(db), "-q").exit_code == 0
    assert native_count(db) == SAMPLE_ENTRIES


# -- 2: the stat recorded is the stat of the bytes read; failed reads are retried -----------------------------------
def _symbols(db: Path, path: str) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {n for (n,) in con.execute("SELECT name FROM symbols WHERE file = ?", (path,))}
    finally:
        con.close()


def test_a_file_that_could_not_be_read_is_read_again(sample_copy, tmp_path, monkeypatch):
    """chmod 000, then chmod back (same mtime): the next build must read it, not call the index up to date."""
    import opindex.indexer.workers as workers
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    target = "torch/nn/functional.py"
    names = _symbols(db, target)
    assert names
    (sample_copy / "aten/src/ATen/native/native_functions.yaml").touch()  # something to rebuild
    real_open = workers.open_source

    def refuse(path):
        if path.endswith(target):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path)
    monkeypatch.setattr(workers, "open_source", refuse)
    os.utime(sample_copy / target, ns=(1, 1_000_000_000))  # a stat the build must re-check
    report = build(str(sample_copy), db, jobs=1)
    assert f"{target}: unreadable: Permission denied" in report.warnings
    assert _symbols(db, target) == set()
    monkeypatch.undo()  # readable again, same mtime and size
    again = build(str(sample_copy), db, jobs=1)
    assert not again.up_to_date and again.parsed == 1
    assert _symbols(db, target) == names


def test_the_stat_recorded_is_that_of_the_content_read(sample_copy, tmp_path, monkeypatch):
    """The file changes between the listing and the read, then is reverted with its old mtime (cp -p): the
    index must not keep the facts of the edit."""
    import opindex.indexer.pipeline as pipeline
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    target = sample_copy / "torch/nn/functional.py"
    original = target.read_bytes()
    listed = target.stat()
    real_discover = pipeline.discover

    def discover_then_edit(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        target.write_bytes(original + b"\ndef edited_in_between():\n    pass\n")
        os.utime(target, ns=(listed.st_atime_ns, listed.st_mtime_ns + 5_000_000_000))
        return found
    os.utime(target, ns=(listed.st_atime_ns, listed.st_mtime_ns + 1_000_000_000))  # listed as changed
    monkeypatch.setattr(pipeline, "discover", discover_then_edit)
    build(str(sample_copy), db, jobs=1)
    assert "edited_in_between" in _symbols(db, "torch/nn/functional.py")
    monkeypatch.undo()
    target.write_bytes(original)  # reverted, with the mtime the listing saw (cp -p, rsync -a)
    os.utime(target, ns=(listed.st_atime_ns, listed.st_mtime_ns + 1_000_000_000))
    again = build(str(sample_copy), db, jobs=1)
    assert not again.up_to_date
    assert "edited_in_between" not in _symbols(db, "torch/nn/functional.py")


def test_a_file_written_while_it_is_read_is_read_again(sample_copy, tmp_path, monkeypatch):
    import opindex.indexer.workers as workers
    target = sample_copy / "torch/nn/functional.py"
    real_read = workers.read_bytes
    writes = []

    def read_while_written(fd, size, limit):
        data = real_read(fd, size, limit)
        if len(writes) < budget:
            writes.append(1)
            with open(target, "ab") as fh:
                fh.write(f"\ndef written_{len(writes)}():\n    pass\n".encode())
        return data
    monkeypatch.setattr(workers, "read_bytes", read_while_written)
    db = tmp_path / "i.sqlite"
    budget = 1  # changed during the first read only: the second read is the one indexed
    build(str(sample_copy), db, jobs=1)
    assert "written_1" in _symbols(db, "torch/nn/functional.py")
    con = sqlite3.connect(db)
    size = con.execute("SELECT size FROM files WHERE path = 'torch/nn/functional.py'").fetchone()[0]
    assert size == target.stat().st_size
    con.close()
    budget = 3  # changed during both reads: indexed as read, and read again by the next build
    os.utime(target, ns=(1, 1_000_000_000))  # listed as changed
    report = build(str(sample_copy), db, jobs=1)
    assert any("torch/nn/functional.py: changed while it was read" in w for w in report.warnings)
    monkeypatch.undo()
    again = build(str(sample_copy), db, jobs=1)
    assert again.parsed == 1
    assert "written_3" in _symbols(db, "torch/nn/functional.py")


# -- 3: a damaged previous index is rebuilt, `opindex check` -------------------------------------------------------
def _damage(db: Path) -> None:
    """Overwrite a page in the middle of the symbols table's b-tree (not page 1: the file stays recognisable)."""
    con = sqlite3.connect(db)
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'symbols'").fetchone()[0]
    con.close()
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xff" * page_size)


def test_a_build_over_a_damaged_index_rebuilds_it(sample_copy, tmp_path):
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    _damage(db)
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    assert result.exit_code == 0, result.output
    assert f"warning: {db}: the previous index is damaged (" in result.output
    assert "rebuilding it from scratch" in result.output
    assert cli("check", "--db", str(db)).exit_code == 0
    assert cli("build", str(sample_copy), "--db", str(db), "-q").output == ""  # sound again: up to date


def test_check_reports_a_damaged_index(sample_db, tmp_path):
    db = copy_index(sample_db, tmp_path / "i.sqlite")
    ok = cli("check", "--db", str(db))
    assert ok.exit_code == 0 and ok.output == f"{db}: ok\n"
    _damage(db)
    bad = cli("check", "--db", str(db))
    assert bad.exit_code == 3
    assert bad.output.startswith(f"{db}: damaged: ")
    assert "rebuild it with `opindex build`" in bad.output
    assert "Traceback" not in bad.output


# -- 7: migrate refuses what it cannot migrate, in one line ---------------------------------------------------------
def test_migrate_a_newer_index(sample_db, tmp_path):
    db = copy_index(sample_db, tmp_path / "i.sqlite")
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = '0099'")
    con.commit()
    con.close()
    before = db.read_bytes()
    result = cli("migrate", "--db", str(db))
    assert result.exit_code == 3
    head = SCHEMA_REVISIONS[-1]
    assert result.output == f"Error: {db}: index schema 0099 is newer than this opindex knows ({head}); upgrade " \
                            f"opindex (pip install -U opindex) to use it, or rebuild it with this one\n"
    assert db.read_bytes() == before


def test_migrate_without_alembic_version(sample_db, tmp_path):
    db = copy_index(sample_db, tmp_path / "i.sqlite")
    con = sqlite3.connect(db)
    con.execute("DROP TABLE alembic_version")
    con.commit()
    con.close()
    result = cli("migrate", "--db", str(db))
    assert result.exit_code == 3
    assert result.output.count("\n") == 1 and "no alembic_version table" in result.output
    foreign = tmp_path / "foreign.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.close()
    result = cli("migrate", "--db", str(foreign))
    assert result.exit_code == 3
    assert result.output == f"Error: {foreign}: not an opindex index (no alembic_version table); nothing to " \
                            f"migrate: rebuild it with `opindex build`\n"


def test_migrate_an_unknown_target_or_a_damaged_index(sample_db, tmp_path):
    db = copy_index(sample_db, tmp_path / "i.sqlite")
    result = cli("migrate", "--db", str(db), "--to", "0042")
    assert result.exit_code == 2 and "--to 0042: not a schema revision this opindex knows" in result.output
    _damage(db)
    result = cli("migrate", "--db", str(db))
    assert result.exit_code == 3 and "the index is damaged" in result.output


# -- 14: messages that say what happened ----------------------------------------------------------------------------
def test_an_unreadable_index_is_called_unreadable(sample_db, tmp_path, monkeypatch):
    db = copy_index(sample_db, tmp_path / "i.sqlite")
    db.chmod(0)
    try:
        if os.geteuid() == 0:  # root reads anything: refuse the open the way the kernel would
            import opindex.db as opdb
            real_open = os.open

            def refuse(path, *args, **kwargs):
                if str(path) == str(db):
                    raise PermissionError(13, "Permission denied", str(path))
                return real_open(path, *args, **kwargs)
            monkeypatch.setattr(opdb.os, "open", refuse)
        result = cli("sql", "SELECT 1", "--db", str(db))
    finally:
        monkeypatch.undo()
        db.chmod(0o644)
    assert result.exit_code == 3
    assert result.output == f"Error: {db}: cannot read the index (Permission denied)\n"


def test_schema_0000_is_not_called_newer(sample_db, tmp_path):
    db = copy_index(sample_db, tmp_path / "i.sqlite")
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = '0000'")
    con.commit()
    con.close()
    with pytest.raises(OpindexError) as info:
        Index(db)
    assert "newer" not in str(info.value)
    assert "index schema '0000' is not one opindex ever wrote" in str(info.value)


def test_a_failed_first_build_does_not_mention_a_previous_index(sample_copy, tmp_path, monkeypatch):
    import opindex.indexer.store as store

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(store.Writer, "add_facts", full)
    db = tmp_path / "i.sqlite"
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    assert result.exit_code == 3
    assert result.output == f"Error: {db}: the build could not be written (No space left on device); " \
                            f"no index was written\n"
    assert not db.exists()


def test_index_folder_removed_during_the_build(sample_copy, sample_db, tmp_path, monkeypatch):
    import shutil
    import opindex.indexer.store as store
    folder = tmp_path / "idx"
    folder.mkdir()
    db = copy_index(sample_db, folder / "i.sqlite")
    (sample_copy / "version.txt").write_text("9.9.9\n")
    real_finish = store.Writer.finish

    def remove_folder_first(self, *a, **k):
        shutil.rmtree(folder)
        return real_finish(self, *a, **k)
    monkeypatch.setattr(store.Writer, "finish", remove_folder_first)
    result = cli("build", str(sample_copy), "--db", str(db), "-q")
    assert result.exit_code == 3
    assert result.output.endswith("no index was written (its folder is gone)\n"), result.output
    assert "unchanged" not in result.output


# -- 15: no globbing on user paths ----------------------------------------------------------------------------------
def test_glob_characters_in_the_index_name_touch_no_other_build(sample_copy, tmp_path):
    others = [tmp_path / ".xy.db.build-4242", tmp_path / ".x1.db.shard-4243", tmp_path / ".x.db.build-77.build-1"]
    for other in others:
        other.write_bytes(b"another build's file")
    for name in ("x*.db", "x?.db", "x[1y].db"):
        assert cli("build", str(sample_copy), "--db", str(tmp_path / name), "-q", "--jobs", "2").exit_code == 0
        assert native_count(tmp_path / name) == SAMPLE_ENTRIES
    assert all(other.exists() for other in others)
    own = tmp_path / ".x*.db.build-99"  # the leftover of a killed build of x*.db itself does go
    own.write_bytes(b"left by a killed build")
    (sample_copy / "version.txt").write_text("9.9.9\n")
    assert cli("build", str(sample_copy), "--db", str(tmp_path / "x*.db"), "-q").exit_code == 0
    assert not own.exists() and all(other.exists() for other in others)


# -- 12: non-regular sources are skipped by type; the size limit is checked before reading --------------------------
def test_a_fifo_named_like_a_source_does_not_hang_the_build(sample_copy, tmp_path):
    os.mkfifo(sample_copy / "torch" / "pipe.py")
    os.mkfifo(sample_copy / "aten" / "pipe.cpp")
    os.symlink("/dev/zero", sample_copy / "torch" / "zero.py")  # endless, if it were read
    proc = subprocess.run([sys.executable, "-m", "opindex", "build", str(sample_copy), "--db",
                           str(tmp_path / "i.sqlite"), "-q", "--jobs", "1"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "warning: torch/pipe.py: not a regular file (a FIFO); skipped" in proc.stderr
    assert "warning: aten/pipe.cpp: not a regular file (a FIFO); skipped" in proc.stderr
    # a symlink out of the checkout is never read, whatever it points to
    assert "warning: torch/zero.py: a symlink to /dev/zero, outside the checkout; skipped" in proc.stderr


def test_the_index_holds_the_checkout_only(sample_copy, tmp_path):
    """Issue 33 (1, 5): a file symlink that leaves the checkout is not indexed (its symbols, signatures and defaults
    never reach a shared index); one that stays inside is; an --include outside the checkout is refused."""
    import sqlite3
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("def leaked_secret(password='hunter2'):\n    pass\n")
    os.symlink(outside / "leak.py", sample_copy / "torch" / "leak.py")
    os.symlink(sample_copy / "torch" / "nn" / "functional.py", sample_copy / "torch" / "inside.py")
    db = tmp_path / "i.sqlite"
    proc = subprocess.run([sys.executable, "-m", "opindex", "build", str(sample_copy), "--db", str(db), "-q",
                           "--jobs", "1"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"warning: torch/leak.py: a symlink to {os.path.realpath(outside / 'leak.py')}, outside the checkout; " \
           "skipped" in proc.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM symbols WHERE name = 'leaked_secret'").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM files WHERE path = 'torch/inside.py'").fetchone() == (1,)
    for bad in (str(outside), "../outside", "torch/../../outside"):
        refused = subprocess.run([sys.executable, "-m", "opindex", "build", str(sample_copy), "--db",
                                  str(tmp_path / "j.sqlite"), "-q", "--include", bad], capture_output=True, text=True,
                                 timeout=60)
        assert refused.returncode == 2 and f"--include {bad}: not a folder inside the checkout" in refused.stderr


def test_a_fifo_put_in_place_after_the_listing_is_not_opened_for_reading(tmp_path):
    from opindex.indexer.workers import read_source
    os.mkfifo(tmp_path / "late.py")
    data, st, note = read_source(str(tmp_path / "late.py"))  # would block forever in open() or read()
    assert data is None and note == "not regular"


BIG = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GB of address space for the whole build
from opindex.api import build
report = build(sys.argv[1], sys.argv[2], jobs=1)
print([w for w in report.warnings if "huge.cpp" in w])
"""


def test_a_huge_sparse_file_is_not_read(sample_copy, tmp_path):
    with open(sample_copy / "aten" / "huge.cpp", "wb") as fh:
        fh.truncate(3 << 30)  # 3 GB, no disk used
    proc = subprocess.run([sys.executable, "-c", BIG, str(sample_copy), str(tmp_path / "i.sqlite")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "aten/huge.cpp: 3072 MB, over the 16 MB limit: not parsed" in proc.stdout


def test_reads_stop_past_the_limit(tmp_path):
    from opindex.indexer.workers import read_source
    path = tmp_path / "grows.cpp"
    path.write_bytes(b"x" * 5000)
    data, st, note = read_source(str(path), limit=1000)
    assert data is None and note == "too big"
    data, st, note = read_source(str(path), limit=5000)
    assert data == b"x" * 5000 and note is None and st.st_size == 5000


# -- 11: a worker that dies fails the build, it does not hang it ----------------------------------------------------
@pytest.fixture
def no_hang():
    """Fail the test instead of hanging the suite if the build waits forever."""
    def timeout(signum, frame):
        raise TimeoutError("the build hung")
    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_a_worker_killed_mid_build_fails_it_cleanly(sample_copy, sample_db, tmp_path, monkeypatch, no_hang):
    import opindex.indexer.workers as workers
    db = copy_index(sample_db, tmp_path / "i.sqlite")
    before = db.read_bytes()
    writer = os.getpid()
    real_one = workers._one

    def killed_on(root, src, old_sha1):  # the OOM killer, as the worker reaches this file
        if src.path == "torch/nn/functional.py" and os.getpid() != writer:
            os.kill(os.getpid(), signal.SIGKILL)
        return real_one(root, src, old_sha1)
    monkeypatch.setattr(workers, "_one", killed_on)  # the workers are forked after this: they have it too
    started = time.monotonic()
    result = cli("build", str(sample_copy), "--db", str(db), "-q", "--jobs", "2")
    assert time.monotonic() - started < 60
    assert result.exit_code == 3, result.output
    assert result.output.startswith(f"Error: {db}: the build failed: a worker process (pid ")
    assert "died while extracting torch/nn/functional.py (killed by signal 9: out of memory, or a crash in a " \
           "parser?)" in result.output
    assert "the previous index is unchanged" in result.output
    assert "Traceback" not in result.output
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.glob("*i.sqlite*")) == [".i.sqlite.lock", "i.sqlite"]


def test_a_worker_killed_during_an_incremental_build(sample_copy, tmp_path, monkeypatch, no_hang):
    import opindex.indexer.workers as workers
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    before = db.read_bytes()
    for path in sample_copy.rglob("*.py"):
        os.utime(path, ns=(1, 1_000_000_000))  # listed as changed: re-hashed in a pool of its own
    writer = os.getpid()
    real_one = workers._one

    def crash_on(root, src, old_sha1):  # a segfault in a parser
        if src.path == "torch/nn/functional.py" and os.getpid() != writer:
            os._exit(139)
        return real_one(root, src, old_sha1)
    monkeypatch.setattr(workers, "_one", crash_on)
    with pytest.raises(OpindexError, match=r"died while extracting torch/nn/functional.py \(exit status 139"):
        build(str(sample_copy), db, jobs=2)
    assert db.read_bytes() == before


# -- 14: workers die with the build; the lock is not held by orphans ------------------------------------------------
ORPHANS = r"""
import os, sys, time
from pathlib import Path
from opindex.indexer.pipeline import _lock, _pool
lock = _lock(Path(sys.argv[1]))
pool = _pool(2, lock.fileno())
list(pool.run(sys.argv[1], [[], [], [], []], None))  # both workers have started (and run their initializer)
print(" ".join(str(w.proc.pid) for w in pool.workers), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    """Running: not gone, not a zombie (an orphan's zombie waits for a reaper that a container may lack)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def test_workers_die_with_a_killed_build_and_free_the_lock(tmp_path):
    from opindex.indexer.pipeline import _lock
    db = tmp_path / "i.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", ORPHANS, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert len(workers) == 2
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        _lock(db).close()  # at once: no orphaned worker holds the lock
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in workers)
    finally:
        proc.kill()
        proc.wait()
