"""C++ and CUDA extraction: definitions, calls, dispatch stubs and registrations, GPU launches, library calls.

One tree-sitter parse per file (tree-sitter-cuda's grammar for .cpp and .cu alike: it is tree-sitter-cpp plus
`__global__` and `k<<<...>>>`, and leaves fewer files with ERROR nodes on PyTorch), one run of the combined
queries/cpp-*.scm, and a generic loop that turns captures into rows. The enclosing function of a site is found by
bisecting the sorted function ranges, never by walking the tree.

Rules that decide rows (docs/indexing.md repeats them):
- A stub call is a non-method call whose callee ends in `_stub`, or is declared/defined as a stub in the same file,
  or whose first argument is a device (kCPU, DeviceType::CUDA, x.device().type(), iter.device_type(),
  device_type()). The query layer joins stub_calls.stub with dispatch_stubs.stub across files.
- A plain REGISTER_DISPATCH takes its device from the file's path (cpp_names.device_from_path).
- Macro invocations (DECLARE/DEFINE/REGISTER_*DISPATCH, AT_DISPATCH_*) are found by name and confirmed against the
  tree, so they survive the ERROR regions of unexpanded macros; #define bodies are macros, not sites.
- Same-file function-like macros that define or register things are expanded at each invocation
  (cpp_macros); their facts carry the invocation line and from_macro.
- ALL_CAPS callees are macros (TORCH_CHECK) and static_cast<T>(x) & co. are operators: not calls; calls outside
  function bodies are not recorded; a method call's receiver text is cut at 120 characters (it can be a lambda).
"""
from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path

import tree_sitter as ts
import tree_sitter_cuda

from ..pytorch.syntax import function_defines
from ..records import (BackendChoiceRow, CallRow, ConditionRow, DispatchRegistrationRow, DispatchStubRow,
                       KernelLaunchRow, LibraryCallRow, MacroRow, StubCallRow, SymbolRow, TypeDispatchRow)
from . import FileFacts, columns
from . import cpp_names as names
from . import cpp_branches as branches
from . import cpp_conditions as conditions
from .cpp_macros import Macro, MacroTable, arguments, collapse, macro_body
from .cpp_operators import operator_calls
from .objc import LIBRARY_SELECTORS

_QUERIES = Path(__file__).parent / "queries"
_ENGINE: tuple | None = None
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_IDENT = re.compile(r"^[A-Za-z_][\w:]*$")
_SKIP_SITE_PARENTS = {"preproc_function_def", "preproc_def"}
_MAX_RECEIVER = 120
_MAX_ARGUMENT = 120
_JSON = json.JSONEncoder().encode  # json.dumps' own encoder, without its per-call set-up
_NESTED = re.compile(rb"[({\"'/]")  # what only cpp_macros.arguments splits right
_SITE_NODES = {"identifier", "type_identifier", "field_identifier", "namespace_identifier"}
# The tables this extractor fills. Rows are built by keyword through their row types, except the two hot ones: a
# symbols row (_File._definition) and a calls row (_File.calls) are tuple literals in these orders.
_TABLES = ("symbols", "calls", "macros", "dispatch_stubs", "dispatch_registrations", "stub_calls", "kernel_launches",
           "library_calls", "type_dispatches", "backend_choices", "conditions")
_SYMBOL = columns(SymbolRow, "file", "line", "end_line", "language", "kind", "name", "qualified_name", "scope",
                  "signature", "is_template", "from_macro", "template_args", "template_parameters")
_CONDITION = columns(ConditionRow, "file", "line", "end_line", "kind", "condition", "caller")
_CALL = columns(CallRow, "file", "line", "language", "caller", "callee", "qualifier", "is_method", "template_args",
                "arguments", "receiver_type")


def _engine():
    """(parser, query, roles): all queries/cpp-*.scm as one query, so each tree is walked once, and each pattern's
    role (its `#set! role`); built once per process."""
    global _ENGINE
    if _ENGINE is None:
        lang = ts.Language(tree_sitter_cuda.language())
        source = "\n".join(p.read_text() for p in sorted(_QUERIES.glob("cpp-*.scm")))
        query = ts.Query(lang, source)
        roles = [query.pattern_settings(i)["role"] for i in range(query.pattern_count)]
        _ENGINE = (ts.Parser(lang), query, roles)
    return _ENGINE


_TEMPLATE_SPACE = re.compile(r"\s*([<>,:*&])\s*")


# backend_choices: a branch on a variable (`switch (backend)`, `backend == ConvBackend::Cudnn`), and the line that
# sets it from a call (`ConvBackend backend = _select_conv_backend(`, `const auto x = ns::f<T>(`)
_SWITCH = re.compile(rb"switch\s*\(\s*([A-Za-z_]\w*)\s*\)")  # a word of its own: _branches checks the byte
_CHOICE = re.compile(rb"\s*(?:const\s+)?([A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)\s*=\s*([A-Za-z_][\w:]*)\s*"
                     rb"(?:<[^;()]*>)?\s*\(")


_IF = re.compile(rb"\bif\s*\(")
_PLAIN_RECEIVER = re.compile(r"[A-Za-z_]\w*\Z")
# `== ConvBackend::Cudnn` / `!= sdp::SDPBackend::error`: a comparison with a qualified constant. Literal-led, one
# pattern per operator: re searches a literal prefix in C, while a pattern led by the variable or by a class such
# as [!=] is tried at every byte (three times slower on a PyTorch tree; `\bswitch` likewise)
_CONSTANTS = tuple(re.compile(op + rb"\s*((?:[A-Za-z_]\w*::)+)[A-Za-z_]\w*\b(?!\s*\()") for op in (rb"==", rb"!="))
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _branches(data: bytes) -> dict[str, list[tuple[int, str, str]]]:
    """variable -> where a file branches on it: `switch (v)`, or `v == T::X` / `v != T::X` (with T)."""
    out: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    if b"switch" in data:
        for m in _SWITCH.finditer(data):
            if m.start() == 0 or data[m.start() - 1] not in _WORD:
                out[m.group(1).decode()].append((m.start(1), "switch", ""))
    found = [m for pattern in _CONSTANTS for m in pattern.finditer(data)]
    found.sort(key=lambda m: m.start())  # in the file's order, as one pattern would find them
    for m in found:
        end = m.start()
        while end > 0 and data[end - 1] in b" \t":
            end -= 1
        start = end
        while start > 0 and data[start - 1] in _WORD:
            start -= 1
        if start < end and data[start] not in b"0123456789":
            out[data[start:end].decode()].append((start, "compare", m.group(1).decode()[:-2].rpartition("::")[2]))
    return out


_STATEMENTS = frozenset({"compound_statement", "expression_statement", "declaration", "function_definition",
                         "translation_unit", "return_statement", "lambda_expression"})


