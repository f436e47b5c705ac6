"""Shared fixtures: the bundled sample_checkout, built once per session into a temporary index."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_checkout"
SAMPLE_ENTRIES = 26  # `- func:` entries of the sample's native_functions.yaml (test_registry checks the index agrees)


@pytest.fixture(scope="session", autouse=True)
def no_user_cache(tmp_path_factory):
    """A build without --db and $OPINDEX_DB writes the checkout's own index in the cache folder and records it as
    the last built: during tests that folder is a temporary one, never the user's ~/.cache/opindex."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    patch.undo()


@pytest.fixture(scope="session")
def sample_db(tmp_path_factory) -> Path:
    from opindex.api import build
    db = tmp_path_factory.mktemp("index") / "sample.sqlite"
    build(str(SAMPLE), db, jobs=1)
    return db


@pytest.fixture(scope="session")
def ix(sample_db):
    from opindex.api import Index
    with Index(sample_db) as index:
        yield index


@pytest.fixture
def sample_copy(tmp_path) -> Path:
    """A writable copy of the sample checkout, for tests that change files."""
    dest = tmp_path / "checkout"
    shutil.copytree(SAMPLE, dest)
    return dest


def real_checkout() -> Path | None:
    path = os.environ.get("OPINDEX_REAL_CHECKOUT")
    return Path(path) if path and Path(path).is_dir() else None


@pytest.fixture(scope="session")
def real_index(tmp_path_factory):
    """An index of the tree OPINDEX_REAL_CHECKOUT names, built once per test session (skips without it)."""
    from opindex.api import Index, build
    root = real_checkout()
    if root is None:
        pytest.skip("set OPINDEX_REAL_CHECKOUT to a PyTorch source tree")
    db = tmp_path_factory.mktemp("real-index") / "real.sqlite"
    build(str(root), db)
    with Index(db) as index:
        yield index


def _older_tree_index(tmp_path_factory, variable: str, version: str):
    """An index of the tree an OPINDEX_REAL_CHECKOUT_<version> variable names, built once (skips without it)."""
    from opindex.api import Index, build
    path = os.environ.get(variable)
    if not path or not Path(path).is_dir():
        pytest.skip(f"set {variable} to a PyTorch {version} source tree")
    db = tmp_path_factory.mktemp(f"real-index-{version.replace('.', '-')}") / "real.sqlite"
    build(path, db)
    with Index(db) as index:
        yield index


@pytest.fixture(scope="session")
def real_index_1_4(tmp_path_factory):
    """An index of a PyTorch 1.4 tree (OPINDEX_REAL_CHECKOUT_1_4, e.g. Belkharym/pytorch-fpga extracted): its legacy
    kernels are generated at build time from Declarations.cwrap and nn.yaml (skips without it)."""
    yield from _older_tree_index(tmp_path_factory, "OPINDEX_REAL_CHECKOUT_1_4", "1.4")


@pytest.fixture(scope="session")
def real_index_1_8(tmp_path_factory):
    """An index of a PyTorch 1.8 tree (OPINDEX_REAL_CHECKOUT_1_8, e.g. SNU-ARC/flashneuron extracted): the older
    layout with legacy TH/THC/THNN code (skips without it)."""
    yield from _older_tree_index(tmp_path_factory, "OPINDEX_REAL_CHECKOUT_1_8", "1.8")
