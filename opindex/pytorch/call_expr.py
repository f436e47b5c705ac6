"""A call as Python writes it, read with ast (never evaluated): `F.interpolate(torch.randn(8, 16, 32, 32),
scale_factor=2, mode='bilinear')`.

What a call string may hold:
- the callee: a dotted name (`F.interpolate`, `torch.exp`), a module built then called (`nn.LSTM(64, 128)(x)`:
  the callee is `nn.LSTM`, its constructor's arguments kept apart), or a Tensor method on a tensor
  (`torch.randn(4).add_(1)`: the callee is `Tensor.add_`, the tensor its `self`);
- arguments: literals (numbers, strings, bools, None, tuples and lists of them) are values; a tensor made by a
  factory (torch.randn/rand/randn_like/empty/zeros/ones/full/randint/arange/tensor, sizes as ints or a tuple,
  `dtype=torch.X`) is a Tensor of known dtype and sizes; a comparison of a tensor (`x > 0`) is a bool tensor of its
  sizes; a view of one (`x.t()`, `.T`, `.transpose(0, 1)`, `.permute(...)`, `.narrow(...)`, `.expand(...)`) or
  `torch.empty_strided(size, stride)` with strides other than the row-major ones is a Tensor that is not contiguous;
  anything else is Unknown, kept as written.
A string that is not such a call raises CallError naming what could not be read.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

from .build_config import DTYPES

# factories whose dtype is float32 unless `dtype=` says; randint and arange make int64 (arange of a float: float32)
_FLOAT_FACTORIES = frozenset({"randn", "rand", "empty", "zeros", "ones", "full", "randn_like", "rand_like",
                              "empty_like", "zeros_like", "ones_like", "full_like", "tensor", "empty_strided"})
_INT_FACTORIES = frozenset({"randint", "arange"})
_TORCH = ("torch", "torch.nn.functional", "F", "nn", "torch.nn")
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "cfloat": "complex64",
                  "cdouble": "complex128", "long": "int64", "int": "int32", "short": "int16"}


class CallError(ValueError):
    """A call string that cannot be read: the message names the part."""


@dataclass(frozen=True)
class Tensor:
    """A tensor argument: its dtype and sizes (None where the expression does not say them), and whether its
    elements are laid out contiguously (a factory's are; a view's, `x.t()`, or `torch.empty_strided` with other
    strides, are not)."""
    dtype: str
    sizes: tuple[int, ...] | None
    text: str  # as written
    contiguous: bool = True

    def dim(self) -> int | None:
        return None if self.sizes is None else len(self.sizes)

    def numel(self) -> int | None:
        return None if self.sizes is None else math.prod(self.sizes)

    def size(self, d: int) -> int | None:
        if self.sizes is None or not -len(self.sizes) <= d < len(self.sizes):
            return None
        return self.sizes[d]


@dataclass(frozen=True)
class Unknown:
    """An argument whose value the string does not say (a name, an expression): kept as written, never guessed."""
    text: str


@dataclass
class Call:
    callee: str  # dotted, as written (`F.interpolate`, `nn.LSTM`, `Tensor.add_`)
    args: list = field(default_factory=list)  # positional values (Tensor, Unknown, or a literal)
    kwargs: dict = field(default_factory=dict)  # keyword -> value
    text: str = ""
    module_args: list | None = None  # `nn.LSTM(64, 128)(x)`: the constructor's positional arguments
    module_kwargs: dict = field(default_factory=dict)

    def tensors(self) -> list[tuple[str, Tensor]]:
        """(where, tensor) of every tensor argument, in order: `#0` for the first positional, the keyword's name."""
        out = [(f"#{i}", a) for i, a in enumerate(self.args) if isinstance(a, Tensor)]
        out += [(k, v) for k, v in self.kwargs.items() if isinstance(v, Tensor)]
        for i, a in enumerate(self.args):  # torch.cat([x, y]): the tensors of a list argument
            if isinstance(a, (list, tuple)):
                out += [(f"#{i}[{j}]", t) for j, t in enumerate(a) if isinstance(t, Tensor)]
        return out


def looks_like_call(text: str) -> bool:
    """A trace query that is a call (`F.relu(x)`) rather than a name (`F.relu`, `operator()`, `NAME@FILE`)."""
    s = text.strip()
    return s.endswith(")") and "(" in s and not s.startswith(("operator", "void ", "at::")) \
        and s[:s.index("(")].replace(".", "").replace("_", "").isalnum() and "::" not in s and "@" not in s


