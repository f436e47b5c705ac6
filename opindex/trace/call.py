"""A call traced with its arguments: `F.interpolate(torch.randn(8, 16, 32, 32), scale_factor=2, mode='bilinear')`.

The call (pytorch/call_expr.py) is bound to what its callee names: a Python def's parameters (positional order and
keywords, its literal defaults for the rest), a module's forward (`nn.LSTM(64, 128)(x)`), or, for a binding with no
Python def (`torch.exp`), the native schema's arguments. The values then flow down:

- into the def's `if` tests (conditions rows, read by trace/conditions.py with these values: `input.dim() == 4 and
  mode == "bilinear"` reads the tensor's rank);
- through the def's body (trace/pyflow.py): what each bridge call passes (`_Reduction.get_enum(reduction)` read
  from its source: 'none' -> 0) is bound to the native schema's arguments by position and keyword;
- into C++: a value given for a schema argument wins over every schema default of that name on the op stack (the
  name a C++ parameter carries), the first tensor is also `self`/`input`, and a body's locals made from a tensor's
  sizes (`const int64_t n_dims = input.dim();`) are read from the source.
The input's dtype is the first floating-point or complex tensor's (an index or mask tensor does not set it), else
the first tensor's. What the string does not say stays unknown, and a test of it undecided.
"""
from __future__ import annotations

import ast
import functools
import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from ..model import OpindexError
from ..pytorch.build_config import DTYPES
from ..pytorch.arg_parser import number_for_tensor, numbers_as_tensors, tensor_for_number, zero_dim_tensors
from ..pytorch.call_expr import Call, CallError, Tensor, Unknown, parse_call
from ..pytorch.receivers import split_parameters
from ..pytorch.syntax import schema_arguments
from . import facts as q
from . import pyflow
from .conditions import FORMAT_LOCAL, INPUT_MEMORY_FORMAT, Constant
from .python import bridged_entries, find_method, follow_python, module_of

FIRST_TENSOR_NAMES = ("self", "input", "self_", "input_")  # what C++ calls an op's first tensor argument
_FLOATING = ("float", "bfloat", "complex")
# a C++ local made from a tensor's sizes: `const int64_t n_dims = input.dim();`, `auto dim_size = self.size(dim);`
_SIZE_LOCAL = re.compile(r"\b(?:const\s+)?(?:auto|u?int64_t|int|u?int32_t|size_t|ptrdiff_t|bool)\s+(\w+)\s*=\s*(\w+)\s*\.\s*"
                         r"(dim|ndimension|numel|size)\s*\(\s*(-?\w*)\s*\)\s*;")
# a C++ local that is a parameter cast: `auto mode = static_cast<at::padding_mode>(mode_int);`
_CAST_LOCAL = re.compile(r"\b(?:const\s+)?(?:auto|[\w:]+)\s+(\w+)\s*=\s*static_cast<[^<>;]*>\(\s*(\w+)\s*\)\s*;")
# `auto input = input_.contiguous();`: the same tensor's sizes under a new name; so is a tensor made like one, with
# in-place methods after it (multinomial's `Tensor q = at::empty_like(self).exponential_(1, gen);`, Distributions.cpp)
_ALIAS_LOCAL = re.compile(r"\b(?:const\s+)?(?:auto|Tensor)\s*&?\s+(\w+)\s*=\s*(?:(\w+)\s*\.\s*contiguous\(\s*\)|"
                          r"(?:at::)?(?:empty|zeros|ones|rand|randn)_like\(\s*(\w+)\s*\)"
                          r"(?:\s*\.\s*\w+_\((?:[^;()]|\([^;()]*\))*\))*)"
                          r"\s*;")
# `int64_t dim = maybe_wrap_dim(dim_, input.dim());`: a dim argument wrapped by the tensor's rank
_WRAP_LOCAL = re.compile(r"\b(?:const\s+)?(?:auto|int64_t|int)\s+(\w+)\s*=\s*(?:at::|c10::)?maybe_wrap_dim\(\s*(\w+)\s*,"
                         r"\s*(\w+)\s*\.\s*(?:dim|ndimension)\(\s*\)\s*(?:,[^;()]*)?\)\s*;")
# `for (int64_t i = dim + 1; i < input.dim(); ++i) inner_size *= input.size(i);`: a product of a range of sizes
_PRODUCT_LOCAL = re.compile(r"\bfor\s*\(\s*(?:int64_t|int|auto|size_t)\s+(\w+)\s*=\s*(\w+(?:\s*\+\s*1)?)\s*;\s*\1\s*<\s*"
                            r"(\w+(?:\s*\.\s*dim\(\s*\))?)\s*;\s*(?:\+\+\s*\1|\1\s*\+\+)\s*\)\s*\{?\s*(\w+)\s*\*=\s*(\w+)"
                            r"\s*\.\s*size\(\s*\1\s*\)\s*;")
