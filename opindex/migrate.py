"""Schema migrations with alembic, applied to a copy that replaces the index only when the upgrade completed."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from .model import OpindexError


def alembic_config(url: str):
    from alembic.config import Config
    import opindex._migrations as pkg
    cfg = Config()
    cfg.set_main_option("script_location", os.path.dirname(pkg.__file__))
    cfg.set_main_option("sqlalchemy.url", url)
    return cfg


def run(db_path: Path, revision: str = "head", downgrade: bool = False) -> None:
    """Upgrade (or downgrade) the index file at db_path to `revision`, on a copy, then rename it over."""
    from alembic import command
    from sqlalchemy import create_engine
    from .build.pipeline import _lock
    from .schema import VIEWS
    if not db_path.is_file():
        raise OpindexError(f"{db_path}: no index here")
    lock = _lock(db_path)
    temp = db_path.with_name(f".{db_path.name}.migrate-{os.getpid()}")
    try:
        shutil.copyfile(db_path, temp)
        engine = create_engine(f"sqlite:///{temp}")
        with engine.begin() as conn:
            for name in VIEWS:  # views are rebuilt from the code after the tables change
                conn.exec_driver_sql(f"DROP VIEW IF EXISTS {name}")
            cfg = alembic_config(f"sqlite:///{temp}")
            cfg.attributes["connection"] = conn
            (command.downgrade if downgrade else command.upgrade)(cfg, revision)
            if not downgrade and revision == "head":
                for name, sql in VIEWS.items():
                    conn.exec_driver_sql(f"CREATE VIEW {name} AS {sql}")
        engine.dispose()
        os.replace(temp, db_path)
    finally:
        temp.unlink(missing_ok=True)
        lock.close()