def parse_call(text: str) -> Call:
    """The Call a string writes; CallError (naming the part) when it is not one."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise CallError(f"cannot read the call {text!r}: not Python ({e.msg} at column {e.offset})") from None
    node = tree.body
    if not isinstance(node, ast.Call):
        raise CallError(f"cannot read the call {text!r}: it is not a call (a call looks like "
                        f"F.interpolate(torch.randn(8, 16, 32, 32), scale_factor=2))")
    call = Call(callee="", text=text.strip())
    func = node.func
    if isinstance(func, ast.Call):  # nn.LSTM(64, 128)(x): a module made, then called
        call.callee = _dotted(func.func, text)
        call.module_args = [_value(a, text) for a in func.args]
        call.module_kwargs = {k.arg: _value(k.value, text) for k in func.keywords if k.arg}
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        receiver = _value(func.value, text)  # torch.randn(4).add_(1): a Tensor method, the tensor its self
        if not isinstance(receiver, Tensor):
            raise CallError(f"cannot read the call {text!r}: {ast.unparse(func.value)} is not a tensor, so "
                            f".{func.attr}(...) names no Tensor method")
        call.callee = f"Tensor.{func.attr}"
        call.args.append(receiver)
    else:
        call.callee = _dotted(func, text)
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise CallError(f"cannot read the call {text!r}: *args and **kwargs do not say the arguments")
    call.args += [_value(a, text) for a in node.args]
    call.kwargs = {k.arg: _value(k.value, text) for k in node.keywords}
    return call


def _dotted(node, text: str) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise CallError(f"cannot read the call {text!r}: the callee {ast.unparse(node)} is not a dotted name")
    return ".".join([node.id, *reversed(parts)])


def _value(node, text: str):
    """A literal, a Tensor, or Unknown (as written)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, (ast.Tuple, ast.List)):  # [torch.randn(2), torch.randn(2)]
        items = [_value(e, text) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Call):
        found = _tensor(node, text) or _view(node, text)
        if found is not None:
            return found
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT", "mH", "H"):  # x.T: a transposed view
        base = _value(node.value, text)
        if isinstance(base, Tensor):
            sizes = None if base.sizes is None else (tuple(reversed(base.sizes)) if node.attr in ("T", "H") else
                                                     (*base.sizes[:-2], *base.sizes[:-3:-1]))
            return Tensor(base.dtype, sizes if base.sizes is None or len(base.sizes) >= 2 else base.sizes,
                          ast.unparse(node), contiguous=base.sizes is not None and len(base.sizes) < 2)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:  # x > 0: a bool tensor of x's sizes
        left = _value(node.left, text)
        if isinstance(left, Tensor):
            return Tensor("bool", left.sizes, ast.unparse(node))
    if isinstance(node, ast.Attribute) and _dotted_or_none(node) in {f"torch.{d}" for d in _ALL_DTYPES}:
        return _dtype_of(node, text)  # dtype=torch.float16 as a value: its name
    return Unknown(ast.unparse(node))


def _dotted_or_none(node) -> str | None:
    try:
        return _dotted(node, "")
    except CallError:
        return None


_ALL_DTYPES = set(DTYPES) | set(_DTYPE_ALIASES)


def _tensor(node: ast.Call, text: str) -> Tensor | None:
    name = _dotted_or_none(node.func)
    if name is None:
        return None
    module, _, factory = name.rpartition(".")
    if module != "torch" or factory not in _FLOAT_FACTORIES | _INT_FACTORIES:
        return None
    kwargs = {k.arg: k.value for k in node.keywords if k.arg}
    written = ast.unparse(node)
    dtype = _dtype_of(kwargs["dtype"], text) if "dtype" in kwargs else None
    like = None
    if factory.endswith("_like"):
        like = _value(node.args[0], text) if node.args else None
        if not isinstance(like, Tensor):
            return Tensor(dtype or "float32", None, written)
        return Tensor(dtype or like.dtype, like.sizes, written)
    args = [_value(a, text) for a in node.args]
    if factory == "tensor":  # torch.tensor([1, 2, 3]): sizes and dtype from the data
        data = args[0] if args else None
        sizes, kind = _nested_shape(data)
        return Tensor(dtype or kind or "float32", sizes, written)
    if factory == "arange":
        numbers = [a for a in args if isinstance(a, (int, float))]
        if len(numbers) != len(args) or not 1 <= len(numbers) <= 3:
            return Tensor(dtype or "int64", None, written)
        start, end, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers[:2], numbers[2] if
                                                                         len(numbers) == 3 else 1)
        floating = any(isinstance(n, float) for n in numbers)
        return Tensor(dtype or ("float32" if floating else "int64"),
                      (max(0, math.ceil((end - start) / step)),), written)
    if factory == "randint":  # randint(high, size) or randint(low, high, size)
        size = args[-1] if args else kwargs.get("size")
        sizes = _sizes([size]) if isinstance(size, (tuple, list)) else None
        return Tensor(dtype or "int64", sizes, written)
    if factory == "full":
        args = args[:1]  # full(size, fill_value)
    if factory == "empty_strided":  # empty_strided(size, stride): contiguous where the strides are the row-major ones
        size, stride = (args + [None, None])[:2]
        sizes = _sizes([size]) if isinstance(size, (tuple, list)) else None
        strides = _sizes([stride]) if isinstance(stride, (tuple, list)) else None
        return Tensor(dtype or "float32", sizes, written,
                      contiguous=sizes is not None and strides is not None and strides == contiguous_strides(sizes))
    return Tensor(dtype or "float32", _sizes(args), written)


def contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a row-major (contiguous) tensor of `sizes` (a size-1 dimension's stride as PyTorch gives it)."""
    out, step = [], 1
    for size in reversed(sizes):
        out.append(step)
        step *= max(size, 1)
    return tuple(reversed(out))


def _view(node: ast.Call, text: str) -> Tensor | None:
    """A view of a tensor written as a method (`x.t()`, `x.transpose(0, 1)`, `x.permute(0, 2, 1)`, `x.narrow(1, 0,
    8)`, `x.expand(4, 8)`), or `.contiguous()` of one: the view is not contiguous (its sizes where the arguments
    say them), `.contiguous()` is again."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in _VIEWS or node.keywords:
        return None
    base = _value(func.value, text)
    if not isinstance(base, Tensor):
        return None
    args = [_value(a, text) for a in node.args]
    written = ast.unparse(node)
    if func.attr == "contiguous":
        return Tensor(base.dtype, base.sizes, written)
    sizes = _view_sizes(func.attr, base.sizes, args)
    return Tensor(base.dtype, sizes, written, contiguous=False)


# the Tensor methods that make a view with other strides (and contiguous(), which undoes it)
_VIEWS = frozenset({"t", "transpose", "permute", "narrow", "expand", "swapaxes", "movedim", "contiguous"})


def _view_sizes(method: str, sizes: tuple[int, ...] | None, args: list) -> tuple[int, ...] | None:
    if sizes is None or not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return None if method != "expand" or not args else _sizes(args)
    n = len(sizes)
    try:
        if method == "t":
            return tuple(reversed(sizes)) if n <= 2 else None
        if method in ("transpose", "swapaxes") and len(args) == 2:
            out = list(sizes)
            out[args[0]], out[args[1]] = out[args[1]], out[args[0]]
            return tuple(out)
        if method == "permute" and sorted(a % n for a in args) == list(range(n)):
            return tuple(sizes[a] for a in args)
        if method == "narrow" and len(args) == 3:
            out = list(sizes)
            out[args[0]] = args[2]
            return tuple(out)
        if method == "expand":
            return tuple(s if a == -1 else a for s, a in zip((1,) * (len(args) - n) + sizes, args))
    except IndexError:
        return None
    return None


def _sizes(args: list) -> tuple[int, ...] | None:
    """torch.randn(8, 16) or torch.randn((8, 16)): the sizes, None when they are not all ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = list(args[0])
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return tuple(args)
    return None


def _nested_shape(data) -> tuple[tuple[int, ...] | None, str | None]:
    """The shape and dtype of torch.tensor's data (a number, or nested lists of numbers)."""
    if isinstance(data, bool):
        return (), "bool"
    if isinstance(data, int):
        return (), "int64"
    if isinstance(data, float):
        return (), "float32"
    if isinstance(data, (list, tuple)) and data:
        inner = [_nested_shape(d) for d in data]
        if all(i == inner[0] for i in inner) and inner[0][0] is not None:
            return (len(data), *inner[0][0]), inner[0][1]
    return None, None


def _dtype_of(node, text: str) -> str:
    written = _dotted_or_none(node) or ast.unparse(node)
    name = written.removeprefix("torch.")
    name = _DTYPE_ALIASES.get(name, name)
    if not written.startswith("torch.") or name not in DTYPES:
        raise CallError(f"cannot read the call {text!r}: dtype={ast.unparse(node)} is not one of "
                        f"torch.{', torch.'.join(DTYPES)}")
    return name
