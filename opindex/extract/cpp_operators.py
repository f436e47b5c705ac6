"""Operators on Tensors in C++ function bodies, recorded as calls (pytorch/operators.py says which op each calls).

`a * b` is arithmetic on numbers far more often than on Tensors, so an expression is recorded only when one of its
operands is a Tensor by what the function itself says: a parameter or local declared `Tensor` (`const Tensor&
target`, `Tensor weight_`), a local `auto` initialised from such an expression (`auto input = at::log_softmax(...)`,
`auto ignore_mask = target == ignore_index`), an `at::op(...)` call, or a Tensor method's result (`input.sum(1)`;
not `.size(0)`, `.numel()`: pytorch/tensor_methods.py NON_TENSOR_RESULTS). The call row's receiver (`qualifier`) is
that operand's text, so the trace's receiver checks apply as for `x.mul(y)`; where it is the left operand (or the one
assigned to), the call's arguments are the right operand's text, as for `x.mul(y)` (`self != self`: ["self"]), and
a unary operator's are none.

Only functions that declare a Tensor, and use one of those names (or an `auto` made from them) next to an operator,
are looked at, each with a query limited to its bytes (most C++ of a PyTorch tree is kernels and helpers on numbers;
a pass over whole trees would cost the C++ extraction ~12% more; this one costs ~5%).
"""
from __future__ import annotations

import re

import tree_sitter as ts

from ..pytorch.operators import TENSOR_OPERATORS
from ..pytorch.tensor_methods import NON_TENSOR_RESULTS
from .cpp_macros import collapse
from .cpp_names import WORD_BYTES

# `const at::Tensor& self`, `Tensor weight_`, `Tensor& out`: a name declared with the type Tensor (the character
# before `Tensor` is checked apart: a look-behind at every position is slow)
_DECLARED = re.compile(rb"Tensor\s*[&*]?\s*([A-Za-z_]\w*)\s*[,)=;{\[]")
_BEFORE_TYPE = {b" ", b"\t", b"\n", b"(", b",", b":", b"<", b"{", b";"}  # `at::Tensor`, `(Tensor`, `const Tensor`
_MAX_RECEIVER = 120
# Only the operators TensorOperators.h defines that kernels use on Tensors (comparisons by <, > and the logical
# operators are left out: on numbers they are everywhere, on Tensors rare); `auto` declarations for what they hold.
_QUERY = """
(binary_expression operator: ["+" "-" "*" "/" "==" "!=" "&" "|" "^"]) @expr
(unary_expression operator: ["-" "~"]) @expr
(assignment_expression operator: ["+=" "-=" "*=" "/=" "&=" "|=" "^="]) @expr
(declaration type: (placeholder_type_specifier) declarator: (init_declarator) @decl)
"""
_compiled: list[ts.Query] = []


def _query(language: ts.Language) -> ts.Query:
    if not _compiled:  # one grammar reads all C++ and CUDA (cpp.py _engine)
        _compiled.append(ts.Query(language, _QUERY))
    return _compiled[0]


def operator_calls(root, data: bytes, language: ts.Language, functions: list[tuple[int, int, str]],
                   line_of) -> list[tuple[int, str, str, str, list[str] | None]]:
    """(line, caller, callee, receiver, arguments) of the Tensor operators in `functions` ((start, end, qualified
    name) byte ranges of the parsed text): the arguments' texts where the receiver is the left operand (or none of
    a unary operator), else None (`1 - ls`: rsub's, written the other way round)."""
    out: list[tuple[int, str, str, str, list[str] | None]] = []
    query = None
    for start, end, caller in functions:
        names = {m.group(1).decode() for m in _DECLARED.finditer(data, start, end)
                 if m.start() == 0 or data[m.start() - 1:m.start()] in _BEFORE_TYPE}
        if not names or not _next_to_operator(data, start, end, _may_be_tensors(data, start, end, names)):
            continue  # no Tensor declared here, or none next to an operator: its operators are on numbers
        if query is None:
            query = _query(language)
        cursor = ts.QueryCursor(query)
        cursor.set_byte_range(start, end)  # only this function's nodes are walked
        for _, caps in cursor.matches(root):
            node = caps.get("decl", caps.get("expr"))[0]
            if not start <= node.start_byte < end:
                continue  # a nested function's, matched in its own range
            if "decl" in caps:
                _declaration(node, names)
                continue
            found = _operator(node, names)
            if found is not None:
                callee, operand, other = found
                receiver = _text(operand)
                arguments = None if other is False else [] if other is None else [_text(other)]
                out.append((line_of(node), caller, callee, receiver, arguments))
    return out


# literal-led (a pattern led by \b is tried at every byte: 7x slower); the byte before `auto` is checked per hit
_AUTO = re.compile(rb"auto\s+([A-Za-z_]\w*)\s*=\s*([^;]{0,400});")


