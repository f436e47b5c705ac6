"""Where the index lives and how it is opened: path resolution, read-only connections, schema version checks."""
from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from .model import OpindexError

SCHEMA_REVISIONS = ("0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008")  # oldest first; the last is what this code writes (schema.SCHEMA_VERSION)


class UsageError(OpindexError):
    """A command line that cannot mean what it says (an empty --db): exit 2."""
    exit_code = 2


class Broken(OpindexError):
    """The index or its environment is broken (damaged, unreadable, not an index, an unknown schema, a failed
    write, a worker that died): exit 3."""
    exit_code = 3


def build_target(path: Path, force: bool = False) -> Path:
    """The file a build writes: `path`, or through a symlink the file it points to (replaced in its own folder,
    the link stays). A build creates a new file or replaces an opindex index; a regular file that is not one is
    refused unless `force`; a device, FIFO, socket or folder is always refused."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else path
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise Broken(f"{path}: cannot check the index file ({exc.strerror})") from None
    shown = path if target == path else f"{path} (-> {target})"
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{shown}: {_file_kind(st.st_mode)}, not an index file; refused (give a file path)")
    if not force and not is_index_file(target):
        raise UsageError(f"{shown}: not an opindex index; refused to replace it (--force to overwrite it)")
    newer = None if force else _newer_schema(target)
    if newer:
        raise UsageError(f"{shown}: index schema {newer} is newer than this opindex knows ({SCHEMA_REVISIONS[-1]}); "
                         f"refused to replace it (upgrade opindex, or --force to rebuild it with this one)")
    return target


def _newer_schema(path: Path) -> str | None:
    """The schema revision of an index written by a newer opindex, else None (an index a newer opindex wrote is
    not replaced by an older one without a word: issue 33, item 5)."""
    try:
        con = connect_raw(path)
        try:
            version = schema_version(con)
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return None
    return version if version and is_newer_revision(version) else None


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def is_index_file(path: Path) -> bool:
    """An opindex index (even a damaged or older one), or an empty file: what a build may replace. Judged by the
    SQLite header and the names of opindex's own tables, read without opening it as a database."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError:
        return False
    if not head:
        return True  # an empty file (touch x.sqlite): nothing to lose
    if not head.startswith(b"SQLite format 3\0"):
        return False
    try:
        con = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            names = {n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return False
    return {"meta", "files", "checkouts"} <= names


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


# SQL functions a query may call: SQLite's core, aggregate, date, math, JSON and window functions. Anything else
# (fts3_tokenizer, which reads and writes function pointers; load_extension, readfile, writefile) is refused.
SQL_FUNCTIONS = frozenset("""
abs changes char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid length like
likelihood likely lower ltrim max min nullif octet_length printf quote random randomblob replace round rtrim sign
soundex sqlite_compileoption_get sqlite_compileoption_used sqlite_offset sqlite_source_id sqlite_version substr
substring total_changes trim typeof unhex unicode unlikely upper zeroblob
avg count group_concat string_agg sum total
date time datetime julianday unixepoch strftime timediff
acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi pow power
radians sin sinh sqrt tan tanh trunc
json json_array json_array_length json_error_position json_extract json_insert json_object json_patch json_pretty
json_quote json_remove json_replace json_set json_type json_valid json_group_array json_group_object json_each
json_tree jsonb jsonb_array jsonb_extract jsonb_insert jsonb_object jsonb_patch jsonb_remove jsonb_replace jsonb_set
jsonb_group_array jsonb_group_object
row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
""".split())


def _authorize(action, arg1, arg2, dbname, source):
    if action in _READ_ACTIONS:
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in SQL_FUNCTIONS:
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
    if not path.exists():
        raise Broken(f"{path}: no index here; run `opindex build` first (or pass --db / set OPINDEX_DB)")
    if not path.is_file():
        raise Broken(f"{path}: not a file, so not an index")
    try:
        os.close(os.open(path, os.O_RDONLY))
    except OSError as exc:  # SQLite would only say "unable to open database file"
        raise Broken(f"{path}: cannot read the index ({exc.strerror})") from None
    try:
        con = sqlite3.connect(readonly_uri(path), uri=True, check_same_thread=False)
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise Broken(f"{path}: not an opindex database ({exc})") from None
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
        raise Broken(f"{path}: not an opindex index (no schema version); rebuild it with `opindex build`")
    if version in SCHEMA_REVISIONS:
        raise Broken(f"{path}: index schema {version} is older than this opindex's ({head}); "
                          f"run `opindex migrate --db {path}` (keeps the data) or rebuild with `opindex build`")
    if is_newer_revision(version):
        raise Broken(f"{path}: index schema {version} is newer than this opindex knows ({head}); "
                          f"upgrade opindex (pip install -U opindex) or rebuild the index with this version")
    raise Broken(f"{path}: index schema {version!r} is not one opindex ever wrote (this one knows "
                      f"{', '.join(SCHEMA_REVISIONS)}); rebuild the index with `opindex build`")


def is_newer_revision(version: str) -> bool:
    """Revisions are numbered 0001, 0002, ...: newer means a higher number than this code's head."""
    return version.isdigit() and int(version) > int(SCHEMA_REVISIONS[-1])


def readonly_uri(path: Path) -> str:
    """A read-only SQLite URI for a path; ?, # and % in a file name are escaped (they would end the path)."""
    from urllib.parse import quote
    return f"file:{quote(os.fsencode(os.path.abspath(path)))}?mode=ro"  # bytes: a non-UTF-8 name is kept


def connect_raw(path: Path) -> sqlite3.Connection:
    """A plain read-only connection (no authorizer, no schema check): for checks of the file itself."""
    con = sqlite3.connect(readonly_uri(path), uri=True)
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()  # fails here when it is not a database
    return con


def integrity(path: Path | sqlite3.Connection, quick: bool = False) -> list[str]:
    """SQLite's own check of the index file: [] when sound, else its findings (at most 100). `quick` runs
    PRAGMA quick_check (every page read once, no index-to-table cross-check: what a build runs on the previous
    index); otherwise PRAGMA integrity_check, the full check (`opindex check`)."""
    pragma = f"PRAGMA {'quick_check' if quick else 'integrity_check'}(100)"
    try:
        if isinstance(path, sqlite3.Connection):
            rows = [r[0] for r in path.execute(pragma)]
        else:
            con = sqlite3.connect(readonly_uri(path), uri=True)
            try:
                rows = [r[0] for r in con.execute(pragma)]
            finally:
                con.close()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def check(path: Path) -> list[str]:
    """`opindex check`: the index opens, its schema is this opindex's, and the full integrity check passes.
    Returns the integrity findings ([] when sound); an index that cannot be used at all raises Broken."""
    con = connect_readonly(path)
    con.close()
    return integrity(path)