_CONSTANT_DEF = r"\b(?:static\s+)?(?:constexpr|const)\s+(?:int|int64_t|auto|uint8_t|int32_t)\s+{}\s*=\s*(-?\d+)\s*;"


@dataclass
class Argument:
    name: str  # the parameter it binds to (a Python def's, a forward's, or the schema's)
    value: object  # a literal, a Tensor, or Unknown
    source: str  # given | default


@dataclass
class CallValues:
    """A call bound to its callee, and the values each layer reads."""
    call: Call
    dtype: str
    arguments: list[Argument] = field(default_factory=list)
    python: dict[tuple, dict] = field(default_factory=dict)  # (file, line) of a def -> its parameters' values
    schemas: dict[str, dict] = field(default_factory=dict)  # a native schema -> the values its arguments get
    root: str | None = None  # the checkout, to read bodies' source
    notes: list[str] = field(default_factory=list)  # what could not be followed, for the header
    # a schema the call's values cannot fit (a Python number for a Tensor parameter) -> why, and where the
    # checkout says so (pytorch/arg_parser.py): the walk rules its overload out
    unfit: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    # the same for a bridge of the def's body the call's values reach: (file, line, schema) -> why, where
    bridge_unfit: dict[tuple[str, int, str], tuple[str, str, int]] = field(default_factory=dict)

    # -- what conditions read ---------------------------------------------------------------------------------
    def python_values(self, fn: dict) -> dict:
        """The values a Python def's tests read: the call's, for the def it binds to."""
        return self.python.get((fn.get("file"), fn.get("line")), {})

    def cpp_values(self, schemas: tuple[str, ...], d: dict) -> dict:
        """What a C++ body's tests read beyond the schema defaults: the values the call gave each op on the stack
        (outer first, then the inner ops': a value passed down keeps its name), kept for the names the body's
        own parameters carry; the first tensor as self/input; locals made from a tensor's sizes. Kept per body and
        op stack (a walk asks again for each call it reads there)."""
        key = (schemas, d.get("file"), d.get("line"), d.get("signature"))
        kept = self.__dict__.setdefault("_kept", {})
        if key not in kept:
            kept[key] = self._cpp_values(schemas, d)
        return dict(kept[key])

    def _cpp_values(self, schemas: tuple[str, ...], d: dict) -> dict:
        params = set(re.findall(r"\w+", d.get("signature") or ""))
        given: dict = {}
        for schema in schemas:  # a value the body's reading could not settle leaves the schema's default
            given.update({k: v for k, v in self.schemas.get(schema, {}).items() if not isinstance(v, Unknown)})
        if schemas:  # a kernel whose parameters are the innermost schema's, renamed (`int mode` as `mode_int`)
            given.update(_renamed(schemas[-1], d.get("signature"), given))
        # (`Tensor? weight` arrives as `weight_opt`, a local `weight` borrowed from it; a stub kernel's
        # `const TensorBase& self_base` as `self_base`, then `TOTENSOR(self_base, self)`, Sort.cpp:41)
        out = {k: v for k, v in given.items() if k in params or f"{k}_opt" in params or f"{k}_base" in params}
        first = self.first_tensor()
        if first is not None:
            for name in FIRST_TENSOR_NAMES:
                if name in params and not isinstance(out.get(name), Tensor):
                    out[name] = first
        out.update(self.size_locals(d, out))
        return out

    def strided_arguments(self, schema: str) -> list[str]:
        """The Tensor parameters of `schema` whose value, given by the call under that name to any op it bound, is
        a tensor that is not contiguous (a view: `x.t()`, `torch.empty_strided(...)` with other strides)."""
        given = {k: v for values in self.schemas.values() for k, v in values.items()
                 if isinstance(v, Tensor) and not v.contiguous}
        if not given:
            return []
        return [name for name, _, _, kind in schema_parameters(schema) if name in given and "Tensor" in kind]

    def first_tensor(self) -> Tensor | None:
        tensors = [t for _, t in self.call.tensors()]
        return tensors[0] if tensors else None

    def size_locals(self, d: dict, values: dict) -> dict:
        """Locals of a body made from a tensor argument's sizes (`n_dims = input.dim()`), read from the source: a
        tensor's alias (`auto input = input_.contiguous();`), a dim wrapped by its rank (`int64_t dim =
        maybe_wrap_dim(dim_, input.dim());`: -1 of a 2-d tensor is 1), a product of a range of its sizes, then the
        sizes (`int64_t dim_size = input.size(dim);`). `values`: what the body's parameters hold."""
        formats, casts, sizes, aliases, wraps, products = _body_locals(self.root, d.get("file"), d.get("line"),
                                                                      d.get("end_line"))
        out: dict = {}
        for name, tensor in aliases:
            if isinstance(values.get(tensor), Tensor) and name not in values:
                out[name] = values[tensor]
        for name, dim, tensor in wraps:
            t, given = {**values, **out}.get(tensor), values.get(dim)
            if isinstance(given, float) and given.is_integer():
                given = int(given)  # (a literal read from C++ text: `-1` passed on is -1.0)
            if isinstance(t, Tensor) and t.dim() and isinstance(given, int) and not isinstance(given, bool) \
                    and -t.dim() <= given < t.dim():
                out[name] = given % t.dim()
        values = {**values, **out}
        for _, start, stop, name, tensor in products:
            found = _size_product(values.get(tensor), start, stop, values)
            if found is not None and name not in values:
                out[name] = found
        values = {**values, **out}
        for name, tensor in formats:
            if isinstance(values.get(tensor), Tensor):  # a tensor made the default way is contiguous
                out[name] = Constant(INPUT_MEMORY_FORMAT)
        for name, param in casts:
            if param in values and name not in values:
                out[name] = values[param]  # `auto mode = static_cast<at::padding_mode>(mode_int);`
        for name, tensor, what, arg in sizes:
            t = values.get(tensor)
            if not isinstance(t, Tensor) or name in out:
                continue
            if what == "size":
                d_value = int(arg) if re.fullmatch(r"-?\d+", arg) else values.get(arg)
                if isinstance(d_value, float) and d_value.is_integer():
                    d_value = int(d_value)  # (a literal read from C++ text: `1` passed on is 1.0)
                found = t.size(d_value) if isinstance(d_value, int) and not isinstance(d_value, bool) else None
            else:
                found = t.numel() if what == "numel" else t.dim()
            if found is not None:
                out[name] = found
        return out

    def constant(self, file: str | None, name: str) -> int | None:
        """The integer a C++ constant the tests compare with stands for: `constexpr int MODE_MAX = 2;` in the
        test's own file, else, for a qualified enum member (`Reduction::Mean`, `at::Reduction::Mean`), its value in
        the enum of that name ATen's headers define (aten/src/ATen/core/Reduction.h: None, Mean, Sum: 1); None when
        neither says (compared by name instead)."""
        found = _constant_in(self.root, file, name.rpartition("::")[2])
        if found is None and "::" in name:
            owner, _, member = name.rpartition("::")
            found = enum_members(self.root).get(owner.rpartition("::")[2], {}).get(member)
        return found

    # -- output -----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """{callee, args: [{name, value, source}], tensors: [{name, dtype, sizes}]} (docs/json.md)."""
        tensors = [{"name": a.name, "dtype": a.value.dtype, "sizes": list(a.value.sizes) if a.value.sizes is not None
                    else None} for a in self.arguments if isinstance(a.value, Tensor)]
        return {"callee": self.call.callee, "text": self.call.text,
                "args": [{"name": a.name, "value": _json_value(a.value), "source": a.source} for a in self.arguments],
                "tensors": tensors, "notes": self.notes}

    def summary(self) -> str:
        """One short line: the values the trace read (given ones first)."""
        given = [a for a in self.arguments if a.source == "given"]
        defaults = [a for a in self.arguments if a.source == "default" and not isinstance(a.value, Unknown)]
        text = ", ".join(f"{a.name}={_short(a.value)}" for a in given)
        if defaults:
            text += "; defaults " + ", ".join(f"{a.name}={_short(a.value)}" for a in defaults)
        return text


