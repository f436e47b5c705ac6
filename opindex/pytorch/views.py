"""Views whose strides differ from their base's, and the TensorIterators built from them.

A TensorIterator over such a view is not contiguous: glu's meta function (GatedLinearUnit.cpp:22) halves its input
with `self.narrow(wrap_dim, 0, selfSize)` and `self.narrow(wrap_dim, selfSize, selfSize)` and builds the iterator
from the two halves, so `iter.is_contiguous()` in gpu_kernel_impl (CUDALoops.cuh:399) is false and the kernel is
launch_legacy_kernel's elementwise_kernel, not the vectorized one, whatever the input's own layout."""
from __future__ import annotations

import re

from .syntax import parenthesized

# Tensor methods that return a view with other strides than a contiguous base's (a narrow keeps the row stride of
# the full tensor; expand gives stride 0; transpose, t, permute swap strides)
STRIDED_VIEWS = ("narrow", "slice", "select", "transpose", "t", "permute", "expand", "expand_as", "diagonal",
                 "unfold", "as_strided", "movedim", "swapaxes", "swapdims", "mT")

_VIEW_CALL = r"\.\s*(?:" + "|".join(STRIDED_VIEWS) + r")(?:_symint)?\s*\("
# a name given a view, declared or assigned again (constant_pad_nd's `c_output = c_output.narrow(i, ...)`)
_VIEW_ASSIGNED = re.compile(r"(?<![\w.>:])(\w+)\s*=(?!=)\s*[^;]*?" + _VIEW_CALL)
_VIEW_LOCAL = re.compile(r"\b(?:const\s+)?(?:at::)?(?:Tensor|auto)\s*&?\s+(\w+)\s*=\s*[^;]*?" + _VIEW_CALL)
# what builds an iterator from its operands: TensorIteratorBase's build_*_op(out, a, b) in a meta function, or a
# TensorIteratorConfig's add_input / add_const_input / add_owned_input / add_borrowed_input
_ITER_BUILD = re.compile(r"(\bbuild_\w*op|\.\s*add_(?:const_|owned_|borrowed_|owned_const_)?input)\s*\(")


# a TensorIteratorConfig chain and its operands (group 1: input or output; trace/iterators.py numbers them)
CONFIG = re.compile(r"TensorIteratorConfig\s*\(\s*\)")
CONFIG_OPERAND = re.compile(r"\.\s*add_(?:const_|owned_|borrowed_|owned_const_)?(input|output)\s*\(")
_SHAPED = re.compile(r"\.\s*(?:view|reshape)\s*\(\s*\{([^{}]*)\}")


def broadcast_operands(text: str) -> list[str]:
    """The operands of a TensorIteratorConfig chain that broadcast: each operand given as `x.view({...})` or
    `.reshape({...})`, and one has a literal 1 where another has a size (group_norm's `mean.view({N * G, 1})`
    beside `X.view({N * G, D * HxW})`, group_norm_kernel.cu:633): stride 0 along that dimension."""
    found: list[str] = []
    for m in CONFIG.finditer(text):
        end = text.find(".build()", m.end())
        chain = text[m.end():end if end > 0 else len(text)]
        shapes = []
        for op in CONFIG_OPERAND.finditer(chain):
            arg = parenthesized(chain, op.end()).strip()
            shaped = _SHAPED.search(arg)
            if shaped is None:
                break  # an operand of a shape not written here: nothing to compare
            shapes.append((arg, [p.strip() for p in shaped.group(1).split(",")]))
        else:
            for arg, sizes in shapes:
                if any(s == "1" and any(len(o) == len(sizes) and o[i] != "1" for _, o in shapes)
                       for i, s in enumerate(sizes)) and arg not in found:
                    found.append(arg)
    return found