def _may_be_tensors(data: bytes, start: int, end: int, names: set[str]) -> set[str]:
    """The declared names and the `auto` locals made from them or from an at:: call: the names a Tensor operator
    could apply to (a cheap over-estimate; the query decides)."""
    out = set(names)
    for m in _AUTO.finditer(data, start, end):
        if m.start() and data[m.start() - 1] in WORD_BYTES:
            continue  # the end of a longer word
        init = m.group(2)
        if b"at::" in init or any(n.encode() in init for n in names):
            out.add(m.group(1).decode())
    return out


_AFTER = re.compile(rb"\s*(?:[-+*/](?![-+>])|[=!]=|[|&^](?![|&]))")  # `x *`, `x ==`, `x +=`, not `x->`, `x++`
_BEFORE = re.compile(rb"(?:[-+*/~]|[=!]=)[\s(]*\Z")  # `* x`, `-x`, `~x`, `== (x`; not `= x` or `& x` (a reference)


def _next_to_operator(data: bytes, start: int, end: int, names: set[str]) -> bool:
    """Whether one of `names` has an operator beside it between start and end: a cheap test (bytes.find and two
    small anchored patterns, none compiled per name) before a function's query."""
    for name in names:
        word = name.encode()
        pos = data.find(word, start, end)
        while pos >= 0:
            stop = pos + len(word)
            before, after = data[pos - 1:pos], data[stop:stop + 1]
            if not (before.isalnum() or before in (b"_", b".", b">", b":")) and not (after.isalnum() or after == b"_"):
                if _AFTER.match(data, stop, min(end, stop + 8)) or _BEFORE.search(data, max(start, pos - 8), pos):
                    return True
            pos = data.find(word, stop, end)
    return False


def _text(node) -> str:
    """An operand's text, blanks collapsed, cut at _MAX_RECEIVER characters."""
    text = collapse(node.text.decode("utf-8", "replace"))
    return text if len(text) <= _MAX_RECEIVER else text[:_MAX_RECEIVER] + "..."


def _declaration(node, names: set[str]) -> None:
    """`auto x = <a Tensor expression>`: x is a Tensor from here on."""
    name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
    if name is None or value is None or name.type != "identifier":
        return
    if _tensor(value, names):  # the query matched `auto` declarations only
        names.add(name.text.decode())


def _operator(node, names: set[str]):
    """(callee, the Tensor operand, the other operand) when `node` applies a Tensor operator to a Tensor, else None.
    The other operand is None for a unary operator, False where the Tensor is the right one (no method call of it
    takes the left as its argument)."""
    op = node.child_by_field_name("operator")
    if op is None:
        return None
    token = op.type
    if node.type == "unary_expression":
        callee = f"unary operator{token}"
        operands = [node.child_by_field_name("argument")]
    else:
        callee = f"operator{token}"
        operands = [node.child_by_field_name("left"), node.child_by_field_name("right")]
    if callee not in TENSOR_OPERATORS:
        return None
    # (`x += y` calls x.add_(y): x must be the Tensor)
    for i, operand in enumerate(operands[:1] if node.type == "assignment_expression" else operands):
        if operand is not None and _tensor(operand, names):
            if node.type == "unary_expression":
                return callee, operand, None
            right = operands[1] if i == 0 else None
            return callee, operand, right if right is not None else False
    return None


def _tensor(node, names: set[str], depth: int = 0) -> bool:
    """Whether an expression is a Tensor by what the function says (see the module's docstring)."""
    if depth > 8:
        return False
    kind = node.type
    if kind == "identifier":
        return node.text.decode() in names
    if kind == "parenthesized_expression":
        inner = node.named_children
        return bool(inner) and _tensor(inner[0], names, depth + 1)
    if kind == "unary_expression":
        op, arg = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        return op is not None and op.type in ("-", "~") and arg is not None and _tensor(arg, names, depth + 1)
    if kind == "binary_expression":
        op = node.child_by_field_name("operator")
        if op is None or f"operator{op.type}" not in TENSOR_OPERATORS:
            return False
        return any(side is not None and _tensor(side, names, depth + 1)
                   for side in (node.child_by_field_name("left"), node.child_by_field_name("right")))
    if kind == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is None:
            return False
        if fn.type == "qualified_identifier":  # at::log_softmax(...): an op; at::cuda::x(...) is not
            text = fn.text.decode()
            return text.startswith("at::") and text.count("::") == 1
        if fn.type == "field_expression":  # input.sum(1), not input.size(0)
            method, receiver = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
            return (method is not None and receiver is not None  # data_ptr<scalar_t>(): the method is data_ptr
                    and method.text.decode().split("<")[0].strip() not in NON_TENSOR_RESULTS
                    and fn.child_by_field_name("operator") is not None
                    and fn.child_by_field_name("operator").type == "." and _tensor(receiver, names, depth + 1))
    return False