def _in_if_condition(node) -> bool:
    """Whether a node lies in the condition of an `if` (up to the statement around it)."""
    while node is not None and node.type not in _STATEMENTS:
        if node.type == "condition_clause":
            return node.parent is not None and node.parent.type == "if_statement"
        node = node.parent
    return False


def _in_condition(text: bytes, open_at: int, callee: str, receiver: str = "") -> bool:
    """Whether `callee(` is called inside the condition that starts at text[open_at] (just after `if (`), up to
    its closing parenthesis or the end of the line: `if (x) foo();` calls foo in the body, not the condition.
    With `receiver`, the method call `receiver.callee(` (or `->`)."""
    depth, end = 1, len(text)
    for i in range(open_at, len(text)):
        c = text[i]
        if c == 40:  # (
            depth += 1
        elif c == 41:  # )
            depth -= 1
            if depth == 0:
                end = i
                break
    name = callee.encode()
    if receiver:  # `receiver.callee(` or `receiver->callee(`, found by bytes.find (no pattern per call)
        for sep in (b".", b"->"):
            call = receiver.encode() + sep + name
            i = text.find(call, open_at, end)
            while i >= 0:
                before = text[i - 1] if i else 32
                if before not in _WORD and before != 46 and text[i + len(call):end].lstrip()[:1] == b"(":
                    return True
                i = text.find(call, i + 1, end)
        return False
    i = text.find(name, open_at, end)
    while i >= 0:  # the name itself (not the end of a longer one, not a member), then `(` or `<...>(`
        before = text[i - 1] if i else 32
        rest = text[i + len(name):end].lstrip()
        if before not in _WORD and before != 46 and not text[max(0, i - 2):i] == b"->" and \
                rest[:1] in (b"(", b"<"):
            return True
        i = text.find(name, i + 1, end)
    return False


def template_args_of(text: str) -> str | None:
    """The template arguments of a name's last part, spaces only where C++ needs them: `at::cuda::blas::gemm<float>`
    -> `<float>`, `gemm<c10::complex<double> >` -> `<c10::complex<double>>`; None for `Foo<T>::bar`, `gemm`, or an
    operator (`operator<`). A call and an explicit specialization written with the same arguments compare equal."""
    text = text.rstrip()
    if not text.endswith(">") or "operator" in text:
        return None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        if c == ">":
            depth += 1
        elif c == "<":
            depth -= 1
            if depth == 0:
                head = text[:i].rstrip()
                if not head or not (head[-1].isalnum() or head[-1] == "_"):
                    return None
                return _TEMPLATE_SPACE.sub(r"\1", " ".join(text[i:].split()))
    return None


def strip_templates(text: str) -> str:
    """`at::cuda::blas::gemm<float>` -> `at::cuda::blas::gemm` (nested <> too); spaces dropped."""
    text = text.replace(" ", "").replace("\n", "")
    if "operator" in text:
        return text
    while "<" in text:
        new = _TEMPLATE_ARGS.sub("", text)
        if new == text:
            break
        text = new
    return text


_MAYBE_DEVICE = re.compile(rb"\bk[A-Z]|DeviceType|device")
# the same without the word boundary, to rule out an argument list: re skips to the letters k, D and d in C, while
# a pattern led by \b is tried at every byte (4x slower); a hit is then checked with _MAYBE_DEVICE
_MAYBE_DEVICE_LOOSE = re.compile(rb"k[A-Z]|DeviceType|device")
# A macro's first argument that is a qualified name, behind an optional `NO_ROCM(x)` prefix: `(NO_ROCM(x)::cub::F,`
_NAME_ARGUMENT = re.compile(rb"\(\s*(?:\w+\([\w\s]*\))?(?:::)?((?:\w+::)+\w+)\s*,")


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


class _Unit:
    """One parsed text: the file itself, or one macro expansion inside it."""

    def __init__(self, data: bytes, tree, line: int | None = None, end_line: int | None = None,
                 from_macro: str | None = None, scope: tuple[str, ...] = (), caller: str = "",
                 within: tuple[int, int] | None = None):
        self.data, self.root = data, tree.root_node
        _, query, self.roles = _engine()
        cursor = ts.QueryCursor(query)
        if within is not None:  # only the matches that touch these bytes (and the definitions around them)
            cursor.set_byte_range(*within)
        self.matches = cursor.matches(self.root)
        self.line, self.end_line, self.from_macro = line, end_line, from_macro
        self.scope, self.outer_caller = scope, caller
        self.starts: list[int] = []
        self.ranges: list[tuple[int, int, str]] = []
        self.scopes: dict[int, tuple[str, ...]] = {}  # node id -> enclosing scope names (see _scope)
        self.bodies: dict[int, int] = {}  # function start -> where its body's `{` is, -1: no local object there
        self.declared: dict[tuple[int, str], int] = {}  # (function start, name) -> its first declaration (see above)
        self.misread: list[tuple] = []  # calls the grammar read as definitions (_misread_call): (node, name node)

    def line_of(self, node) -> int:
        return self.line or node.start_point[0] + 1

    def caller(self, pos: int) -> str:
        i = bisect_right(self.starts, pos) - 1
        while i >= 0:
            start, end, name = self.ranges[i]
            if pos < end:
                return name
            i -= 1
        return self.outer_caller

    def held_kernel(self, pos: int, name: str) -> str | None:
        """The kernel a local variable launched with <<<>>> was set to earlier in its function
        (`auto kernel = &flash_fwd_kernel<...>;`), if it was."""
        i = bisect_right(self.starts, pos) - 1
        while i >= 0 and self.ranges[i][1] <= pos:
            i -= 1
        start = self.ranges[i][0] if i >= 0 else 0
        found = None
        for m in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\s*=\s*&?\s*([A-Za-z_][\w:]*)",
                             self.data[start:pos]):
            found = m.group(1).decode().rpartition("::")[2]
        return found if found != name else None

    def local_object(self, pos: int, name: str) -> bool:
        """True when `name` is declared as a local object before `pos` in the function around it (`gemm(&p)`
        after `static GemmTunableOp<...> gemm{};` calls its operator(), not a function named gemm)."""
        i = bisect_right(self.starts, pos) - 1
        while i >= 0:
            start, end, _ = self.ranges[i]
            if pos < end:
                data = self.data
                body = self.bodies.get(start)
                if body is None:  # once per function, searches in C: only a brace-initialised or static local
                    maybe = data.find(b"{}", start, end) >= 0 or data.find(b"static ", start, end) >= 0
                    body = self.bodies[start] = data.find(b"{", start, end) if maybe else -1
                if body < 0:
                    return False
                first = self.declared.get((start, name))
                if first is None:  # the first declaration of that name in the body, found once
                    first = self.declared[(start, name)] = _first_declaration(data, name.encode(), body, end)
                return first < pos
            i -= 1
        return False


