"""Where an index lives when no --db or $OPINDEX_DB says: one file per checkout in the cache folder
(`~/.cache/opindex/<name>-<hash>.sqlite`, keyed by the checkout's resolved path), so building one checkout never
replaces another's index. A query finds the index of the checkout it runs in (the current folder or a folder above
it), else the one built last."""
from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from pathlib import Path

from ..db import Broken, UsageError, readonly_uri
from ..model import Listing, OpindexError

LEGACY_NAME = "index.sqlite"  # the one default index of opindex before per-checkout indexes: still found
LAST_NAME = "last"  # holds the path of the index last built into the cache folder
ELSEWHERE_NAME = "elsewhere"  # the indexes built with --db or $OPINDEX_DB, one path a line (`opindex list`)
MARKER = Path("aten/src/ATen/native/native_functions.yaml")  # a folder holding it is a PyTorch checkout


def cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "opindex"


def explicit(arg: str | os.PathLike | None) -> Path | None:
    """--db, else $OPINDEX_DB, else None. An empty --db is an error, never the default (`--db "$UNSET"` must not
    write over a default index); an empty $OPINDEX_DB counts as unset."""
    if arg is not None:
        if not os.fspath(arg):
            raise UsageError("--db: empty path (an unset shell variable?); give the index file")
        return Path(arg).expanduser()
    env = os.environ.get("OPINDEX_DB")
    return Path(env).expanduser() if env else None


def default_for(root: Path) -> Path:
    """The default index of the checkout at `root`: its folder name (for people reading the folder) and a hash of
    its resolved path (so two checkouts named alike never share one)."""
    root = Path(os.path.realpath(root))
    name = re.sub(r"[^A-Za-z0-9._-]", "_", root.name)[:40] or "root"
    digest = hashlib.sha1(os.fsencode(root)).hexdigest()[:10]
    return cache_dir() / f"{name}-{digest}.sqlite"


def for_query(arg: str | os.PathLike | None = None) -> Path:
    """The index a query opens: --db, $OPINDEX_DB, the index of the checkout holding the current folder, the index
    built last, or (from an older opindex) ~/.cache/opindex/index.sqlite."""
    return chosen_for_query(arg)[0]


def chosen_for_query(arg: str | os.PathLike | None = None) -> tuple[Path, str]:
    """for_query's index and the rule that chose it, in words (a server says which index it serves, and why)."""
    path = explicit(arg)
    if path is not None:
        return path, "--db" if arg is not None else "$OPINDEX_DB"
    here = _here()
    if here is not None:
        return here, "the index of the checkout holding the current folder"
    last = last_built()
    if last is not None:
        return last, "the index built last (`opindex list`)"
    legacy = cache_dir() / LEGACY_NAME
    if legacy.is_file():
        return legacy, f"the default index of an older opindex ({legacy.name})"
    raise Broken("no index yet: run `opindex build [CHECKOUT]` first (or pass --db / set OPINDEX_DB)")


def for_build(arg: str | os.PathLike | None, root: Path) -> tuple[Path, str]:
    """The index a build of the checkout at `root` writes, and what chose it ("--db", "$OPINDEX_DB" or
    "default"): --db, $OPINDEX_DB, else the checkout's own."""
    path = explicit(arg)
    if path is None:
        return default_for(root), "default"
    return path, "--db" if arg is not None else "$OPINDEX_DB"


def _cwd() -> Path | None:
    try:
        return Path.cwd().resolve()
    except OSError:  # the current folder was removed
        return None


def _here() -> Path | None:
    """The index of the checkout holding the current folder: its own (default_for) or one built for it with --db;
    of several, the one written last."""
    cwd = _cwd()
    if cwd is None:
        return None
    elsewhere = _recorded_by_checkout()
    for folder in (cwd, *cwd.parents):
        found = [p for p in (default_for(folder),) if p.is_file()] + elsewhere.get(str(folder), [])
        if found:
            return max(found, key=_mtime)
    return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def recorded() -> list[Path]:
    """The indexes built with --db or $OPINDEX_DB (record()), those still there."""
    try:
        lines = (cache_dir() / ELSEWHERE_NAME).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [Path(t) for t in dict.fromkeys(line.strip() for line in lines)
            if t and Path(t).is_absolute() and Path(t).is_file()]


