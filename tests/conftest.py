"""Shared fixtures: the bundled sample_checkout, built once per session into a temporary index, and the real PyTorch
trees (real_trees.py says where they are looked for); the test tiers (docs/testing.md): every test is marked `real`
(it needs a real tree) or `sample` (this repository alone) here, from the fixtures and functions it uses."""
from __future__ import annotations

import inspect
import shutil
import types
from pathlib import Path

import pytest

from real_trees import REPO, candidate, report, tree_path

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
    """The PyTorch 2.4 tree: $OPINDEX_REAL_CHECKOUT, else $OPINDEX_TREES/pt24, else ../trees/pt24 next to the
    repository (None when there is none). A test calling it is marked `real` (pytest_collection_modifyitems)."""
    return tree_path("2.4")


def no_tree(version: str) -> str:
    """The reason a test skips without the `version` tree."""
    path, source = candidate(version)
    return f"no PyTorch {version} tree at {path} ({source}; docs/testing.md says how to get one)"


@pytest.fixture(scope="session")
def real_index(tmp_path_factory):
    """An index of the PyTorch 2.4 tree (real_checkout()), built once per test session (skips without it)."""
    from opindex.api import Index, build
    root = real_checkout()
    if root is None:
        pytest.skip(no_tree("2.4"))
    db = tmp_path_factory.mktemp("real-index") / "real.sqlite"
    build(str(root), db)
    with Index(db) as index:
        yield index


def _older_tree_index(tmp_path_factory, version: str):
    """An index of the PyTorch `version` tree ($OPINDEX_REAL_CHECKOUT_<version>, else pt<version> in the trees
    folder), built once (skips without it)."""
    from opindex.api import Index, build
    path = tree_path(version)
    if path is None:
        pytest.skip(no_tree(version))
    db = tmp_path_factory.mktemp(f"real-index-{version.replace('.', '-')}") / "real.sqlite"
    build(str(path), db)
    with Index(db) as index:
        yield index


@pytest.fixture(scope="session")
def real_index_1_4(tmp_path_factory):
    """An index of a PyTorch 1.4 tree (OPINDEX_REAL_CHECKOUT_1_4, e.g. Belkharym/pytorch-fpga extracted): its legacy
    kernels are generated at build time from Declarations.cwrap and nn.yaml (skips without it)."""
    yield from _older_tree_index(tmp_path_factory, "1.4")


@pytest.fixture(scope="session")
def real_index_1_8(tmp_path_factory):
    """An index of a PyTorch 1.8 tree (OPINDEX_REAL_CHECKOUT_1_8, e.g. SNU-ARC/flashneuron extracted): the older
    layout with legacy TH/THC/THNN code (skips without it)."""
    yield from _older_tree_index(tmp_path_factory, "1.8")


# -- the tiers ---------------------------------------------------------------------------------------------------------
REAL_FIXTURES = {"real_index", "real_index_1_8", "real_index_1_4"}


def _calls_real_checkout(code: types.CodeType, module: types.ModuleType | None, seen: set) -> bool:
    """Whether `code` names real_checkout, itself, in a nested function or lambda, or in a function of its own test
    module that it calls (a helper or fixture of the module that reads the tree)."""
    if code in seen:
        return False
    seen.add(code)
    if "real_checkout" in code.co_names:
        return True
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and _calls_real_checkout(const, module, seen):
            return True
    for name in code.co_names:
        helper = getattr(module, name, None) if module is not None else None
        helper = getattr(helper, "__wrapped__", helper)
        if inspect.isfunction(helper) and helper.__module__ == module.__name__ and \
                _calls_real_checkout(helper.__code__, module, seen):
            return True
    return False


def needs_real_tree(item: pytest.Item) -> bool:
    """A test needs a real tree when it carries `real` (a module's pytestmark), uses a real-tree fixture (directly or
    through other fixtures), or calls real_checkout() (in its body, a fixture it uses or a helper of its module)."""
    if item.get_closest_marker("real") is not None:
        return True
    names = set(getattr(item, "fixturenames", ()))
    if names & REAL_FIXTURES:
        return True
    functions = [item.function] if isinstance(item, pytest.Function) else []
    info = getattr(item, "_fixtureinfo", None)
    for name in names:
        for definition in (info.name2fixturedefs.get(name, ()) if info is not None else ()):
            functions.append(definition.func)
    for function in functions:
        function = inspect.unwrap(function)
        module = inspect.getmodule(function)
        if module is not None and module.__name__ == __name__:  # the fixtures above: named in REAL_FIXTURES
            continue
        if _calls_real_checkout(function.__code__, module, set()):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("real") is None:
            item.add_marker(pytest.mark.real if needs_real_tree(item) else pytest.mark.sample)


def pytest_report_header(config):
    return report()
