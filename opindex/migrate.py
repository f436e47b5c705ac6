"""Schema migrations with alembic, applied to a copy that replaces the index only when the upgrade completed."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .db import Broken


def alembic_config(url: str):
    from alembic.config import Config
    cfg = Config()
    cfg.set_main_option("script_location", str(_migrations_folder()))
    cfg.set_main_option("sqlalchemy.url", url)
    return cfg


def _migrations_folder() -> Path:
    """An installed opindex carries migrations/ as opindex._migrations; code run from a clone (python -m pytest in
    it) reads the clone's own migrations/ beside opindex/, first: an editable install of another clone maps
    opindex._migrations to that clone's folder, whose revisions need not be this code's."""
    clone = Path(__file__).resolve().parent.parent / "migrations"
    if (clone / "env.py").is_file():
        return clone
    import opindex._migrations as pkg
    return Path(pkg.__file__).parent


def run(db_path: Path, revision: str = "head", downgrade: bool = False) -> None:
    """Upgrade (or downgrade) the index file at db_path to `revision`, on a copy, then rename it over. A symlink is
    followed (the file it points to is migrated). What it cannot migrate (not an index, a schema revision newer
    than this code or unknown, a damaged file) is refused with one line before anything is copied."""
    from alembic import command
    from alembic.util import CommandError
    from sqlalchemy import create_engine
    from .indexer.pipeline import _lock, clean_stale_temps
    from .db import SCHEMA_REVISIONS, UsageError
    from .schema import VIEWS
    if os.path.islink(db_path):
        db_path = Path(os.path.realpath(db_path))
    if not db_path.is_file():
        raise Broken(f"{db_path}: no index here")
    if revision not in ("head", "base") + SCHEMA_REVISIONS:
        raise UsageError(f"--to {revision}: not a schema revision this opindex knows "
                         f"({', '.join(('head', 'base') + SCHEMA_REVISIONS)})")
    _check_migratable(db_path)
    lock = _lock(db_path)
    temp = db_path.with_name(f".{db_path.name}.migrate-{os.getpid()}")
    try:
        clean_stale_temps(db_path)  # what a killed build or migrate left (a full copy of the index each)
        shutil.copyfile(db_path, temp)
        engine = create_engine(f"sqlite:///{temp}")
        try:
            with engine.begin() as conn:
                for name in VIEWS:  # views are rebuilt from the code after the tables change
                    conn.exec_driver_sql(f"DROP VIEW IF EXISTS {name}")
                cfg = alembic_config(f"sqlite:///{temp}")
                cfg.attributes["connection"] = conn
                (command.downgrade if downgrade else command.upgrade)(cfg, revision)
                if not downgrade and revision == "head":
                    for name, sql in VIEWS.items():
                        conn.exec_driver_sql(f"CREATE VIEW {name} AS {sql}")
        except CommandError as exc:
            raise Broken(f"{db_path}: cannot migrate ({exc}); the index is unchanged") from None
        finally:
            engine.dispose()
        os.replace(temp, db_path)
    finally:
        clean_stale_temps(db_path)  # this copy and its journal, when it failed
        lock.close()


def _check_migratable(db_path: Path) -> None:
    """One line, before any work, for an index migrate cannot handle."""
    import sqlite3
    from .db import SCHEMA_REVISIONS, connect_raw, integrity, is_index_file, is_newer_revision, schema_version
    head = SCHEMA_REVISIONS[-1]
    try:
        con = connect_raw(db_path)
    except sqlite3.DatabaseError as exc:
        raise Broken(f"{db_path}: not an opindex index ({exc}); nothing to migrate") from None
    try:
        version = schema_version(con)
        tables = {n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
                                            "LIKE 'sqlite_%' AND name != 'alembic_version'")}
        if version is None and not tables:
            return  # an empty database (or one downgraded to base): the migrations create everything
        if version is None:
            what = "an opindex index without a schema version" if is_index_file(db_path) else "not an opindex index"
            raise Broken(f"{db_path}: {what} (no alembic_version table); nothing to migrate: rebuild it with "
                         f"`opindex build`")
        if version not in SCHEMA_REVISIONS:
            if is_newer_revision(version):
                raise Broken(f"{db_path}: index schema {version} is newer than this opindex knows ({head}); "
                             f"upgrade opindex (pip install -U opindex) to use it, or rebuild it with this one")
            raise Broken(f"{db_path}: index schema {version!r} is not one opindex ever wrote; rebuild it with "
                         f"`opindex build`")
        damage = integrity(con, quick=True)
        if damage:
            raise Broken(f"{db_path}: the index is damaged ({damage[0]}); rebuild it with `opindex build`")
    finally:
        con.close()
