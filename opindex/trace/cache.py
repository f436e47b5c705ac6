"""cache: the fill/copy paths of an index (trace/writes.py write_path), kept between processes.

A trace shows each fill or copy a kernel makes (grad_input.zero_(), .contiguous()) by the default path of that op,
and the walk behind one of them is large (aten::copy_: ~1,100 hops, 0.1-0.3 s). In one process it is walked once
(facts.Resident); this file keeps the result for the next `opindex trace` of the same index, so a CLI trace does
not pay for it again. It is derived data only: deleting it costs one walk.

Where: $OPINDEX_CACHE (a folder; `off` turns the cache off), else $XDG_CACHE_HOME/opindex, else ~/.cache/opindex;
one JSON file per index path, under paths/. It is used only while it was made from the same index build (meta built_at and
extractor_fingerprint) by the same query code (a hash of opindex/trace and opindex/pytorch); otherwise it is
rewritten. Nothing fails when the folder cannot be written: the paths are walked as before.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from .model import Condition, Hop

_FIELDS = ("layer", "kind", "name", "file", "line", "detail", "absent", "called_at", "found", "shown_above",
           "kernel", "schema", "op")
_VERSION = 2  # of the file's shape: 2 added the typed fields of a hop (_FIELDS and its conditions)


def folder() -> Path | None:
    where = os.environ.get("OPINDEX_CACHE")
    if where is not None:
        return None if where.strip().lower() in ("off", "0", "") else Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "opindex"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the query code that walks the paths: a change to it makes old entries stale."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha1()
    for p in sorted([*here.rglob("*.py"), *(here.parent / "pytorch").glob("*.py")]):
        h.update(str(p.relative_to(here.parent)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


class PathCache:
    """The write paths of one index, loaded from and saved to its cache file."""

    def __init__(self, db: str, meta: dict | None):
        """`db`: the index's file; `meta`: its build facts (facts.build_meta), None when it has none."""
        self.file, self.key = _locate(db, meta)
        self.paths: dict[tuple, list[tuple[int, Hop]]] = {}
        self.others: dict[tuple, list[str]] = {}
        self.dirty = False
        if self.file is not None:
            self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.file.read_text())
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("key") != self.key:
            return  # another shape (`[]`, `null`, a damaged write): derived data only, walked again and rewritten
        try:
            self._read(data)
        except (KeyError, TypeError, ValueError):
            self.paths, self.others = {}, {}  # an entry of another shape: the whole file is ignored

    def _read(self, data: dict) -> None:
        for entry in data.get("paths", []):
            key = (tuple(entry["ops"]), entry["device"])
            self.paths[key] = [(parent, Hop(-1, None, **dict(zip(_FIELDS, fields)),
                                            conditions=[Condition(**c) for c in conditions]))
                               for parent, fields, conditions in entry["hops"]]
        for entry in data.get("others", []):
            self.others[(entry["op"], entry["device"])] = entry["kernels"]

    def put(self, key: tuple, path: list[tuple[int, Hop]], others_key: tuple, others: list[str]) -> None:
        self.paths[key] = path
        self.others[others_key] = others
        self.dirty = True

    def save(self) -> None:
        """Write the file if something was added (atomically: a temporary file renamed over it)."""
        if not self.dirty or self.file is None:
            return
        self.dirty = False
        data = {"key": self.key,
                "paths": [{"ops": list(ops), "device": device,
                           "hops": [[parent, [getattr(h, f) for f in _FIELDS], [asdict(c) for c in h.conditions]]
                                    for parent, h in path]}
                          for (ops, device, *build), path in self.paths.items() if not build],
                "others": [{"op": op, "device": device, "kernels": kernels}
                           for (op, device), kernels in self.others.items()]}
        tmp = None
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=self.file.name, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(data, f)
            os.replace(tmp, self.file)
        except OSError:  # a read-only home, a full disk: the next process walks them again, and no part-written
            if tmp is not None:  # temporary file stays behind
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _locate(db: str, meta: dict | None) -> tuple[Path | None, dict]:
    where = folder()
    if where is None or not db or meta is None:  # (an index without meta: no cache)
        return None, {}
    db = str(Path(db).resolve())
    key = {"db": db, **meta, "code": code_fingerprint(), "version": _VERSION}
    return where / "paths" / f"{hashlib.sha1(db.encode()).hexdigest()[:16]}.json", key
