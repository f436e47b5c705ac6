"""Python extraction: one .py/.pyi file -> symbols, calls, class_bases, module_state, python_imports,
python_bridges and decompositions rows.

The patterns live in queries/python-*.scm (one compiled Query, run once per file by a QueryCursor in C). Each
pattern ends with a role capture (@def, @call, @import ...); this module groups the matches by role and turns them
into rows. Nesting comes from byte ranges, not recursion: scopes (class and def bodies) are sorted by start, each
knows its parent, and the innermost scope of any position is a bisect plus a short walk up the parents.
Bad input never raises: ERROR/MISSING nodes are counted, and facts that start inside an ERROR node are dropped.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path

import tree_sitter as ts
import tree_sitter_python as tsp

from ..records import (CallRow, ClassBaseRow, DecompositionRow, ModuleStateRow, PythonBridgeRow, PythonImportRow,
                       SymbolRow)
from . import FileFacts, columns
from ..pytorch.python_rules import (absolute_import, aten_op, classify, collapse, is_dotted, is_tensor_method_name,
                           library_op, normalize, package_of, string_value)

QUERIES = Path(__file__).with_name("queries")
LANGUAGE = "python"

# The tables this extractor fills. Rows are built by keyword through their row types, except the hot ones (most
# of a tree's Python rows): symbols, calls, python_imports and python_bridges rows are tuple literals in these orders.
_TABLES = ("symbols", "calls", "class_bases", "module_state", "python_imports", "python_bridges", "decompositions",
           "conditions")
_SYMBOL = columns(SymbolRow, "file", "line", "end_line", "language", "kind", "name", "qualified_name", "scope",
                  "signature", "is_template", "from_macro", "template_args", "template_parameters")
_CALL = columns(CallRow, "file", "line", "language", "caller", "callee", "qualifier", "is_method", "template_args",
                "arguments", "receiver_type")
_IMPORT = columns(PythonImportRow, "file", "line", "module", "name", "target", "kind")
_BRIDGE = columns(PythonBridgeRow, "file", "line", "caller", "kind", "namespace", "op", "overload", "text")

# the def in torch/_meta_registrations.py that registers the Python meta functions as Meta kernels at import; its
# own list of ops it leaves alone is read there (_meta_skips)
META_ACTIVATOR = "activate_meta"
_ROLE = re.compile(r"@([A-Za-z_]\w*)")
_loaded: tuple | None = None


def _setup():
    """The language, parser and compiled queries: built once per process."""
    global _loaded
    if _loaded is None:
        lang = ts.Language(tsp.language())
        source = "\n".join(p.read_text() for p in sorted(QUERIES.glob("python-*.scm")))
        query = ts.Query(lang, source)
        raw = source.encode()
        roles = [_role(raw[query.start_byte_for_pattern(i):query.end_byte_for_pattern(i)].decode())
                 for i in range(query.pattern_count)]
        errors = ts.Query(lang, "(ERROR) @error (MISSING) @missing")
        _loaded = (ts.Parser(lang), query, roles, errors)
    return _loaded


def _role(pattern: str) -> str:
    """A pattern's role: the first part of its last capture, @def or @call.name (comments are skipped)."""
    code = "\n".join(line for line in pattern.splitlines() if not line.lstrip().startswith(";"))
    return _ROLE.findall(code)[-1]


# `if max_norm is not None:`, `elif not train:`, `if p > 0.0:`, `elif p == "nuc":`, `if not isinstance(p, str):`,
# `if p == "fro" and (dim is None or len(dim) <= 2):`: a one-line test of the def's parameters against literals,
# which a default argument can decide (the conditions table; trace/conditions.py reads it); literal-led, the line
# start and the test's words checked per hit
_GUARD = re.compile(rb"if[ \t]+([^\n#:]{1,240})(?<![ \t]):[ \t]*(?:#[^\n]*)?$", re.M)
# what such a test may hold: names, literals, comparisons, and/or/not, isinstance() and len() (no other calls, no
# subscripts, no lambdas: a test on anything else is not one a default decides; a parameter's .dim(), .numel(),
# .size(d) and .ndim are kept: a traced call's tensors decide them)
_TEST_WORDS = re.compile(r"[A-Za-z_][\w.]*|\"[^\"\\]*\"|'[^'\\]*'|-?\d[\w.]*|==|!=|>=|<=|[<>(),]|\s+")
_TEST_CALLS = frozenset({"isinstance", "len"})
_SIZE_METHODS = frozenset({"dim", "ndimension", "numel", "size"})
_NAME = re.compile(r"[A-Za-z_]\w*")
_TEST_WORDS_NOT_CALLS = frozenset({"and", "or", "not", "in", "is"})  # `and (`: a keyword before a parenthesis


