"""An op a profile recorded with shapes (record_shapes=True), written as a call opindex can trace: `aten::sort` with
Input Dims [[1024, 1024], [], []], Input type ["float", "Scalar", "Scalar"] and Concrete Inputs ["", "1", "False"] is
`torch.ops.aten.sort(torch.empty(1024, 1024), 1, False)`. The tensors are made with the recorded dtype, dense and
contiguous, or `torch.empty_strided(size, stride)` where the recorded strides are other than the row-major ones (a
transposed or sliced operand; a tensor with a size-1 dimension, whose stride does not matter, is not compared); a
scalar is its concrete value; an input the profiler records without a value or type (an undefined optional) is
None. Anything else (a tensor list, an input it wrote
no value for) makes no call: the row is then attributed as before, without a traced path."""
from __future__ import annotations

import json
import re

from ..pytorch.call_expr import contiguous_strides

# the profiler's C++ type names -> torch dtypes
DTYPES = {"float": "float32", "double": "float64", "c10::Half": "float16", "c10::BFloat16": "bfloat16",
          "long int": "int64", "int": "int32", "short int": "int16", "signed char": "int8", "unsigned char": "uint8",
          "bool": "bool", "c10::complex<float>": "complex64", "c10::complex<double>": "complex128"}
_NUMBER = re.compile(r"^-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$")
_LIST = re.compile(r"^\[[-\d.,\s]*\]$")


def call_of(op: str, inputs: str, schemas: list[str] = ()) -> str | None:
    """The call string of `op` (`aten::sort`) with its recorded inputs (chrome._inputs' JSON); None where an input
    cannot be written. The profiler records every argument in schema order, keyword-only ones too: with the op's
    `schemas` (native_functions.yaml), the overload whose arguments the inputs fit (as many, a tensor where it
    takes one) names its keyword-only arguments (`sort.stable(Tensor self, *, bool? stable, int dim=-1, ...)`)."""
    if not op.startswith("aten::") or not re.fullmatch(r"aten::\w+", op):
        return None
    recorded = json.loads(inputs)
    args = []
    strides = recorded.get("strides") or [None] * len(recorded["dims"])
    for dims, kind, value, stride in zip(recorded["dims"], recorded["types"], recorded["concrete"], strides):
        arg = _argument(dims, kind, value, stride)
        if arg is None:
            return None
        args.append(arg)
    params = _fitting(schemas, recorded["types"])
    if params is not None:
        args = [f"{name}={a}" if kwonly else a for a, (name, kwonly) in zip(args, params)]
    while args and args[-1].rpartition("=")[2] == "None":  # trailing undefined optionals: the defaults say so
        args.pop()
    return f"torch.ops.aten.{op.removeprefix('aten::')}({', '.join(args)})"


def _tuple(values: list) -> str:
    return f"({values[0]},)" if len(values) == 1 else f"({', '.join(map(str, values))})"


def _fitting(schemas, types: list[str]) -> list[tuple[str, bool]] | None:
    """[(name, keyword-only)] of the first schema with one argument per recorded input, a Tensor argument where a
    tensor was recorded and none where a scalar was; None when none fits."""
    from ..trace.call import schema_parameters  # noqa: PLC0415
    for schema in schemas:
        params = schema_parameters(schema)
        if len(params) != len(types):
            continue
        if all((kind in DTYPES) == ("Tensor" in ptype and "[]" not in ptype) or kind == ""
               for kind, (_, _, _, ptype) in zip(types, params)):
            return [(name, kwonly) for name, _, kwonly, _ in params]
    return None


def _argument(dims, kind: str, value: str, stride=None) -> str | None:
    if kind in DTYPES:
        if not isinstance(dims, list) or not all(isinstance(d, int) for d in dims):
            return None
        dtype = DTYPES[kind]
        typed = "" if dtype == "float32" else f", dtype=torch.{dtype}"
        if isinstance(stride, list) and len(stride) == len(dims) and all(isinstance(x, int) for x in stride) \
                and tuple(stride) != contiguous_strides(tuple(dims)) and all(d > 1 for d in dims):
            # other strides than the row-major ones (a transposed or sliced operand): the same layout
            return f"torch.empty_strided({_tuple(dims)}, {_tuple(stride)}{typed})"
        shape = ", ".join(map(str, dims)) if dims else "[]"
        return f"torch.empty({shape}{typed})"
    if kind == "" and value == "":
        return "None"  # an undefined optional (a Tensor? or int? left out)
    if kind in ("Scalar", "ScalarList") and isinstance(value, str):
        text = value.strip()
        if text in ("True", "False") or _NUMBER.match(text) or _LIST.match(text):
            return text
    return None
