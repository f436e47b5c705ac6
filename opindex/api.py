"""Index: the library twin of the CLI. Every command calls one method here that returns plain data or typed
records; only the CLI formats. Names always go into SQL as bound parameters, never formatted in."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .db import connect_readonly, resolve_db
from .model import OpindexError


def build(checkout: str | None = None, db: str | os.PathLike | None = None, *, installed: bool = False,
          jobs: int | None = None, include=(), exclude=(), progress: bool = False, log=print):
    """Build (or incrementally rebuild) an index; returns a BuildReport."""
    from .build import checkout as co
    from .build.pipeline import build as _build
    ck = co.resolve(checkout, installed=installed, include=include, exclude=exclude)
    return _build(ck, resolve_db(db), jobs=jobs, log=log, progress=progress)


class Index:
    """An opened index (read-only). ``Index()`` opens $OPINDEX_DB or the default path."""

    def __init__(self, db: str | os.PathLike | None = None):
        self.path = resolve_db(db)
        self.con = connect_readonly(self.path)
        self.con.row_factory = sqlite3.Row
        self._meta = None

    # -- raw SQL --------------------------------------------------------------------------------------------
    def rows(self, query: str, params: dict | tuple = ()) -> list[dict]:
        """Run a read-only query; a list of dicts."""
        try:
            cur = self.con.execute(query, params)
        except sqlite3.DatabaseError as exc:
            msg = str(exc)
            if "not authorized" in msg or "prohibited" in msg or "readonly" in msg:
                raise OpindexError(f"opindex sql is read-only: {msg}") from None
            raise OpindexError(f"SQL error: {msg}") from None
        cols = [d[0] for d in cur.description or ()]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def sql(self, query: str, **params):
        """Rows as a pandas DataFrame when pandas is installed, else a list of dicts."""
        rows = self.rows(query, params)
        try:
            import pandas as pd
        except ImportError:
            return rows
        return pd.DataFrame(rows)

    # -- facts about the index ------------------------------------------------------------------------------
    @property
    def meta(self) -> dict[str, str]:
        if self._meta is None:
            self._meta = {r["key"]: r["value"] for r in self.rows("SELECT key, value FROM meta")}
        return self._meta

    @property
    def root(self) -> Path:
        return Path(self.meta["checkout_root"])

    def stats(self) -> list[dict]:
        from . import schema
        out = [{"what": k, "value": v} for k, v in sorted(self.meta.items())]
        for layer in self.rows("SELECT layer, count(*) AS n FROM files GROUP BY layer ORDER BY layer"):
            out.append({"what": f"files[{layer['layer']}]", "value": layer["n"]})
        for table in schema.metadata.sorted_tables:
            n = self.rows(f"SELECT count(*) AS n FROM {table.name}")[0]["n"]  # names from our schema, not users
            out.append({"what": f"rows[{table.name}]", "value": n})
        return out

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