def extract(path: str, data: bytes, module: str | None) -> FileFacts:
    parser, query, roles, error_query = _setup()
    try:
        tree = parser.parse(data)
    except Exception as exc:  # noqa: BLE001 - never raise on input
        return FileFacts(message=f"tree-sitter could not parse: {exc}")
    root = tree.root_node
    errors, broken = 0, []
    if root.has_error:
        caps = ts.QueryCursor(error_query).captures(root)
        errors = len(caps.get("error", ())) + len(caps.get("missing", ()))
        broken = _merge([(n.start_byte, n.end_byte) for n in caps.get("error", ())])
    groups: dict[str, list[dict]] = defaultdict(list)
    for index, caps in ts.QueryCursor(query).matches(root):
        groups[roles[index]].append(caps)
    _module_level(groups)
    extraction = _FileExtraction(path, module or "", broken)
    facts = extraction.run(groups)
    extraction.guards(data, root)
    return FileFacts(rows=facts, parse_errors=errors,
                     message=f"{errors} syntax error node(s): facts inside them skipped" if errors else None)


def _module_level(groups: dict[str, list[dict]]) -> None:
    """Keep the alias, dispatch and __all__ statements of the module itself (python-imports.scm matches them
    anywhere); a plain `name = dotted.name` in a block is a funcvar (a name a def then calls)."""
    funcvar = groups["funcvar"]
    for role in ("alias", "dispatch", "all"):
        kept = []
        for caps in groups.get(role, ()):
            where = caps[role][0].parent.parent.type  # the role's node sits in an expression_statement
            if where == "module":
                kept.append(caps)
            elif role == "alias" and where == "block" and "alias.wrapper" not in caps:
                funcvar.append({"funcvar": caps["alias"], "funcvar.name": caps["alias.name"],
                                "funcvar.value": caps["alias.value"]})
        groups[role] = kept


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def _parameter_test(cond: str, parameters: set[str]) -> bool:
    """Whether a test reads only names, literals, comparisons, and/or/not, isinstance() and len(), and names one
    of the def's parameters."""
    if parameters.isdisjoint(_NAME.findall(cond)):
        return False  # no parameter named in it: the common case, told in C
    words = _TEST_WORDS.findall(cond)
    if "".join(words) != cond:
        return False  # something else in it: a subscript, a keyword argument, an arithmetic operator
    calls = {w for w, nxt in zip(words, words[1:] + [""])
             if nxt == "(" and (w[:1].isalpha() or w[:1] == "_")} - _TEST_WORDS_NOT_CALLS
    # `input.dim() == 4`: a tensor parameter's rank or sizes, which a traced call's tensors decide
    calls = {c for c in calls if not (c.partition(".")[2] in _SIZE_METHODS and c.partition(".")[0] in parameters)}
    return calls <= _TEST_CALLS and any(w in parameters or w.partition(".")[0] in parameters and
                                        w.partition(".")[2] in _SIZE_METHODS | {"ndim"} for w in words)


def _always_returns(block) -> bool:
    """Whether a block ends in a return or raise on every path (its last statement one, or an if/else whose
    branches all do)."""
    last = block.named_children[-1] if block.named_children else None
    while last is not None and last.type == "comment":
        last = last.prev_named_sibling
    if last is None:
        return False
    if last.type in ("return_statement", "raise_statement"):
        return True
    if last.type != "if_statement":
        return False
    body = last.child_by_field_name("consequence")
    others = last.children_by_field_name("alternative")
    if body is None or not others or others[-1].type != "else_clause" or not _always_returns(body):
        return False
    for other in others:
        inner = other.child_by_field_name("consequence") or other.child_by_field_name("body")
        if inner is None or not _always_returns(inner):
            return False
    return True


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _line(node) -> int:
    return node.start_point[0] + 1


