"""Which checkout to index, and what it is (version, git commit)."""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..db import UsageError
from ..model import OpindexError
from .discover import DEFAULT_SCOPE, INSTALLED_SCOPE, SOURCE_BUILD_OUTPUTS


@dataclass(frozen=True)
class Checkout:
    root: Path
    kind: str  # source | installed
    how: str  # how it was chosen, for the build report
    scope: tuple[str, ...]
    excludes: tuple[str, ...]


def bundled_sample() -> Path | None:
    """The miniature checkout shipped with opindex: opindex/_sample in an installed package (pyproject.toml ships
    sample_checkout/ there), sample_checkout/ beside the package in a source tree or an editable install."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_sample", package.parent / "sample_checkout", Path.cwd() / "sample_checkout"):
        if (candidate / "aten").is_dir():
            return candidate
    return None


def resolve(arg: str | None, installed: bool = False, include=(), exclude=(), sample: bool = False) -> Checkout:
    if sum((bool(arg), installed, sample)) > 1:
        raise UsageError("give one of CHECKOUT, --installed and --sample")
    if installed:
        root, how = installed_torch_root(), "--installed: the torch package of this Python"
        kind, scope, excludes = "installed", INSTALLED_SCOPE, ()
    elif sample:
        root, how = bundled_sample(), "--sample: the sample checkout shipped with opindex"
        if root is None:
            raise OpindexError("--sample: this opindex has no bundled sample_checkout (reinstall it)")
        kind, scope, excludes = "source", DEFAULT_SCOPE, SOURCE_BUILD_OUTPUTS
    else:
        root, how = _source_root(arg)
        kind, scope, excludes = "source", DEFAULT_SCOPE, SOURCE_BUILD_OUTPUTS
    if not root.is_dir():
        raise OpindexError(f"{root}: not a folder")
    if not os.access(root, os.R_OK | os.X_OK):
        raise OpindexError(f"{root}: not readable")
    for extra in include:  # the index holds the checkout only: an --include that leaves it is refused
        inside = os.path.normpath(extra)
        if os.path.isabs(extra) or inside == ".." or inside.startswith("../") or not _within(root, root / inside):
            raise UsageError(f"--include {extra}: not a folder inside the checkout {root} (give it relative to it)")
    scope = tuple(dict.fromkeys(scope + tuple(include)))
    return Checkout(root.resolve(), kind, how, scope, tuple(excludes) + tuple(exclude))


def _within(root: Path, path: Path) -> bool:
    """Whether `path`, its symlinks resolved, lies inside `root` (resolved too)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top + os.sep)


def _source_root(arg: str | None) -> tuple[Path, str]:
    if arg:
        path = Path(arg).expanduser()
        if not path.exists():
            raise OpindexError(f"{arg}: no such folder")
        return path, "the CHECKOUT argument"
    cache = os.environ.get("TILEGYM_SKILL_CACHE_DIR")
    candidates = [(Path(cache) / "pytorch-source", "$TILEGYM_SKILL_CACHE_DIR/pytorch-source")] if cache else []
    candidates.append((Path("~/.cache/tilegym/pytorch-source").expanduser(), "~/.cache/tilegym/pytorch-source"))
    for path, how in candidates:
        if path.is_dir():
            return path, how
    sample = bundled_sample()
    if sample is None:
        raise OpindexError("no checkout given, none in ~/.cache/tilegym/pytorch-source, and no bundled "
                           "sample_checkout found: pass CHECKOUT")
    return sample, "the bundled sample_checkout (no checkout given or found in the tilegym cache)"


def installed_torch_root() -> Path:
    import importlib.util
    spec = importlib.util.find_spec("torch")  # finds the package without importing it (import takes seconds)
    if spec is None or not spec.submodule_search_locations:
        raise OpindexError("--installed: torch is not installed in this Python")
    return Path(list(spec.submodule_search_locations)[0]).parent


def pytorch_version(root: Path) -> str | None:
    txt = root / "version.txt"
    if txt.is_file():
        return txt.read_text(errors="replace").strip() or None
    py = root / "torch" / "version.py"
    if py.is_file():
        m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", py.read_text(errors="replace"), re.M)
        if m:
            return m.group(1)
    return None


def git_commit(root: Path) -> str | None:
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def installed_torch_version() -> str | None:
    from importlib import metadata
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def release(version: str | None) -> str | None:
    """'2.4.0a0+git1234' -> '2.4.0'; '2.13.0+cpu' -> '2.13.0'."""
    if not version:
        return None
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return f"{m.group(1)}.{m.group(2)}.{m.group(3) or 0}" if m else None
