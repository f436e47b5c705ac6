"""Where the real PyTorch trees of the `real` test tier are (docs/testing.md): one place that conftest.py and
.ci/run both read. `python tests/real_trees.py` prints one line per tree: its path, or that it is absent and its
tests will skip.

For each version, the first of these that is set wins:
  1. its own variable (OPINDEX_REAL_CHECKOUT, OPINDEX_REAL_CHECKOUT_1_8, OPINDEX_REAL_CHECKOUT_1_4): that path, or
     nothing if it is no PyTorch tree;
  2. $OPINDEX_TREES/<folder> (pt24, pt18, pt14);
  3. ../trees/<folder> next to the repository (the clone at c/main, the trees at c/trees/pt24 ...).
A tree is a folder with aten/src/ATen/native/native_functions.yaml (every PyTorch since 1.0 has one).
No pytest here: .ci/run runs this file before the tests."""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
MARKER = Path("aten/src/ATen/native/native_functions.yaml")


class Tree(NamedTuple):
    version: str   # "2.4"
    variable: str  # the variable naming this tree
    folder: str    # its folder under the trees folder
    example: str   # a public repository holding such a tree


TREES = (
    Tree("2.4", "OPINDEX_REAL_CHECKOUT", "pt24", "MetaX-MACA/mcPytorch"),
    Tree("1.8", "OPINDEX_REAL_CHECKOUT_1_8", "pt18", "SNU-ARC/flashneuron"),
    Tree("1.4", "OPINDEX_REAL_CHECKOUT_1_4", "pt14", "Belkharym/pytorch-fpga"),
)
BY_VERSION = {t.version: t for t in TREES}


def trees_folder() -> Path:
    """The folder holding pt24, pt18 and pt14: $OPINDEX_TREES, else ../trees next to the repository."""
    named = os.environ.get("OPINDEX_TREES")
    return Path(named) if named else REPO.parent / "trees"


def candidate(version: str) -> tuple[Path, str]:
    """The path looked at for `version` and where it came from (the variable, $OPINDEX_TREES or the default)."""
    tree = BY_VERSION[version]
    if os.environ.get(tree.variable):
        return Path(os.environ[tree.variable]), f"${tree.variable}"
    if os.environ.get("OPINDEX_TREES"):
        return trees_folder() / tree.folder, "$OPINDEX_TREES"
    return trees_folder() / tree.folder, "default: ../trees next to the repository"


def tree_path(version: str) -> Path | None:
    """The PyTorch `version` tree, or None when there is none where `candidate` looks."""
    path, _ = candidate(version)
    return path if (path / MARKER).is_file() else None


def report() -> list[str]:
    """One line per tree: where it is, or that it is absent and the real-tier tests on it skip."""
    lines = []
    for tree in TREES:
        path, source = candidate(tree.version)
        if tree_path(tree.version) is not None:
            lines.append(f"real tree {tree.version}: {path} ({source})")
        else:
            lines.append(f"real tree {tree.version}: absent, no PyTorch tree at {path} ({source}): "
                         f"its real-tier tests will skip")
    return lines


if __name__ == "__main__":
    print("\n".join(report()))
