"""What the link step reads, all of it facts of the index (it opens no checkout file): C++/CUDA definitions by name
(Symbols, with the legacy TH generic forms), the #if conditions around a definition (Conditions), and the #include
lines of the files (Includes). Shared by link.py (the small links) and callgraph.py (call_links, functor_links,
device_reach)."""
from __future__ import annotations

import posixpath
import re
from collections import defaultdict

from ..pytorch.devices import CPP_HEADERS
from ..pytorch.syntax import split_top_level
from ..pytorch.stubs import PARAMETER  # noqa: F401 - the link step's name for it

HEADER_EXTENSIONS = CPP_HEADERS
IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")


class Symbols:
    """C++/CUDA definitions by unqualified name, with the layer of their file."""

    def __init__(self, con):
        self.by_name: dict[str, list[tuple]] = defaultdict(list)
        layer = dict(con.execute("SELECT path, layer FROM files"))
        # (a join and an ORDER BY in SQL take longer than this dict and a stable sort: rows of one line in id order)
        rows = [(sid, name, qual, kind, file, line, scope, layer[file], sig, targs) for sid, name, qual, kind, file,
                line, scope, sig, targs in con.execute(
                    "SELECT id, name, qualified_name, kind, file, line, scope, signature, template_args FROM symbols "
                    "WHERE language IN ('cpp', 'cuda') AND kind IN ('function', 'method', 'impl_func', "
                    "'global_kernel', 'device_function') ORDER BY id")
                if file in layer]
        rows.sort(key=lambda r: (r[S_FILE], r[S_LINE]))
        # __device__ functions apart: only device code calls them (a kernel's fastAtomicAdd), and a host call of a
        # name must not reach one (call_links has them for calls in kernels and device functions only)
        self.device_functions: dict[str, list[tuple]] = defaultdict(list)
        for row in rows:
            (self.device_functions if row[S_KIND] == "device_function" else self.by_name)[row[S_NAME]].append(row)

        self.helpers = {name: defs for name, defs in self.by_name.items()}  # every kind here is a helper kind
        self.generic = Generic(con)
        # functor classes: a struct or class whose operator() is __device__ code (binary_internal::MulFunctor,
        # BinaryOpListAlphaFunctor). A call that builds one (`MulFunctor<opmath_t>()`) hands the op's body to a
        # launcher: call_links links it to the class, and device_reach counts the class as device code.
        self.functors: dict[str, list[tuple]] = defaultdict(list)
        for sid, name, qual, kind, file, line, scope, sig, targs in con.execute(
                "SELECT id, name, qualified_name, kind, file, line, scope, signature, template_args FROM symbols "
                "WHERE kind IN ('struct', 'class') AND language IN ('cpp', 'cuda') AND qualified_name || "
                "'::operator()' IN (SELECT qualified_name FROM symbols WHERE name = 'operator()' AND "
                "kind = 'device_function') ORDER BY file, line, id"):
            if file in layer:
                self.functors[name].append((sid, name, qual, kind, file, line, scope, layer[file], sig, targs))

    def named(self, name: str, kinds: tuple[str, ...]) -> list[tuple]:
        return [s for s in self.by_name.get(name, ()) if s[3] in kinds]


class Generic:
    """Legacy TH/THC/THNN generic code: `THCudaDoubleTensor_sort` is `THCTensor_(sort)` of THC/generic/ for one
    type. The forms come from the index's own #defines (`#define THCTensor_(NAME) TH_CONCAT_4(TH,CReal,Tensor_,NAME)`:
    a literal head, the type's name, a literal tail, the function's name); extraction wrote the definitions'
    names as `THCTensor_sort` (extract/cpp_names.prepare)."""

    TYPE_PARTS = ("Real", "CReal")  # the per-type part of a TH_CONCAT name, as TH's generic headers call it

    def __init__(self, con):
        self.forms: list[tuple[str, str, str, str]] = []  # (macro, head, tail, type part)
        for name, params, body in con.execute(
                "SELECT DISTINCT name, parameters, body FROM macros WHERE body LIKE 'TH_CONCAT_%' AND "
                "parameters IS NOT NULL ORDER BY name"):
            m = re.fullmatch(r"TH_CONCAT_\d\((.*)\)", body.strip())
            plist = [p.strip() for p in params.strip("()").split(",")]
            parts = [a.strip() for a in m.group(1).split(",")] if m else []
            typed = [i for i, a in enumerate(parts[:-1]) if a in self.TYPE_PARTS]
            if len(plist) != 1 or not parts or parts[-1] != plist[0] or len(typed) != 1:
                continue
            i = typed[0]
            self.forms.append((name, "".join(parts[:i]), "".join(parts[i + 1:-1]), parts[i]))

    def names(self, callee: str) -> list[str]:
        """The generic names `callee` may be an instance of; CUDA-typed names (THCuda...) first to CReal forms."""
        out = []
        for macro, head, tail, part in self.forms:
            if not callee.startswith(head):
                continue
            rest = callee[len(head):]
            for i in range(1, len(rest)):  # the type is CamelCase words (Cuda, CudaDouble, Float): cut at one
                if rest[i].isupper() and rest[i:].startswith(tail) and len(rest) > i + len(tail):
                    cuda = rest[:i].startswith("Cuda")
                    out.append(((part == "CReal") != cuda, i, macro + rest[i + len(tail):]))
        return [name for _, _, name in sorted(out)]  # the shortest type name that leaves a definition wins


