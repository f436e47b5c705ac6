"""Whether a C++ method call can be a Tensor method (an op through the dispatcher), from what the source says about
its receiver: `options.device().index()` calls c10::Device::index, not the op aten::index.

Two things are known without a type checker: the declared type of a parameter of the enclosing function (its
signature is indexed), and the result of the accessors below, which never return a Tensor.
"""
from __future__ import annotations

import functools
import re

from .syntax import split_top_level
from .tensor_methods import METADATA_ACCESSORS

NON_TENSOR_ACCESSORS = METADATA_ACCESSORS  # never a Tensor, and no kernel runs (tensor_methods.py)
_LAST_CALL = re.compile(r"(\w+)\s*(?:<[^<>()]*>)?\s*\([^()]*\)\s*$")
_IDENT = re.compile(r"[A-Za-z_]\w*\Z")
_TENSOR_TYPE = re.compile(r"(?<![\w])(?:at::|c10::)?Tensor(?![\w])")


def may_be_tensor(receiver: str, signature: str | None, declared: str | None = None) -> bool:
    """False when the receiver is known not to be a Tensor; True when it is one or nothing says otherwise.
    `declared`: a local variable's declared type (`c10::Device`, or `auto = <initializer>`), when known."""
    text = receiver.strip()
    m = _LAST_CALL.search(text)
    if m and m.group(1) in NON_TENSOR_ACCESSORS:
        return False
    if _IDENT.match(text):
        if declared is None and signature:
            declared = parameter_type(signature, text)
        if declared is not None and declared.startswith("auto = "):
            return may_be_tensor(declared.removeprefix("auto = "), None)  # the initializer says what it is
        if declared is not None:
            return _TENSOR_TYPE.search(declared) is not None and "optional" not in declared
    return True


def metadata_query(method: str) -> bool:
    """A Tensor method that answers from the tensor's metadata and runs no kernel, though native_functions.yaml
    declares it (`input.sym_numel()`, `x.is_nonzero()`... `is_`, `sym_` and the accessors above)."""
    return method in NON_TENSOR_ACCESSORS or method.startswith(("is_", "_is_", "sym_", "_has_", "has_"))


def tensor_parameter(signature: str, name: str) -> bool:
    """Whether `name` is a parameter declared a Tensor (not optional, not a list) in a C++ parameter list."""
    declared = parameter_type(signature, name)
    return declared is not None and _TENSOR_TYPE.search(declared) is not None and "optional" not in declared \
        and "List" not in declared and "[" not in declared


@functools.lru_cache(maxsize=4096)  # a walk asks about the same few signatures many times
def parameter_type(signature: str, name: str) -> str | None:
    """The declared type of parameter `name` in a C++ parameter list as written, else None."""
    for part in split_parameters(signature):
        decl = part.split("=", 1)[0].strip()
        m = re.search(r"(\w+)\s*(?:\[\s*\w*\s*\])?$", decl)
        if m and m.group(1) == name and decl[:m.start()].strip():
            return decl[:m.start()].strip()
    return None


def split_parameters(signature: str) -> list[str]:
    """The parameters of a parameter list, `(a, b)` or `a, b`: split on top-level commas (templates, defaults and
    nested parentheses may hold commas); empty parts dropped."""
    return list(_parameters(signature))  # (a new list: a caller may change it)


@functools.lru_cache(maxsize=16384)
def _parameters(signature: str) -> tuple[str, ...]:  # a trace splits the same signatures again and again
    inner = signature.strip()
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    return tuple(p for p in split_top_level(inner, brackets="<([{") if p.strip())


def takes_arguments(signature: str | None, count: int) -> bool | None:
    """Whether a C++ definition of this parameter list can be called with `count` arguments (those without a
    default are needed, a `...` pack takes any more); None where the signature is not known. C++ picks among
    same-named overloads by it first: at::native::sum(self, std::vector<int64_t>{}, false, dtype) in 1.8's
    sum(self, dtype) calls the four-parameter overload, not itself."""
    if signature is None:
        return None
    params = [p.strip() for p in split_parameters(signature) if p.strip() not in ("void", "")]
    if any("..." in p for p in params):
        return count >= sum(1 for p in params if "=" not in p and "..." not in p)
    return sum(1 for p in params if "=" not in p) <= count <= len(params)
