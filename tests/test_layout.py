"""The layout shows the data flow: a module imports only modules at its own step or below, and nothing imports in
a circle (docs/build.md, "How the code is laid out")."""
from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "opindex"
# discover -> parse -> extract -> store -> link -> query -> render, then the library and its CLI on top
STEPS = [
    ("opindex.model", "opindex.paths", "opindex.pytorch"),
    ("opindex.sqlite_ddl", "opindex.records", "opindex.schema"),
    ("opindex.extract",),
    ("opindex.db", "opindex.query", "opindex.indexer", "opindex.migrate", "opindex._migrations"),
    ("opindex.trace",),
    ("opindex.render",),
    ("opindex.profile",),
    ("opindex.api",),
    ("opindex.cli", "opindex.__main__"),
]


def step(module: str) -> int:
    if module == "opindex":  # the package itself: __version__ (its lazy __getattr__ is checked by nothing here)
        return 0
    for i, prefixes in reversed(list(enumerate(STEPS))):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise AssertionError(f"{module} is in no step of the layout")


@cache  # read once: imports() asks it for every `from x import y`
def modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


@cache  # both tests ask for every module's imports: each file is parsed once
def imports(name: str, path: Path) -> frozenset[str]:
    """opindex modules `name` imports, at the top or inside functions."""
    known = modules()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            mod = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            for alias in node.names:  # `from . import facts` imports the submodule
                out.add(f"{mod}.{alias.name}" if f"{mod}.{alias.name}" in known else mod)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return frozenset(m for m in out if m == "opindex" or m.startswith("opindex."))


def test_no_module_imports_one_above_its_step():
    wrong = []
    for name, path in modules().items():
        if name == "opindex":  # the package's lazy __getattr__ hands out the library: it is the top
            continue
        for target in imports(name, path):
            if step(target) > step(name):
                wrong.append(f"{name} -> {target}")
    assert wrong == []


def test_no_import_circle():
    graph = {name: imports(name, path) - {name} for name, path in modules().items() if name != "opindex"}
    seen, stack, cycles = set(), [], []

    def visit(node):
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if not nxt.startswith(node + "."):  # a package importing its own submodules is not a circle
                visit(nxt)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    assert cycles == []


_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|PRAGMA)\b\s+[\w*(]")


def _sql_literals(path: Path) -> list[str]:
    """String literals of a module that read like SQL (docstrings and comments are prose: not counted)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(
        n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body and isinstance(n.body[0], ast.Expr)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs and _SQL.search(n.value)]


def test_every_select_of_the_query_side_is_in_facts():
    """The walks' SQL lives in one module (trace/facts.py): a walk reads facts through named functions."""
    found = {name: _sql_literals(path) for name, path in modules().items()
             if name.startswith("opindex.trace") and name != "opindex.trace.facts"}
    assert {name: sql for name, sql in found.items() if sql} == {}
    assert _sql_literals(modules()["opindex.trace.facts"])  # the test sees SQL where there is some