def _renamed(schema: str, signature: str | None, given: dict) -> dict:
    """The values of a schema's arguments under the names the C++ kernel's parameters give them, where its
    parameters are the schema's one for one in order (a kernel may rename one: `int mode` as `int64_t mode_int`)."""
    return {c: given[a] for a, c in _renames(schema, signature) if a in given}


@functools.lru_cache(maxsize=4096)
def _renames(schema: str, signature: str | None) -> tuple[tuple[str, str], ...]:
    """(schema name, C++ name) of each argument _renamed reads under another name (read once per schema and
    signature)."""
    params = [p.strip() for p in split_parameters(signature or "()")]
    names = [m.group(1) for m in (re.search(r"(\w+)\s*(?:=.*)?$", p) for p in params) if m]
    schema_params = schema_parameters(schema)
    args = [a[0] for a in schema_params]
    if len(names) != len(args) or names == args:
        return ()
    # one for one also in kind: a Tensor argument is a Tensor parameter (a helper of as many parameters, such as
    # `operator()(TensorIterator& iter, int64_t index_size, int64_t index_stride, ...)`, is no renamed kernel)
    if any(bool(_TENSOR_TYPE.search(a[3] or "")) != bool(_TENSOR_TYPE.search(p)) for a, p in zip(schema_params, params)):
        return ()
    return tuple((a, c) for a, c in zip(args, names) if a != c)


_TENSOR_TYPE = re.compile(r"\b(?:Tensor|TensorBase)\b")


