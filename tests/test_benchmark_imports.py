"""The benchmark scripts (benchmarks/*.py) run against real trees outside the test tiers; what each imports from
opindex, at module level or inside a function, must exist, so a rename in the package cannot leave one broken
until someone runs it (benchmarks/sweep.py imported notebook_markdown from its old module)."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _imports(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.module, alias.name) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("opindex")
            for alias in node.names if alias.name != "*"]


def _exists(module: str, name: str) -> bool:
    found = importlib.import_module(module)
    if hasattr(found, name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
        return True
    except ImportError:
        return False


def test_every_opindex_name_a_benchmark_imports_exists():
    scripts = sorted(BENCHMARKS.glob("*.py"))
    assert len(scripts) >= 15
    missing = [(p.name, module, name) for p in scripts for module, name in _imports(p) if not _exists(module, name)]
    assert missing == []
