"""Issue 16, the build and database side: nothing overwritten, nothing silently stale, no hang, messages that say
what happened. Failures root would not see (unreadable files, dying workers) are simulated at the point they occur."""
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