class _File:
    def __init__(self, path: str, language: str):
        self.path, self.language = path, language
        self.rows: dict[str, list[tuple]] = {t: [] for t in _TABLES}
        self.stubs: set[str] = set()
        self.kernels: frozenset[str] = frozenset()  # the __global__ names this file declares or defines
        self.chosen: set[tuple[int, str]] = set()  # (line, callee) of its backend_choices rows

    # -- definitions ---------------------------------------------------------------------------------------
    def definitions(self, u: _Unit) -> None:
        functions = []
        roles, symbols = u.roles, self.rows["symbols"]
        for i, caps in u.matches:
            role = roles[i]
            if role not in _DEFINITION_ROLES:
                continue
            row = self._definition(u, role, caps)
            if row:
                symbols.append(row)
                if role == "function":
                    node = caps[role][0]
                    functions.append((node.start_byte, node.end_byte, row[6]))  # its qualified_name
        functions.sort()
        u.ranges = functions
        u.starts = [f[0] for f in functions]

    def _definition(self, u: _Unit, role: str, caps) -> tuple | None:
        node, name_node = caps[role][0], caps[role + ".name"][0]
        scope, in_class = _scope(node, u.scopes)
        scope = list(u.scope) + scope
        signature = None
        if role != "function":
            kind, parts = role, strip_templates(_text(name_node)).split("::")
        elif name_node.type == "function_declarator":  # TORCH_IMPL_FUNC(add_out)(...) {
            macro = name_node.child_by_field_name("declarator")
            kind = names.STRUCTURED.get(_text(macro)) if macro is not None else None
            args = name_node.child_by_field_name("parameters")
            if kind is None or args is None:
                return None
            words = [w for w in re.split(r"[\s(),]+", _text(args)) if w]
            if not words:
                return None
            parts = ["_".join(words)]
            signature = _parameter_text(caps["function.params"][0])
        else:
            parts = strip_templates(_text(name_node)).split("::")
            if _misparsed(node, parts[-1]):
                return None
            if _misread_call(node):
                u.misread.append((node, name_node))  # a call, extracted by calls()
                return None
            signature = _parameter_text(caps["function.params"][0])
            tokens = {c.type for c in node.children[:6]}
            if "__global__" in tokens:
                kind = "global_kernel"
            elif "__device__" in tokens:
                kind = "device_function"
            elif in_class or (len(parts) > 1 and parts[-2][:1].isupper()):
                kind = "method"
            else:
                kind = "function"
        name = parts[-1]
        if not name:
            return None
        # `template <> void gemm<float>(...)`: an explicit specialization, which a call written gemm<float> reaches;
        # `template <> struct prod_functor<bool> {...}`: a class's, whose members the trace reads as written for bool
        targs = template_args_of(_text(name_node)) if (role == "function" and name_node.type != "function_declarator") \
            or (role in ("class", "struct") and name_node.type == "template_type") else None
        qual_parts = scope + parts[:-1] + [("structured_" + name) if kind in _STRUCTURED_KINDS else name]
        qualified = "::".join(p for p in qual_parts if p)
        is_template = 1 if node.parent is not None and node.parent.type == "template_declaration" else 0
        return (self.path, u.line_of(node), u.end_line or node.end_point[0] + 1, self.language, kind, name,  # _SYMBOL
                qualified, qualified.rpartition("::")[0], signature, is_template, u.from_macro, targs, None)

    # -- macro sites ----------------------------------------------------------------------------------------
    def macro_sites(self, u: _Unit) -> None:
        data = u.data
        if b"DISPATCH" not in data:
            return
        for m in names.macro_sites(data):
            node = u.root.descendant_for_byte_range(m.start(1), m.end(1))
            if node is None or node.type not in _SITE_NODES or (
                    node.parent is not None and node.parent.type in _SKIP_SITE_PARENTS):
                continue
            macro = m.group(1).decode()
            line = u.line_of(node)
            if macro.startswith("AT_DISPATCH_"):
                if macro.startswith("AT_DISPATCH_CASE"):
                    continue  # a case inside AT_DISPATCH_SWITCH, not a site of its own
                v2 = macro == "AT_DISPATCH_V2"
                # the name is the first string argument: AT_DISPATCH_X(type, "name", fn) or
                # AT_DISPATCH_X_AND2(t1, t2, type, "name", fn); AT_DISPATCH_V2 lists its dtypes after the lambda
                args, _ = arguments(data, m.end() - 1, None if v2 else 8)
                dtypes = ", ".join(args[3:]) if v2 else macro[len("AT_DISPATCH_"):]
                label = next((a for a in args if a.startswith('"')), None)
                if label is not None:
                    label = "".join(re.findall(r'"((?:\\.|[^"\\])*)"', label))
                self.rows["type_dispatches"].append(TypeDispatchRow(
                    file=self.path, line=line, macro=macro, dtypes=dtypes, name=label,
                    caller=u.caller(node.start_byte), from_macro=u.from_macro))
                continue
            args, _ = arguments(data, m.end() - 1)
            if not args:
                continue
            if macro == "DECLARE_DISPATCH":
                stub, fn_type = args[-1], ", ".join(args[:-1]) or None
            else:
                stub, fn_type = args[0], None
            if not _IDENT.match(stub):
                continue
            stub = stub.rpartition("::")[2]  # REGISTER_DISPATCH(cpublas::gemm_stub, ...): the stub is gemm_stub
            if macro in ("DECLARE_DISPATCH", "DEFINE_DISPATCH"):
                self.stubs.add(stub)
                self.rows["dispatch_stubs"].append(DispatchStubRow(
                    file=self.path, line=line, stub=stub, action=macro[:-len("_DISPATCH")].lower(), fn_type=fn_type,
                    from_macro=u.from_macro))
            else:
                kernel, device, capability = names.registration(macro, args, self.path)
                self.rows["dispatch_registrations"].append(DispatchRegistrationRow(
                    file=self.path, line=line, stub=stub, kernel=kernel, macro=macro, device=device,
                    cpu_capability=capability, from_macro=u.from_macro))

    # -- calls and launches ---------------------------------------------------------------------------------
    def calls(self, u: _Unit) -> None:
        # The hot loop of the build (330k calls in a PyTorch tree): names are bound locally, and the node text is
        # decoded inline.
        rows = self.rows
        calls, stub_calls = rows["calls"], rows["stub_calls"]
        path, language, from_macro, roles, fixed_line = self.path, self.language, u.from_macro, u.roles, u.line
        caller_at, stubs, library, launch_kind = u.caller, self.stubs, names.library, names.launch_kind
        for i, caps in u.matches:
            role = roles[i]
            if role not in _CALL_ROLES:
                if role == "launch":
                    self._launch(u, caps)
                continue
            # the call starts where its function expression starts: the receiver, the qualified name or the name
            start = caps[_CALL_START[role]][0]
            caller = caller_at(start.start_byte)
            if not caller:
                continue
            template_args = call_args = None  # as launches keep them; as calls keep them (template_args_of)
            is_method = 1 if role == "call.method" else 0  # an int: sqlite3 binds a bool through its adapters
            if role == "call.qualified":
                written = start.text.decode("utf-8", "replace")
                qualifier, _, callee = strip_templates(written).rpartition("::")
                if written.endswith(">"):  # at::cuda::blas::gemm<float>(...)
                    call_args = template_args_of(written)
            elif role == "call.object":  # UniqueCub<scalar_t>{}(...), Kernel<>()(...): the class's operator()
                if "call.inner" in caps and caps["call.inner"][0].named_child_count:
                    continue  # f(x)(y): a call of what f returns, not of a temporary object
                written = collapse(start.text.decode("utf-8", "replace"))
                qualifier, callee = strip_templates(written), "operator()"
            else:
                callee = (caps["call.name"][0] if is_method else start).text.decode("utf-8", "replace")
                if is_method and callee.startswith("template") and callee[8:9].isspace():
                    callee = callee[8:].lstrip()  # `sorter.template sort<A>(...)`: the method is sort
                if "::" in callee or "<" in callee:
                    callee = strip_templates(callee).rpartition("::")[2]
                qualifier = ""
                if is_method:  # a receiver can be a whole lambda or call chain
                    qualifier = collapse(start.text.decode("utf-8", "replace"))
                    if len(qualifier) > _MAX_RECEIVER:
                        qualifier = qualifier[:_MAX_RECEIVER] + "..."
                elif role in ("call.template", "call.declared"):
                    if callee in _CASTS:
                        continue  # static_cast<T>(x) parses as a call; it is an operator
                    template_args = collapse(caps["call.template_args"][0].text.decode("utf-8", "replace"))
                    call_args = _TEMPLATE_SPACE.sub(r"\1", template_args) if " " in template_args else template_args
            if not callee or (callee.isupper() and len(callee) > 1):  # TORCH_CHECK: a macro (names.is_macro_name)
                if role == "call.bare" and "call.args" in caps:
                    self._handed_to_macro(u.data, caps["call.args"][0], caller, from_macro, fixed_line)
                continue
            if role == "call.bare" and u.local_object(start.start_byte, callee):
                # `gemm(&params)` after `static GemmTunableOp<...> gemm{};`: operator() of a local object
                is_method, qualifier, callee = 1, callee, "operator()"
            line = fixed_line or start.start_point[0] + 1
            # where the argument list opens: after the method's name, the qualified name, or the captured list
            at = caps["call.name"][0].end_byte if is_method else (caps["call.args"][0].start_byte if "call.args" in caps
                                                                  else start.end_byte)
            calls.append((path, line, language, caller, callee, qualifier, is_method, call_args,  # _CALL
                          argument_texts(u.data, at), None))
            if fixed_line and not is_method and (line, callee) not in self.chosen and _in_if_condition(start):
                self.chosen.add((line, callee))
                # a macro's `if (should_use_multiblock(...))` (TensorTopK.cu's RUN_MB): its line is the macro's use,
                # where choices() cannot read it from the file's text
                rows["backend_choices"].append(BackendChoiceRow(
                    file=path, line=line, callee=callee, qualifier=qualifier, variable="", declared="",
                    tested_line=line, test="if", caller=caller))
            if is_method:
                if callee in LIBRARY_SELECTORS:  # an Objective-C send read as a method call (objc.py): Metal, MPSGraph
                    rows["library_calls"].append(LibraryCallRow(
                        file=path, line=line, library=LIBRARY_SELECTORS[callee], function=f"[{qualifier} {callee}:]",
                        caller=caller, from_macro=from_macro))
                continue
            if self.kernels and "call.args" in caps:
                self._handed(caps["call.args"][0], line, caller, from_macro)
            named_stub = callee.endswith("_stub") or callee in stubs
            if named_stub or not qualifier:
                first = _first_argument(u.data, caps, start, named_stub)
                if named_stub or (first is not None and names.DEVICE_ARG.search(first)):
                    stub_calls.append(StubCallRow(file=path, line=line, stub=callee, device_arg=first,
                                                  caller=caller, from_macro=from_macro))
            lib = library(callee, qualifier)
            if lib:
                rows["library_calls"].append(LibraryCallRow(
                    file=path, line=line, library=lib, function=f"{qualifier}::{callee}" if qualifier else callee,
                    caller=caller, from_macro=from_macro))
            kind = launch_kind(callee, qualifier)
            if kind:
                rows["kernel_launches"].append(KernelLaunchRow(
                    file=path, line=line, kernel=callee, kind=kind, template_args=template_args, config=None,
                    caller=caller, from_macro=from_macro))

    def misread_calls(self, u: _Unit) -> None:
        """The calls the grammar read as definitions (_misread_call): a calls row each, and the launch or library
        call it is (`gpu_reduce_kernel<...>(iter, ops, typename ops_t::acc_t{})`: a TensorIterator launch)."""
        for node, name_node in u.misread:
            caller = u.caller(node.start_byte)
            if not caller:
                continue
            written = collapse(_text(name_node))
            qualifier, _, callee = strip_templates(written).rpartition("::")
            call_args = template_args_of(written) if written.endswith(">") else None
            line = u.line_of(node)
            self.rows["calls"].append((self.path, line, self.language, caller, callee, qualifier, 0,  # _CALL
                                       call_args, None, None))
            kind = names.launch_kind(callee, qualifier)
            if kind:
                self.rows["kernel_launches"].append(KernelLaunchRow(
                    file=self.path, line=line, kernel=callee, kind=kind, template_args=call_args, config=None,
                    caller=caller, from_macro=u.from_macro))
            lib = names.library(callee, qualifier)
            if lib:
                self.rows["library_calls"].append(LibraryCallRow(
                    file=self.path, line=line, library=lib, function=f"{qualifier}::{callee}" if qualifier else callee,
                    caller=caller, from_macro=u.from_macro))

    def _handed_to_macro(self, data: bytes, args, caller: str, from_macro: str | None, fixed_line: int | None) -> None:
        """A library function handed by name to a macro is called by it: `CUB_WRAPPER(NO_ROCM(at_cuda_detail)::cub::
        DeviceScan::InclusiveScan, input, ...)` (cub.cuh: the macro calls `func(nullptr, temp_storage_bytes, ...)`)
        is a cub call at that line. Only library names: what else a macro does with a name (stringize it, declare
        it) is not known without its body, and a library function has no other use there."""
        m = _NAME_ARGUMENT.match(data, args.start_byte)
        if m is None:
            return
        qualifier, _, callee = m.group(1).decode().rpartition("::")
        lib = names.library(callee, qualifier)
        if lib:
            self.rows["library_calls"].append(LibraryCallRow(
                file=self.path, library=lib,  # the line that names the function (it may follow the macro's)
                line=fixed_line or args.start_point[0] + 1 + data.count(b"\n", args.start_byte, m.start(1)),
                function=m.group(1).decode(), caller=caller, from_macro=from_macro))

    def choices(self, u: _Unit) -> None:
        """backend_choices: `ConvBackend backend = _select_conv_backend(...);` and, later in the same function,
        `switch (backend)` or `backend == ConvBackend::Cudnn` (a constant of the declared type, any when `auto`);
        and a call in an `if (...)` condition on its line (`if (train && is_fused_kernel_acceptable(input, p))`).
        Read from the lines of the calls already found; the file's branches are scanned only when a call's line
        assigns a variable."""
        # function calls, and method calls on a plainly named object (`else if (params.use_cudnn(input))`, 1.4's
        # _convolution: ConvParams::use_cudnn chooses the cuDNN path)
        calls = [r for r in self.rows["calls"] if not r[6] or _PLAIN_RECEIVER.match(r[5])]
        if not calls:
            return
        data = u.data
        lines = data.split(b"\n")
        tests = None  # variable -> [(byte position, switch/compare, constant's type)], read when first needed
        seen = self.chosen  # a macro's, found by calls()
        for _, line, _, caller, callee, qualifier, is_method, *_ in calls:
            if line > len(lines):
                continue
            text = lines[line - 1]
            row = None
            if not is_method and b"=" in text and callee.encode() in text:
                m = _CHOICE.match(text)
                if m is not None and m.group(3).decode().rpartition("::")[2] == callee:
                    if tests is None:
                        tests = _branches(data)
                    row = self._assigned_choice(u, data, m, line, caller, callee, qualifier, tests)
            if row is None and b"if" in text:
                m = _IF.search(text)
                if m is not None and _in_condition(text, m.end(), callee, qualifier if is_method else ""):
                    row = BackendChoiceRow(file=self.path, line=line, callee=callee, qualifier=qualifier,
                                           variable="", declared="", tested_line=line, test="if", caller=caller)
            if row is not None and (line, callee) not in seen:
                seen.add((line, callee))
                self.rows["backend_choices"].append(row)

    def _assigned_choice(self, u: _Unit, data: bytes, m, line: int, caller: str, callee: str, qualifier: str,
                         tests: dict) -> BackendChoiceRow | None:
        declared, variable = m.group(1).decode(), m.group(2).decode()
        for pos, test, constant_type in tests.get(variable, ()):
            if test == "compare" and declared != "auto" and constant_type != declared.rpartition("::")[2]:
                continue
            tested = data.count(b"\n", 0, pos) + 1
            if tested > line and u.caller(pos) == caller:
                return BackendChoiceRow(file=self.path, line=line, callee=callee, qualifier=qualifier,
                                        variable=variable, declared=declared, tested_line=tested, test=test,
                                        caller=caller)
        return None

    def _handed(self, args, line: int, caller: str, from_macro: str | None) -> None:
        """A __global__ kernel passed by name to a call (`cb(AttentionKernel<...>(), fmha_cutlassF_...)` in
        cutlassF.h): what receives it launches it (`kernel_fn<<<...>>>(p)`), so the kernel is handed over here."""
        for arg in args.named_children:
            if arg.type == "identifier":
                name = arg.text.decode("utf-8", "replace")
                if name in self.kernels:
                    self.rows["kernel_launches"].append(KernelLaunchRow(
                        file=self.path, line=line, kernel=name, kind="handed", template_args=None, config=None,
                        caller=caller, from_macro=from_macro))

    def _launch(self, u: _Unit, caps) -> None:
        node = caps["launch.config"][0].parent  # the call `kernel<<<...>>>(args)`
        kernel = node.child_by_field_name("function") if node is not None and node.type == "call_expression" else None
        if kernel is None:
            return  # a <<<>>> the grammar could only read inside an ERROR node
        template_args = None
        if kernel.type == "template_function":
            args = kernel.child_by_field_name("arguments")
            template_args = collapse(_text(args)) if args is not None else None
        name = strip_templates(_text(kernel)).rpartition("::")[2]
        if template_args is None:  # `auto kernel = &flash_fwd_kernel<...>; kernel<<<...>>>(params)`
            name = u.held_kernel(node.start_byte, name) or name
        config = collapse(_text(caps["launch.config"][0]))
        config = config.removeprefix("<<<").removesuffix(">>>").strip()
        self.rows["kernel_launches"].append(KernelLaunchRow(
            file=self.path, line=u.line_of(node), kernel=name, kind="chevron", template_args=template_args,
            config=config, caller=u.caller(node.start_byte), from_macro=u.from_macro))

    # -- #define ---------------------------------------------------------------------------------------------
    def macros(self, u: _Unit) -> list[Macro]:
        found = []
        roles = u.roles
        for i, caps in u.matches:
            if roles[i] != "macro":
                continue
            node = caps["macro"][0]
            name = _text(caps["macro.name"][0])
            params = caps.get("macro.params")
            body = macro_body(_text(caps["macro.body"][0])) if "macro.body" in caps else ""
            param_text = macro_body(_text(params[0])) if params else None  # continuation lines joined
            self.rows["macros"].append(MacroRow(file=self.path, line=node.start_point[0] + 1, name=name,
                                                parameters=param_text, body=body))
            plist = _parameters(param_text.strip("()")) if params else ()
            found.append(Macro(name, plist, params is not None, body, node.start_byte))
        if u.root.has_error and b"#" in u.data and u.line is None:  # the file itself, not an expansion
            found += self._macros_in_errors(u, {m.start for m in found})
        return found

    def _macros_in_errors(self, u: _Unit, known: set[int]) -> list[Macro]:
        """Function-like #defines the grammar lost inside an ERROR node, read from the text: the preprocessor is
        line-based, so the lines say what the macro is (FOREACH_POINTWISE_OP_SCALAR defines two kernels)."""
        found = []
        for m in function_defines(u.data):
            start = u.data.index(b"#", m.start())
            if start in known:
                continue
            node = u.root.descendant_for_byte_range(start, start + 1)
            if node is None or not _inside_error(node):
                continue  # the grammar read this #define (as something else on purpose): leave it
            name, params, body = m.group(1).decode(), m.group(2).decode("utf-8", "replace"), m.group(3)
            line = u.data.count(b"\n", 0, start) + 1
            body_text = macro_body(body.decode("utf-8", "replace"))
            param_text = macro_body(f"({params})")
            self.rows["macros"].append(MacroRow(file=self.path, line=line, name=name, parameters=param_text,
                                                body=body_text))
            plist = _parameters(params)
            found.append(Macro(name, plist, True, body_text, start))
        return found


