"""Where the index lives and how it is opened: path resolution, read-only connections, schema version checks."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .model import OpindexError

SCHEMA_REVISIONS = ("0001", "0002")  # oldest first; the last is what this code writes (schema.SCHEMA_VERSION)


def default_db_path() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "opindex" / "index.sqlite"


def resolve_db(arg: str | os.PathLike | None) -> Path:
    """--db, else $OPINDEX_DB, else ~/.cache/opindex/index.sqlite."""
    if arg:
        return Path(arg).expanduser()
    env = os.environ.get("OPINDEX_DB")
    return Path(env).expanduser() if env else default_db_path()


# SQLite authorizer action codes that only read (everything else is refused on read-only connections).
_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
# PRAGMAs that only report, whatever their argument (a table or index name, a row limit): also reached through
# their table-valued form, SELECT * FROM pragma_table_info('calls').
_READ_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list",
                 "foreign_key_check", "table_list", "integrity_check", "quick_check", "database_list",
                 "compile_options", "collation_list", "function_list", "module_list", "pragma_list", "page_count",
                 "freelist_count", "data_version"}
# PRAGMAs that set something when given a value: only their reading form (no argument) is allowed.
_SETTING_PRAGMAS = {"user_version", "schema_version", "application_id", "journal_mode", "page_size", "encoding",
                    "auto_vacuum", "foreign_keys", "cache_size", "synchronous", "locking_mode", "temp_store",
                    "max_page_count", "query_only", "recursive_triggers", "secure_delete", "mmap_size"}


def _authorize(action, arg1, arg2, dbname, source):
    if action in _READ_ACTIONS:
        if action == sqlite3.SQLITE_FUNCTION and arg2 in ("load_extension", "readfile", "writefile"):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master" and source is None:
        # SQLite asks this while it sets up a table-valued PRAGMA (pragma_table_info); a statement that really
        # updates sqlite_master is refused by SQLite itself (writable_schema is refused below) and the file is
        # opened read-only
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in _READ_PRAGMAS or (name in _SETTING_PRAGMAS and arg2 is None):
            return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def connect_readonly(path: Path, check_schema: bool = True) -> sqlite3.Connection:
    """A connection that cannot change the index: opened read-only, and an authorizer refuses anything but reads
    (so ATTACH, VACUUM INTO, writable PRAGMAs and load_extension fail too)."""
    if not path.is_file():
        raise OpindexError(f"{path}: no index here; run `opindex build` first (or pass --db / set OPINDEX_DB)")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise OpindexError(f"{path}: not an opindex database ({exc})") from None
    if check_schema:
        check_schema_version(con, path)
    con.enable_load_extension(False) if hasattr(con, "enable_load_extension") else None
    con.set_authorizer(_authorize)
    return con


def schema_version(con: sqlite3.Connection) -> str | None:
    try:
        row = con.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.DatabaseError:
        return None
    return row[0] if row else None


def check_schema_version(con: sqlite3.Connection, path: Path) -> None:
    version = schema_version(con)
    head = SCHEMA_REVISIONS[-1]
    if version == head:
        return
    if version is None:
        raise OpindexError(f"{path}: not an opindex index (no schema version); rebuild it with `opindex build`")
    if version in SCHEMA_REVISIONS:
        raise OpindexError(f"{path}: index schema {version} is older than this opindex's ({head}); "
                           f"run `opindex migrate --db {path}` (keeps the data) or rebuild with `opindex build`")
    raise OpindexError(f"{path}: index schema {version} is newer than this opindex knows ({head}); "
                       f"upgrade opindex (pip install -U opindex) or rebuild the index with this version")
