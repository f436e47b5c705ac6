"""What Python's argument parser (torch/csrc/utils/python_arg_parser.cpp) lets a call's values fit, read from the
checkout's own source: a Python number fits a `Tensor` parameter only for the ops `should_allow_numbers_as_tensors`
lists (add, mul, div, sub, ... in 2.4), so `torch.clamp(x, max=1.0)` binds clamp(Tensor self, Scalar? min, Scalar?
max), never clamp.Tensor(Tensor self, Tensor? min, Tensor? max). And a tensor fits a number parameter (`Scalar`,
`float`, `complex`) only when it has no dimensions (`var.dim() == 0` in the parser's check), so `torch.where(c, x, 0.0)`
is not where.Scalar(Tensor condition, Scalar self, Scalar other) with a 64x128 x.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

PARSER = "torch/csrc/utils/python_arg_parser.cpp"
_LIST = re.compile(r"bool\s+should_allow_numbers_as_tensors\s*\([^)]*\)\s*\{(.*?)\n\}", re.S)
_TENSOR_TYPE = re.compile(r"^Tensor(?:\([a-z]!?\))?\??$")
_NUMBER_TYPE = re.compile(r"^(?:Scalar|float|complex)\??$")
_ZERO_DIM = re.compile(r"case\s+ParameterType::DOUBLE:.*?(return\s+!var\.requires_grad\(\)\s*&&\s*var\.dim\(\)\s*==\s*0)", re.S)


@dataclass(frozen=True)
class NumbersAsTensors:
    """The ops whose Tensor parameters take a Python number, and where the checkout lists them."""
    ops: frozenset[str]
    file: str
    line: int
    order: tuple[str, ...] = ()  # the ops as the source lists them


@functools.lru_cache(maxsize=8)
def _parser_text(root: str | None) -> str | None:
    """The checkout's python_arg_parser.cpp, read once; None when it is not there."""
    if not root:
        return None
    try:
        with open(os.path.join(root, PARSER), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


@functools.lru_cache(maxsize=8)
def numbers_as_tensors(root: str | None) -> NumbersAsTensors | None:
    """The checkout's list; None when its parser source is not there or does not write one (then nothing is
    ruled out by it)."""
    text = _parser_text(root)
    m = _LIST.search(text) if text else None
    if m is None:
        return None
    names = tuple(re.findall(r'"(\w+)"', m.group(1)))
    return NumbersAsTensors(frozenset(names), PARSER, text.count("\n", 0, m.start()) + 1, names)


@functools.lru_cache(maxsize=8)
def zero_dim_tensors(root: str | None) -> tuple[str, int] | None:
    """(file, line) of the parser's check that a tensor given for a number has 0 dims; None when the checkout's
    parser does not write it (then nothing is ruled out by it)."""
    text = _parser_text(root)
    m = _ZERO_DIM.search(text) if text else None
    return None if m is None else (PARSER, text.count("\n", 0, m.start(1)) + 1)


def tensor_for_number(kind: str, dims: int | None, rule: tuple[str, int] | None) -> bool:
    """Whether a tensor of `dims` dimensions, given for a parameter of schema type `kind`, cannot fit it: a number
    parameter, and the tensor has dimensions."""
    return rule is not None and dims is not None and dims > 0 and bool(_NUMBER_TYPE.match(kind.replace(" ", "")))


def number_for_tensor(op: str, kind: str, value, rule: NumbersAsTensors | None) -> bool:
    """Whether `value`, a Python number given for a parameter of schema type `kind`, cannot fit it: the type is a
    Tensor and the op (its name without overload) is not one the parser lets take numbers."""
    if rule is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return bool(_TENSOR_TYPE.match(kind.replace(" ", ""))) and op not in rule.ops