def _short(value) -> str:
    if isinstance(value, Tensor):
        sizes = "?" if value.sizes is None else "x".join(map(str, value.sizes)) or "scalar"
        return f"{value.dtype}[{sizes}]" + ("" if value.contiguous else " strided")
    if isinstance(value, Unknown):
        return f"{value.text} (unknown)"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_short(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _json_value(value):
    if isinstance(value, Tensor):
        return value.text
    if isinstance(value, Unknown):
        return {"unknown": value.text}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


# -- binding ------------------------------------------------------------------------------------------------------
def read_call(text: str) -> Call:
    try:
        return parse_call(text)
    except CallError as e:
        raise OpindexError(str(e)) from None


def call_dtype(call: Call, stated: str | None) -> str:
    """The input's dtype: the first floating-point or complex tensor's, else the first tensor's, else a factory's
    `dtype=` (torch.zeros(4, dtype=torch.float16)), else `stated` (float32 unless given). A stated dtype that the
    call's tensors contradict is an error."""
    tensors = [t for _, t in call.tensors()]
    floating = [t for t in tensors if t.dtype.startswith(_FLOATING)]
    found = (floating or tensors)[0].dtype if tensors else None
    if found is None and isinstance(call.kwargs.get("dtype"), str) and call.callee.startswith("torch."):
        found = call.kwargs["dtype"]
    if found is not None and stated is not None and stated != found:
        raise OpindexError(f"--dtype {stated} contradicts the call: its input is {found} "
                           f"({next(t.text for t in (floating or tensors))}); leave --dtype out or change the call")
    return found or stated or "float32"


# a factory's default dtype in its schema (`randperm(SymInt n, *, ScalarType? dtype=long, ...)`), as a dtype name
_DTYPE_DEFAULT = re.compile(r"\bScalarType\?\s+dtype=(\w+)")
_SCALAR_TYPE_NAMES = {"long": "int64", "int": "int32", "float": "float32", "double": "float64", "half": "float16",
                      "bool": "bool"}


def factory_dtype(targets: list) -> str | None:
    """The dtype a factory op makes when the call states none: its schemas' `ScalarType? dtype=long` default
    (torch.randperm and torch.randint make int64 tensors), where every schema that has one agrees; None for other
    ops (a None default is the global default dtype, float32)."""
    found = {m.group(1) for t in targets if isinstance(t.obj, dict)
             for m in [_DTYPE_DEFAULT.search(t.obj.get("schema") or "")] if m}
    return _SCALAR_TYPE_NAMES.get(found.pop()) if len(found) == 1 else None


def bind(con, call: Call, targets: list, root: str | None, dtype: str) -> CallValues:
    """The call bound to the looked-up targets (trace.targets.Target), and the values each layer reads."""
    values = CallValues(call, dtype, root=root)
    kinds = {t.kind for t in targets}
    if kinds & {"python_function", "python_class"}:
        target = next(t for t in targets if t.kind in ("python_function", "python_class"))
        fn = target.obj
        if target.kind == "python_class":
            fn = find_method(con, target.obj, "forward")
            if fn is None:
                values.notes.append(f"{call.callee} has no forward(): its arguments are not bound")
                return values
        _bind_def(con, values, fn, skip_self=target.kind == "python_class")
    elif kinds <= {"python_binding", "native", "by_name"}:
        entries = [t.obj for t in targets if isinstance(t.obj, dict) and t.obj.get("schema")]
        rule, zero_dim = numbers_as_tensors(root), zero_dim_tensors(root)
        for e in entries:
            mapped = bind_schema(e["schema"], call.args, call.kwargs)
            if mapped is None:  # more values than it takes, or a keyword it has no parameter of
                values.unfit[e["schema"]] = (_no_fit(e["schema"], call.args, call.kwargs), e["file"], e["line"])
                continue
            missing = missing_required(e["schema"], call.args, call.kwargs)
            why = (f"a value for {', '.join(missing)} (the call gives none, and it has no default)", e["file"],
                   e["line"]) if missing else _number_for_tensor(e["schema"], mapped[0], rule, zero_dim)
            if why is not None:
                values.unfit[e["schema"]] = why
                continue
            values.schemas[e["schema"]] = mapped[0]
            if not values.arguments:
                values.arguments = mapped[1]
        if entries and not values.schemas:
            values.notes.append(f"the arguments fit no schema of {call.callee}: they are not bound")
    else:
        values.notes.append(f"{call.callee} is not a Python def, module or op binding: its arguments are not bound")
    return values


def _bind_def(con, values: CallValues, fn: dict, skip_self: bool) -> None:
    call = values.call
    node = _def_node(values.root, fn)
    if node is None:
        node = _signature_node(fn.get("signature"))
        values.notes.append(f"the source of {fn['qualified_name']} is not readable: its body's values are not "
                            f"followed")
    if node is None:
        values.notes.append(f"the signature of {fn['qualified_name']} is not readable: its arguments are not bound")
        return
    args = node.args
    if skip_self and (args.posonlyargs + args.args):
        args = ast.arguments(posonlyargs=[], args=(args.posonlyargs + args.args)[1:], vararg=args.vararg,
                             kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults, kwarg=args.kwarg,
                             defaults=args.defaults)
    env = pyflow.bind(args, list(call.args), dict(call.kwargs))
    if env is None:
        raise OpindexError(f"the call {call.text!r} does not fit {fn['qualified_name']}"
                           f"{fn.get('signature') or '(...)'}")
    order = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    given = set(call.kwargs) | set(order[:len(call.args)])
    values.arguments = [Argument(k, env[k] if env[k] is not pyflow.UNKNOWN else Unknown("not given, no literal "
                                 "default"), "given" if k in given else "default")
                        for k in order + [k for k in env if k not in order]]
    values.python[(fn["file"], fn["line"])] = {k: v for k, v in env.items() if v is not pyflow.UNKNOWN}
    if isinstance(node, ast.FunctionDef) and node.body and not isinstance(node.body[0], ast.Pass):
        _follow_bridges(con, values, fn, node, env)


MAX_DEF_NEST = 4  # Python defs called from a bound def whose values are read in turn (_follow_defs)


def _follow_bridges(con, values: CallValues, fn: dict, node: ast.FunctionDef, env: dict, depth: int = 0) -> None:
    """Read the def's body with the call's values; what each bridge at a followed line passes, bound to the
    schemas of the ops it reaches; and each Python def it calls, bound to what it passes (_follow_defs)."""
    module = module_of(con, fn)

    def resolve(dotted: str, module=module, depth=0):
        qualifier, _, callee = dotted.rpartition(".")
        found = follow_python(con, module, qualifier, callee) if module else None
        if not found or found[0] != "def":
            return None
        helper = _def_node(values.root, found[1])
        if helper is None:
            return None
        inner = module_of(con, found[1])
        return helper, (lambda d, m=inner: resolve(d, m))

    ran = pyflow.run(node, env, resolve)
    offset = fn["line"] - node.lineno
    for b in q.python_bridges_in(con, fn["qualified_name"], fn["file"]):
        made = [c for c in ran.calls.get(b["line"] - offset, []) if c[0].rpartition(".")[2] == b["op"]]
        if len(made) != 1:
            continue  # not on a followed path, or two calls of it on one line
        _, args, kwargs, receiver = made[0]
        if b["kind"] == "tensor_method":  # `input.softmax(dim)`: the tensor is the schema's self
            args = [receiver if isinstance(receiver, Tensor) else Unknown(b["text"].rpartition(".")[0]), *args]
        for entry in bridged_entries(con, b):
            known_args, known_kwargs = [_known(a) for a in args], {k: _known(v) for k, v in kwargs.items()}
            mapped = bind_schema(entry["schema"], known_args, known_kwargs)
            missing = missing_required(entry["schema"], known_args, known_kwargs) if mapped is not None else []
            if mapped is None or missing:  # `torch.embedding_bag(...)` with 9 values: not the overload of 8
                why = (_no_fit(entry["schema"], known_args, known_kwargs) if mapped is None else
                       f"a value for {', '.join(missing)} (the call gives none, and it has no default)")
                values.bridge_unfit[(b["file"], b["line"], entry["schema"])] = (why, b["file"], b["line"])
            else:
                values.schemas.setdefault(entry["schema"], mapped[0])
    if depth < MAX_DEF_NEST:
        _follow_defs(con, values, fn, module, ran, offset, depth)


def _follow_defs(con, values: CallValues, fn: dict, module, ran, offset: int, depth: int) -> None:
    """Each Python def `fn` calls on a followed line (one call of it there) bound to the values that call passes,
    kept for that def's tests (python_values) and read on in turn: F.upsample_bilinear's `interpolate(input, size,
    scale_factor, mode="bilinear", align_corners=True)` (functional.py:4234) reads interpolate's `mode ==
    "bilinear"` tests as true. A def reached twice keeps the first values."""
    for c in q.python_calls_in(con, fn["qualified_name"], fn["file"]):
        if c["qualifier"] in ("self", "cls") or not module:
            continue
        found = follow_python(con, module, c["qualifier"], c["callee"])
        if not found or found[0] != "def" or (found[1]["file"], found[1]["line"]) in values.python:
            continue
        made = [m for m in ran.calls.get(c["line"] - offset, []) if m[0].rpartition(".")[2] == c["callee"]]
        helper = _def_node(values.root, found[1]) if len(made) == 1 else None
        if helper is None:
            continue
        _, args, kwargs, _ = made[0]
        bound = pyflow.bind(helper.args, list(args), dict(kwargs))
        if bound is None:
            continue
        values.python[(found[1]["file"], found[1]["line"])] = {k: v for k, v in bound.items()
                                                               if v is not pyflow.UNKNOWN}
        if helper.body and not isinstance(helper.body[0], ast.Pass):
            _follow_bridges(con, values, found[1], helper, bound, depth + 1)


def _known(v):
    return Unknown("?") if v is pyflow.UNKNOWN else v


def _wrong_kind(kind: str, value) -> bool:
    """Whether a known value cannot be an argument of schema type `kind`: a str for a number, list, bool or tensor
    type, or a number, list or tensor for a `str` (None fits an optional one; a str also fits a Device, `'cuda'`,
    and a Dimname)."""
    if isinstance(value, Unknown) or value is None:
        return False
    base = re.sub(r"\(\w!?\)|\[\d*\]|\?", "", kind).strip()
    if isinstance(value, str) and base == "ScalarType" and value in DTYPES:
        return False  # `dtype=torch.int32`, read as its name (pytorch/call_expr.py)
    if isinstance(value, str):
        return base in _NO_STR
    return base in ("str", "c10::string_view")


# the schema types Python's argument parser takes no string for
_NO_STR = frozenset({"Tensor", "int", "SymInt", "float", "bool", "Scalar", "ScalarType", "Layout", "MemoryFormat",
                     "Generator", "Storage"})


def _no_fit(schema: str, args: list, kwargs: dict) -> str:
    """Why a call's values do not bind to `schema` (bind_schema gave None)."""
    params = schema_parameters(schema)
    names = {p[0] for p in params} | ({"input"} if any(p[0] == "self" for p in params) else set())
    extra = [k for k in kwargs if k not in names]
    if extra:
        return f"a parameter named {extra[0]} (the call passes {extra[0]}=)"
    positional = [p for p in params if not p[2]]
    kinds = {p[0]: p[3] for p in params}
    given = [*zip((p[0] for p in positional), _packed_sizes(positional, args)),
             *(("self" if k == "input" and "input" not in kinds else k, v) for k, v in kwargs.items())]
    wrong = next(((k, v) for k, v in given if k in kinds and _wrong_kind(kinds[k], v)), None)
    if wrong is not None:
        return f"{wrong[0]} of type {kinds[wrong[0]]} (the call passes {wrong[0]}={wrong[1]!r})"
    return f"more than {sum(1 for p in params if not p[2])} positional arguments (the call gives {len(args)})"


def _packed_sizes(positional: list, args: list) -> list:
    """Python's argument parser lets an int list that is the only positional argument be written as several ints
    (`torch.randn(1024, 1024)` for `randn(SymInt[] size, ...)`): the ints packed into one list."""
    if len(args) > 1 and len(positional) == 1 and re.fullmatch(r"(?:Sym)?[Ii]nt\[\d*\]\??",
                                                                  positional[0][3].replace(" ", "")) \
            and all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return [list(args)]
    return args


def missing_required(schema: str, args: list, kwargs: dict) -> list[str]:
    """The arguments of `schema` without a default that a call of these values leaves out (`torch.median(x)` gives
    median.dim no `int dim`): a call that leaves one out cannot be that overload. Not an out= tensor."""
    params = schema_parameters(schema)
    positional = [p for p in params if not p[2]]
    args = _packed_sizes(positional, args)
    given = {p[0] for p in positional[:len(args)]} | {"self" if k == "input" else k for k in kwargs} | set(kwargs)
    # (an out= tensor is not asked for: the functional overload the call binds delegates to that out= overload,
    # whose values the kernel then reads; an optional type without a default is asked for: Python's argument
    # parser makes a parameter optional by its default alone, python_arg_parser.cpp FunctionParameter, so
    # `torch.sort(x, dim=1)` is not sort.stable, whose `bool? stable` has none)
    return [f"{kind} {name}" for name, default, _, kind in params
            if default is None and name not in given and "!" not in kind]


def _required(schema: str) -> tuple[frozenset, frozenset]:
    """(Tensor, other) names of the arguments of `schema` a call must give: no default, no out= (`int[1]? dim`
    without `=None` too: Python's parser needs a value for it, None or not)."""
    params = [p for p in schema_parameters(schema) if p[1] is None and "!" not in p[3]]
    tensors = frozenset(p[0] for p in params if p[3].startswith("Tensor"))
    return tensors, frozenset(p[0] for p in params) - tensors


def beyond_the_defaults(schemas: list[str]) -> dict[str, list[str]]:
    """Of the overloads a name binds, each one a name trace (the op with its tensors and default arguments) does
    not call, with the arguments it would need: one that needs the same tensors as a sibling and, beyond what that
    sibling needs, a value with no default (`torch.median` binds median(Tensor self) and median.dim(Tensor self,
    int dim, ...): `torch.median(x)` is the first; median.dim needs `int dim`). Overloads that differ in a tensor
    (max.other) or in an argument's type (repeat_interleave's `Tensor repeats` and `SymInt repeats`) stay."""
    need = {s: _required(s) for s in schemas}
    out = {}
    for s, (tensors, others) in need.items():
        fewer = [o for t, o in (need[x] for x in schemas if x != s) if t == tensors and o < others]
        if fewer:
            extra = others - max(fewer, key=len)
            out[s] = sorted(p for p in (f"{k} {n}" for n, _, _, k in schema_parameters(s)) if p.split()[-1] in extra)
    return out


def bind_schema(schema: str, args: list, kwargs: dict) -> tuple[dict, list[Argument]] | None:
    """A native schema's arguments bound to positional and keyword values (`input=` binds `self`); (values known
    by argument name, every argument with its source), or None when the values do not fit it."""
    params = schema_parameters(schema)
    positional = [p for p in params if not p[2]]
    args = _packed_sizes(positional, args)
    if len(args) > len(positional):
        return None
    bound: dict = {}
    for (name, _, _, kind), v in zip(positional, args):
        bound[name] = _fixed_list(kind, v)
    names = {p[0]: p[3] for p in params}
    for k, v in kwargs.items():
        k = "self" if k == "input" and "input" not in names and "self" in names else k
        if k not in names:
            return None
        bound[k] = _fixed_list(names[k], v)
    if any(_wrong_kind(names[k], v) for k, v in bound.items()):
        return None  # (a string where the schema takes no str, or the reverse: F.conv2d's padding=(1, 1) is not
        # conv2d.padding's `str padding`, as Python's argument parser tells the overloads apart)
    arguments = []
    for name, default, _, _ in params:
        if name in bound:
            arguments.append(Argument(name, bound[name], "given"))
        elif default is not None:
            arguments.append(Argument(name, _schema_literal(default), "default"))
    known = {k: v for k, v in bound.items() if not isinstance(v, Unknown)}
    return known, arguments


_FIXED_LIST = re.compile(r"^(?:Sym)?[Ii]nt\[(\d+)\]\??$")


def _fixed_list(kind: str, value):
    """An int given for an `int[N]` argument is N of it, as Python's argument parser makes it (adaptive_avg_pool2d's
    `SymInt[2] output_size` given 1 is [1, 1])."""
    m = _FIXED_LIST.match(kind.replace(" ", ""))
    if m is None or not isinstance(value, int) or isinstance(value, bool):
        return value
    return [value] * int(m.group(1))


def _number_for_tensor(schema: str, known: dict, rule, zero_dim=None) -> tuple[str, str, int] | None:
    """(why, file, line) when a Python number the call gives is bound to a Tensor parameter of `schema` that
    Python's argument parser does not let take one, or a tensor with dimensions to a number parameter (`zero_dim`:
    where the parser says so); None when every value fits."""
    op = schema.split("(", 1)[0].split(".", 1)[0]
    for name, _, _, kind in schema_parameters(schema):
        value = known.get(name)
        if isinstance(value, Tensor) and tensor_for_number(kind, value.dim(), zero_dim):
            return (f"a number for {name} ({value.text} given; Python's argument parser takes a tensor for a number "
                    f"only when it has no dimensions)", zero_dim[0], zero_dim[1])
        if name in known and number_for_tensor(op, kind, known[name], rule):
            bases = list(dict.fromkeys(o.removesuffix("_out").rstrip("_") for o in rule.order if o.strip("_")))
            return (f"a Tensor for {name} ({known[name]!r} given; Python's argument parser takes a number for a "
                    f"Tensor only in {', '.join(bases[:5])}, ...)", rule.file, rule.line)
    return None


def schema_parameters(schema: str) -> list[tuple[str, str | None, bool, str]]:
    """(name, default text or None, keyword-only, type) of each argument of a native schema."""
    inner = schema_arguments(schema)
    out, kwonly = [], False
    for part in split_parameters(inner):
        part = part.strip()
        if part == "*":
            kwonly = True
            continue
        decl, _, default = part.partition("=")
        pieces = decl.split()
        if len(pieces) < 2:
            continue
        out.append((pieces[-1], default.strip() or None, kwonly, " ".join(pieces[:-1])))
    return out


def _schema_literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return Unknown(text)


# -- source -------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _constant_in(root: str | None, file: str | None, name: str) -> int | None:
    """CallValues.constant, read once per file and name (the file's text is kept: _file_text)."""
    text = _file_text(root, file)
    m = re.search(_CONSTANT_DEF.format(re.escape(name)), text or "")
    return int(m.group(1)) if m else None


# `enum Reduction { None, Mean, Sum, END };`, `enum class GridSamplerInterpolation {Bilinear, Nearest, Bicubic};`:
# the members and their values (counted from 0, or as written), of ATen's headers
_ENUM = re.compile(r"\benum\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*)\s*(?::\s*[\w:\s]+)?\{([^{}]*)\}")
ENUM_FOLDERS = ("aten/src/ATen", "c10/core")


@functools.lru_cache(maxsize=8)
def enum_members(root: str | None) -> dict[str, dict[str, int]]:
    """{enum name: {member: value}} of the enums ATen's and c10's headers define, read once per checkout (the
    first traced call that compares a number with an enum member asks: 0.1-0.2 s for 2.4's 872 headers)."""
    out: dict[str, dict[str, int]] = {}
    if not root:
        return out
    for folder in ENUM_FOLDERS:
        for path in sorted(Path(root, folder).rglob("*.h")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "enum" not in text:
                continue
            for m in _ENUM.finditer(re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)):
                members = _enum_values(m.group(2))
                if members is not None:
                    out.setdefault(m.group(1), members)
    return out


def _enum_values(body: str) -> dict[str, int] | None:
    """The members of an enum body and their values; None where a value is not a plain integer."""
    out, next_value = {}, 0
    for part in (p.strip() for p in body.split(",")):
        if not part:
            continue
        name, eq, value = (x.strip() for x in part.partition("="))
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            return None
        if eq:
            if not re.fullmatch(r"-?\d+", value):
                return None
            next_value = int(value)
        out[name] = next_value
        next_value += 1
    return out


_TEXT_CACHE: dict[str, str | None] = {}


def _file_text(root: str | None, file: str | None) -> str | None:
    if not root or not file:
        return None
    path = str(Path(root) / file)
    if path not in _TEXT_CACHE:
        try:
            _TEXT_CACHE[path] = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            _TEXT_CACHE[path] = None
    return _TEXT_CACHE[path]


@functools.lru_cache(maxsize=4096)
def _body_locals(root: str | None, file: str | None, line: int | None, end_line: int | None) -> tuple:
    """The format, cast, size, alias, wrapped-dim and size-product locals of a body (FORMAT_LOCAL ... _PRODUCT_LOCAL),
    read once per body: a trace asks for every body it walks, and a Python name's trace is a call with its
    defaults."""
    text = _body_text(root, {"file": file, "line": line, "end_line": end_line}) or ""
    # (each pattern, led by \b, is tried at every word: only where its literal part is in the body)
    return (FORMAT_LOCAL.findall(text) if "suggest_memory_format" in text else [],
            _CAST_LOCAL.findall(text) if "static_cast" in text else [],
            _SIZE_LOCAL.findall(text) if "dim" in text or "numel" in text or "size" in text else [],
            [(name, a or b) for name, a, b in _ALIAS_LOCAL.findall(text)] if "contiguous" in text or "_like(" in text
            else [],
            _WRAP_LOCAL.findall(text) if "maybe_wrap_dim" in text else [],
            _PRODUCT_LOCAL.findall(text) if "*=" in text else [])


def _size_product(tensor, start: str, stop: str, values: dict) -> int | None:
    """The product of `tensor`'s sizes from dim `start` (`0`, `dim`, `dim + 1`) up to `stop` (`dim`,
    `input.dim()`); None unless the tensor's sizes and each bound are known. (The local starts at 1: a loop that
    multiplies into it is how PyTorch writes outer_size and inner_size.)"""
    if not isinstance(tensor, Tensor) or tensor.sizes is None:
        return None

    def bound(text: str) -> int | None:
        text = text.replace(" ", "")
        plus = text.endswith("+1")
        word = text.removesuffix("+1")
        value = tensor.dim() if word.endswith(".dim()") else int(word) if word.isdigit() else values.get(word)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        return value + plus

    first, last = bound(start), bound(stop)
    if first is None or last is None or not 0 <= first <= last <= tensor.dim():
        return None
    return math.prod(tensor.sizes[first:last])


def _body_text(root: str | None, d: dict) -> str | None:
    if not d.get("file") or not d.get("line") or not d.get("end_line"):
        return None
    lines = _file_lines(root, d["file"])
    return None if lines is None else "\n".join(lines[d["line"] - 1:d["end_line"]])


@functools.lru_cache(maxsize=256)
def _file_lines(root: str | None, file: str) -> list[str] | None:
    text = _file_text(root, file)
    return None if text is None else text.splitlines()


def _def_node(root: str | None, fn: dict) -> ast.FunctionDef | None:
    """A Python def's ast, its lines as the symbols row has them (else to the end of its indented body), read
    from the checkout."""
    text = _file_text(root, fn.get("file"))
    if text is None or not fn.get("line"):
        return None
    lines = text.splitlines()[fn["line"] - 1:fn.get("end_line") or None]
    if not lines:
        return None
    if fn.get("end_line"):
        try:
            tree = ast.parse(textwrap.dedent("\n".join(lines)))
            if tree.body and isinstance(tree.body[0], ast.FunctionDef):
                return tree.body[0]
        except SyntaxError:
            pass  # (a row whose end is not the def's: read by indentation)
        lines = text.splitlines()[fn["line"] - 1:]
    indent = len(lines[0]) - len(lines[0].lstrip())
    body = [lines[0]]
    for line in lines[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent and not line.lstrip().startswith((")", "#")):
            break
        body.append(line)
    try:
        tree = ast.parse(textwrap.dedent("\n".join(body)))
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef) else None


def _signature_node(signature: str | None) -> ast.FunctionDef | None:
    if not signature:
        return None
    for text in (signature, signature.split("->")[0]):
        try:
            return ast.parse(f"def f{text.strip()}: pass").body[0]
        except SyntaxError:
            continue
    return None
