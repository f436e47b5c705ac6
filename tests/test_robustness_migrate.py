"""Issue 33, items 9 and 16: `opindex migrate` killed with -9 left `.NAME.migrate-PID` copies and their journals
that no later migrate or build removed; an index of an older schema, migrated and built, must hold what a fresh
build holds (the conditions table was empty after migrate + build)."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from test_migrations import empty_at

from opindex import db as opdb
from opindex.cli import main


def leftovers_of(db) -> list[str]:
    return sorted(n for n in os.listdir(db.parent) if n.startswith(f".{db.name}.") and not n.endswith(".lock"))


def plant(db) -> None:
    """What migrates killed with -9 leave: the copy of the index and its journal (PIDs no process has now)."""
    for name in (f".{db.name}.migrate-999991", f".{db.name}.migrate-999991-journal", f".{db.name}.migrate-999992",
                 f".{db.name}.build-999993-journal", f".{db.name}.shard-999994-wal"):
        (db.parent / name).write_bytes(b"x" * 1000)


def test_migrate_removes_what_killed_migrates_left(sample_db, tmp_path):
    db = tmp_path / "i.sqlite"
    db.write_bytes(sample_db.read_bytes())
    other = tmp_path / "i.sqlite2"  # another index's files stay
    (tmp_path / f".{other.name}.migrate-999995").write_bytes(b"x")
    plant(db)
    result = CliRunner().invoke(main, ["migrate", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert leftovers_of(db) == []
    assert (tmp_path / f".{other.name}.migrate-999995").exists()


def test_build_removes_the_journals_too(sample_db, tmp_path):
    from conftest import SAMPLE
    db = tmp_path / "i.sqlite"
    db.write_bytes(sample_db.read_bytes())
    plant(db)
    result = CliRunner().invoke(main, ["build", str(SAMPLE), "--db", str(db), "-q", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert leftovers_of(db) == []


def test_a_migrate_killed_with_9_leaves_nothing_the_next_one_keeps(sample_db, tmp_path):
    """A real kill: the migrate of an index three revisions old is killed as soon as its copy appears; what it
    left, the next migrate removes, and it succeeds."""
    db = tmp_path / "old.sqlite"
    for _ in range(5):
        db.unlink(missing_ok=True)
        db.write_bytes(sample_db.read_bytes())
        CliRunner().invoke(main, ["migrate", "--db", str(db), "--to", "0005", "--downgrade"])
        proc = subprocess.Popen([sys.executable, "-m", "opindex", "migrate", "--db", str(db)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not leftovers_of(db) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if leftovers_of(db):
            break
    else:
        pytest.skip("no kill landed inside the migration on this machine")
    assert leftovers_of(db)[0].startswith(f".{db.name}.migrate-{proc.pid}")
    result = CliRunner().invoke(main, ["migrate", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert leftovers_of(db) == []


def counts(path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        tables = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                            "'sqlite_%' AND name NOT IN ('alembic_version', 'meta')")]
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    finally:
        con.close()


@pytest.mark.parametrize("revision", opdb.SCHEMA_REVISIONS[:-1])
def test_an_older_index_migrated_and_built_holds_every_row_of_a_fresh_build(sample_db, tmp_path, revision):
    """Item 16: a migration that adds facts read from the source (0007's conditions, 0008's includes) cannot fill
    them; the index it leaves is marked so that the next build re-extracts every file, and then no table is short."""
    from conftest import SAMPLE
    db = empty_at(tmp_path / "old.sqlite", revision)
    con = sqlite3.connect(db)
    con.execute("ATTACH DATABASE ? AS fresh", (str(sample_db),))
    for (table,) in con.execute("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                "'sqlite_%' AND name != 'alembic_version'").fetchall():
        cols = [r[1] for r in con.execute(f"PRAGMA main.table_info({table})")]
        fresh = {r[1] for r in con.execute(f"PRAGMA fresh.table_info({table})")}
        keep = ", ".join(c for c in cols if c in fresh)
        con.execute(f"INSERT INTO main.{table} ({keep}) SELECT {keep} FROM fresh.{table}")
    con.commit()
    con.close()
    assert CliRunner().invoke(main, ["migrate", "--db", str(db)]).exit_code == 0
    result = CliRunner().invoke(main, ["build", str(SAMPLE), "--db", str(db), "-q", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert counts(db) == counts(sample_db)
    assert counts(db)["conditions"] > 0


def test_build_refuses_to_replace_an_index_of_a_newer_schema(sample_db, tmp_path):
    """Issue 33, item 5 (its second half): a build replaced an index written by a newer opindex without a word."""
    from conftest import SAMPLE
    db = tmp_path / "new.sqlite"
    db.write_bytes(sample_db.read_bytes())
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = '9999'")
    con.commit()
    con.close()
    result = CliRunner().invoke(main, ["build", str(SAMPLE), "--db", str(db), "-q", "--jobs", "1"])
    assert result.exit_code == 2
    assert result.output == (f"Error: {db}: index schema 9999 is newer than this opindex knows "
                             f"({opdb.SCHEMA_REVISIONS[-1]}); refused to replace it (upgrade opindex, or --force to "
                             f"rebuild it with this one)\n")
    assert sqlite3.connect(db).execute("SELECT version_num FROM alembic_version").fetchone() == ("9999",)
    forced = CliRunner().invoke(main, ["build", str(SAMPLE), "--db", str(db), "-q", "--jobs", "1", "--force"])
    assert forced.exit_code == 0, forced.output
    assert sqlite3.connect(db).execute("SELECT version_num FROM alembic_version").fetchone() == (
        opdb.SCHEMA_REVISIONS[-1],)