def argument_texts(data: bytes, at: int) -> str | None:
    """The arguments of the call whose argument list opens at data[at] (after blanks): a JSON array of their texts,
    split at top level (cpp_macros.arguments), each cut at 120 characters; None when no `(` opens there."""
    n = len(data)
    while at < n and data[at] in b" \t\r\n":
        at += 1
    if at >= n or data[at] != 40:  # `(`; an initializer list `T x{...}` has none
        return None
    close = data.find(b")", at + 1)
    inner = data[at + 1:close] if close > 0 else b"("
    if not _NESTED.search(inner):  # most calls: no nested parentheses, literal or comment up to the `)`: split here
        text = inner.decode("utf-8", "replace")
        if not text.strip():
            return "[]"
        # (blanks collapsed only where a run or a line break is: most arguments have none)
        args = [" ".join(a.split()) if "  " in a or "\n" in a or "\t" in a else a.strip() for a in text.split(",")]
    else:  # (a braced initializer is one argument: `at::convolution_symint(..., false, {{0, 0}}, groups)`)
        args = arguments(data, at, braces=True)[0]
    return _JSON([a if len(a) <= _MAX_ARGUMENT else a[:_MAX_ARGUMENT] + "..." for a in args])


def _parameters(text: str) -> tuple[str, ...]:
    """A macro's parameter names: `TENSOR_TYPE, TYPE, \\` + newline + `DST_DIM` -> (TENSOR_TYPE, TYPE, DST_DIM)."""
    return tuple(p for p in (p.replace("\\", " ").strip() for p in text.split(",")) if p)


