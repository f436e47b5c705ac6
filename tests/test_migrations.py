"""Alembic migrations: the revisions build exactly the schema the code writes, upgrades keep data, round trips."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from test_build import dump

from opindex import db as opdb
from opindex.cli import main
from opindex.migrate import run
from opindex.schema import SCHEMA_VERSION, metadata


def shape(path: Path) -> dict:
    """Tables with their columns (name, type, not null, pk) and indexes with their columns."""
    con = sqlite3.connect(path)
    out = {}
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        cols = [tuple(r[1:4]) + (r[5],) for r in con.execute(f"PRAGMA table_info({table})")]
        idx = sorted((r[1], tuple(c[2] for c in con.execute(f"PRAGMA index_info({r[1]})")))
                     for r in con.execute(f"PRAGMA index_list({table})") if not r[1].startswith("sqlite_"))
        out[table] = (cols, idx)
    views = sorted(n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'view'"))
    con.close()
    return {"tables": out, "views": views}


def empty_at(path: Path, revision: str) -> Path:
    sqlite3.connect(path).close()
    from alembic import command
    from sqlalchemy import create_engine
    from opindex.migrate import alembic_config
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        cfg = alembic_config(f"sqlite:///{path}")
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    engine.dispose()
    return path


def test_head_revision_is_what_the_code_writes():
    assert opdb.SCHEMA_REVISIONS[-1] == SCHEMA_VERSION


def test_migrations_build_the_schema_of_a_fresh_build(sample_db, tmp_path):
    migrated = empty_at(tmp_path / "m.sqlite", "head")
    run(migrated)  # views come from the code, as after every build
    assert shape(migrated) == shape(sample_db)


def test_downgrade_upgrade_round_trip_on_an_empty_database(tmp_path):
    path = empty_at(tmp_path / "r.sqlite", "head")
    before = shape(path)
    run(path, "base", downgrade=True)
    assert set(shape(path)["tables"]) == {"alembic_version"}
    run(path)
    assert shape(path)["tables"] == before["tables"]


def test_oldest_schema_upgrades_in_place_with_its_data(sample_db, tmp_path):
    """An index at the oldest revision, filled with a real build's rows, upgrades to what a fresh build holds."""
    old = empty_at(tmp_path / "old.sqlite", opdb.SCHEMA_REVISIONS[0])
    con = sqlite3.connect(old)
    con.execute("ATTACH DATABASE ? AS fresh", (str(sample_db),))
    for table in metadata.sorted_tables:
        cols = [r[1] for r in con.execute(f"PRAGMA main.table_info({table.name})")]
        if not cols:
            continue  # a table later revisions add (the links: the migration derives them)
        fresh = {r[1] for r in con.execute(f"PRAGMA fresh.table_info({table.name})")}
        keep = ", ".join(c for c in cols if c in fresh)
        con.execute(f"INSERT INTO main.{table.name} ({keep}) SELECT {keep} FROM fresh.{table.name}")
    con.commit()
    con.close()
    result = CliRunner().invoke(main, ["migrate", "--db", str(old)])
    assert result.exit_code == 0, result.output
    assert "run `opindex build` (it re-extracts every file)" in result.output
    assert dump(old) == dump(_unknown_to_the_oldest(sample_db, tmp_path / "expected.sqlite"))
    assert shape(old) == shape(sample_db)


def _unknown_to_the_oldest(db, path):
    """The fresh build less the facts an index of the oldest revision never held: the template arguments of calls and
    definitions and the backend choices (0005), the conditions (0007; a migration cannot read the source again:
    `opindex build` fills them), the call arguments, includes, template parameters, receiver types and generated
    launch sites (0008), and so the links that read them."""
    from opindex.indexer import link
    path.write_bytes(db.read_bytes())
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN")
    con.execute("UPDATE calls SET template_args = NULL")
    con.execute("UPDATE symbols SET template_args = NULL")
    con.execute("UPDATE calls SET arguments = NULL, receiver_type = NULL")  # 0008: read from the source
    con.execute("UPDATE symbols SET template_parameters = NULL")
    con.execute("DELETE FROM includes")
    con.execute("DELETE FROM generated_launch_sites")
    # and the index says so: its next build re-extracts every file, and `opindex migrate` prints why
    con.execute("UPDATE meta SET value = '' WHERE key = 'extractor_fingerprint'")
    con.execute("INSERT INTO meta VALUES ('rebuild_needed', ?)", (_rebuild_note(),))
    con.execute("DELETE FROM backend_choices")
    con.execute("DELETE FROM conditions")
    link.derive(con, con.execute("SELECT root FROM checkouts").fetchone()[0])
    con.execute("COMMIT")
    con.close()
    return path


def _rebuild_note() -> str:
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "m0008", Path(__file__).resolve().parent.parent / "migrations" / "versions" / "0008_call_arguments.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.REBUILD


def test_older_schema_names_the_command_to_run(sample_db, tmp_path, monkeypatch):
    path = tmp_path / "older.sqlite"
    path.write_bytes(sample_db.read_bytes())
    con = sqlite3.connect(path)
    con.execute("UPDATE alembic_version SET version_num = '0000'")
    con.commit()
    con.close()
    monkeypatch.setattr(opdb, "SCHEMA_REVISIONS", ("0000",) + opdb.SCHEMA_REVISIONS)
    result = CliRunner().invoke(main, ["sql", "SELECT 1", "--db", str(path)])
    assert result.exit_code == 3  # an index that needs work before use
    assert f"run `opindex migrate --db {path}` (keeps the data) or rebuild with `opindex build`" in result.output


def test_migrate_without_an_index(tmp_path):
    result = CliRunner().invoke(main, ["migrate", "--db", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 3  # a broken environment: no index
    assert "no index here" in result.output
