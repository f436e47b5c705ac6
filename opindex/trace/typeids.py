"""`typeid(f) == typeid(TensorAssign)`: a test of the type of a parameter, read with the type the call passes.

A template that takes a functor (`template <typename func_t> void operator()(..., const func_t& f)`) may test which
one it was handed (ScatterGatherKernel.cu's `_cuda_scatter_gather_internal_kernel`: `typeid(f) == typeid(TensorAssign)`
chooses plain scatter's `_launch_scatter_kernel_dim2_opt_assign`). The type is known where a parameter is declared
with a concrete type, in the body's own signature or in its caller's, whose parameter of that type the call passes on
(cuda_scatter_gather_base_kernel's `const ReduceAdd& f`, passed as `f`): scatter_add's path is not the assign one.
Types compare by their last name, template arguments dropped (`at::native::ReduceAdd` is `ReduceAdd`).

The same classes choose among a call's overloads, as C++ does: where one overload declares the parameter with the
class of what the call passes (a caller's parameter, or an object its file declares: `static TensorAssign
tensor_assign;`), the overloads declaring another class there, or a template parameter, are not taken
(scatter_cuda_kernel's `cuda_scatter_gather_base_kernel<>()(..., tensor_assign)` runs the `const TensorAssign& f`
operator(), ScatterGatherKernel.cu:418, not the ReduceAdd one of :360 nor the `const func_t& f` one of :477).
"""
from __future__ import annotations

import re

from ..pytorch.receivers import split_parameters

_TYPEID = re.compile(r"typeid\s*\(\s*([A-Za-z_]\w*)\s*\)\s*(==|!=)\s*typeid\s*\(\s*([\w:<>, ]+?)\s*\)")
_PARAMETER = re.compile(r"^(?P<type>.+?)[\s&*]+(?P<name>[A-Za-z_]\w*)\s*(?:=.*)?$", re.S)
_QUALIFIERS = re.compile(r"\b(?:const|volatile|struct|class|typename)\b|[&*]")


def declared_types(signature: str | None, template_parameters: list[str] = ()) -> dict[str, str]:
    """Parameter name -> the class its type names (last name, no template arguments), for parameters declared
    with a concrete type: not one of the definition's template parameters (`const func_t& f` tells nothing)."""
    out = {}
    for param in split_parameters(signature or ""):
        m = _PARAMETER.match(param.strip())
        if m is None:
            continue
        kind = _last_name(_QUALIFIERS.sub(" ", m.group("type")))
        if kind and kind not in template_parameters:
            out[m.group("name")] = kind
    return out


def passed_types(params: list[str], args: list[str], caller_types: dict[str, str]) -> dict[str, str]:
    """The callee's parameter name -> the class of what the call passes for it: an argument that is a parameter of
    the caller declared with a concrete type (`f`, `const ReduceAdd& f`)."""
    out = {}
    for param, arg in zip(params, args):
        m = _PARAMETER.match(param.strip())
        if m is not None and arg.strip() in caller_types:
            out[m.group("name")] = caller_types[arg.strip()]
    return out


def written(condition: str, types: dict[str, str]) -> str:
    """`condition` with each typeid test of a name whose type is known written as `true` or `false`."""
    if "typeid" not in condition or not types:
        return condition

    def repl(m):
        known = types.get(m.group(1))
        if known is None:
            return m.group(0)
        same = known == _last_name(m.group(3))
        return "true" if same == (m.group(2) == "==") else "false"
    return _TYPEID.sub(repl, condition)


def _last_name(text: str) -> str:
    """`at::native::ReduceAdd` -> ReduceAdd; `Foo<int>` -> Foo; '' for a built-in type or none."""
    text = text.strip()
    while "<" in text and text != (text := re.sub(r"<[^<>]*>", "", text)):
        pass
    name = text.replace(" ", "").rpartition("::")[2]
    return name if re.fullmatch(r"[A-Za-z_]\w*", name) and name not in _BUILTIN else ""


_BUILTIN = frozenset({"int", "bool", "float", "double", "char", "void", "auto", "long", "short", "unsigned",
                      "int64_t", "int32_t", "size_t", "uint8_t", "int8_t", "int16_t", "uint32_t", "uint64_t"})


def parameter_class(param: str, template_parameters: list[str] = ()) -> str | None:
    """The class one parameter is declared with (`const ReduceAdd& f` -> ReduceAdd); None for a template parameter,
    a built-in type or a parameter this reading cannot split."""
    m = _PARAMETER.match(param.strip())
    if m is None:
        return None
    kind = _last_name(_QUALIFIERS.sub(" ", m.group("type")))
    return kind if kind and kind not in template_parameters else None


def object_class(lines: list[str] | None, name: str) -> str | None:
    """The class of an object a file declares at the start of a line (`static TensorAssign tensor_assign;`), by
    its last name; None when the file declares none, or several, of that name."""
    if not lines or not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    found = {_last_name(m.group(1)) for line in lines if name in line
             for m in [_DECLARED.match(line)] if m is not None and m.group(2) == name}
    found.discard("")
    return found.pop() if len(found) == 1 else None


_DECLARED = re.compile(r"^\s*(?:static\s+)?(?:const\s+)?([A-Za-z_][\w:]*(?:<[^;=]*>)?)\s+([A-Za-z_]\w*)\s*(?:;|=|\{)")