_KEYWORDS = frozenset(b"return else case new throw delete goto co_return co_await co_yield typename template sizeof "
                      b"do".split())
_DECLARED_AFTER = re.compile(rb"[ \t]*(?:(\()|\{|;|=(?!=))")


def _first_declaration(data: bytes, word: bytes, body: int, end: int) -> int:
    """Where `word` is first declared as a local object between body and end (`end` when it is not)."""
    at = data.find(word, body, end)
    while at >= 0:
        if _declares(data, at, at + len(word)):
            return at
        at = data.find(word, at + 1, end)
    return end


def _declares(data: bytes, at: int, stop: int) -> bool:
    """Whether the name at data[at:stop] is declared there as a local object: `Type<..> name{};`, `Type name;`,
    `Type* name = ...`, `Type name(args);`. Not `return name(...)`, `a && name(...)`, `x * name(...)` (a keyword or
    an operator before the name). Checked at each mention of one name, not by a search of the whole body."""
    if stop < len(data) and data[stop] in names.WORD_BYTES:
        return False  # a longer name
    after = _DECLARED_AFTER.match(data, stop)
    if after is None:
        return False
    i = at
    while i > 0 and data[i - 1] in b" \t":
        i -= 1
    if i == at:
        return False  # no blank before the name: `(name`, `.name`, `::name`
    before = data[i - 1]
    if after.group(1) is None:  # `{`, `;` or `=` after: a type's `>`, or a pointer/reference declarator
        if before == 0x3E:  # >
            return True
        if before in b"*&":
            return i < 2 or data[i - 2] not in b"&|*"
    j = i
    while j > 0 and data[j - 1] in names.WORD_BYTES:
        j -= 1
    return j < i and data[j:i] not in _KEYWORDS


