"""discover: which files of a checkout the build indexes, and what each one is."""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..pytorch.devices import DEVICE_CODE_FOLDERS, DIALECT_EXTENSIONS

# The folders that hold the layers of the seed document. third_party and build outputs are never indexed.
DEFAULT_SCOPE = ("torch", "aten", "c10", "tools", "torchgen", "functorch")
INSTALLED_SCOPE = ("torch", "torchgen")
ALWAYS_EXCLUDED = {"third_party", "build", ".git", "__pycache__", "node_modules", ".eggs"}
# In a source checkout these hold copies made by a build, not sources.
SOURCE_BUILD_OUTPUTS = ("torch/include", "torch/lib", "torch/share", "torch/bin")

PYTHON_EXT = {".py": "python", ".pyi": "python"}
# .mm (Objective-C++, the MPS and Metal backends' sources) is read as C++: the backend table names the dialects
CPP_EXT = {".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c": "cpp", ".h": "cpp", ".hpp": "cpp",
           ".cu": "cuda", ".cuh": "cuda", **dict.fromkeys(DIALECT_EXTENSIONS, "cpp")}
REGISTRIES = {"native_functions.yaml", "derivatives.yaml"}
# Folders whose C++ belongs to the cuda layer even in .cpp files (cuDNN and cuBLAS wrappers live there).
CUDA_FOLDERS = DEVICE_CODE_FOLDERS


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative, "/"-separated
    language: str  # python, cpp, cuda, yaml, template
    layer: str  # python, cpp, cuda, registry, codegen
    module: str | None
    size: int
    mtime_ns: int

    @property
    def parsed(self) -> bool:
        return self.language != "template"


def classify(rel: str) -> tuple[str, str] | None:
    """(language, layer) of a relative path, or None when the build does not index it."""
    parts = rel.split("/")
    name = parts[-1]
    if name in REGISTRIES:
        return "yaml", "registry"
    ext = os.path.splitext(name)[1]
    if "templates" in parts[:-1] and ext in CPP_EXT | {".py": 1, ".pyi": 1, ".yaml": 1}:
        return "template", "codegen"  # codegen templates: ${placeholders}, not compilable sources
    if ext in PYTHON_EXT:
        return "python", "python"
    language = CPP_EXT.get(ext)
    if language is None:
        return None
    if language == "cuda" or CUDA_FOLDERS.intersection(parts[:-1]):
        return language, "cuda"
    return language, "cpp"


def module_name(rel: str) -> str | None:
    if not rel.endswith((".py", ".pyi")):
        return None
    parts = rel.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _excluded(rel: str, excludes: tuple[str, ...]) -> bool:
    return any(rel == e or rel.startswith(e + "/") for e in excludes)


def discover(root: Path, scope: tuple[str, ...], excludes: tuple[str, ...] = (),
             warn=lambda msg: None) -> list[SourceFile]:
    """Walk the scope folders (relative to root); symlinked folders are not followed (no loops), and a symlinked
    file is indexed only when it resolves inside the checkout (an index holds the checkout and nothing else)."""
    out: list[SourceFile] = []
    prefix = os.path.join(os.fspath(root), "")  # joined as text: pathlib's `/` costs ~0.2 s over a PyTorch tree
    top_real = os.path.join(os.path.realpath(root), "")
    for top in scope:
        base = root / top
        if base.is_file():
            _add(prefix, top, out, warn, top_real)
            continue
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base, onerror=lambda e: warn(f"{e.filename}: {e.strerror}")):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            dirnames[:] = sorted(d for d in dirnames if d not in ALWAYS_EXCLUDED and not d.endswith(".egg-info")
                                 and not _excluded(f"{rel_dir}/{d}", excludes))
            for name in sorted(filenames):
                rel = f"{rel_dir}/{name}"
                if not _excluded(rel, excludes):
                    _add(prefix, rel, out, warn, top_real)
    return out


def _add(prefix: str, rel: str, out: list[SourceFile], warn, top_real: str) -> None:
    kind = classify(rel)
    if kind is None:
        return
    if kind[0] == "template" and rel.endswith((".py", ".pyi")) and os.path.isfile(
            prefix + rel.rpartition("/")[0] + "/__init__.py"):
        # a templates/ folder that is a Python package holds modules (torch/distributed/nn/jit/templates/
        # remote_module_template.py: defs whose strings are templates); codegen's template folders are no packages
        kind = ("python", "python")
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # a name that is no UTF-8 (bytes the file system took as they came)
        warn(f"{rel.encode('utf-8', 'backslashreplace').decode('ascii', 'backslashreplace')}: a file name that is "
             "not UTF-8; skipped")
        return
    try:
        if os.path.islink(prefix + rel) and not os.path.realpath(prefix + rel).startswith(top_real):
            warn(f"{rel}: a symlink to {os.path.realpath(prefix + rel)}, outside the checkout; skipped")
            return
        st = os.stat(prefix + rel)
    except OSError as exc:  # a dangling symlink or a file that vanished
        warn(f"{rel}: {exc.strerror}; skipped")
        return
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read, a device never end: known by type, not opened
        warn(f"{rel}: not a regular file ({_kind(st.st_mode)}); skipped")
        return
    out.append(SourceFile(rel, kind[0], kind[1], module_name(rel), st.st_size, st.st_mtime_ns))


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return kind
    return "special file"
