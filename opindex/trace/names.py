"""Name resolution over a built index: what `nn.LSTM`, `F.relu`, `torch.relu` or `Tensor.add_` names.

A name is followed the way Python would follow it, but over the index's facts instead of imports at run time:
symbols (definitions), python_imports (imports, aliases, `from x import *` and `__all__`), class_bases (inherited
members), and, when no Python definition exists, the native_functions entries whose `variants` bind the name
(torch.x and torch._VF.x -> variants function; Tensor.x -> variants method; torch._C._nn.x -> python_module nn;
torch.ops.aten.x.overload -> that overload). A definition found in a .pyi stub is a binding of C++, so the
native entries are added to it. Names only ever reach SQL as bound parameters.
"""
from __future__ import annotations

import dataclasses

import sqlite3
from dataclasses import dataclass, replace

from ..pytorch.python_rules import C_NAMESPACES, normalize
from . import facts as q
from .facts import resident

# Conventional spellings (import torch.nn.functional as F; from torch import nn, Tensor; aten = torch.ops.aten).
CONVENTIONS = {"F": "torch.nn.functional", "nn": "torch.nn", "Tensor": "torch.Tensor", "aten": "torch.ops.aten"}
_TENSOR_CLASSES = ("torch.Tensor", "torch._tensor.Tensor", "torch._C.TensorBase", "torch._C._TensorBase")
_MAX_DEPTH = 24
# Lookups one resolution may make (each is a few indexed SELECTs). A real name needs at most a few hundred; a name
# that loops through a self-importing module (torch.torch.torch...x) stops here instead of searching for minutes.
_MAX_LOOKUPS = 3000


@dataclass(frozen=True)
class Resolution:
    kind: str  # python_class | python_function | native_function
    qualified_name: str  # torch.nn.modules.rnn.LSTM, or aten::add.Tensor for a native function
    file: str
    line: int
    via: tuple[str, ...]  # each name followed, first the one asked for: ('nn.LSTM', 'torch.nn.LSTM', ...)
    stub: bool = False  # a definition in a .pyi file (a signature of a C++ binding, not Python code)
    dispatch: str | None = None  # the boolean_dispatch object this def is a branch of (torch.nn.functional.max_pool2d)

    @property
    def how(self) -> str:
        return " -> ".join(self.via)


def _modules(con: sqlite3.Connection) -> frozenset[str]:
    return resident(con).modules  # read once per open index (sqlite3 connections cannot be weakly referenced)


def _module_prefixes(dotted: str, modules: frozenset[str], most: int) -> list[int]:
    """The k (longest first) for which the first k parts of `dotted` name a module; only the first `most` parts
    can (no module has more), so a name of 1,600 parts costs what one of 10 does."""
    ends, start = [], 0
    for _ in range(most):
        dot = dotted.find(".", start)
        if dot < 0:
            break
        ends.append(dot)
        start = dot + 1
    return [k + 1 for k in range(len(ends) - 1, -1, -1) if dotted[:ends[k]] in modules]