def _in_define(data: bytes, pos: int) -> bool:
    """True on a #define line or its continuation lines (a #define the grammar lost inside an ERROR node)."""
    start = data.rfind(b"\n", 0, pos) + 1
    if data[start:pos].lstrip(b" \t").startswith(b"#"):
        return True
    i = start - 2  # the last byte of the line before, then back over blanks
    while i >= 0 and data[i] in b" \t\r":
        i -= 1
    return i >= 0 and data[i] == 0x5C  # a backslash: this line continues a #define


def _count_errors(root) -> int:
    """The ERROR and MISSING nodes of a tree, counted by going down only where one may be: into children that
    hold an error or are one (an ERROR node can say it holds none). A query pattern for them made every tree's
    walk ~7% longer, and most trees have none."""
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
        stack.extend(c for c in node.children if c.has_error or c.is_error or c.is_missing)
    return count


def _inside_error(node) -> bool:
    while node is not None:
        if node.type == "ERROR":
            return True
        node = node.parent
    return False


_STRUCTURED_KINDS = {"meta_func", "precompute_meta_func", "impl_func"}
_DEFINITION_ROLES = {"function", "class", "struct"}
_CALL_START = {"call.bare": "call.name", "call.qualified": "call.qualified", "call.template": "call.name",
               "call.method": "call.receiver", "call.object": "call.object", "call.declared": "call.name"}
_CALL_ROLES = frozenset(_CALL_START)
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"})


def _first_argument(data: bytes, caps, start, named_stub: bool) -> str | None:
    """The first argument's text of a non-method call when it may be a device (or the callee is a stub)."""
    args = caps["call.args"][0] if "call.args" in caps else start.parent.child_by_field_name("arguments")
    if args is None:
        return None
    # most bare calls have no device anywhere in their arguments: one search of the text, no nodes made
    if not named_stub and not _MAYBE_DEVICE_LOOSE.search(data, args.start_byte, args.end_byte):
        return None
    arg = args.named_child(0) if args.named_child_count else None
    if arg is None:
        return None
    raw = arg.text
    if named_stub or _MAYBE_DEVICE.search(raw):
        return collapse(raw.decode("utf-8", "replace"))
    return None


def _misread_call(node) -> bool:
    """`gpu_reduce_kernel<scalar_t, out_t, 2>(iter, ops, typename ops_t::acc_t{});` in a function body parses as a
    definition (a declarator without a return type, the last argument's `{}` its body): C++ has no function
    definitions inside a body, so it is the call it looks like (ReduceMomentKernel.cu:20, std_var_kernel_impl)."""
    if node.child_by_field_name("type") is not None:
        return False
    parent, body = node.parent, node.child_by_field_name("body")
    if parent is None or parent.type != "compound_statement" or body is None or body.named_child_count:
        return False  # a real definition the grammar placed in a block (error recovery) has a body
    after = node.next_sibling
    return after is not None and after.type == "ERROR" and after.text.lstrip().startswith(b")")


def _misparsed(node, name: str) -> bool:
    """A macro followed by a block inside a body (`CUDA_KERNEL_LOOP(i, n) {`) parses as a definition: no return
    type, an ALL_CAPS name, in a function or class body. At file level (TEST(...) {, TORCH_LIBRARY_IMPL(...) {) such
    a block is the body of a function the macro defines, and stays."""
    if node.child_by_field_name("type") is not None or not names.is_macro_name(name):
        return False
    parent = node.parent
    if parent is not None and parent.type == "template_declaration":
        parent = parent.parent
    return parent is not None and parent.type in ("compound_statement", "field_declaration_list")


def _parameter_text(node) -> str:
    """A parameter list on one line: `//` comments dropped (collapsed, one would swallow the parameters after it:
    ScatterGatherKernel.cu:169's `int64_t numel,  // Do not use ...` before `const func_t& f`)."""
    text = _text(node)
    if "//" in text:
        text = _LINE_COMMENT.sub("", text)
    return collapse(text)


_LINE_COMMENT = re.compile(r"//[^\n]*")