# symbol tuple fields
S_ID, S_NAME, S_QUAL, S_KIND, S_FILE, S_LINE, S_SCOPE, S_LAYER, S_SIG, S_TARGS = range(10)


def definition_columns(s: tuple | None) -> tuple:
    return (s[S_ID], s[S_QUAL], s[S_FILE], s[S_LINE]) if s else (None, None, None, None)


# -- preprocessor conditions of same-named definitions --------------------------------------------------------------
class Conditions:
    """The #if conditions around a definition (only asked for C++ overloads that share a qualified name in one file:
    `#if !AT_CUDNN_ENABLED()` stand-ins that only raise, next to the real one): the #if rows of the conditions
    table. `includes`: the #include facts, for the call graph (helper_targets)."""

    def __init__(self, includes: "Includes", con):
        self.includes = includes
        self.groups: dict[str, list[tuple[int, int, str]]] = {}  # file -> (first, last, condition)
        self.stacks: dict[tuple[str, int], tuple[str, ...]] = {}  # (file, line) -> its conditions (_stack)
        for file, first, last, cond in con.execute("SELECT file, line, end_line, condition FROM conditions WHERE "
                                                   "kind = '#if' ORDER BY file, line, end_line DESC"):
            self.groups.setdefault(file, []).append((first, last, cond))

    def of(self, s: tuple) -> str | None:
        """The innermost condition around the definition, as written (`!AT_CUDNN_ENABLED()`; an #else branch
        reads `not (X)`), or None at top level."""
        stack = self._stack(s[S_FILE], s[S_LINE])
        return stack[-1] if stack else None

    def real(self, group: list[tuple]) -> list[tuple]:
        """Drop the stand-ins of a group: definitions under a negated feature test (`#if !X`, `#ifndef X`) when
        a sibling is not under one."""
        if len(group) < 2:
            return group
        negated = [s for s in group if _negated(self.of(s))]
        return [s for s in group if s not in negated] if negated and len(negated) < len(group) else group

    def demote(self, ranked: list[tuple]) -> list[tuple]:
        """Stand-ins last: of several candidates in one file, those under a negated feature test (the `#if
        !AT_CUDNN_ENABLED()` half of a file whose namespace the parser may have read differently)."""
        if len(ranked) < 2:
            return ranked
        files = [s[S_FILE] for s in ranked]
        shared = {f for f in files if files.count(f) > 1}
        if not shared:
            return ranked
        standin = {s[S_ID] for s in ranked if s[S_FILE] in shared and _negated(self.of(s))}
        return sorted(ranked, key=lambda s: s[S_ID] in standin)  # stable: the rank order otherwise

    def _stack(self, file: str, line: int) -> tuple[str, ...]:
        key = (file, line)  # outermost first: the rows are ordered by first line
        found = self.stacks.get(key)
        if found is None:  # asked again for each call of an overloaded name: kept
            found = self.stacks[key] = tuple(c for first, last, c in self.groups.get(file, ()) if first <= line <= last)
        return found


def _negated(condition: str | None) -> bool:
    """A feature-off side: `!X`, `#ifndef X`, the #else of `#ifdef X`, and a disjunction with a `!X` term
    (`defined(USE_ROCM) || !AT_CUDNN_ENABLED()`: the side that holds when cuDNN is off); the #else of such a
    disjunction is the feature-on side (MHA.cpp's real run_cudnn_SDP_fprop, :512)."""
    if not condition:
        return False
    if condition.startswith("not (") and condition.endswith(")"):
        inner = condition[5:-1]
        return not _off(inner) and inner.startswith("defined(")
    return _off(condition)


def _off(condition: str) -> bool:
    return condition.startswith("!") or any(term.strip().startswith("!") for term in _disjuncts(condition)[1:])


def _disjuncts(condition: str) -> list[str]:
    """The top-level `||` terms of a condition (parentheses respected)."""
    return split_top_level(condition, "||", brackets="(")


class Includes:
    """The #include lines of the C++/CUDA files (the includes table), by file."""

    def __init__(self, con):
        self.includes: dict[str, dict[str, list[str]]] = {}  # file -> its #include paths by their last part
        for file, spec in con.execute("SELECT file, path FROM includes ORDER BY id"):
            self.includes.setdefault(file, {}).setdefault(spec.rsplit("/", 1)[-1], []).append(spec)

    def includers(self, header: str, files: set[str]) -> set[str]:
        """Those of `files` that #include `header` (by a path the header's path ends with, or one relative to the
        including file's folder)."""
        name = header.rsplit("/", 1)[-1]
        out = set()
        for rel in files:
            for spec in self.includes.get(rel, {}).get(name, ()):
                folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
                if header.endswith("/" + spec) or header == spec or posixpath.normpath(f"{folder}/{spec}") == header:
                    out.add(rel)
                    break
        return out