class _Resolver:
    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self.modules = _modules(con)
        self.most_parts = max((m.count(".") + 1 for m in self.modules), default=0)
        self.active: set[str] = set()  # names being looked up further up the stack (import cycles)
        # dotted name -> its resolutions, each with the part of `via` it added: a name reached again (a module that
        # imports itself, torch.torch.x) is answered once, so the search is linear in the name's parts
        self.memo: dict[str, list[tuple[Resolution, tuple[str, ...]]]] = {}
        self.lookups = 0

    # -- Python definitions ---------------------------------------------------------------------------------------
    def symbols(self, qn: str) -> list[tuple]:
        # the last def of a name is the one that runs (@overload stubs come first): it leads
        return q.python_symbols_tuples(self.con, qn)

    def lookup(self, dotted: str, via: tuple[str, ...], depth: int = 0) -> list[Resolution]:
        dotted = normalize(dotted)
        memo = self.memo.get(dotted)
        if memo is not None:
            return [replace(r, via=via + added) for r, added in memo]
        if depth > _MAX_DEPTH or dotted in self.active or self.lookups >= _MAX_LOOKUPS:
            return []
        self.lookups += 1
        self.active.add(dotted)
        try:
            found = self._lookup(dotted, via, depth)
        finally:
            self.active.discard(dotted)
        n = len(via)
        self.memo[dotted] = [(r, r.via[n:] if r.via[:n] == via else r.via) for r in found]
        return found

    def _lookup(self, dotted: str, via: tuple[str, ...], depth: int) -> list[Resolution]:
        found = [Resolution("python_class" if k == "class" else "python_function", q, f, l, via, f.endswith(".pyi"))
                 for k, q, f, l in self.symbols(dotted)]
        if found:
            if any(r.stub for r in found):
                found += self.natives(dotted, via)
            return found
        parts = dotted.split(".")
        for k in _module_prefixes(dotted, self.modules, self.most_parts)[:1]:  # the longest prefix that is a module
            module = ".".join(parts[:k])
            member, rest = parts[k], parts[k + 1:]
            out = self.through_module(module, member, rest, via, depth)
            if out:
                return out
            break
        out = self.inherited(parts, via, depth)
        return out or self.natives(dotted, via)

    def through_module(self, module: str, member: str, rest: list[str], via, depth) -> list[Resolution]:
        tail = "".join(f".{p}" for p in rest)
        direct = q.module_bindings(self.con, module, member)
        # the last binding wins, as when the module runs: torch/__init__.py's `from .functional import *` comes
        # after the ATen bindings "so we can overwrite from Python side" (torch.norm, torch.unique are Python defs)
        stars = [(line, source) for source, line in q.star_imports(self.con, module)
                 if self.star_exports(source, member)]
        last = max((line for _, _, line in direct), default=-1)
        for _, source in [s for s in stars if s[0] > last]:
            nxt = f"{source}.{member}{tail}"
            out = self.lookup(nxt, via + (nxt,), depth + 1)
            if out:
                return out
        out: list[Resolution] = []
        for target, kind, _ in direct:
            nxt = target + tail
            found = self.lookup(nxt, via + (nxt,), depth + 1)
            if kind == "dispatch":  # a boolean_dispatch object calls each of its branch defs: all of them
                out += [dataclasses.replace(r, dispatch=f"{module}.{member}") for r in found]
                continue
            out += found
            if out:
                return out
        if out:
            return out
        for _, source in [s for s in stars if s[0] <= last]:
            nxt = f"{source}.{member}{tail}"
            out += self.lookup(nxt, via + (nxt,), depth + 1)
            if out:
                return out
        return out

    def star_exports(self, source: str, member: str) -> bool:
        """Whether `from source import *` binds member: its __all__ when it has one, else any public name."""
        listed = q.all_lists(self.con, member, source)
        return any(r[0] for r in listed) if listed else not member.startswith("_")

    def inherited(self, parts: list[str], via, depth) -> list[Resolution]:
        """C.member where C is a class without that member: the member of its bases, nearest first."""
        if len(parts) < 2:
            return []
        owner, member = ".".join(parts[:-1]), parts[-1]
        classes = [r for r in self.lookup(owner, via + (owner,), depth + 1) if r.kind == "python_class"]
        for cls in classes:
            for base in self.bases(cls.qualified_name, depth):
                nxt = f"{base}.{member}"
                out = self.lookup(nxt, via + (nxt,), depth + 1)
                if out:
                    return out
            if cls.qualified_name in _TENSOR_CLASSES or owner in _TENSOR_CLASSES:
                return self.native_rows("method", member, None, via + (f"Tensor.{member}",))
        if owner in _TENSOR_CLASSES and not classes:
            return self.native_rows("method", member, None, via + (f"Tensor.{member}",))
        return []

    def bases(self, class_qn: str, depth: int = 0) -> list[str]:
        """Qualified names of a class's direct bases, resolved in the module that defines the class."""
        out = []
        for base, file in q.class_bases_tuples(self.con, class_qn):
            for r in self.in_module(self.module_of(file), base, depth + 1):
                if r.kind == "python_class" and r.qualified_name not in out:
                    out.append(r.qualified_name)
        return out

    def module_of(self, file: str) -> str:
        return q.module_of_file(self.con, file)

    def in_module(self, module: str, written: str, depth: int = 0) -> list[Resolution]:
        """What a name written inside a module means: its imports and aliases, its own defs, else absolute."""
        head, _, rest = written.partition(".")
        tail = f".{rest}" if rest else ""
        target = q.first_import(self.con, module, head)
        if target is not None:
            nxt = target + tail
            return self.lookup(nxt, (written, nxt), depth)
        local = f"{module}.{written}" if module else written
        out = self.lookup(local, (written, local), depth)
        return out or self.lookup(written, (written,), depth)

    # -- native functions ---------------------------------------------------------------------------------------
    def natives(self, dotted: str, via) -> list[Resolution]:
        parts = normalize(dotted).split(".")
        if parts[0] != "torch" or len(parts) < 2:
            return []
        n = len(parts)
        if n == 2 or (n == 3 and parts[1] == "_VF") or (n == 4 and parts[1:3] == ["_C", "_VariableFunctions"]):
            return self.native_rows("function", parts[-1], None, via)
        if n == 4 and parts[1] == "_C" and parts[2] in C_NAMESPACES:
            return self.native_rows("module", parts[3], parts[2][1:], via)
        if n == 4 and parts[1] == "_C" and parts[2] in ("TensorBase", "_TensorBase"):
            return self.native_rows("method", parts[3], None, via)
        if n in (4, 5) and parts[1:3] == ["ops", "aten"]:
            overload = None if n == 4 else ("" if parts[4] == "default" else parts[4])
            return self.native_rows("overload", parts[3], overload, via)
        return []

    def native_rows(self, how: str, name: str, extra: str | None, via) -> list[Resolution]:
        rows = q.natives_bound(self.con, how if how in ("function", "method", "module") else
                               "packet" if extra is None else "overload", name, extra)
        step = f"native_functions ({'variants: ' + how if how in ('function', 'method') else how})"
        return [Resolution("native_function", f"aten::{full}", file, line, via + (step,))
                for full, file, line in rows]


def _start(con: sqlite3.Connection, name: str, modules: frozenset[str]) -> list[str]:
    """The absolute spellings to try for a name as a user writes it."""
    name = name.strip().replace("::", ".")
    if name.startswith("aten."):
        name = "torch.ops." + name
    head, _, rest = name.partition(".")
    tail = f".{rest}" if rest else ""
    out = []
    if head in CONVENTIONS and head not in modules:
        out.append(CONVENTIONS[head] + tail)
    out.append(name)
    if head != "torch":
        out.append(f"torch.{name}")
    return list(dict.fromkeys(out))


def resolve(con: sqlite3.Connection, name: str) -> list[Resolution]:
    """Every definition a name written by a user reaches: Python classes/defs, or the native functions it binds."""
    r = _Resolver(con)
    for start in _start(con, name, r.modules):
        via = (name,) if start == name else (name, start)
        found = r.lookup(start, via)
        if found:
            return list(dict.fromkeys(found))
    return []