def _scope(node, cache: dict | None = None) -> tuple[list[str], bool]:
    """Enclosing namespaces and classes, outermost first; and whether the definition sits in a class body.

    `cache` (one per tree: node ids are per tree) remembers the scope of each ancestor, so the definitions of one
    class or namespace walk up only once (a parent step costs a descent from the root in tree-sitter)."""
    parent = node.parent
    holder = parent
    # a member written under `#if` inside the class body (prod_functor's `#if AT_USE_JITERATOR()` operator() and
    # its `#else` twin) is as much a member as one outside it: the directives' nodes stand between it and the body
    while holder is not None and holder.type in _MEMBER_WRAPPERS:
        holder = holder.parent
    in_class = holder is not None and holder.type == "field_declaration_list"
    return list(_ancestors(parent, {} if cache is None else cache)), in_class


_MEMBER_WRAPPERS = frozenset({"template_declaration", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                              "preproc_elifdef"})


def _ancestors(node, cache: dict) -> tuple[str, ...]:
    """Scope names of `node` and its ancestors, outermost first."""
    chain, out = [], ()
    while node is not None:
        known = cache.get(node.id)
        if known is not None:
            out = known
            break
        chain.append(node)
        node = node.parent
    for n in reversed(chain):  # outermost first
        if n.type in ("namespace_definition", "class_specifier", "struct_specifier"):
            name = n.child_by_field_name("name")
            if name is not None:
                out = out + (strip_templates(_text(name)),)
        cache[n.id] = out
    return out


# `__global__ void name(` (names.prepare has blanked __launch_bounds__(...)): the name before the parameters
_GLOBAL_NAME = re.compile(rb"__global__\s+[\w:<>,\s*&]*?\b([A-Za-z_]\w*)\s*\(")
_TEST_FILE = re.compile(r"(^|/)(test|tests)/|(^|/)test_[^/]*$")
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.S)


def _blank_define_comments(data: bytes) -> bytes:
    """A /* comment */ on a continuation line of a #define ends the grammar's reading of the directive, and the
    lines after it are read as code (TensorTopK's RUN_T closed launch_gather_topk_kernel early): comments inside
    multi-line function-like #defines become spaces, same length, same lines."""
    if b"/*" not in data or (b"\\\n" not in data and b"\\\r\n" not in data):  # no comment or no continued line
        return data
    buf = None
    for m in function_defines(data):
        if b"/*" not in m.group(3) or b"\\" not in m.group(3):
            continue
        buf = buf or bytearray(data)
        for c in _BLOCK_COMMENT.finditer(data, m.start(3), m.end(3)):
            buf[c.start():c.end()] = re.sub(rb"[^\n]", b" ", c.group())
    return bytes(buf) if buf is not None else data


def _in_block(root, pos: int) -> bool:
    """True when byte `pos` lies inside a function body (a compound statement; namespaces and class bodies are
    other node types)."""
    node = root.descendant_for_byte_range(pos, pos + 1)
    while node is not None:
        if node.type == "compound_statement":
            return True
        node = node.parent
    return False


def _reparse(parser, data: bytes, old: tuple[bytes, object]):
    """`data` parsed from another reading's tree of a text that differs from it only on some lines (the other
    side of #if groups): only those stretches are parsed again (incremental parsing); a fresh parse when the two
    texts do not line up."""
    old_data, old_tree = old
    if len(old_data) != len(data):
        return parser.parse(data)
    tree, pos, changed = old_tree.copy(), 0, False
    new_lines, old_lines = data.split(b"\n"), old_data.split(b"\n")
    start = None
    for new, was in zip(new_lines + [b""], old_lines + [None]):  # a sentinel closes the last stretch
        if new != was and was is not None:
            if start is None:
                start = pos
        elif start is not None:
            end = pos - 1  # the newline before this line stays
            tree.edit(start, end, end, _point(data, start), _point(data, end), _point(data, end))
            start, changed = None, True
        pos += len(new) + 1
    return parser.parse(data, tree) if changed else parser.parse(data)


def _point(data: bytes, pos: int) -> tuple[int, int]:
    """(row, column) of a byte offset, as tree-sitter counts them."""
    row = data.count(b"\n", 0, pos)
    return row, pos - (data.rfind(b"\n", 0, pos) + 1)


def _invocations(u: _Unit, table: MacroTable):
    """(macro, args, start, end, at_file_level) for each invocation of an expandable macro outside #defines."""
    out = []
    for m in table.invocation.finditer(u.data):
        node = u.root.descendant_for_byte_range(m.start(1), m.end(1))
        if node is None or node.type not in _SITE_NODES or (
                node.parent is not None and node.parent.type in _SKIP_SITE_PARENTS) or _in_define(u.data, m.start()):
            continue
        name = m.group(1).decode()
        args, end = arguments(u.data, m.end() - 1)
        macro = table.lookup(name, m.start())
        at_file_level = True
        parent = node.parent
        while parent is not None:
            if parent.type in ("compound_statement", "field_declaration_list"):
                at_file_level = False
                break
            parent = parent.parent
        out.append((macro, args, node, m.start(), end, at_file_level))
    return out


def extract(path: str, data: bytes, language: str) -> FileFacts:
    """Facts of one file. Where #if groups split braces (cpp_branches), the file is read with one side chosen,
    and the facts on the lines that choice blanked come from the readings that keep the other branches of such
    groups (Shape.cu's `#ifdef USE_MACA if (...) { maca_parallel_cat ... #else if (...) { parallel_cat ... #endif`:
    the `#else` side is a function body's code only a balanced reading sees), else from reading the file as written
    (only the part of it that spans those lines is matched)."""
    selected, blanked, readings = branches.select(data)
    if not blanked:
        facts = _extract(path, data, language)[0]
        _preprocessor_conditions(facts, path, data)
        return facts
    first: list = []  # the first reading's (text, tree), parsed again only where the two texts differ
    facts, macros = _extract(path, selected, language, keep=first)
    functions = _function_spans(facts.rows["symbols"])
    rest = set(blanked)  # the lines no reading has read yet
    for choice in range(1, readings):
        other, other_blanked, _ = branches.select(data, choice)
        lines = rest - other_blanked  # this branch's own lines
        if lines:
            _add_rows(facts, _extract(path, other, language, old=first[0] if first else None)[0], lines, functions)
            rest -= lines
    if rest:
        # #defines before the span are still known there: the macros the first reading found come along
        as_written, _ = _extract(path, data, language, within=_line_span(data, min(rest), max(rest)),
                                 known=macros, old=first[0] if first else None)
        _add_rows(facts, as_written, rest, functions)
    _preprocessor_conditions(facts, path, data)
    return facts


def _add_rows(facts: FileFacts, reading: FileFacts, lines: set[int], functions: list[tuple]) -> None:
    """Another reading's rows on `lines` (every fact row starts (file, line, ...)), named by the first reading's
    functions."""
    for table, rows in reading.rows.items():
        at = _CALLER_COLUMN.get(table)
        facts.rows[table].extend(_in_function(r, at, functions) if at is not None else r
                                 for r in rows if r[1] in lines)


