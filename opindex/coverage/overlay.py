"""An out-of-tree backend (`--with DIR`): a PrivateUse1 backend's repository read on top of the index, so its
coverage is computed against the checkout it targets.

Read from DIR, with opindex's own extractors (nothing of DIR enters the index):
- YAML in torchgen's backend format (gen_backend_stubs: `backend: PrivateUse1`, `supported:` and `autograd:` op
  lists): each listed op gets a kernel for that key, at the line it is listed on;
- YAML in native_functions.yaml's format (`- func:` entries with `dispatch:`): the entries' dispatch rows, on the
  index's op of the same name, or as a new op;
- C++ sources (.cpp, .cc, .cu, .mm): their TORCH_LIBRARY / TORCH_LIBRARY_IMPL blocks and m.def / m.impl /
  m.fallback calls.
Paths in the rows are DIR's own, prefixed with the folder's name (`my_backend/csrc/ops.cpp`), so no row can be
taken for the checkout's.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import yaml

from ..db import UsageError
from ..extract import cpp as cpp_extract, native_yaml

SOURCE_SUFFIXES = {".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".mm": "cpp", ".cu": "cuda"}
YAML_SUFFIXES = (".yaml", ".yml")
MAX_FILE = 8 << 20  # a source past 8 MiB is no hand-written backend file: skipped and said (Overlay.skipped)


class Overlay:
    def __init__(self, root: Path):
        self.root = root
        self.backend_rows: list[tuple[str, str, str, int]] = []  # (full_name, key, kernel, line) of a backend YAML
        self.backend_file: dict[str, str] = {}
        self.entries: list = []  # native_yaml.NativeFunction of native-style YAML
        self.blocks: list[dict] = []
        self.calls: list[dict] = []
        self.skipped: list[str] = []
        self.files = 0

    @classmethod
    def read(cls, folder) -> "Overlay":
        root = Path(folder)
        if not root.is_dir():
            raise UsageError(f"--with {folder}: no such folder (an out-of-tree backend's repository)")
        out = cls(root.resolve())
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = f"{root.resolve().name}/{path.relative_to(root).as_posix()}"
            if path.suffix in YAML_SUFFIXES:
                out._yaml(path, rel)
            elif path.suffix in SOURCE_SUFFIXES:
                out._source(path, rel)
        return out

    def _yaml(self, path: Path, rel: str) -> None:
        text = path.read_bytes()
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise UsageError(f"{rel}:{mark.line + 1 if mark else 1}: not YAML ({getattr(e, 'problem', e)})") from None
        self.files += 1
        if isinstance(data, dict) and "backend" in data:
            self._backend_yaml(data, text, rel)
        elif isinstance(data, list) and any(isinstance(e, dict) and "func" in e for e in data):
            entries, warnings = native_yaml.parse(text, rel)
            if warnings:
                raise UsageError(warnings[0])
            self.entries += entries

    def _backend_yaml(self, data: dict, text: bytes, rel: str) -> None:
        """gen_backend_stubs' format: the op names under supported:/autograd: are kernels of `backend`."""
        key = str(data["backend"])
        lines = text.decode("utf-8", "replace").splitlines()
        for section in ("supported", "autograd"):
            names = data.get(section) or []
            if not isinstance(names, list):
                raise UsageError(f"{rel}: {section}: is not a list of op names")
            for name in names:
                line = next((i for i, t in enumerate(lines, 1) if t.strip() in (f"- {name}", f"- '{name}'",
                                                                                   f'- "{name}"')), 1)
                self.backend_rows.append((str(name), key if section == "supported" else f"Autograd{key}",
                                          f"{data.get('cpp_namespace', '')}::{name}".lstrip(":"), line))
                self.backend_file[str(name)] = rel

    def _source(self, path: Path, rel: str) -> None:
        data = path.read_bytes()
        if len(data) > MAX_FILE:
            self.skipped.append(f"{rel} ({len(data)} bytes: over {MAX_FILE >> 20} MiB)")
            return
        self.files += 1
        facts = cpp_extract.extract(rel, data, SOURCE_SUFFIXES[path.suffix])
        for s in facts.records("symbols"):
            if s.name in ("TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT", "TORCH_LIBRARY_IMPL"):
                self.blocks.append({"macro": s.name, "signature": s.signature, "file": rel, "line": s.line,
                                    "end_line": s.end_line})
        for c in facts.records("calls"):
            if c.callee in ("def", "impl", "fallback") and c.is_method:
                self.calls.append({"file": rel, "line": c.line, "callee": c.callee, "qualifier": c.qualifier,
                                   "arguments": c.arguments})

    def summary(self) -> str:
        text = (f"{self.files} files read: {len(self.backend_rows)} ops listed in backend YAML, "
                f"{len(self.entries)} native_functions-style entries, {len(self.calls)} m.def/m.impl/m.fallback "
                f"calls in {len(self.blocks)} TORCH_LIBRARY blocks")
        return text + (f"; skipped {', '.join(self.skipped)}" if self.skipped else "")

    def merge_into(self, f) -> None:
        """Add DIR's facts to the index's (coverage.Facts), ids past the index's own."""
        by_name = {e["full_name"]: e["id"] for e in f.native}
        next_id = itertools.count(max([e["id"] for e in f.native] + [r["id"] for r in f.dispatch] + [0]) + 1)
        for name, key, kernel, line in self.backend_rows:
            if name in by_name:
                f.dispatch.append({"id": next(next_id), "native_function_id": by_name[name], "dispatch_key": key,
                                   "kernel": kernel, "implicit": 0, "file": self.backend_file[name], "line": line})
        for e in self.entries:
            fid = by_name.get(e.full_name)
            if fid is None:
                fid = next(next_id)
                f.native.append({"id": fid, "name": e.full_name.split(".")[0], "overload": "",
                                 "full_name": e.full_name, "schema": e.schema, "structured": e.structured,
                                 "structured_delegate": e.structured_delegate, "autogen": e.autogen,
                                 "file": e.location.file, "line": e.location.line})
            for r in e.dispatch:
                if not r.implicit:
                    f.dispatch.append({"id": next(next_id), "native_function_id": fid, "dispatch_key": r.dispatch_key,
                                       "kernel": r.kernel, "implicit": 0, "file": r.location.file,
                                       "line": r.location.line})
        f.blocks += self.blocks
        f.calls += self.calls