class _Scope:
    __slots__ = ("start", "end", "qn", "path", "kind", "name", "line", "parent", "params_node", "_params", "_names")

    def __init__(self, start, end, qn, path, kind, name, line, parent, params_node):
        self.start, self.end, self.qn, self.path, self.kind, self.name = start, end, qn, path, kind, name
        self.line = line
        self.parent, self.params_node, self._params, self._names = parent, params_node, None, None

    def param_names(self) -> frozenset[str]:
        if self._names is None:
            self._names = frozenset(name for name, _, _ in self.params())
        return self._names

    def params(self) -> list[tuple[str, str | None, int]]:
        """(name, annotation text or None, line) of each parameter, in order."""
        if self._params is None:
            self._params = _parameters(self.params_node) if self.params_node is not None else []
        return self._params


def _parameters(node) -> list[tuple[str, str | None, int]]:
    out = []
    for p in node.named_children:
        t = p.type
        if t == "identifier":
            out.append((_text(p), None, _line(p)))
        elif t in ("typed_parameter", "typed_default_parameter", "default_parameter"):
            name = p.child_by_field_name("name") or p.named_children[0]
            if name.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                name = name.named_children[0] if name.named_children else name
            ann = p.child_by_field_name("type")
            out.append((_text(name), _text(ann) if ann is not None else None, _line(p)))
        elif t in ("list_splat_pattern", "dictionary_splat_pattern") and p.named_children:
            out.append((_text(p.named_children[0]), None, _line(p)))
    return out