def _preprocessor_conditions(facts: FileFacts, path: str, data: bytes) -> None:
    facts.rows["conditions"][:0] = [(path, first, last, "#if", cond, "")  # _CONDITION
                                    for first, last, cond in conditions.preprocessor(data)] + [
        (path, line, line, "#error", text, "") for line, text in conditions.requirements(data)]


# the caller column of the C++ fact tables that have one (records.py field order)
_CALLER_COLUMN = {"calls": 3, "stub_calls": 4, "kernel_launches": 6, "library_calls": 4, "type_dispatches": 5}


def _function_spans(symbols: list[tuple]) -> list[tuple[int, int, str, str]]:
    """(first line, last line, name, qualified name) of the functions a reading found, innermost last."""
    spans = [(r[1], r[2], r[5], r[6]) for r in symbols if r[4] in ("function", "method", "global_kernel",
                                                                   "device_function", "impl_func")]
    return sorted(spans, key=lambda s: (s[0], -s[1]))


def _in_function(row: tuple, at: int, functions: list[tuple[int, int, str, str]]) -> tuple:
    """A row of the as-written reading, named by the caller the chosen-side reading gave its line: where the #if
    groups split braces, the as-written reading may lose the enclosing namespaces (`launch_vectorized_layer_norm_kernel`
    for at::native::launch_vectorized_layer_norm_kernel, layer_norm_kernel.cu:807). Only the same function's
    name is taken: its unqualified name must match."""
    caller = row[at]
    if not caller:
        return row
    name = caller.rpartition("::")[2]
    line = row[1]
    for first, last, fname, qualified in reversed(functions):  # innermost (latest start) first
        if first <= line <= last:
            if fname == name and qualified != caller and qualified.endswith("::" + caller):
                if hasattr(row, "_replace"):  # a record type (opindex.records)
                    return row._replace(caller=qualified)
                return row[:at] + (qualified,) + row[at + 1:]
            break
    return row


def _line_span(data: bytes, first: int, last: int) -> tuple[int, int]:
    """Byte range of 1-based lines first..last."""
    start = 0
    for _ in range(first - 1):
        start = data.index(b"\n", start) + 1
    end = start
    for _ in range(last - first + 1):
        end = data.find(b"\n", end) + 1 or len(data)
    return start, end


def _extract(path: str, data: bytes, language: str, within: tuple[int, int] | None = None,
             known: list[Macro] = (), keep: list | None = None,
             old: tuple[bytes, object] | None = None) -> tuple[FileFacts, list[Macro]]:
    """The facts of one text and the #defines found in it; `within` limits the matching to a byte range, where
    the `known` macros (found elsewhere in the file) can be expanded too. `keep` receives the (text, tree) parsed;
    with `old`, another reading's (text, tree), the text is parsed incrementally from that tree."""
    parser = _engine()[0]
    f = _File(path, language)
    data = _blank_define_comments(names.prepare(data, arguments))
    tree = _reparse(parser, data, old) if old is not None else parser.parse(data)
    if keep is not None:
        keep.append((data, tree))
    main = _Unit(data, tree, within=within)
    macros = f.macros(main)
    if known:
        seen = {m.start for m in macros}
        macros = sorted(macros + [m for m in known if m.start not in seen], key=lambda m: m.start)
    # a #define inside a function body stamps out that function's code (TensorTopK's RUN_K, Indexing's
    # SMALL_INDEX): its invocations there are expanded too, so the calls and launches it writes are the function's
    # (a #define whose body launches a kernel is such code wherever it is written: a parse error before it can hide
    # the function it sits in)
    # Test code's macros (REG_TEST, TEST_CONVERT_TO) stamp out checks, not kernels: nothing is expanded there.
    if _TEST_FILE.search(path):
        macros_to_expand, local = [], frozenset()
    else:
        macros_to_expand = macros
        local = frozenset(m.start for m in macros if "<<<" in m.body or _in_block(main.root, m.start))
    table = MacroTable(macros_to_expand, local=local)
    invocations = _invocations(main, table) if table else []
    # file-level invocations, and those of a function's own #defines (`SMALL_INDEX(scalar_t, unsigned int, ...)`
    # is no expression the grammar can read): the expansions stand for them
    # (only when the grammar failed somewhere: a file that parsed is not parsed again for them)
    broken = tree.root_node.has_error
    blank = [(s, e) for macro, _, _, s, e, top in invocations if top or (broken and macro.start in table.local)]
    if blank:  # re-parse without the invocations the expansions stand for: they confuse the grammar
        buf = bytearray(data)
        tree = tree.copy()  # the invocations' nodes keep the tree as read (an edited tree's nodes have no text)
        for s, e in blank:
            buf[s:e] = re.sub(rb"[^\n]", b" ", data[s:e])
            # same length, same lines: only the edited stretch is parsed again (incremental parsing)
            tree.edit(s, e, e, _point(data, s), _point(data, e), _point(data, e))
        tree = parser.parse(bytes(buf), tree)
        main = _Unit(bytes(buf), tree, within=within)
    parse_errors = _count_errors(tree.root_node) if tree.root_node.has_error else 0
    f.definitions(main)
    units = [main]
    for macro, args, node, start, end, _ in invocations:
        if within is not None and not within[0] <= start < within[1]:
            continue  # its facts would be dropped
        text = table.expand(macro, args).encode()
        line = node.start_point[0] + 1
        end_line = line + data.count(b"\n", start, end)
        scope, _ = _scope(node)
        unit = _Unit(text, parser.parse(text), line, end_line, macro.name, tuple(scope), main.caller(start))
        f.definitions(unit)
        units.append(unit)
    for u in units:
        f.macro_sites(u)
    if b"__global__" in data:
        f.kernels = frozenset(m.decode() for m in _GLOBAL_NAME.findall(data))
    for u in units:
        f.calls(u)
        f.misread_calls(u)
    f.choices(main)
    f.rows["conditions"].extend((path, first, last, "if", cond, caller)  # _CONDITION
                                for first, last, cond, caller in conditions.guards(main.data, main.root, main.caller))
    f.rows["conditions"].extend((path, first, last, "switch", cond, caller)  # _CONDITION
                                for first, last, cond, caller in conditions.switch_cases(main.data, main.root,
                                                                                         main.caller))
    if b"Tensor" in data:  # `a * b` on Tensors calls at::mul (extract/cpp_operators.py)
        functions = [r for r in main.ranges if within is None or within[0] <= r[0] < within[1]]
        for line, caller, callee, receiver, args in operator_calls(main.root, main.data, parser.language, functions,
                                                                   main.line_of):
            f.rows["calls"].append((path, line, language, caller, callee, receiver, 1, None,  # _CALL
                                    None if args is None else _JSON(args), None))
    return FileFacts(rows=f.rows, parse_errors=parse_errors), macros