def record(path: Path) -> None:
    """Add an index built with --db or $OPINDEX_DB to the list `opindex list` and a query's choice read (written to
    a temporary file and renamed; indexes removed since are dropped)."""
    path = Path(path).resolve()
    folder = cache_dir()
    temp = folder / f".{ELSEWHERE_NAME}.{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temp.write_text("".join(f"{p}\n" for p in [*(p for p in recorded() if p != path), path]),
                        encoding="utf-8")
        os.replace(temp, folder / ELSEWHERE_NAME)
    except OSError:
        temp.unlink(missing_ok=True)  # the index still works through --db; only `opindex list` misses it


def _recorded_by_checkout() -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for path in recorded():
        root = checkout_of(path)
        if root:
            out.setdefault(os.path.realpath(root), []).append(path)
    return out


def checkout_here() -> Path | None:
    """The checkout holding the current folder: the innermost folder that is the checkout of a known index (its
    own or a recorded one) or holds aten/src/ATen/native/native_functions.yaml."""
    cwd = _cwd()
    if cwd is None:
        return None
    known = set(_recorded_by_checkout())
    for folder in (cwd, *cwd.parents):
        if str(folder) in known or default_for(folder).is_file() or (folder / MARKER).is_file():
            return folder
    return None


def mismatch(path: Path, root: str | None) -> str | None:
    """A sentence when the current folder lies in a checkout other than the opened index's, else None."""
    here = checkout_here()
    if here is None or not root or os.path.realpath(root) == str(here):
        return None
    own = _here()
    fix = (f"its own index is {own} (open it with --db {own})" if own and Path(own) != Path(path)
           else f"it has no index yet: `opindex build {here}`")
    return f"this folder is in the checkout {here}, but the index opened, {path}, is of {root}; {fix}"


def last_built() -> Path | None:
    try:
        text = (cache_dir() / LAST_NAME).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    path = Path(text)
    return path if text and path.is_absolute() and path.is_file() else None


def remember(path: Path) -> None:
    """Record `path` as the index built last (written to a temporary file and renamed: never half a path)."""
    folder = cache_dir()
    temp = folder / f".{LAST_NAME}.{os.getpid()}"
    try:
        temp.write_text(str(Path(path).resolve()) + "\n", encoding="utf-8")
        os.replace(temp, folder / LAST_NAME)
    except OSError:
        temp.unlink(missing_ok=True)  # a query then takes the checkout's own index, or says there is none


def checkout_of(path: Path) -> str | None:
    """The checkout root an index records, None when `path` is not a readable index."""
    return meta_value(path, "checkout_root")


def meta_value(path: Path, key: str) -> str | None:
    """One value of an index's meta table, None when it has none or `path` is not a readable index."""
    try:
        con = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return None
    return row[0] if row else None


def refuse_another_checkout(path: Path, chosen_by: str, root: Path, force: bool) -> None:
    """A build through $OPINDEX_DB (a standing setting, like the default) replaces an index of another checkout only
    with --force: the quick start on the sample must not silently replace the index of a real checkout. A --db
    given for this build names the file to write, and a default index is the checkout's own."""
    if force or chosen_by != "$OPINDEX_DB" or not path.is_file():
        return
    other = checkout_of(path)
    if other and other != str(root):
        raise UsageError(f"$OPINDEX_DB={path}: the index of another checkout ({other}); refused to replace it "
                         f"with one of {root} (--force replaces it; --db names another file; with $OPINDEX_DB unset "
                         f"each checkout has its own index: `opindex list`)")


def list_indexes() -> list[dict]:
    """The indexes in the cache folder and those built with --db or $OPINDEX_DB, with the checkout each holds;
    `current` marks the one a query run here opens when no --db or $OPINDEX_DB is given, `last` the one built
    last."""
    folder = cache_dir()
    try:
        paths = sorted(p for p in folder.iterdir() if p.suffix == ".sqlite" and p.is_file())
    except OSError:
        paths = []
    paths += [p for p in recorded() if p not in paths]  # built with --db or $OPINDEX_DB
    try:
        current = for_query(None) if explicit(None) is None else None
    except OpindexError:
        current = None
    last = last_built()
    rows = []
    for path in paths:
        meta = _meta(path)
        rows.append({"index": str(path), "checkout": meta.get("checkout_root"),
                     "pytorch_version": meta.get("pytorch_version") or None, "built_at": meta.get("built_at"),
                     "size_mb": round(path.stat().st_size / 1e6, 1), "current": path == current,
                     "last": path == last})
    return Listing(rows)


def _meta(path: Path) -> dict[str, str]:
    try:
        con = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            return dict(con.execute("SELECT key, value FROM meta"))
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return {}