def strided_operands(text: str) -> list[str]:
    """The operands of an iterator a body builds that are strided views (locals made by a view call, or a view call
    written inline) or that broadcast (broadcast_operands); [] when it builds none from one. `text` is the body's
    source."""
    if not _ITER_BUILD.search(text):
        return []
    views = set(_VIEW_LOCAL.findall(text))
    found: list[str] = []
    for m in _ITER_BUILD.finditer(text):
        args = parenthesized(text, m.end())
        names = [w for w in re.findall(r"[A-Za-z_]\w*", args) if w in views]
        if re.search(_VIEW_CALL, args):
            names.append(args.strip())
        found += [n for n in names if n not in found]
    return found + [a for a in broadcast_operands(text) if a not in found]


def view_assignments(text: str, first_line: int = 1) -> dict[str, list[tuple[int, int]]]:
    """Each name a body gives a strided view (STRIDED_VIEWS, declared or assigned again), with the (line, brace
    depth) of each time it does so (`first_line`: the line of the text's first line; the depth counts the braces
    open before it in the text, so a view made inside a loop or an `if` block is deeper than a call after it)."""
    found: dict[str, list[tuple[int, int]]] = {}
    if not re.search(_VIEW_CALL, text):
        return found
    for m in _VIEW_ASSIGNED.finditer(text):
        if not _ends_in_view(text, m.end()) or not _views_a_tensor(m.group(0)):
            continue  # `auto x = input.transpose(1, 2).contiguous();`: the value is the contiguous copy
        before = text[:m.start()]
        found.setdefault(m.group(1), []).append((first_line + before.count("\n"),
                                                 before.count("{") - before.count("}")))
    return found


_VIEW_TAIL = re.compile(r"\s*" + _VIEW_CALL)
_ASSIGNED = re.compile(r"(?<![\w.>:])(\w+)\s*=(?!=)\s*[^;]*;")


def _ends_in_view(text: str, start: int) -> bool:
    """Whether the statement whose first view call's arguments start at `start` gives the name that view: after
    the call only further view calls (`x.narrow(...).transpose(...)`) or closing parentheses follow, up to `;`."""
    pos = start + len(parenthesized(text, start)) + 1
    while True:
        tail = _VIEW_TAIL.match(text, pos)
        if tail is None:
            break
        pos = tail.end() + len(parenthesized(text, tail.end())) + 1
    end = text.find(";", pos)
    return not text[pos:end if end >= 0 else len(text)].strip(" \t\n)")


# a receiver that is a list of sizes or strides, not a tensor (`input_shape.slice(2)`, `self.sizes().slice(1)`)
_SIZES_RECEIVER = re.compile(r"(?:\w*(?:shape|size|stride)\w*|\.\s*(?:sym_)?(?:sizes|strides)\(\s*\))\s*$", re.I)


def _views_a_tensor(assignment: str) -> bool:
    """Whether an assignment up to its first view call's `(` gives the name that call's value itself, of a tensor:
    not an argument of another call (`HxW = c10::multiply_integers(input_shape.slice(2))`, group_norm.cpp:194),
    not a slice of a list of sizes."""
    rhs = assignment.partition("=")[2]
    head = re.split(_VIEW_CALL, rhs)[0].lstrip(" \t\n(")
    return head.count("(") == head.count(")") and not _SIZES_RECEIVER.search(head)


def other_assignments(text: str, first_line: int = 1) -> dict[str, list[int]]:
    """Each name a body assigns a value that is not a strided view (view_assignments), with the line of each
    time: a view given before such a line is not what the name holds after it (`x = x.contiguous();`)."""
    views = {(name, line) for name, found in view_assignments(text, first_line).items() for line, _ in found}
    out: dict[str, list[int]] = {}
    for m in _ASSIGNED.finditer(text):
        line = first_line + text.count("\n", 0, m.start())
        if (m.group(1), line) not in views:
            out.setdefault(m.group(1), []).append(line)
    return out


def depth_at(text: str, line: int, first_line: int = 1) -> int:
    """The brace depth at the start of `line` of `text` (as view_assignments counts it)."""
    before = "\n".join(text.split("\n")[:max(line - first_line, 0)])
    return before.count("{") - before.count("}")
