"""Reading the checkout's own text, for the facts the index does not hold: brace-initialized functors
(`MeanOps<...>{factor}` is not a call), launches and function references inside macros, function-like #defines
the macros table leaves out. Files are read only from inside the recorded checkout root."""
from __future__ import annotations

import bisect
import os
import re
from pathlib import Path

from ..pytorch.syntax import define_body, function_defines
from ..trace import facts
from .index import FANOUT, _dedupe, _host_only, _last


class SourceText:
    """Mixin for IndexFacts: the checkout's files, cached per profile."""

    def _read_bytes(self, path: str) -> bytes | None:
        """A checkout file's bytes; cached (a profile asks for the same files). Only relative paths without `..`
        are opened; whether a symlink leads outside the root is checked by the callers that use the text
        (`_inside`), so the scan of every CUDA file for a functor's name does not resolve 400 paths."""
        key = ("bytes", path)
        if key not in self._cache:
            data = None
            if path and not path.startswith("/") and ".." not in path.split("/"):
                try:
                    with open(os.path.join(self.root, path), "rb") as fh:
                        data = fh.read()
                except OSError:
                    pass
            self._cache[key] = data
        return self._cache[key]

    def _inside(self, path: str) -> bool:
        try:
            return (self._root_resolved() / path).resolve().is_relative_to(self._root_resolved())
        except OSError:
            return False

    def _root_resolved(self) -> Path:
        if "_root" not in self._cache:
            self._cache["_root"] = self.root.resolve()
        return self._cache["_root"]

    def _read(self, path: str) -> str | None:
        key = ("file", path)
        if key not in self._cache:
            raw = self._read_bytes(path) if self._inside(path) else None
            self._cache[key] = raw.decode("utf-8", errors="replace") if raw is not None else None
        return self._cache[key]

    def _line_starts(self, file: str, text: str) -> list[int]:
        key = ("lines", file)
        if key not in self._cache:
            self._cache[key] = [0] + [m.end() for m in re.finditer("\n", text)]
        return self._cache[key]

    def _enclosing(self, file: str, line: int) -> tuple | None:
        """(qualified_name, line) of the innermost function around a line. The file's function ranges are read once
        (symbols has no index on file; one query per file instead of one scan per line)."""
        key = ("ranges", file)
        if key not in self._cache:
            self._cache[key] = [(r["line"], r["end_line"], r["qualified_name"]) for r in facts.definitions_in_file(
                self.con, file, ("function", "method", "impl_func"))]
        best = None
        for start, end, qn in self._cache[key]:
            if start > line:
                break
            if end is not None and end >= line:
                best = (qn, start)        # later starts are inner
        return best

    def _text_users(self, name: str) -> list[tuple]:
        if self.root is None:
            return []
        files = self._ask(facts.files_in_language, "cuda")
        pat = re.compile(r"\b" + re.escape(name) + r"\s*<[^;{]*>\s*[({]|\b" + re.escape(name) + r"\s*[({]")
        needle = name.encode()
        out = []
        for path in files:
            if _host_only(path):
                continue
            raw = self._read_bytes(path)
            if not raw or needle not in raw or not self._inside(path):
                continue
            text = raw.decode("utf-8", errors="replace")
            starts = [0] + [m.end() for m in re.finditer("\n", text)]
            for m in pat.finditer(text):
                line = bisect.bisect_right(starts, m.start())
                enc = self._enclosing(path, line)
                if enc and _last(enc[0]) != name:
                    out.append((enc[0], path, line))
        return _dedupe(out)

    def _text_refs(self, f: str, file: str) -> list[tuple]:
        """Uses of f in its own file that are not calls the index records: a function passed to a macro
        (`RUN_K(INDEX_T, DIM, mbtopk::launch)`) or taken by address. Each is attributed to the function around it."""
        key = ("textrefs", f, file)
        if key in self._cache:
            return self._cache[key]
        text = self._read(file) if self.root else None
        parts = f.split("::")
        if not text or parts[-1] not in text:
            self._cache[key] = []
            return []
        starts = self._line_starts(file, text)
        pat = re.compile(r"(?<![\w:])(?:\w+::)*" + re.escape(parts[-1]) + r"\b")
        out = []
        for m in pat.finditer(text):
            quals = m.group().split("::")[:-1]
            if quals and quals[-1] not in parts[:-1]:
                continue
            line = bisect.bisect_right(starts, m.start())
            enc = self._enclosing(file, line)
            if enc and enc[0] != f and enc[1] != line:
                out.append((enc[0], file, line))
        self._cache[key] = _dedupe(out)[:FANOUT]
        return self._cache[key]

    def _macros(self, file: str) -> list[tuple]:
        """Function-like #defines of a file: (name, line, parameters, body). The index's macros table, and when the
        checkout is readable the file's own text too (the table leaves out some macros that define functions)."""
        key = ("macros", file)
        if key in self._cache:
            return self._cache[key]
        out = {r["name"]: (r["name"], r["line"], r["parameters"], r["body"])
               for r in self._ask(facts.function_macros, file)}
        data = self._read_bytes(file) if self.root and self._read(file) is not None else None
        for m in function_defines(data or b""):
            name = m.group(1).decode()
            if name not in out:
                out[name] = (name, data.count(b"\n", 0, m.start()) + 1, m.group(2).decode("utf-8", "replace"),
                             define_body(m.group(3).decode("utf-8", "replace")))
        self._cache[key] = list(out.values())
        return self._cache[key]


def _pasted_patterns(body: str, params: str | None) -> list[re.Pattern]:
    """Names a macro body builds by token pasting, as regexes: foreach_tensor_##NAME##_scalar_cuda_ ->
    foreach_tensor_(\\w+)_scalar_cuda_ (a parameter standing alone is any identifier part)."""
    names = {p.strip() for p in (params or "").strip("()").split(",") if p.strip()}
    out = []
    for m in re.finditer(r"[A-Za-z_0-9]*(?:\s*##\s*[A-Za-z_0-9]+)+", body or ""):
        parts = [p.strip() for p in m.group().split("##")]
        rx = "".join(r"\w+" if p in names else re.escape(p) for p in parts)
        out.append(re.compile(rx))
    return out
