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
    ("opindex.db", "opindex.sql_limits", "opindex.query", "opindex.indexer", "opindex.migrate", "opindex._migrations"),
    ("opindex.trace", "opindex.coverage"),
    ("opindex.render",),
    ("opindex.profile", "opindex.diff"),
    ("opindex.api",),
    ("opindex.mcp",),  # the MCP server: a client of the library, as the CLI is
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


SQL = re.compile(r"\bSELECT\b.*?\bFROM\b|\bSELECT\s+(count\(|\*|\d)|\b(INSERT|REPLACE)\s+(OR\s+\w+\s+)?INTO\b|"
                 r"\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|\b(CREATE|DROP)\s+(TEMP\s+)?(TABLE|INDEX|VIEW|TRIGGER)\b|"
                 r"\bPRAGMA\s+\w|\bWITH\s+\w+\s+AS\b", re.S)


def string_texts(tree: ast.AST) -> list[str]:
    """The text of every string literal of a module; an f-string also as a whole, each {field} read as x."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values))
    return out


def test_every_select_of_the_query_side_is_in_facts():
    """The query side's SELECTs are opindex/trace/facts.py's (and coverage's, opindex/coverage/facts.py's): the
    walks, name resolution, the profile and coverage ask those functions (docs/build.md) and never run SQL of their
    own."""
    wrong = []
    for name, path in modules().items():
        if not name.startswith(("opindex.trace", "opindex.profile", "opindex.coverage")) or name in (
                "opindex.trace.facts", "opindex.coverage.facts"):
            continue
        tree = ast.parse(path.read_text())
        wrong += [f"{name}: {text[:60]!r}" for text in string_texts(tree) if SQL.search(text)]
        wrong += [f"{name}: .{node.func.attr}() at line {node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("execute", "executemany", "executescript")]
    assert wrong == []
    facts = ast.parse(modules()["opindex.trace.facts"].read_text())
    assert any(SQL.search(text) for text in string_texts(facts))  # the finder sees SQL where there is some


def test_every_select_of_the_diff_is_in_its_facts():
    """The diff's SQL is opindex/diff/facts.py's, as the trace's is trace/facts.py's."""
    wrong = []
    for name, path in modules().items():
        if not name.startswith("opindex.diff") or name == "opindex.diff.facts":
            continue
        wrong += [f"{name}: {text[:60]!r}" for text in string_texts(ast.parse(path.read_text())) if SQL.search(text)]
    assert wrong == []
    assert any(SQL.search(text) for text in string_texts(ast.parse(modules()["opindex.diff.facts"].read_text())))


def test_sql_finder_finds_sql():
    texts = string_texts(ast.parse('x = f"SELECT {cols} FROM t WHERE b IN ({marks})"\ny = "INSERT INTO t VALUES (?)"\n'
                                   'z = "Every SELECT is a function of facts.py"\nw = "SELECT count(*) AS n"'))
    assert {t for t in texts if SQL.search(t)} == {"SELECT x FROM t WHERE b IN (x)", "INSERT INTO t VALUES (?)",
                                                    "SELECT count(*) AS n"}