class _FileExtraction:
    def __init__(self, path: str, module: str, broken: list[tuple[int, int]]):
        self.path, self.module = path, module
        self.is_package = path.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")
        self.package = package_of(module, self.is_package)
        self.broken, self.broken_starts = broken, [s for s, _ in broken]
        self.scopes: list[_Scope] = []
        self.starts: list[int] = []
        self.def_at: dict[int, _Scope] = {}
        self.top_names: set[str] = set()
        self.names: dict[str, str] = {}  # module-level bindings: name -> absolute dotted target
        self.local_names: dict[str, str] = {}  # bindings by imports inside defs (used only to classify calls)
        self.all_names: set[str] = set()
        self.rows: dict[str, list[tuple]] = {t: [] for t in _TABLES}

    # -- positions ---------------------------------------------------------------------------------------------
    def _in_error(self, pos: int) -> bool:
        if not self.broken:
            return False
        i = bisect_right(self.broken_starts, pos) - 1
        return i >= 0 and pos < self.broken[i][1]

    def _innermost(self, pos: int) -> int:
        i = bisect_right(self.starts, pos) - 1
        scopes = self.scopes
        while i >= 0 and scopes[i].end <= pos:
            i = scopes[i].parent
        return i

    def _enclosing_class(self, i: int) -> _Scope | None:
        while i >= 0 and self.scopes[i].kind != "class":
            i = self.scopes[i].parent
        return self.scopes[i] if i >= 0 else None

    # -- the passes ----------------------------------------------------------------------------------------------
    def run(self, groups: dict[str, list[dict]]) -> dict[str, list[tuple]]:
        self._definitions(groups.get("class", []), groups.get("def", []))
        self._bindings(groups)
        self._all(groups.get("all", []))
        self._function_variables(groups.get("funcvar", []))
        self._calls(groups.get("call", []))
        self._state(groups.get("parameter", []), groups.get("registered", []))
        self._decompositions(groups.get("register", []))
        self._registering_helpers(groups.get("helper", []))
        self._meta_skips(groups.get("skip", []))
        return self.rows

    def guards(self, data: bytes, root) -> None:
        """conditions rows: the blocks of `if x is not None:`, `if not x:`, `if x > 0.0:` ... in defs (an `elif`'s
        block too, with its own test; an `else` block as `not (...)` when it follows a lone `if`)."""
        rows = self.rows["conditions"]
        for m in _GUARD.finditer(data):
            start = m.start()
            before = data[data.rfind(b"\n", 0, start) + 1:start]
            if before.strip(b" \t") not in (b"", b"el"):
                continue  # `if` inside a line (a conditional expression, a comprehension)
            i = self._innermost(start)  # the text first (cheap), the tree only for a test of parameters
            if i < 0 or self.scopes[i].kind == "class":
                continue
            cond = " ".join(m.group(1).decode().split())
            if not _parameter_test(cond, self.scopes[i].param_names()):
                continue
            node = root.descendant_for_byte_range(start, start + 2)
            statement = node.parent if node is not None else None
            if statement is None or statement.type not in ("if_statement", "elif_clause") or self._in_error(start):
                continue
            body = statement.child_by_field_name("consequence")
            if body is None:
                continue
            rows.append((self.path, _line(statement), body.end_point[0] + 1, "if", cond, self.scopes[i].qn))
            others = statement.children_by_field_name("alternative") if statement.type == "if_statement" else []
            if len(others) == 1 and others[0].type == "else_clause":
                rows.append((self.path, _line(others[0]), others[0].end_point[0] + 1, "if", f"not ({cond})",
                             self.scopes[i].qn))
            elif not others and statement.type == "if_statement" and _always_returns(body) \
                    and statement.parent is not None and statement.end_point[0] < statement.parent.end_point[0]:
                # `if p == "fro" and ...: return ...`: the rest of the block runs only when the test fails
                rows.append((self.path, statement.end_point[0] + 2, statement.parent.end_point[0] + 1, "if",
                             f"not ({cond})", self.scopes[i].qn))

    def _definitions(self, classes: list[dict], defs: list[dict]) -> None:
        items = [(c["class"][0], "class", c) for c in classes] + [(d["def"][0], "def", d) for d in defs]
        items.sort(key=lambda it: it[0].start_byte)
        symbols, bases_rows = self.rows["symbols"], self.rows["class_bases"]
        for node, role, caps in items:
            if self._in_error(node.start_byte):
                continue
            parent = self._innermost(node.start_byte)
            outer = self.scopes[parent] if parent >= 0 else None
            name = _text(caps[f"{role}.name"][0])
            path = f"{outer.path}.{name}" if outer else name
            qn = f"{self.module}.{path}" if self.module else path
            body = caps[f"{role}.body"][0]
            if role == "class":
                kind, signature, params = "class", None, None
            else:
                kind = "method" if outer is not None and outer.kind == "class" else "function"
                params = caps["def.params"][0]
                signature = collapse(_text(params))
            line = _line(node)
            symbols.append((self.path, line, node.end_point[0] + 1, LANGUAGE, kind, name, qn,  # _SYMBOL
                            outer.path if outer else "", signature, 0, None, None, None))
            scope = _Scope(body.start_byte, body.end_byte, qn, path, kind, name, line, parent, params)
            self.scopes.append(scope)
            self.starts.append(body.start_byte)
            self.def_at[node.start_byte] = scope
            if outer is None:
                self.top_names.add(name)
            if role == "class" and "class.bases" in caps:
                position = 0
                for base in caps["class.bases"][0].named_children:
                    if base.type in ("keyword_argument", "comment", "dictionary_splat", "list_splat"):
                        continue
                    bases_rows.append(ClassBaseRow(file=self.path, line=_line(base), class_name=qn,
                                                   base=collapse(_text(base)), position=position))
                    position += 1
            if kind == "method" and name == "__init__":
                state = self.rows["module_state"]
                for pname, _ann, pline in scope.params()[1:]:
                    state.append(ModuleStateRow(file=self.path, line=pline, class_name=outer.qn, name=pname,
                                                kind="init_param"))

    def _resolve(self, dotted: str, local: bool = True) -> str | None:
        """The absolute dotted name a written dotted name stands for, through this module's bindings;
        with local=False a name defined by this module's own defs and classes resolves to None."""
        head, _, rest = dotted.partition(".")
        base = self.names.get(head) or self.local_names.get(head)
        if base is None:
            if head in self.top_names:
                if not local:
                    return None
                base = f"{self.module}.{head}" if self.module else head
            elif head == "torch":
                base = "torch"
            elif head == "aten":  # the decomposition files' alias, when it was bound in a way we cannot see
                base = "torch.ops.aten"
            else:
                return None
        return normalize(f"{base}.{rest}" if rest else base)

    def _bindings(self, groups: dict[str, list[dict]]) -> None:
        items = [(c[role][0].start_byte, role, c) for role in ("import", "from", "star", "alias", "dispatch")
                 for c in groups.get(role, [])]
        items.sort(key=lambda it: it[0])
        imports, bridges = self.rows["python_imports"], self.rows["python_bridges"]
        for pos, role, caps in items:
            if self._in_error(pos):
                continue
            top = self._innermost(pos) < 0
            if role in ("alias", "dispatch") and not top:
                continue
            line = _line(caps[role][0])
            if role == "import":
                written = _text(caps["import.module"][0])
                if "import.alias" in caps:
                    name, target, bound = _text(caps["import.alias"][0]), written, None
                else:
                    name, target = written, written
                    bound = written.partition(".")[0]  # `import a.b` binds a
                self._bind(top, bound or name, bound or target)
                kind = "import"
            elif role in ("from", "star"):
                base = absolute_import(self.package, collapse(_text(caps[f"{role}.module"][0])))
                if role == "star":
                    name, target = "*", base
                else:
                    written = _text(caps["from.name"][0])
                    name = _text(caps["from.alias"][0]) if "from.alias" in caps else written
                    target = f"{base}.{written}" if base else written
                    self._bind(top, name, target)
                kind = "from"
            elif role == "dispatch":  # each branch def of a boolean_dispatch object, resolved where it is written
                name = _text(caps["dispatch.name"][0])
                target = self._resolve(_text(caps["dispatch.value"][0]))
                # the object is a name of this module: a later boolean_dispatch may name it as a branch
                # (torch/functional.py: unique's if_true is _return_inverse_true, itself a boolean_dispatch)
                self.names.setdefault(name, f"{self.module}.{name}" if self.module else name)
                if target is None:
                    continue
                kind = "dispatch"
            else:
                name = _text(caps["alias.name"][0])
                value = _text(caps["alias.value"][0])
                target = self._resolve(value) if name != "__all__" and is_dotted(value) else None
                if target is None:
                    continue
                self.names[name] = target
                kind = "alias"
                bridge = classify(target) if self._resolve(value, local=False) else None
                if bridge is not None:
                    bridges.append((self.path, line, "", *bridge, value))  # _BRIDGE: kind, namespace, op, overload
            if top:
                imports.append((self.path, line, self.module, name, target, kind))  # _IMPORT

    def _bind(self, top: bool, name: str, target: str) -> None:
        if top:
            self.names[name] = target
        else:
            self.local_names.setdefault(name, target)

    def _all(self, matches: list[dict]) -> None:
        rows = self.rows["python_imports"]
        for caps in matches:
            node = caps["all"][0]
            if self._in_error(node.start_byte) or self._innermost(node.start_byte) >= 0:
                continue
            value = caps["all.value"][0]
            items = [value] if value.type == "string" else value.named_children
            for item in items:
                name = string_value(_text(item)) if item.type == "string" else None
                if name:
                    self.all_names.add(name)
                    rows.append((self.path, _line(item), self.module, name, self.module, "all"))  # _IMPORT

    def _function_variables(self, matches: list[dict]) -> None:
        """`func = _fused_adamw` (or `_multi_tensor_adamw`, by flags) in a def, then `func(...)`: the call is a call
        of each name so bound in that def (torch.optim's adamw() picks its implementation this way)."""
        self.held: dict[tuple[int, str], list[str]] = defaultdict(list)
        for caps in matches:
            pos = caps["funcvar"][0].start_byte
            i = self._innermost(pos)
            if i < 0 or self._in_error(pos):
                continue
            value = _text(caps["funcvar.value"][0])
            if value not in ("None", "True", "False", "self"):
                self.held[(i, _text(caps["funcvar.name"][0]))].append(value)

    def _calls(self, matches: list[dict]) -> None:
        # Booleans go in as 0/1: sqlite3 binds an exact int directly, while a bool goes through its adapter lookup
        # first (measurable over 200k rows).
        calls, bridges, path = self.rows["calls"], self.rows["python_bridges"], self.path
        names, local_names, scopes, starts = self.names, self.local_names, self.scopes, self.starts
        check_errors = bool(self.broken)
        held = self.held
        for caps in matches:  # the hot loop of Python extraction: _innermost is inlined
            name_node = caps["call.name"][0]
            obj = caps.get("call.object")
            first = obj[0] if obj else name_node  # where the call starts
            pos = first.start_byte
            if check_errors and self._in_error(pos):
                continue
            i = bisect_right(starts, pos) - 1
            while i >= 0 and scopes[i].end <= pos:
                i = scopes[i].parent
            caller = scopes[i].qn if i >= 0 else ""
            callee = name_node.text.decode("utf-8", "replace")
            line = first.start_point[0] + 1
            if obj is None:
                calls.append((path, line, LANGUAGE, caller, callee, "", 0, None, None, None))  # _CALL
                if held and (i, callee) in held:
                    self._held_calls(line, caller, held[(i, callee)])
                target = self._resolve(callee, local=False) if callee in names or callee in local_names else None
                bridge = classify(target) if target else None
                if bridge is not None:
                    bridges.append((path, line, caller, *bridge, callee))  # _BRIDGE
                continue
            qualifier = first.text.decode("utf-8", "replace")
            if " " in qualifier or "\n" in qualifier or "\t" in qualifier:
                qualifier = collapse(qualifier)
            dotted = is_dotted(qualifier)
            head = qualifier.partition(".")[0] if dotted else ""
            bound = dotted and (head in names or head in local_names or head == "torch")
            calls.append((path, line, LANGUAGE, caller, callee, qualifier, 0 if bound else 1, None, None, None))  # _CALL
            if bound:
                text = f"{qualifier}.{callee}"
                target = self._resolve(text, local=False)
                bridge = classify(target) if target else None
            elif dotted and "." not in qualifier:
                text = f"{qualifier}.{callee}"
                bridge = self._tensor_method(i, qualifier, callee)
            else:
                continue
            if bridge is not None:
                bridges.append((path, line, caller, *bridge, text))  # _BRIDGE

    def _held_calls(self, line: int, caller: str, values: list[str]) -> None:
        for value in dict.fromkeys(values):
            qualifier, _, callee = value.rpartition(".")
            bound = not qualifier or qualifier.partition(".")[0] in self.names or qualifier.startswith("torch")
            self.rows["calls"].append((self.path, line, LANGUAGE, caller, callee, qualifier, 0 if bound else 1, None,
                                       None, None))  # _CALL
            target = self._resolve(value, local=False)
            bridge = classify(target) if target else None
            if bridge is not None:
                self.rows["python_bridges"].append((self.path, line, caller, *bridge, value))

    def _tensor_method(self, i: int, receiver: str, method: str):
        """receiver.method(...) where receiver is a parameter of the enclosing def that may be a Tensor."""
        if i < 0 or not is_tensor_method_name(method):
            return None
        scope = self.scopes[i]
        if scope.kind == "class":
            return None
        params = scope.params()
        for k, (name, annotation, _line_) in enumerate(params):
            if name != receiver:
                continue
            if k == 0 and scope.kind == "method":
                owner = self.scopes[scope.parent]
                if owner.name != "Tensor":  # self of any other class is not a Tensor
                    return None
            if annotation is not None and "Tensor" not in annotation:
                return None
            return "tensor_method", "Tensor", method, None
        return None

    def _state(self, parameters: list[dict], registered: list[dict]) -> None:
        state = self.rows["module_state"]
        for role, matches in (("parameter", parameters), ("registered", registered)):
            for caps in matches:
                node = caps[role][0]
                if self._in_error(node.start_byte):
                    continue
                owner = self._enclosing_class(self._innermost(node.start_byte))
                if owner is None:
                    continue
                if role == "parameter":
                    name, kind = _text(caps["parameter.name"][0]), "parameter"
                else:
                    name = string_value(_text(caps["registered.name"][0]))
                    kind = "buffer" if _text(caps["registered.method"][0]) == "register_buffer" else "parameter"
                if name:
                    state.append(ModuleStateRow(file=self.path, line=_line(node), class_name=owner.qn, name=name,
                                                kind=kind))

    def _registering_helpers(self, matches: list[dict]) -> None:
        """Ops a module-level helper call registers (the decomposition table's, as @register_decomposition does):
        register_inplace(aten.x_, ...) and _create_binary_float_meta_func(aten.x) the op they name (a meta
        function for the latter); `x_ = _make_inplace(x)` and `x_copy = _make_copy_from_view(aten.x)` the op named
        like the variable they bind (torch/_refs registers getattr(aten, name) there). The row's function is the
        helper's, or for _make_inplace the reference it wraps."""
        rows = self.rows["decompositions"]
        in_refs = self.module == "torch._refs" or self.module.startswith("torch._refs.")
        for caps in matches:
            helper = _text(caps["helper.func"][0])
            first = collapse(_text(caps["helper.first"][0]))
            target = caps.get("helper.target")
            if target is not None:
                op, overload = _text(target[0]), None
            else:
                resolved = self._resolve(first) if is_dotted(first) else None
                found = aten_op(resolved) if resolved else None
                if found is None:
                    continue
                op, overload = found
            kind = "meta" if helper == "_create_binary_float_meta_func" else "reference" if in_refs else "decomposition"
            function = f"{self.module}.{first}" if helper == "_make_inplace" else f"{self.module}.{helper}"
            rows.append(DecompositionRow(file=self.path, line=_line(caps["helper"][0]), op=op, overload=overload,
                                         kind=kind, function=function))

    def _meta_skips(self, matches: list[dict]) -> None:
        """The op overloads activate_meta leaves to their C++ Meta kernel by its own list (`elif
        op_overload.name() in {"aten::clone", ...}: pass`; OpOverload.name() is `aten::clone` for the default
        overload, `aten::clone.out` for another): a `skipped` row per name, on the line of its string; op as the
        other rows name it (clone; another namespace's with its prefix: mkldnn::x). Only inside a def named
        activate_meta."""
        rows = self.rows["decompositions"]
        for caps in matches:
            i = self._innermost(caps["skip"][0].start_byte)
            if i < 0 or self.scopes[i].name != META_ACTIVATOR or self._in_error(caps["skip"][0].start_byte):
                continue
            for item in caps["skip.names"][0].named_children:
                name = string_value(_text(item)) if item.type == "string" else None
                if not name or "::" not in name:
                    continue
                namespace, _, full = name.partition("::")
                op, _, overload = full.partition(".")
                rows.append(DecompositionRow(file=self.path, line=_line(item),
                                             op=op if namespace == "aten" else f"{namespace}::{op}",
                                             overload=overload or "default", kind="skipped",
                                             function=self.scopes[i].qn))

    def _decompositions(self, matches: list[dict]) -> None:
        rows = self.rows["decompositions"]
        in_refs = self.module == "torch._refs" or self.module.startswith("torch._refs.")
        registered: set[str] = set()
        for caps in matches:
            scope = self.def_at.get(caps["register.def"][0].start_byte)
            if scope is None:
                continue
            func = _text(caps["register.func"][0]).rpartition(".")[2]
            kind = "meta" if func == "register_meta" else "reference" if in_refs else "decomposition"
            ops = caps["register.ops"][0]
            items = ops.named_children if ops.type in ("list", "tuple") else [ops]
            line = _line(caps["register.def"][0])
            for item in items:
                text = collapse(_text(item))
                target = self._resolve(text) if is_dotted(text) else None
                op = (aten_op(target) or library_op(target)) if target else None
                if op is not None:
                    rows.append(DecompositionRow(file=self.path, line=line, op=op[0], overload=op[1], kind=kind,
                                                 function=scope.qn))
                    registered.add(scope.qn)
        if in_refs:
            for scope in self.scopes:
                if (scope.parent < 0 and scope.kind == "function" and scope.name in self.all_names
                        and scope.qn not in registered):
                    rows.append(DecompositionRow(file=self.path, line=scope.line, op=scope.name, overload=None,
                                                 kind="reference", function=scope.qn))
