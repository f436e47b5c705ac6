"""native_functions.yaml -> model.NativeFunction records (each with its dispatch rows and ufunc loops, every one
with its Location); the store writes them as native_functions, native_dispatch and native_ufunc_loops rows.

Rules follow torchgen's model (torchgen/model.py, NativeFunction.from_yaml), which a test uses as the oracle:
- "CPU, CUDA: add_out" is one row per key;
- an entry with neither dispatch: nor structured_delegate: gets an implicit CompositeImplicitAutograd row whose
  kernel is the C++ API name (base name, plus _out for out= overloads);
- an entry with ufunc_inner_loop: gets implicit CPU and CUDA rows for the kernels ufunc codegen writes
  (ufunc_add_CPU, ufunc_add_CUDA);
- variants defaults to "function".
"""
from __future__ import annotations

import re

from ..model import DispatchRow, Location, NativeFunction, UfuncLoop
from ..pytorch.syntax import split_top_level
from . import yaml_lines
from .yaml_lines import KEY_LINES, LINE

UFUNC_DISPATCH_KEYS = ("CPU", "CUDA")  # the keys torchgen's ufunc codegen generates kernels for
_UFUNC = re.compile(r"^\s*(\w+)\s*(?:\((.*)\))?\s*$")


def split_func_name(schema: str) -> tuple[str, str]:
    """'add.Tensor(Tensor self, ...) -> Tensor' -> ('add', 'Tensor')."""
    head = schema.split("(", 1)[0].strip()
    name, _, overload = head.partition(".")
    return name, overload


def arguments_text(schema: str) -> str:
    start = schema.find("(")
    depth = 0
    for i in range(start, len(schema)):
        if schema[i] == "(":
            depth += 1
        elif schema[i] == ")":
            depth -= 1
            if depth == 0:
                return schema[start + 1:i]
    return schema[start + 1:]


def is_out_fn(schema: str) -> bool:
    """An out= overload: a kwarg-only argument annotated as written-to, e.g. `*, Tensor(a!) out`."""
    kwarg_only = False
    for arg in (part.strip() for part in split_top_level(arguments_text(schema))):
        if arg == "*":
            kwarg_only = True
        elif kwarg_only and "!" in arg.split(" ")[0]:
            return True
    return False


def _as_list_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return ", ".join(p.strip() for p in str(value).split(","))


def parse_entry(raw: dict, path: str) -> NativeFunction:
    schema = raw["func"]
    if not isinstance(schema, str) or "(" not in schema:
        raise ValueError("func: is not an operator schema")
    name, overload = split_func_name(schema)
    out = is_out_fn(schema)
    ufunc = raw.get("ufunc_inner_loop")
    where = Location(path, raw[LINE])
    fields = dict(  # read before the dispatch rows: a broken entry's warning names its first problem
        full_name=f"{name}.{overload}" if overload else name, schema=schema,
        variants=_as_list_text(raw.get("variants")) or "function",
        structured=bool(raw.get("structured", False)),
        structured_delegate=raw.get("structured_delegate"),
        structured_inherits=raw.get("structured_inherits"),
        python_module=raw.get("python_module"),
        tags=_as_list_text(raw.get("tags")),
        autogen=_as_list_text(raw.get("autogen")),
        category_override=raw.get("category_override"),
        ufunc_inner_loop="; ".join(f"{k}: {v}" for k, v in yaml_lines.strip(ufunc).items()) if ufunc else None,
        is_out=out, location=where,
    )
    rows = []
    dispatch = raw.get("dispatch")
    if dispatch:
        if not isinstance(dispatch, dict):
            raise ValueError("dispatch: is not a mapping")
        for keys, kernel in yaml_lines.strip(dispatch).items():
            at = Location(path, dispatch[KEY_LINES].get(keys, dispatch[LINE]))
            for key in str(keys).split(","):
                rows.append(DispatchRow(key.strip(), str(kernel), False, at))
    elif fields["structured_delegate"] is None:
        kernel = name + ("_out" if out else "")
        rows.append(DispatchRow("CompositeImplicitAutograd", kernel, True, where))
    loops = []
    if ufunc:
        rows += [DispatchRow(key, f"ufunc_{name}_{key}", True, where) for key in UFUNC_DISPATCH_KEYS]
        for key, text in yaml_lines.strip(ufunc).items():
            m = _UFUNC.match(str(text))
            loop, dtypes = (m.group(1), m.group(2)) if m else (str(text), None)
            loops.append(UfuncLoop(key, loop, dtypes, Location(path, ufunc[KEY_LINES].get(key, ufunc[LINE]))))
    return NativeFunction(**fields, dispatch=tuple(rows), ufunc_loops=tuple(loops))


UFUNC_CODEGEN = "ufunc_inner_loop"  # dispatch_registrations.from_macro of the registrations ufunc codegen writes


def ufunc_registrations(entries: list[NativeFunction]) -> list[tuple[str, str, str, int]]:
    """(stub, kernel, device, line) of each REGISTER_DISPATCH torchgen's ufunc codegen writes: for an op with a
    ufunc_inner_loop entry, `<op>_stub` runs `<op>_kernel` on CPU (UfuncCPUKernel_<op>.cpp) and CUDA
    (UfuncCUDA_<op>.cu), torchgen/dest/ufunc.py's StubSignature; once per op, at its first such entry's
    ufunc_inner_loop: line."""
    out, seen = [], set()
    for e in entries:
        if not e.ufunc_loops:
            continue
        op = e.full_name.split(".")[0]
        if op in seen:
            continue
        seen.add(op)
        line = min(u.location.line for u in e.ufunc_loops) - 1  # the `ufunc_inner_loop:` key, above its first row
        out += [(f"{op}_stub", f"{op}_kernel", device, line) for device in UFUNC_DISPATCH_KEYS]
    return out


def parse(text: bytes, path: str) -> tuple[list[NativeFunction], list[str]]:
    """Entries plus warnings ("file:line: message") for entries that could not be read; a file that is not YAML
    at all raises SourceError naming the line."""
    return yaml_lines.parse_entries(text, path, "func", parse_entry)
