"""What the conditions a call sits under (the conditions table) mean to a walk.

- `#if` groups: a call only another platform's build compiles (`#ifdef __HIP_PLATFORM_HCC__` on --device cuda,
  `#if 0` anywhere) is not walked; any other #if is shown on the hops the call leads to ("called under #if ...").
- `if` blocks on a parameter: a call that the op's default arguments do not reach (`if (label_smoothing > 0.0)`,
  label_smoothing=0.0 in the schema) is marked NOT_DEFAULT; Trace.main_chain ranks such paths after the default one.
"""
from __future__ import annotations

import ast
import bisect
import contextlib
import functools
import operator
import os
import re
from dataclasses import dataclass, field, replace

from ..pytorch.build_config import (CMAKE_PLATFORM, DEFINED, UNDEFINED, UPSTREAM_CUDA, Setting, as_number, cmake_condition,
                                    cmake_options, evaluate)
from ..pytorch import device_props
from ..pytorch.call_expr import Tensor
from ..pytorch.devices import CPP_HEADERS, platform_off
from ..pytorch.receivers import split_parameters
from ..pytorch.syntax import closes_at_end, schema_arguments, split_top_level
from ..pytorch.settings import CONTEXT_DEFAULTS
from . import facts as q
from . import function_value
from . import iterators
from . import pyflow
from . import typeids
from .model import NOT_DEFAULT, Condition
from .rank import is_test
from .sequence import file_lines

_TEST = re.compile(r"^(!\s*)?(\*\s*)?([A-Za-z_]\w*)\s*(?:(==|!=|>=|<=|>|<)\s*(-?[\w.:]+|\"[^\"\\]*\")|"
                   r"\.\s*(has_value|defined)\s*\(\s*\))?$")  # (`*rounding_mode == "trunc"`: an optional's value)
# Python: `if max_norm is not None:`, `if not train:`, `if p > 0.0:` (extract/python.py keeps the test as written)
_PY_TEST = re.compile(r"^(not\s+)?([A-Za-z_]\w*)(?:\s+is(\s+not)?\s+None|\s*(==|!=|>=|<=|>|<)\s*"
                      r"(-?[\w.]+|\"[^\"\\]*\"|'[^'\\]*'))?$")
_BUILTIN_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "tuple": tuple, "dict": dict}
_SETTING = re.compile(r"^(!\s*)?(?:at::)?globalContext\(\)\.(\w+)\(\)(?:\s*([!=]=)\s*(?:at::)?([\w:]+))?$")
_ARG_DEFAULT = re.compile(r"(\w+)=(\[[^\]]*\]|[^,)]+)")
_PY_PARAM = re.compile(r"^\s*\**([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.S)
_UNKNOWN = object()
_FLIPPED = re.compile(r"^(-?\d+)\s*(<=|<|>=|>|==|!=)\s*([A-Za-z_]\w*)$")  # a number first
_FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "==", "!=": "!="}
_BANG_LITERAL = re.compile(r"^!\s*\(?\s*(true|false)\s*\)?$")
_CAST = re.compile(r"static_cast<[^<>]*>\(\s*(\w+)\s*\)")


@dataclass
class Under:
    """The conditions one call line sits under."""
    off: bool = False  # another platform's code: not walked
    notes: list[str] = field(default_factory=list)  # for a reader (a hop's detail)
    conditions: list[Condition] = field(default_factory=list)  # the same, as data (a hop's conditions)

    @property
    def suffix(self) -> str:
        """The notes as a hop's detail ends in them."""
        return "".join(f" [{n}]" for n in self.notes)


GUARDS_KEPT = 50_000  # Guards a process keeps per open index (BodyGuards._kept)


class Guards:
    """The conditions rows over one body, each read once (off for the device, a note, or nothing), asked per call
    line."""

    def __init__(self, rows: list[dict], device: str, defaults: dict[str, object], file: str | None = None,
                 build: "BuildContext | None" = None):
        self.values = defaults  # the names' values the tests were read with (a call's arguments pass them on)
        # (first, last, off, note, condition)
        self.spans: list[tuple[int, int, bool, str | None, Condition | None]] = []
        # the lines of the `if`/`else` tests read as true: a call in such a block runs each time the body does
        # (trace/rank.py _runs_with: multinomial's argmax under `if (n_sample == 1)`, runs after its sampler)
        held: set[int] = set()
        uncompiled: set[str] = set()  # tests of `if`s the build leaves out: no else after them negates them
        # the #if spans this build does not compile, read first: an `if` on the line of an `#if` (`#if X` then
        # `} else if (y) {`) comes before it in the rows
        not_built = [(r["line"], r["end_line"]) for r in rows if r["kind"] == "#if" and (
            _platform_off(r["condition"], device) or (build is not None and build.holds(r["condition"]) is False))]
        for r in rows:
            if r["kind"] != "#if" and r["condition"].startswith("not (") and r["condition"].endswith(")") and \
                    r["condition"][5:-1] in uncompiled:
                continue  # sortKeyValueInplace's `#if HAS_WARP_MERGE_SORT() } else if (sort_size <= 128) {` is not
                # built: its final else runs under `not (!stable && sort_size <= 32)` alone (Sort.cu:404-409)
            if r["kind"] == "#if":
                if _platform_off(r["condition"], device):  # another platform's code: not walked
                    self.spans.append((r["line"], r["end_line"], True, None, None))
                    continue
                value = build.holds(r["condition"]) if build is not None else None
                if value is False:  # not compiled in the build traced: shown, never the main chain
                    self.spans.append((r["line"], r["end_line"], False, f"not in this build: #if {r['condition']}",
                                       Condition("#if", r["condition"], file, r["line"], assumed=False)))
                elif value is None:  # the build does not say: shown, and said
                    self.spans.append((r["line"], r["end_line"], False, f"called under #if {r['condition']}",
                                       Condition("#if", r["condition"], file, r["line"])))
            elif r["kind"] == "#error":
                continue  # a line that cannot compile: the build context reads these (requirements)
            else:
                start = r["line"]
                gone = [last for first, last in not_built if first <= start <= last]
                if gone and r["condition"].startswith("not (") and r["end_line"] > max(gone):
                    start = max(gone) + 1  # an else whose `} else if (...) {` line is under a false #if: the
                    # branch goes on after the #endif (sortKeyValueInplace's final else, Sort.cu:403-408)
                elif gone:
                    uncompiled.add(r["condition"])
                    continue  # an `if` whose own line the build does not compile (the fork's `#ifdef USE_MACA` /
                    # `if (maca_unlikely(x)) {` / `#endif` around a stock launch): no test in that build
                value = holds(r["condition"], defaults)
                shown = r.get("shown", r["condition"])  # (a function's value written in: the call and its value)
                if value is False:
                    self.spans.append((start, r["end_line"], False, f"called when {shown}: {NOT_DEFAULT}",
                                       Condition(r["kind"], shown, file, r["line"], assumed=False)))
                elif value is None:  # undecided: kept as data (a choice's condition, JSON `open`), not in detail
                    self.spans.append((start, r["end_line"], False, None,
                                       Condition(r["kind"], shown, file, r["line"])))
                elif r["kind"] == "if":
                    held.add(r["line"])
        self.held = frozenset(held)
        self.cache: dict[int, Under] = {}

    def at(self, line: int) -> Under:
        found = self.cache.get(line)
        if found is None:
            found = self.cache[line] = self._at(line) if self.spans else _NOTHING
        return found

    def _at(self, line: int) -> Under:
        under = Under()
        for first, last, off, note, condition in self.spans:
            if first <= line <= last:
                if off:
                    return Under(off=True)
                if note is not None:
                    under.notes.append(note)
                under.conditions.append(condition)
        return under


_NOTHING = Under()
_platform_off = functools.lru_cache(maxsize=4096)(platform_off)


@functools.lru_cache(maxsize=4096)
def schema_defaults(schema: str, signature: str | None) -> dict[str, object]:
    """The default argument values of a native schema (`float label_smoothing=0.0` -> 0.0, `Tensor? weight=None` ->
    None), kept for the names the C++ definition's own parameters carry (what its `if`s can test)."""
    args = schema_arguments(schema)
    params = set(re.findall(r"\w+", signature or ""))
    out: dict[str, object] = {}
    for name, text in _ARG_DEFAULT.findall(args):
        value = _literal(text.strip())
        if value is _UNKNOWN:
            continue
        if name in params:
            out[name] = value
        elif f"{name}_opt" in params:  # `const std::optional<Tensor>& pos_weight_opt`, then a local `pos_weight`
            out[name] = value  # borrowed from it (PyTorch's "hacky wrapper removal for optional tensor")
    return out


@functools.lru_cache(maxsize=4096)
def python_defaults(signature: str | None) -> dict[str, object]:
    """The default values of a Python def's parameters (`max_norm: Optional[float] = None` -> None), from its
    signature as symbols keep it."""
    out: dict[str, object] = {}
    for part in split_parameters(signature or "()"):
        m = _PY_PARAM.match(part)
        if m is not None:
            value = _literal(m.group(2))
            if value is not _UNKNOWN:
                out[m.group(1)] = value
    return out


def holds(condition: str, defaults: dict[str, object]) -> bool | None:
    """Whether `condition` (names tested, as conditions rows keep it; `not (...)` for an else block) holds when
    the names have their default values; None when that cannot be said. A test of several parts is read as Python
    (py_holds): and/or/not, parentheses, isinstance()."""
    condition = _unwrap(condition)
    if "[" in condition:
        condition = _subscripts(condition, defaults)
    if condition in ("true", "false", "not (true)", "not (false)"):  # a function's value written in (function_value)
        return condition in ("true", "not (false)")
    literal = _BANG_LITERAL.match(condition)
    if literal is not None:  # `if (!getApplyGrid(...))` with the call's value written in: `!true`
        return literal.group(1) == "false"
    flipped = _FLIPPED.match(condition)
    if flipped is not None:  # `80 <= cc` (cutlassF.h): read as `cc >= 80`
        return holds(f"{flipped.group(3)} {_FLIP[flipped.group(2)]} {flipped.group(1)}", defaults)
    bang = _negated(condition)
    if bang is not None:  # `!(a && b)`, `!(false)`
        inner = holds(bang, defaults)
        return None if inner is None else not inner
    found = iterators.cpu_scalar_holds(condition, defaults) if "is_cpu_scalar" in condition else \
        iterators.ninputs_holds(condition, defaults) if "ninputs()" in condition else None
    if found is None:
        found = _holds(condition, defaults)
    if found is None and "=" in condition:
        found = nan_test_holds(condition)
    if found is None and _reads_sizes(condition):
        found = size_expr_holds(condition, defaults)
    if found is None and DTYPE in defaults:
        found = dtype_holds(condition, defaults[DTYPE])
    if found is None and "is_same" in condition and DTYPE in defaults:
        found = same_type_holds(condition, defaults)
    if found is None and DEVICE in defaults:
        found = device_holds(condition, defaults[DEVICE])
    if found is None and defaults.get(STRIDED):
        found = strided_iterator_holds(condition)
        if found is not None and defaults[STRIDED] == MAYBE_STRIDED:
            return None  # (operands that may be views: contiguous or not, the inputs do not say)
    if found is None and MEMORY_FORMAT in defaults:
        found = memory_format_holds(condition, defaults[MEMORY_FORMAT])
    if found is None and SIZES in defaults:
        found = size_holds(condition, defaults.get(COUNTS, ()))
    if found is None:
        found = hint_holds(condition)
    if found is None and ("&&" in condition or "||" in condition):
        return cpp_holds(condition, defaults)
    if found is None and ("(" in condition or " or " in condition or " and " in condition):
        found = py_holds(condition, defaults)
    if found is None and condition.startswith("not (") and condition.endswith(")"):
        inner = holds(condition[5:-1], defaults)  # an else block of a test read above (`not (!(true))`)
        found = None if inner is None else not inner
    return found


_SUBSCRIPT = re.compile(r"(?<![\w.>\]])([A-Za-z_]\w*)\s*\[\s*(\d+)\s*\]")


def _subscripts(condition: str, defaults: dict) -> str:
    """`output_size[0] == 1` with output_size = [1, 1]: each element of a list the values know written as its
    number (or bool), so the test reads as any other comparison."""
    def element(m):
        items = defaults.get(m.group(1))
        if not isinstance(items, (list, tuple)) or int(m.group(2)) >= len(items):
            return m.group(0)
        item = items[int(m.group(2))]
        if isinstance(item, bool):
            return "true" if item else "false"
        return str(item) if isinstance(item, (int, float)) else m.group(0)
    return _SUBSCRIPT.sub(element, condition)


_SELF_COMPARE = re.compile(r"^(.+?)\s*(!=|==)\s*(.+)$", re.S)


@functools.lru_cache(maxsize=16384)  # pure in its argument: each test's text read once
def nan_test_holds(condition: str) -> bool | None:
    """`x != x` is C++'s test for NaN (clamp_out's `min.get().toDouble() != min.get().toDouble()`): a value of the
    general case is a number, so it is false (`x == x` true); None for any other test."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    m = _SELF_COMPARE.match(test)
    if m is None or "&&" in test or "||" in test or m.group(1).strip() != m.group(3).strip():
        return None
    return (m.group(2) == "==") != negate


@functools.lru_cache(maxsize=16384)
def _negated(condition: str) -> str | None:
    """`(...)` of a test written `!(...)`, else None (pure in the text: each read once)."""
    bang = re.fullmatch(r"!\s*(\(.*\))", condition, re.S)
    return bang.group(1) if bang is not None and closes_at_end(bang.group(1)) else None


# The dtype of a trace's input (defaults[DTYPE]: float32 unless stated), and what C++ tests of a dtype say of it
DTYPE = "(dtype)"
_SCALAR_TYPES = function_value.SCALAR_TYPES  # (function bodies read a tensor argument's dtype by the same table)
_DTYPE_CLASSES = {"isComplexType": ("complex64", "complex128", "complex32"),
                  "is_complex": ("complex64", "complex128", "complex32"),
                  "isFloatingType": ("float32", "float64", "float16", "bfloat16"),
                  "is_floating_point": ("float32", "float64", "float16", "bfloat16"),
                  "isReducedFloatingType": ("float16", "bfloat16"),
                  "isIntegralType": ("int64", "int32", "int16", "int8", "uint8")}
_DTYPE_CALL = re.compile(r"^(!\s*)?(?:at::|c10::)?(isComplexType|isFloatingType|isReducedFloatingType|isIntegralType)"
                         r"\s*\((.*)\)$|^(!\s*)?[\w.]+\.(is_complex|is_floating_point)\(\s*\)$")
_DYNAMIC_CAST = re.compile(r"^(!\s*)?\(?\s*needs_dynamic_casting<.*>::check\(.*\)\s*\)?$")
_DTYPE_COMPARE = re.compile(r"^([\w.]+(?:\(\))?)\s*([!=]=)\s*(?:at::|c10::)?(?:ScalarType::|k)(\w+)$")
# the integer dtypes, read only where the test's left side is the input's dtype by how PyTorch names it (an index
# tensor's `indices.scalar_type() == kLong` is not): div_floor_kernel_cuda's `const auto dtype = iter.common_dtype();
# if (dtype == kByte)` (BinaryDivFloorKernel.cu:23-24) is false for float32
_INTEGER_TYPES = {"Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32", "Long": "int64", "Bool": "bool"}
_INPUT_DTYPE = re.compile(r"^(?:iter\.(?:common_dtype|dtype|input_dtype)\(\)|common_dtype|dtype|"
                          r"(?:self|input)\.scalar_type\(\))$")


DEVICE = "(device)"  # the traced device: the tensors a kernel tests are on it
_DEVICE_TEST = re.compile(r"^(!\s*)?[\w.]+(?:(?:\.device\(\)\.type|\.type\(\)\.device_type|\.device_type)\(\)\s*([!=]=)\s*(?:c10::|at::)?(?:DeviceType::|k)(\w+)|"
                          r"(?:\.device\(\))?\.(is_cuda)\(\))$")


# The memory format of a trace's input: a tensor made the default way is contiguous, so its suggest_memory_format()
# is Contiguous (a channels-last input is not what the call states)
MEMORY_FORMAT = "(memory_format)"
INPUT_MEMORY_FORMAT = "Contiguous"
_CONTIGUOUS_TEST = re.compile(r"^(!\s*)?\(?\s*[\w.]+\.is_contiguous\(\s*(?:(?:at::|c10::)?MemoryFormat::(\w+))?\s*\)\s*\)?$")
_FORMAT_TEST = re.compile(r"^(!\s*)?[\w.]+\.suggest_memory_format\(\)\s*([!=]=)\s*(?:at::|c10::)?MemoryFormat::(\w+)$")


@functools.lru_cache(maxsize=16384)  # pure in its arguments: each test's text read once
def memory_format_holds(condition: str, memory_format: str) -> bool | None:
    """A test of the memory format an input suggests (`input_.suggest_memory_format() == MemoryFormat::ChannelsLast`,
    as a switch over it reads in the conditions rows) or of its contiguity (`iter.is_contiguous()`, as `if
    (contiguous)` after `bool contiguous = iter.is_contiguous();` reads), read as the input's; None for any other
    test."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    m = _FORMAT_TEST.match(test)
    if m is None:
        m = _CONTIGUOUS_TEST.match(test)
        if m is None:
            return None
        bang, name = m.groups()  # `iter.is_contiguous()`; with a format argument, whether it is the input's
        result = (name is None and memory_format == "Contiguous" or name == memory_format) != bool(bang)
        return result != negate
    bang, op, name = m.groups()
    result = ((name == memory_format) == (op == "==")) != bool(bang)
    return result != negate


# The operands of the op's TensorIterator include a view with other strides (pytorch/views.py: glu's halves, made
# by narrow in its meta function): the iterator is not contiguous, whatever the input's own layout
STRIDED = "(strided iterator)"
# the value STRIDED holds when the operands may be views (walk/sites.py written_views: a narrow under a test the
# inputs leave open): a contiguity test of the iterator is then undecided
MAYBE_STRIDED = "(may be strided)"
# a macro body that is a test (a comparison or a logical operator): #if reads it as 1 or 0
_TRUTH_EXPRESSION = re.compile(r"[<>]=?|[=!]=|&&|\|\||!\s*\(|\bdefined\b")
_ITER_CONTIGUOUS_TEST = re.compile(r"^(!\s*)?\(?\s*\w*iter\w*\.is_contiguous\(\s*(?:(?:at::|c10::)?MemoryFormat::\w+)?"
                                   r"\s*\)\s*\)?$")


def strided_iterator_holds(condition: str) -> bool | None:
    """A test of an iterator's contiguity (`iter.is_contiguous()`) where its operands include a strided view: false
    (its negation true); None for any other test."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    m = _ITER_CONTIGUOUS_TEST.match(test)
    if m is None:
        return None
    return bool(m.group(1)) != negate


# The sizes of a trace's input: a stated call is of the general case, neither empty nor of one batch, so a test of an
# element count against 0 or of a batch count against 0 or 1 (`if (self.numel() == 0)`, `if (num_batches == 1)`) is
# a special case. Not other sizes: softmax's `inner_size == 1` is the general case of a softmax over the last dim, a
# full reduction's `result.numel() == 1` that of torch.var(x)
SIZES = "(sizes)"
_SIZE_TEST = re.compile(r"^(!\s*)?[\w.]*?\b(?:numel(?:\(\))?\s*(==|!=|<=|<|>=|>)\s*(0)|(?:num_batches|n_?batch\w*|"
                        r"batch_?size|batches)\s*(==|!=|<=|<|>=|>)\s*([01]))$")


COUNTS = "(counts)"  # the locals of a body that hold an element count (count_locals)
# `const auto count = safe_downcast<int32_t, int64_t>(output.numel());`: a local holding an element count
_COUNT_LOCAL = re.compile(r"\b(?:const\s+)?(?:auto|u?int64_t|int|u?int32_t|size_t|ptrdiff_t)\s+(\w+)\s*=\s*"
                          r"(?:[\w:]+(?:<[^<>;]*>)?\s*\(\s*)?\w+\s*\.\s*numel\(\s*\)\s*\)?\s*;")


PROPS = "(device properties)"  # (the locals of a body holding the device's properties, the capability or None)


@functools.lru_cache(maxsize=4096)
def _body_text(root: str | None, file: str | None, line: int | None, end_line: int | None) -> str:
    """A body's lines as one text, read once per body (count_locals and the device-properties reading share it)."""
    lines = file_lines(root, file) if root and file and line and end_line else None
    return "\n".join(lines[line - 1:end_line]) if lines else ""


_SIZES_LOCAL = re.compile(r"\b(?:const\s+)?(?:auto|(?:at::|c10::)?(?:Sym)?IntArrayRef)\s*&?\s+(\w+)\s*=\s*(\w+)\s*\.\s*"
                          r"(?:sym_)?sizes\(\s*\)(?:\s*\.\s*slice\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*;")


@functools.lru_cache(maxsize=4096)
def sizes_locals(root: str | None, file: str | None, line: int | None, end_line: int | None) -> tuple:
    """(name, tensor, start, stop, line) of each `auto name = tensor.sizes()[.slice(start[, stop])];` of a body
    (BodyGuards.list_locals values them)."""
    text = _body_text(root, file, line, end_line)
    if "sizes()" not in text:
        return ()
    return tuple((*m.groups(), line + text.count("\n", 0, m.start())) for m in _SIZES_LOCAL.finditer(text))


@functools.lru_cache(maxsize=4096)
def _props_locals(root: str | None, file: str | None, line: int | None, end_line: int | None) -> tuple[str, ...]:
    """The locals of a body that hold the device's properties."""
    return device_props.props_names(_body_text(root, file, line, end_line))


# `const auto memory_format = input_.suggest_memory_format();` (UpSampleNearest2d.cu): a local holding a tensor's
# suggested memory format
FORMAT_LOCAL = re.compile(r"\b(?:const\s+)?(?:auto|[\w:]*MemoryFormat)\s+(\w+)\s*=\s*(\w+)\s*\.\s*"
                          r"suggest_memory_format\(\s*\)\s*;")


@functools.lru_cache(maxsize=4096)
def format_locals(root: str | None, file: str | None, line: int | None, end_line: int | None) -> tuple[str, ...]:
    """The locals of a body that hold a tensor's suggested memory format: the input's (INPUT_MEMORY_FORMAT, a
    tensor made the default way is contiguous), as `x.suggest_memory_format()` itself reads (memory_format_holds)."""
    text = _body_text(root, file, line, end_line)
    return tuple(name for name, _ in FORMAT_LOCAL.findall(text)) if "suggest_memory_format" in text else ()


@functools.lru_cache(maxsize=4096)
def count_locals(root: str | None, file: str | None, line: int | None, end_line: int | None) -> tuple[str, ...]:
    """The locals of a body that hold a tensor's element count (`count = safe_downcast<...>(output.numel())`,
    `int64_t n = self.numel();`): of the general case, not 0 (size_holds)."""
    text = _body_text(root, file, line, end_line)
    return tuple(_COUNT_LOCAL.findall(text)) if "numel" in text else ()
_COUNT_TEST = re.compile(r"^(!\s*)?([A-Za-z_]\w*)\s*(==|!=|<=|<|>=|>)\s*(0)$")


@functools.lru_cache(maxsize=16384)  # pure in its arguments: each test's text read once
def size_holds(condition: str, counts: tuple[str, ...] = ()) -> bool | None:
    """A test of an element count against 0 or of a batch count against 0 or 1, read for an input of the general
    case (not empty, more than one batch); `counts`: locals that hold an element count (`count != 0`, count =
    output.numel()). None for any other test."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    m = _SIZE_TEST.match(test)
    if m is None and counts:
        c = _COUNT_TEST.match(test)
        if c is not None and c.group(2) in counts:
            result = {"==": False, "!=": True, "<=": False, "<": False, ">": True, ">=": True}[c.group(3)]
            return (result != bool(c.group(1))) != negate
    if m is None:
        return None
    bang, op = m.group(1), m.group(2) or m.group(4)
    result = {"==": False, "!=": True, "<=": False, "<": False, ">": True, ">=": True}[op]
    result = result != bool(bang)
    return result != negate


_HINT = re.compile(r"^(!\s*)?(?:(\w*?(un)?likely\w*)\s*\(.*\)|__builtin_expect\s*\(.*,\s*([01])L?\s*\))$", re.I | re.S)


# A comparison of sizes a traced call's tensors give (`self.numel() == self.size(dim)`, `dim == ndim - 1` with ndim
# a size local): each `t.numel()`, `t.dim()`, `t.size(d)` and name written as its integer, then + - * / and one
# comparison evaluated. A name with no integer value, a negative one (a dim the C++ may wrap first) or a tensor
# without sizes leaves it unknown.
_SIZE_WORD = re.compile(r"\.(?:sym_)?(?:numel|dim|size)\(|sizeof\s*\(|[A-Za-z_]\w*\s*(?:==|!=|<=|>=|<|>)\s*[A-Za-z_]\w*\s*[-+*/]")
_SIZEOF = re.compile(r"\bsizeof\s*\(\s*scalar_t\s*\)")
# bytes of an element of each dtype a trace takes (sizeof(scalar_t) inside AT_DISPATCH)
_ELEMENT_BYTES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "complex64": 8, "complex128": 16,
                  "complex32": 4, "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1}
_SIZE_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\.\s*(?:sym_)?(numel|dim|size)\(\s*([^()]*?)\s*\)")  # (sym_size too)
_SIZE_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_SIZE_ARITHMETIC = re.compile(r"^[\d\s+\-*/()]*(?:==|!=|<=|>=|<|>)[\d\s+\-*/()]*$")


@functools.lru_cache(maxsize=16384)  # pure in its argument: each test's text searched once
def _reads_sizes(condition: str) -> bool:
    text = condition[5:-1] if condition.startswith("not (") and condition.endswith(")") else condition
    # (or numbers only: a list's elements written in, `output_size[0] == 1` as `1 == 1`)
    return _SIZE_WORD.search(condition) is not None or _SIZE_ARITHMETIC.match(text.strip()) is not None


def size_expr_holds(condition: str, values: dict[str, object]) -> bool | None:
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    if "&&" in test or "||" in test:
        return None  # (cpp_holds reads each part)

    def whole(value) -> int:  # (a literal read from C++ text, or passed through one, is a float: `1` -> 1.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ValueError
        return int(value)

    def integer(value) -> str:
        if whole(value) < 0:
            raise ValueError
        return str(whole(value))

    def call(m) -> str:
        tensor = values.get(m.group(1))
        if not isinstance(tensor, Tensor):
            raise ValueError
        if m.group(2) == "size":
            arg = m.group(3)
            d = int(arg) if re.fullmatch(r"-?\d+", arg) else values.get(arg)
            return integer(tensor.size(whole(d)))
        return integer(tensor.numel() if m.group(2) == "numel" else tensor.dim())

    if "sizeof" in test:  # an element's size: the input's dtype's
        size = _ELEMENT_BYTES.get(values.get(DTYPE))
        if size is None or not _SIZEOF.search(test):
            return None
        test = _SIZEOF.sub(str(size), test)
    try:
        text = _SIZE_CALL.sub(call, test)
        text = _SIZE_NAME.sub(lambda m: integer(values.get(m.group(0))), text)
    except ValueError:
        return None
    if not _SIZE_ARITHMETIC.match(text):
        return None
    try:
        result = bool(_arithmetic(ast.parse(text.replace("/", "//"), mode="eval").body))
    except (ValueError, SyntaxError, ZeroDivisionError):
        return None
    return result != negate


def _arithmetic(node):
    """An integer expression or one comparison of two, from ast (nothing else is evaluated)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        return _ARITH[type(node.op)](_arithmetic(node.left), _arithmetic(node.right))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return _COMPARE[type(node.ops[0])](_arithmetic(node.left), _arithmetic(node.comparators[0]))
    raise ValueError


_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}


@functools.lru_cache(maxsize=16384)  # pure in its arguments: each test's text read once
def hint_holds(condition: str) -> bool | None:
    """A branch the source marks unlikely (`C10_UNLIKELY(x)`, `maca_unlikely(x)`, `__builtin_expect(x, 0)`) is
    read as not taken, one marked likely as taken: the path the code's authors expect a call to run; None for any
    other test."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    m = _HINT.match(test)
    if m is None or any(len(split_top_level(test, op, "(")) > 1 for op in ("&&", "||")):
        return None  # (`C10_LIKELY(a) && b`: its parts are read one by one, cpp_holds)
    bang, name, un, expect = m.groups()
    inner = test[test.index("(") + 1:test.rindex(")")].strip() if name is not None else ""
    known = {"true": True, "false": False, "!true": False, "!false": True, "!(true)": False,
             "!(false)": True}.get(inner.replace(" ", ""))
    # a hint around a value the trace knows (`maca_likely(false)`, a function read as false) is that value
    result = known if known is not None else (expect == "1") if name is None else not un
    result = result != bool(bang)
    return result != negate


# A traced tensor is a dense (strided) one of the traced device, as torch.randn makes it: a test of another layout
# or kind (`input.is_mkldnn()`, `self.is_quantized()`, `t.is_sparse()`) is false, one of a device type is the
# traced device's (`input.is_xpu()` is false on --device cuda; is_hip() is false on ROCm too: HIP tensors say CUDA)
_KIND_TEST = re.compile(r"^(!\s*)?\(?\s*[\w.]+(?:\.device\(\))?\.is_(mkldnn|quantized|sparse|sparse_csr|nested|meta|vulkan|metal|"
                        r"mps|xpu|ipu|hpu|lazy|ort|ve|hip|mtia|privateuseone|cpu)\(\s*\)\s*\)?$")
_DEVICE_KINDS = {"cpu": "cpu", "mps": "mps", "xpu": "xpu"}  # is_<kind>() that a traced device makes true


@functools.lru_cache(maxsize=16384)  # pure in its arguments: each test's text read once
def device_holds(condition: str, device: str) -> bool | None:
    """A test of the device a tensor is on, read as the traced device (`self.device().type() == DeviceType::CUDA`
    holds on --device cuda), or of its layout or kind (false: module comment above); None for any other test."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    if device == "all":
        return None
    kind = _KIND_TEST.match(test)
    if kind is not None:
        bang, name = kind.groups()
        return ((_DEVICE_KINDS.get(name) == device) != bool(bang)) != negate
    m = _DEVICE_TEST.match(test)
    if m is None:
        return None
    bang, op, name, is_cuda = m.groups()
    result = device == "cuda" if is_cuda else (name.lower() == device) == (op == "==")
    result = result != bool(bang)
    return result != negate


@functools.lru_cache(maxsize=16384)  # pure in its arguments: each test's text read once
def _unwrap(condition: str) -> str:
    """A test without parentheses around it all: `(a || b)` -> `a || b`; `not ((a))` -> `not (a)`."""
    text = condition.strip()
    negate = text.startswith("not (") and text.endswith(")")
    inner = text[5:-1].strip() if negate else text
    while inner.startswith("(") and inner.endswith(")") and closes_at_end(inner):
        inner = inner[1:-1].strip()
    return f"not ({inner})" if negate else inner


# The C++ scalar type an input dtype runs as inside AT_DISPATCH (scalar_t), as explicit specializations name it
_CPP_SCALAR = re.compile(r"\b(?:c10::|at::)?complex<\s*(?:c10::|at::)?(float|double|Half)\s*>|\b(?:c10::|at::)?"
                         r"(Half|BFloat16)\b|\b(double|float|int64_t|int32_t|int16_t|int8_t|uint8_t|bool)\b")
_SCALAR_DTYPE = {"float": "float32", "double": "float64", "Half": "float16", "BFloat16": "bfloat16",
                 "int64_t": "int64", "int32_t": "int32", "int16_t": "int16", "int8_t": "int8", "uint8_t": "uint8",
                 "bool": "bool"}
_COMPLEX_DTYPE = {"float": "complex64", "double": "complex128", "Half": "complex32"}


def specialization_dtype(signature: str | None) -> str | None:
    """The dtype an explicit specialization is written for, from the one scalar type its parameters name
    (`gemm_internal_cublas<float>(CUDABLAS_GEMM_ARGTYPES(float))` -> float32, `c10::complex<float>` -> complex64);
    None when it names none or several."""
    found = {_COMPLEX_DTYPE[m.group(1)] if m.group(1) else _SCALAR_DTYPE[m.group(2) or m.group(3)]
             for m in _CPP_SCALAR.finditer(signature or "")}
    return found.pop() if len(found) == 1 else None


@functools.lru_cache(maxsize=16384)  # pure in its arguments: each test's text read once
def dtype_holds(condition: str, dtype: str) -> bool | None:
    """A test of a dtype read as the input's (`at::isComplexType(common_dtype)` is false for float32, `dtype ==
    ScalarType::Half` true for float16); None for any other test."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1].strip() if negate else condition.strip()
    if any(len(split_top_level(test, op, "(")) > 1 for op in ("&&", "||")):
        return None  # several tests (isreal's `isIntegralType(...) || isFloatingType(...)`): cpp_holds reads each
    m = _DTYPE_CALL.match(test)
    if m is not None:
        bang, name = (m.group(1), m.group(2)) if m.group(2) else (m.group(4), m.group(5))
        members = _DTYPE_CLASSES[name]
        if name == "isIntegralType" and re.search(r",\s*(?:/\*.*?\*/\s*)?true\s*$", m.group(3) or ""):
            members += ("bool",)  # isIntegralType(t, /*includeBool=*/true)
        result = (dtype in members) != bool(bang)
        return result != negate
    m = _DYNAMIC_CAST.match(test)
    if m is not None:  # the call's tensors are all of the input's dtype: TensorIterator needs no dynamic cast
        return bool(m.group(1)) != negate
    m = _DTYPE_COMPARE.match(test)
    named = None if m is None else _SCALAR_TYPES.get(m.group(3)) or (
        _INTEGER_TYPES.get(m.group(3)) if _INPUT_DTYPE.match(m.group(1)) else None)
    if named is not None:
        result = (named == dtype) == (m.group(2) == "==")
        return result != negate
    return None


# `std::is_same<DT, float>::value`, `!std::is_same_v<scalar_t, at::Half>`: two types compared
_IS_SAME = re.compile(r"^(!\s*)?(?:std::)?is_same(_v)?\s*<\s*([\w:]+)\s*,\s*([\w:]+)\s*>(?(2)|\s*::\s*value)$")
# the dtype a C++ type stands for, by its last name (at::Half, c10::Half, cutlass::half_t: float16)
# (the scalar types specializations name, and CUDA's and CUTLASS's own half types)
_TYPE_DTYPE = {**_SCALAR_DTYPE, "half": "float16", "half_t": "float16", "__half": "float16",
               "bfloat16_t": "bfloat16", "__nv_bfloat16": "bfloat16"}


def type_dtype(name: str, defaults: dict[str, object], seen: frozenset = frozenset()) -> str | None:
    """The dtype a C++ type of a test stands for: `scalar_t` is the input's (what AT_DISPATCH and its like run
    the kernel as), a template parameter the call bound to a type is that type's (dispatch_cutlassF<scalar_t>:
    DT), a scalar type its own; None for any other."""
    last = name.rpartition("::")[2]
    if last == "scalar_t":
        return defaults.get(DTYPE)
    bound = defaults.get(name)
    if isinstance(bound, Constant) and name not in seen:
        return type_dtype(bound.name, defaults, seen | {name})
    return _TYPE_DTYPE.get(last) if name not in defaults else None


def same_type_holds(condition: str, defaults: dict[str, object]) -> bool | None:
    """`std::is_same<DT, float>::value` with DT bound to scalar_t: true for a float32 input (type_dtype)."""
    negate = condition.startswith("not (") and condition.endswith(")")
    m = _IS_SAME.match(condition[5:-1].strip() if negate else condition.strip())
    if m is None:
        return None
    left, right = type_dtype(m.group(3), defaults), type_dtype(m.group(4), defaults)
    if left is None or right is None:
        return None
    return ((left == right) != bool(m.group(1))) != negate


def cpp_holds(condition: str, defaults: dict[str, object]) -> bool | None:
    """A C++ test of parts joined by && and || (each a one-name test), read with three values: `reduction ==
    Reduction::None && n_dims == 2` with reduction=Mean is false, whatever n_dims is."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1] if negate else condition
    for op, join in (("||", _any3), ("&&", _all3)):
        parts = _top_level(test, op)
        if len(parts) > 1:
            value = join([holds(p.strip(), defaults) for p in parts])
            return None if value is None else value != negate
    return None


@functools.lru_cache(maxsize=16384)
def _top_level(test: str, op: str) -> tuple[str, ...]:
    return tuple(split_top_level(test, op, "("))  # (a tuple: shared by every caller of one text)


def _all3(values: list) -> bool | None:
    return False if False in values else None if None in values else True


def _any3(values: list) -> bool | None:
    return True if True in values else None if None in values else False


def py_holds(condition: str, defaults: dict[str, object]) -> bool | None:
    """A Python test read with three values (true, false, unknown): `p == "fro" and (dim is None or len(dim) <= 2)`
    with p="fro", dim=None holds; what depends on anything but a literal default is unknown."""
    tree = _py_tree(condition)
    return None if tree is None else _py_value(tree, defaults)


@functools.lru_cache(maxsize=8192)
def _py_tree(condition: str):
    """The parsed test (only read, never changed: shared by the calls of one text), its comparisons' text kept on
    them (`text`, for _holds); None when it is no Python expression."""
    try:
        tree = ast.parse(condition, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            try:
                node.text = ast.unparse(node)
            except Exception:  # noqa: BLE001 - an odd literal: unparsed when asked, as before
                pass
    return tree


def _py_value(node, defaults: dict[str, object]) -> bool | None:
    if isinstance(node, ast.BoolOp):
        values = [_py_value(v, defaults) for v in node.values]
        if isinstance(node.op, ast.And):
            return False if False in values else True if all(v is True for v in values) else None
        return True if True in values else False if all(v is False for v in values) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _py_value(node.operand, defaults)
        return None if value is None else not value
    if isinstance(node, ast.Name):
        value = defaults.get(node.id, _UNKNOWN)
        return None if value is _UNKNOWN or isinstance(value, Constant) else bool(value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
            and len(node.args) == 2 and isinstance(node.args[0], ast.Name):
        types = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        return _is_instance(defaults, node.args[0].id, [ast.unparse(t) for t in types])
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        if CONSTANT in defaults:  # a traced call: its tensors' ranks and sizes (`input.dim() == 4`)
            found = pyflow.value(node, defaults)
            if isinstance(found, bool):
                return found
        try:
            return _holds(getattr(node, "text", None) or ast.unparse(node), defaults)  # one name against a
            # literal: the forms above
        except Exception:  # noqa: BLE001 - an odd literal: unknown
            return None
    return None


def _holds(condition: str, defaults: dict[str, object]) -> bool | None:
    """One name tested (C++ or Python), or a documented global setting; `not (...)` around it. A name cast
    (`static_cast<at::padding_mode>(mode_int) == ...`, a switch over a cast) is tested as the name."""
    negate = condition.startswith("not (") and condition.endswith(")")
    test = condition[5:-1] if negate else condition
    if "static_cast" in test:
        test = _CAST.sub(r"\1", test)
    setting = _SETTING.match(test)
    if setting is not None:  # `globalContext().deterministicAlgorithms()`: a documented default
        bang, name, op, constant = setting.groups()
        value = CONTEXT_DEFAULTS.get(name)
        if value is None or (op is None) != isinstance(value, bool):
            return None
        if op is not None:  # an enum setting compared with a constant, by the constants' last names
            value = (value.rpartition("::")[2] == constant.rpartition("::")[2]) == (op == "==")
        result = value if not bang else not value
        return not result if negate else result
    m = _TEST.match(test)
    deref = False
    if m is not None:
        bang, deref, name, op, literal, presence = m.groups()
    else:
        m = _PY_TEST.match(test)
        if m is None:
            return None
        bang, name, is_not, op, literal = m.groups()
        presence = "is" if " is" in test and op is None else None
        if presence and not is_not:
            bang = "" if bang else "not"  # `x is None`: the presence test negated
    if name not in defaults:
        return None
    value = defaults[name]
    if isinstance(value, Tensor) and not presence:
        return None  # a tensor argument compared or tested as a number: its sizes are read elsewhere (size_expr_holds)
    if presence:
        result = value is not None
    elif op:
        right = _literal(literal)
        if isinstance(right, Constant) and not isinstance(value, Constant) and CONSTANT in defaults:
            known = defaults.get(CONSTANTS, {}).get(right.name)
            return _against_constant(value, right, op, known if known is not None else defaults[CONSTANT],
                                     bool(bang), negate, literal)
        if value is None or right is _UNKNOWN or isinstance(value, Constant) and not isinstance(right, Constant) \
                or isinstance(value, str) != isinstance(right, str):
            return None  # (`p == "nuc"` with p=2.0, a schema's str default against a C++ constant: not said here)
        if isinstance(value, (Constant, str)) and op not in ("==", "!="):
            return None  # `reduction == Reduction::Mean` with reduction=Mean: constants compare by name only (and
            # strings by value: `p == "nuc"` with p="fro")
        if isinstance(right, Constant) and not isinstance(value, (Constant, bool)) \
                and right.name in defaults.get(CONSTANTS, {}):
            right = defaults[CONSTANTS][right.name]  # `mode == MODE_MAX`, `constexpr int MODE_MAX = 2;` above
        elif isinstance(value, Constant) != isinstance(right, Constant):
            return None
        compare = {"==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, ">": operator.gt,
                   "<": operator.lt}[op]
        result = compare(value, right)
    elif name in defaults.get(OPTIONALS, ()) and not deref:  # C++ `if (min)` of a `Scalar? min`: whether it has
        result = value is not None  # a value (`if (*flag)` reads the value)
    else:
        result = bool(value)
    result = not result if bang else result
    return not result if negate else result


# The names of the schemas' optional parameters (`Scalar? min`), where a body's defaults hold them: in C++ a bare
# `if (min)` of one tests whether it has a value (std::optional, OptionalScalarRef), not the value (min=0.0 is given)
OPTIONALS = "(optionals)"
_OPTIONAL_ARG = re.compile(r"\?\s+(\w+)")


@functools.lru_cache(maxsize=16384)
def _plain_parameter(signature: str | None, name: str) -> bool:
    """Whether the body declares `name` as a parameter of a type that is not optional (sortKeyValueInplace's `bool
    stable`, though sort.stable's schema says `bool? stable`): its bare test reads the value."""
    for part in split_parameters(signature or "()"):
        if re.search(rf"\b{re.escape(name)}\s*(?:=.*)?$", part.strip(), re.S):
            return not re.search(r"optional|Optional", part)
    return False


# A traced call's defaults hold this key (trace/call.py): a C++ constant's integer value in the body's file, by name
CONSTANT = "(constant)"


def _against_constant(value, right: "Constant", op: str, constant, bang: bool, negate: bool,
                      written: str | None = None) -> bool | None:
    """A value a traced call gave (a string, an int, or an int made from a string: pyflow.Named) against a C++
    constant (`constant`: its integer, or a function of its name as `written`, qualified, that finds it): by the
    constant's integer value where its file defines it (`constexpr int MODE_MAX = 2;`) or an enum of ATen's
    headers numbers it (`Reduction::Mean` is 1: the int an aten call recorded by a profiler passes), else by
    name, as PyTorch names enum members after the strings (reduction 'none' is at::Reduction::None, approximate
    'tanh' GeluType::Tanh, mode 'reflect' at::padding_mode::reflect); None when neither says."""
    if op not in ("==", "!="):
        return None
    # (a value made from a string compares by name where its file has no number for it: an enum's own numbering is
    # read only for a number the call gave as such)
    lookup = right.name if isinstance(value, pyflow.Named) or not written else written
    number = constant if isinstance(constant, int) else constant(lookup) if constant is not None else None
    name = value.name if isinstance(value, pyflow.Named) else value if isinstance(value, str) else None
    if number is not None and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and float(value).is_integer():  # (a literal read from C++ text is a float: `1` -> 1.0)
        result = int(value) == number
    elif name is not None:
        result = name.lower() == right.name.lower()
    else:
        return None
    result = result == (op == "==")
    result = not result if bang else result
    return not result if negate else result


def _is_instance(defaults: dict[str, object], name: str, types: list[str]) -> bool | None:
    """isinstance(default, types) for a Python default that is a literal (str, number, bool, None): a literal is no
    instance of any other class (torch.SymInt, Tensor); None when the name has no such default."""
    if name not in defaults or isinstance(defaults[name], Constant):
        return None
    value = defaults[name]
    return any(isinstance(value, _BUILTIN_TYPES[t]) for t in types if t in _BUILTIN_TYPES)


# The integer constants a C++ file defines for itself (`constexpr int MODE_MAX = 2;`, `#define MODE_SUM 0`, an enum's
# `MAX = 2`), by name: a parameter's value compares with them (_holds)
CONSTANTS = "(constants)"
_CONSTANT = re.compile(r"^\s*(?:(?:static\s+)?(?:constexpr|const)\s+(?:static\s+)?(?:unsigned\s+)?[\w:]+\s+([A-Za-z_]\w*)"
                       r"\s*=\s*(-?\d+)\s*;|#\s*define\s+([A-Za-z_]\w*)\s+\(?(-?\d+)\)?\s*$)", re.M)


@functools.lru_cache(maxsize=1024)
def file_constants(root: str | None, file: str | None) -> dict[str, int]:
    """The integer constants `file` defines at the start of a line (constexpr/const declarations, #defines), read
    from the checkout's text; {} when it cannot be read (a moved checkout: the tests stay unknown). A name defined
    twice with different values is left out."""
    if not root or not file:
        return {}
    try:
        with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return {}
    out: dict[str, int] = {}
    twice: set[str] = set()
    for m in _CONSTANT.finditer(text):
        name, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if out.get(name, int(value)) != int(value):
            twice.add(name)
        out[name] = int(value)
    return {k: v for k, v in out.items() if k not in twice}


@dataclass(frozen=True)
class Constant:
    """A named constant, by its last name: the schema's `Mean` is `at::Reduction::Mean` in C++."""
    name: str


@functools.lru_cache(maxsize=16384)  # pure in the text; what it returns is immutable
def _literal(text: str) -> object:
    if text in ("None", "nullptr", "c10::nullopt", "std::nullopt"):
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" and text[0] not in text[1:-1] \
            and "\\" not in text:
        return text[1:-1]  # a string without escapes: p="fro" in a Python def, str mode="constant" in a schema
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"[A-Za-z_][\w:]*", text):
        return Constant(text.rpartition("::")[2])
    try:
        return float(text.rstrip("fF")) if re.fullmatch(r"-?\d+(\.\d*)?([eE]-?\d+)?[fF]?", text) else _UNKNOWN
    except ValueError:
        return _UNKNOWN


_DIRECTIVE_TERM = re.compile(r"\[#if ([^\]]*)\]")


def _by_position(defaults: dict[str, object], schema: str, signature: str | None) -> None:
    """An op's kernel takes the schema's arguments in order: a value known under the schema's name reaches the
    kernel's parameter of another name at the same place (native_batch_norm's `bool training` is batch_norm_cuda's
    `bool train`). Only when both list as many parameters."""
    names = [p[0] for p in _schema_parameters(schema)]
    params = [re.search(r"([A-Za-z_]\w*)\s*(?:=.*)?$", p.strip(), re.S) for p in split_parameters(signature or "()")]
    if len(names) != len(params):
        return
    own = {}  # the schema's defaults by its own names (schema_defaults keeps only the kernel's names)
    for name, text in _ARG_DEFAULT.findall(schema_arguments(schema)):
        value = _literal(text.strip())
        if value is not _UNKNOWN:
            own[name] = value
    for name, param in zip(names, params):
        if param is None or param.group(1) == name or param.group(1) in defaults:
            continue
        if name in defaults:
            defaults[param.group(1)] = defaults[name]
        elif name in own:  # (multinomial's `bool replacement=False` is the kernel's `with_replacement`)
            defaults[param.group(1)] = own[name]


def _schema_parameters(schema: str) -> list[tuple[str]]:
    out = []
    for part in split_parameters(schema_arguments(schema)):
        decl = part.partition("=")[0].split()
        if part.strip() != "*" and len(decl) >= 2:
            out.append((decl[-1],))
    return out


_ELSE_IF = re.compile(r"\s*\}\s*else\s+if\b")
DEVICE_CODE = frozenset({"global_kernel", "device_function"})  # bodies whose locals locals_tested leaves alone
MAX_TESTED_KEPT = 8192  # bodies split into statements kept by a process (_TESTED; past it: all dropped)
_TESTED: dict[tuple, tuple | None] = {}
_SLICES: dict[tuple, object] = {}  # (body, test, names[, values read]) -> its slice, then the names' values
MAX_TESTED_LOCALS = 16  # tests of a body's locals read per body (BodyGuards.locals_tested; past them: unknown)
_IDENT = re.compile(r"(?<![\w.>:])[A-Za-z_]\w*(?![\w(])")  # a bare name (not a member, a call or a qualified name)
_NUMERIC_LOCAL = re.compile(r"^[ \t]*(?:static\s+)?(?:const(?:expr)?\s+)?" + function_value.NUMBER_TYPE +
                            r"\s+(?:const\s+)?([A-Za-z_]\w*)\s*=(?!=)", re.M)


@functools.lru_cache(maxsize=8192)
def _numeric_locals(root: str, file: str, line: int, end_line: int) -> tuple[str, ...]:
    """The names a body declares as a number or bool with a value (`int bits = ...;`, `const auto n = ...;`)."""
    lines = file_lines(root, file)
    return tuple(dict.fromkeys(_NUMERIC_LOCAL.findall("\n".join(lines[line:end_line])))) if lines else ()


def _depth(text: str) -> int:
    """The brace depth at the end of `text` (its strings and comments aside)."""
    text = re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', "", text, flags=re.S)
    return text.count("{") - text.count("}")


def _as_value(value, defaults: dict):
    """A body's known value as function_value reads one: a traced call's tensor as a TensorArg on the traced
    device, an undefined one as NULL, a whole float (`groups=32`) as an int."""
    if isinstance(value, Tensor):
        device = defaults.get(DEVICE)
        return function_value.TensorArg(device if isinstance(device, str) and device != "all" else None, value.dtype,
                                        value.sizes)
    if value is None:
        return function_value.NULL
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _argument_value(text: str, values: dict[str, object]):
    """The value of an argument a condition's call passes: a name the trace knows the value of (None: an undefined
    tensor; a traced call's tensor as a TensorArg of its dtype), a literal, else _UNKNOWN."""
    text = text.strip()
    if re.fullmatch(r"[A-Za-z_]\w*", text):
        value = values.get(text, _UNKNOWN)
        if isinstance(value, Tensor):
            device = values.get(DEVICE)
            return function_value.TensorArg(device if isinstance(device, str) and device != "all" else None,
                                            value.dtype, value.sizes)
        return value
    value = _literal(text)
    return _UNKNOWN if isinstance(value, Constant) else value


MAX_DEFINITIONS = 8  # a call that may reach more definitions than this is not read (its value stays unknown)
_PARAMETER = re.compile(r"([A-Za-z_]\w*)\s*(?:=.*)?$", re.S)


def _bind_parameters(signature: str | None, args: list, tensor=None) -> dict | None:
    """The definition's parameters (by name, from its signature) bound to the known values of `args`, a tensor
    parameter (`const Tensor& targets`) the call says nothing of to `tensor` (function_value.TensorArg); None when
    the counts differ or an argument of a known type (function_value.Typed) does not fit its parameter's type
    (another overload's)."""
    params = split_parameters(signature or "()")
    if len(params) != len(args):
        return None
    out = {}
    for param, value in zip(params, args):
        m = _PARAMETER.search(param.strip())
        if m is None:
            continue
        declared = function_value._type_name(param.strip()[:m.start(1)])
        if isinstance(value, function_value.Typed) and declared and value.type != declared \
                and f"optional<{value.type}>" != declared:
            return None
        if declared == "Tensor" and value is _UNKNOWN and tensor is not None:
            value = tensor  # a tensor of the trace: on the traced device, of the input's dtype
        if value is not _UNKNOWN:
            out[m.group(1)] = value
    return out


def _pass(defaults: dict[str, object], name: str, arg: str) -> None:
    """A parameter a C++ op call passes: a literal is its value, a name the caller's value of that name (the same
    name passed through keeps it), anything else unknown (not the op's default: hardtanh calls `at::clamp(self,
    min_val, max_val)`, so clamp's `min=None` does not apply)."""
    if isinstance(arg, Tensor):  # a tensor the caller knows (walk/sites._known_literal)
        defaults[name] = arg
        return
    if isinstance(arg, tuple):  # an int list the caller knows (a weight's sizes: the kernel size)
        defaults[name] = list(arg)
        return
    if iterators.WRAPPED.match(arg.strip()):
        defaults[name] = iterators.CPU_SCALAR  # a Scalar overload's `wrapped_scalar_tensor(other)` (mul_.Scalar)
        return
    value = _literal(arg.strip())
    if value is not _UNKNOWN and not isinstance(value, Constant):
        defaults[name] = value
    elif isinstance(value, Constant) and "::" in arg:
        defaults[name] = value  # an enum constant: `at::Reduction::Mean`
    elif arg.strip() != name:
        if arg.strip() in defaults:
            defaults[name] = defaults[arg.strip()]
        else:
            defaults.pop(name, None)


class BodyGuards:
    """The Guards of each body a walk enters, read once per body and op: a C++ body with the default arguments of
    the op being walked (the builder's innermost entry), a Python def with its own parameters' defaults."""

    def __init__(self, con, device: str, builder, build: "BuildContext"):
        self.con, self.device, self.builder, self.build = con, device, builder, build
        self.cache: dict[tuple, Guards] = {}
        self.functions: dict[tuple, object] = {}  # (name, file, args) -> what it returns (function_value)
        self.read_from: dict[tuple, list[dict]] = {}  # the same key -> the definitions read
        self.defs: dict[tuple[str, str], list[dict]] = {}  # (name, file) -> the definitions a call may reach

    def over(self, d: dict) -> Guards:
        """The #if branches and if blocks over a C++ body (body(), calls() and device_calls() ask in turn), read
        with the values the ops being walked pass down: each op's schema defaults, an inner op's over an outer's;
        a parameter an inner schema has no default for keeps the value an outer op gave it by that name
        (nll_loss's reduction=Mean reaches nll_loss_forward's `int reduction` and the CUDA kernel's test of it)."""
        schemas = tuple((e["schema"], tuple(sorted((e.get("given") or {}).items()))) for e in self.builder.defaults)
        given = tuple(sorted((d.get("call_values") or {}).items()))
        types = d.get("call_types") or {}  # the classes its parameters hold (trace/typeids.py)
        views = self.builder.defaults[-1].get("strided") if self.builder.defaults else None
        strided = MAYBE_STRIDED if views == [MAYBE_STRIDED] else bool(views)
        key = (d.get("qualified_name"), d.get("file"), d.get("line"), schemas, given, tuple(sorted(types.items())),
               strided, tuple(tuple(sorted((e.get("outputs_like") or {}).items())) for e in self.builder.defaults))
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = self._kept(key, d, schemas, given, types, strided)
            if found.held and d.get("file"):  # (the trace's record of tests read as true, per file: rank.py)
                self.builder.trace.__dict__.setdefault("held", {}).setdefault(d["file"], set()).update(found.held)
        return found

    def _kept(self, key: tuple, d: dict, schemas: tuple, given: tuple, types: dict, strided) -> Guards:
        """The Guards of `key`, read once per process, index and build: a body's tests read the same in every
        trace of one build, dtype, device and call (~30% of a trace's time was reading them again). The build
        settings a reading used are said again by each trace that takes it (BuildContext.used, its header)."""
        shared = q.resident(self.con).guards
        whole = (key, self.device, self.build.key(), self.build.call.call.text if self.build.call else None,
                 self.build.unknown_arguments)
        kept = shared.get(whole)
        if kept is not None:
            self.build.used.update(kept[1])
            return kept[0]
        with self.build.recording() as used:
            found = self._read(d, schemas, given, types, strided)
        if len(shared) >= GUARDS_KEPT:
            shared.clear()  # (a long notebook session: start again rather than grow without bound)
        shared[whole] = (found, used)
        return found

    def _read(self, d: dict, schemas: tuple, given: tuple, types: dict, strided) -> Guards:
        """The Guards of a body read with the values the ops being walked pass down (over)."""
        # the input's dtype decides dtype tests, the traced device device tests
        defaults: dict[str, object] = {DTYPE: self.build.dtype, DEVICE: self.device,
                                       MEMORY_FORMAT: INPUT_MEMORY_FORMAT, SIZES: "general", STRIDED: strided,
                                       CONSTANTS: file_constants(self.builder.trace.root, d.get("file"))}
        for schema, passed in schemas:
            passed = dict(passed)
            # a parameter passed on by its own name keeps the caller's value, else this schema's default
            defaults.update({k: v for k, v in schema_defaults(schema, d.get("signature")).items()
                             if k not in passed or (isinstance(passed[k], str) and passed[k].strip() == k
                                                     and k not in defaults)})
            for name, arg in passed.items():  # what a C++ op call passes (walk/sites.passed_arguments)
                _pass(defaults, name, arg)
        call = self.build.call
        if call is not None:  # a traced call's values win over the schemas' defaults (trace/call.py) ...
            defaults.update(call.cpp_values(tuple(s for s, _ in schemas), d))
            defaults[CONSTANT] = functools.partial(call.constant, d.get("file"))
            for name, arg in dict(schemas[-1][1] if schemas else ()).items():
                # ... but a literal (or a tensor) the innermost op call passes is exact
                value = arg if isinstance(arg, Tensor) else list(arg) if isinstance(arg, tuple) else \
                    iterators.CPU_SCALAR if iterators.WRAPPED.match(arg.strip()) else _literal(arg.strip())
                if value is not _UNKNOWN and (not isinstance(value, Constant) or "::" in arg):
                    defaults[name] = value
        for e in self.builder.defaults:  # an output its meta function sizes like an input (walk/ops.py)
            for out, like in (e.get("outputs_like") or {}).items():
                if out not in defaults and isinstance(defaults.get(like), Tensor):
                    defaults[out] = replace(defaults[like], text=f"{out} (sized like {like})", contiguous=True)
        if schemas and (d.get("file"), d.get("line")) in q.resident(self.con).op_kernel_places:
            _by_position(defaults, schemas[-1][0], d.get("signature"))
        for name, text in given:  # literals the call that reached this body passes (walk/bodies.py), and a
            value = text if isinstance(text, (Tensor, iterators.Operands)) else list(text) if isinstance(
                text, tuple) else _literal(text)  # traced call's tensor (int list, iterator) passed on
            if value is not _UNKNOWN:
                defaults[name] = value
        if call is not None and given:  # the size locals those values decide (host_softmax's dim_ -> dim_size)
            defaults.update({k: v for k, v in call.size_locals(d, defaults).items() if k not in defaults})
        if call is not None and d.get("end_line") and self.builder.trace.root:
            defaults.update(self.list_locals(d, defaults))  # (`auto kernel_size = weight.sizes().slice(2);`)
        if d.get("end_line") and self.builder.trace.root:
            body = _body_text(self.builder.trace.root, d.get("file"), d.get("line"), d.get("end_line"))
            if "TensorIterator::" in body:  # (`auto iter = TensorIterator::binary_op(result, self, other);`; a
                # name trace's tensors are of the traced device)
                defaults.update(iterators.factory_locals(body, defaults, None if call is not None else False))
            for name in [k for k, v in defaults.items() if isinstance(v, iterators.Operands)]:
                defaults[name] = iterators.after_removals(body, name, defaults[name])  # (`iter.ninputs() == 2`)
        defaults[COUNTS] = count_locals(self.builder.trace.root, d.get("file"), d.get("line"), d.get("end_line"))
        span = (self.builder.trace.root, d.get("file"), d.get("line"), d.get("end_line"))
        for name in format_locals(*span) if defaults.get(MEMORY_FORMAT) == INPUT_MEMORY_FORMAT else ():
            defaults.setdefault(name, Constant(INPUT_MEMORY_FORMAT))  # (a traced call's own reading wins)
        props = _props_locals(*span)
        if props:  # the device's properties (pytorch/device_props.py): their tests read the GPU traced for
            cc = self.build.compute_capability()
            defaults[PROPS] = (props, cc)
            if cc is not None:
                defaults.update({k: v for k, v in device_props.capability_locals(_body_text(*span), props,
                                                                                 cc).items()
                                 if k not in defaults})
        if d.get("file") and d.get("end_line") and d["file"] in q.resident(self.con).chooser_rows:
            defaults.update(self.chosen(d, defaults))
        defaults[OPTIONALS] = frozenset(n for schema, _ in schemas for n in _OPTIONAL_ARG.findall(schema)
                                        if not _plain_parameter(d.get("signature"), n))
        for name in self.build.unknown_arguments:  # given, value unknown (trace/__init__._given_not_default)
            defaults.pop(name, None)
        rows = q.conditions_over(self.con, d["file"], q.span(d)) if d.get("file") else []
        if rows and call is not None and d.get("end_line") and self.builder.trace.root and not (
                d.get("kind") in DEVICE_CODE or d.get("device_function")):
            # (a traced call's values: a name's defaults settle no local a test reads on the three trees, and
            # reading them cost a first trace 1.35x; device code's locals come from thread indices)
            defaults.update(self.locals_tested(d, defaults, rows))
        if types:  # `typeid(f) == typeid(TensorAssign)` with f a ReduceAdd: false
            rows = [{**r, "condition": typeids.written(r["condition"], types)} for r in rows]
        return Guards([self.with_values(r, d["file"], defaults) for r in rows], self.device, defaults,
                      d.get("file"), self.build)

    def chosen(self, d: dict, defaults: dict) -> dict:
        """The value of each chooser local of body `d` (`ConvBackend backend = _select_conv_backend(input, weight,
        bias, ..., params);`, then `switch (backend)`) that the values known settle, as a Constant (its last name):
        the chooser is read with the arguments its call passes, valued by the body's statements above it
        (function_value.settle_locals: `auto input = input_r;`, the fields of `ConvParams<int64_t> params`)."""
        out: dict[str, object] = {}
        found = q.choices_within(self.con, d["file"], d["line"], d["end_line"])
        lines = function_value._read(os.path.join(self.builder.trace.root or "", d["file"]), d["line"],
                                     d["end_line"]) if found and self.builder.trace.root else None
        if not lines:
            return out
        for choice in found:
            texts = q.arguments_of_call(self.con, d["file"], choice["line"], choice["callee"])
            prefix = lines[:choice["line"] - d["line"]]
            text = "\n".join(function_value._active(prefix, self.build.holds) or [])
            if texts is None or "{" not in text or _depth(text[text.index("{") + 1:]) != 0:
                continue  # (a chooser called inside a block of the body: its locals there are not read)
            env = {k: _as_value(v, defaults) for k, v in defaults.items() if isinstance(k, str) and k.isidentifier()}
            env[function_value.BUILD] = self.build.holds
            env[function_value.CALLS] = functools.partial(self._nested, d["file"], 1)
            env = function_value.settle_locals(text[text.index("{") + 1:], env)
            args = [env.get(a.strip(), _UNKNOWN) if a.strip().isidentifier() else function_value._eval(a, env)
                    for a in texts]
            value = self.function_value(choice["callee"], d["file"],
                                        [_UNKNOWN if a is None or a is function_value.UNKNOWN else
                                         None if a is function_value.NULL else a for a in args])
            if isinstance(value, function_value.Const):
                out[choice["variable"]] = Constant(value.name)
        return out

    def locals_tested(self, d: dict, defaults: dict, rows: list[dict]) -> dict:
        """The value of each local of body `d` that a test of it reads, computed from the values known by the
        statements above the test at the body's top level (function_value.settle_locals, with C++'s math:
        randperm_out_cuda's `int bits = std::min(64, static_cast<int>(std::ceil(std::log2(nd - ...))));` is 23
        for n=1024, and `bits <= 32` holds). A local the tests read with different values is left unknown."""
        declared = set(_numeric_locals(self.builder.trace.root, d["file"], d["line"], d["end_line"])) - set(defaults)
        wanted: dict[int, set[str]] = {}
        for r in rows:
            if r["kind"] == "if" and r["line"] > d["line"]:
                names = declared.intersection(_IDENT.findall(r["condition"]))
                if names:
                    wanted.setdefault(r["line"], set()).update(names)
        read = self._statements_and_values(d, defaults) if wanted else None
        if read is None:
            return {}
        key, top, starts, env0 = read
        lines = file_lines(self.builder.trace.root, d["file"])
        out: dict[str, object] = {}
        for line, names in sorted(wanted.items())[:MAX_TESTED_LOCALS]:
            i = bisect.bisect_right(starts, line) - 1  # the statement holding the test
            if i < 0 or not (top[i].start == line or (top[i].text.startswith("if") and line <= top[i].end and
                                                      _ELSE_IF.match(lines[line - 1]))):
                continue  # (a test inside a block: its locals there are not read; an else-if of a test at the top
                # level is read after the statements above the chain)
            found = self._settled(key, top, i, line, frozenset(names), env0)
            for name in names:
                value = found.get(name)
                if not isinstance(value, (int, float)) or out.get(name, value) != value:
                    out[name] = None  # (unknown, or read with two values)
                else:
                    out[name] = value
        return {k: v for k, v in out.items() if v is not None}

    def _statements_and_values(self, d: dict, defaults: dict) -> tuple | None:
        """(its key, the top-level statements of body `d`, their first lines, the values known as function_value
        reads them), or None where the body's text is not at hand."""
        lines = file_lines(self.builder.trace.root, d["file"])
        if not lines:
            return None
        key, top = self._top(d, lines)
        if not top:
            return None
        env0 = {k: _as_value(v, defaults) for k, v in defaults.items() if isinstance(k, str) and k.isidentifier()}
        return key, top, [s.start for s in top], env0

    def _top(self, d: dict, lines: list[str]) -> tuple[tuple, tuple | None]:
        """(its key, the top-level statements of body `d` as the build compiles it), split once per process and
        build."""
        key = (self.builder.trace.root, d["file"], d["line"], d["end_line"], self.build.key())
        top = _TESTED.get(key, _TESTED)
        if top is _TESTED:
            if len(_TESTED) >= MAX_TESTED_KEPT:
                _TESTED.clear()
            top = _TESTED[key] = function_value.top_statements(lines[d["line"] - 1:d["end_line"]], d["line"],
                                                               self.build.holds)
        return key, top

    def list_locals(self, d: dict, defaults: dict) -> dict:
        """Locals of body `d` that are a tensor's sizes, or a slice of them (`auto kernel_size =
        weight.sizes().slice(2);`, Convolution.cpp:1585: [3, 3] for a 3x3 weight), as an int list passed on to
        the ops and helpers the body calls (conv_depthwise2d_cuda's `kernel_size[1]` is
        conv_depthwise2d_forward_out's `kW`). The tensor is valued by the statements above (a top-level one
        only), the helpers they call read from their bodies: `weight = view4d(weight);` under `if (k == 3 && ...)`
        runs for a 1-d convolution's 3-d weight (view4d returns `tensor.unsqueeze(2)`), for a 2-d one it does
        not."""
        found = [f for f in sizes_locals(self.builder.trace.root, d["file"], d["line"], d["end_line"])
                 if f[0] not in defaults]
        read = self._statements_and_values(d, defaults) if found else None
        if read is None:
            return {}
        key, top, starts, env0 = read
        out: dict[str, object] = {}
        for name, tensor, start, stop, line in found:
            i = bisect.bisect_right(starts, line) - 1
            if i < 0 or top[i].start != line:
                continue  # (declared inside a block)
            t = self._settled(key, top, i, line, frozenset({tensor}), env0, d["file"]).get(tensor)
            if isinstance(t, function_value.TensorArg) and t.sizes is not None:
                out[name] = list(t.sizes)[int(start or 0):int(stop) if stop else None]
        return out

    def _settled(self, key: tuple, top: tuple, i: int, line: int, names: frozenset, env0: dict,
                 calls_from: str | None = None) -> dict:
        """The values of `names` after the statements top[:i] that set them (function_value.slice_setting), read
        once per body, test and values of the names those statements read (a body is read again for each op and
        call that reaches it, mostly with the same values). With `calls_from` (the body's file), a helper those
        statements call is read from its body (`weight = view4d(weight);`: `return tensor.unsqueeze(2);`)."""
        kept = _SLICES.get((key, line, names))
        if kept is None:
            sl = function_value.slice_setting(top[:i], names)
            reads = frozenset(n for st in sl for n in function_value.names_in(st))
            kept = _SLICES[(key, line, names)] = (sl, reads)
        sl, reads = kept
        if not sl:
            return {}
        memo_key = (key, line, names, tuple(sorted((n, repr(env0[n])) for n in reads if n in env0)), calls_from)
        found = _SLICES.get(memo_key)
        if found is None:
            if len(_SLICES) >= MAX_TESTED_KEPT:
                _SLICES.clear()
            env = {**env0, function_value.BUILD: self.build.holds}
            if calls_from is not None:
                env[function_value.CALLS] = functools.partial(self._nested, calls_from, 1)
            env = function_value.settle_statements(sl, env)
            found = _SLICES[memo_key] = {n: env.get(n) for n in names}
        return found

    def with_values(self, row: dict, file: str, values: dict | None = None) -> dict:
        """A condition row with the functions it calls written as the value they return in the build traced
        (trace/function_value.py): `if (at::native::cudnnv8_enabled_check_debug())` is `false` in the fork's
        USE_MACA build; a chooser compared with a constant, and a call of arguments that is the test or one part of
        it (`... && at::_use_cudnn_ctc_loss(log_probs, targets, ...)`), are read with the values the trace knows
        (`values`); the row then also keeps `shown`, the test with each such call's value and where it was read."""
        if row["kind"] == "#if":
            return row
        text = row["condition"]
        if "[#if " in text:  # a flag set under an #if (extract/cpp_conditions.py): the build says whether it is
            text = _DIRECTIVE_TERM.sub(lambda m: {True: "true", False: "false"}.get(self.build.holds(m.group(1)),
                                                                                     m.group(0)), text)
        shown_calls = None
        props = values.get(PROPS) if values is not None else None
        if props and props[1] is not None and ("major" in text or "minor" in text):
            text = device_props.substitute(text, props[0], props[1])  # `dprops->major == 8`: `9 == 8`
        if "()" in text and function_value.calls_in(text):
            before = text
            text = function_value.substitute(text, lambda name: self.function_value(name, file))
            if text != before:  # shown with each call's value and where it was read
                shown_calls = function_value.substitute(
                    before, lambda name: self.function_value(name, file),
                    lambda name: ", ".join(f"{d['file']}:{d['line']}"
                                           for d in self.read_from.get(self._key(name, file, None), ())))
        chooser = function_value.compared_call(text) if values is not None and "(" in text else None
        if chooser is not None:  # `_select_batch_norm_backend(input, weight, ...) == BatchNormBackend::Cudnn`
            value = self.function_value(chooser[0], file, [_argument_value(a, values) for a in chooser[1]])
            if isinstance(value, function_value.Const):
                same = value.name == chooser[3].rpartition("::")[2]
                text = "true" if same == (chooser[2] == "==") else "false"
        shown = None
        if values is not None and function_value.has_argument_calls(text):  # a bool call of arguments: the
            # test, or one part of it
            found = function_value.rewrite_calls(
                text, lambda name, args: self.call_value(name, file, [_argument_value(a, values) for a in args]),
                lambda part: holds(part, values) is not None)
            if found is not None:
                text, shown = found
        if text == row["condition"]:
            return row
        shown = shown if shown is not None else shown_calls
        return {**row, "condition": text} if shown is None else {**row, "condition": text, "shown": shown}

    def call_value(self, name: str, file: str, args: list) -> tuple[bool, str] | None:
        """(what the call `name(args)` returns, where that was read) when it is a bool (function_value)."""
        value = self.function_value(name, file, args)
        if not isinstance(value, bool):
            return None
        return value, ", ".join(f"{d['file']}:{d['line']}" for d in self.read_from.get(self._key(name, file, args),
                                                                                        ()))

    def function_value(self, name: str, file: str, args: list | None = None, depth: int = 0, this=None):
        """What the function or op `name` (qualified as written) returns, read from the definitions the call may
        reach in the build traced (definitions()); `args`: the values the call passes, in order (_UNKNOWN where it
        does not say), bound to each definition's parameters; `this`: the function_value.Struct whose method
        `name` (`ConvParams::is_depthwise`) is, its fields read by name in the body. Several definitions answer
        when all that the call's arguments fit read the same value."""
        key = self._key(name, file, args) + ((repr(this),) if this is not None else ())
        if key not in self.functions:
            self.functions[key] = None  # (a function that calls itself reads unknown)
            values, read = [], []
            for d in self.definitions(name, file):
                env = _bind_parameters(d.get("signature"), args, self.tensor()) if args else {}
                if env is None:
                    continue  # another overload: the arguments do not fit its parameters
                if this is not None:
                    env = {**dict(this.fields), **env, function_value.THIS: this}
                calls = None if depth >= function_value.MAX_CALL_DEPTH else functools.partial(
                    self._nested, d["file"], depth + 1)
                macro = q.function_macro(self.con, d["from_macro"], d["file"]) if d.get("from_macro") else None
                if macro is not None:  # a function a macro writes: the macro's body with the invocation's arguments
                    values.append(function_value.expansion_value(self.builder.trace.root, d["file"], d["line"],
                                                                 {**macro, "name": d["from_macro"]},
                                                                 self.build.holds, env, calls))
                else:
                    values.append(function_value.body_value(self.builder.trace.root, d["file"], d["line"],
                                                            d["end_line"], self.build.holds, env, calls))
                read.append(d)
            agreed = values and all(v is not None and v == values[0] for v in values)
            self.functions[key] = values[0] if agreed else None
            self.read_from[key] = read
        return self.functions[key]

    def _nested(self, file: str, depth: int, name: str, args: list, this=None):
        """A call inside a function body read for its value (function_value._call)."""
        return self.function_value(name, file, [_UNKNOWN if a is function_value.UNKNOWN else a for a in args], depth,
                                   this)

    @staticmethod
    def _key(name: str, file: str, args: list | None) -> tuple:
        return name, file, tuple(map(repr, args or ()))

    def definitions(self, name: str, file: str) -> list[dict]:
        """The definitions a call of `name` may reach in the build traced: for an op called as `at::name` the
        kernels of its overloads' dispatch rows for the traced device; else the functions of that qualified name,
        those in `file` first (only they, when there are any); of each, those whose #if the build does not rule
        out (cudnn/LossCTC.cpp's `#if (!AT_CUDNN_ENABLED())` twin is not read under AT_CUDNN_ENABLED()=1). None
        past MAX_DEFINITIONS (the call reads unknown)."""
        found = self.defs.get((name, file))
        if found is None:
            natives = q.native_for_cpp_api(self.con, name[4:]) if re.fullmatch(r"at::\w+", name) else []
            if natives:
                found = [q.symbol_by_id(self.con, link["symbol_id"]) for n in natives
                         for row in q.rows_for_device(q.dispatch_rows(self.con, n["id"]), self.device)
                         for link in q.kernel_links(self.con, row["id"]) if link["symbol_id"] is not None]
            else:
                kinds = ("function", "method") if "::" in name else ("function",)  # (`ConvParams::use_miopen`,
                found = [s for s in q.symbols_named(self.con, name.rpartition("::")[2])  # `CUDAHooks::...`)
                         if s["kind"] in kinds and s["qualified_name"].endswith(name)]
                found = [s for s in found if s["file"] == file] or found
            found = [s for s in found if self.build.false_at(s["file"], s["line"]) is None]
            found = self.defs[(name, file)] = found if len(found) <= MAX_DEFINITIONS else []
        return found

    def tensor(self) -> function_value.TensorArg:
        """What a tensor argument the trace does not otherwise know is: on the traced device, of the input's
        dtype (as the conditions rows read a test of any tensor's device and dtype)."""
        return function_value.TensorArg(None if self.device == "all" else self.device, self.build.dtype)

    def python(self, fn: dict) -> Guards:
        """The if blocks over a Python def, read with its parameters' defaults (F.embedding's `if max_norm is not
        None:`, max_norm=None: the renorm under it is not the default path)."""
        defaults = {k: v for k, v in python_defaults(fn.get("signature")).items()
                    if k not in self.build.unknown_arguments}
        if self.build.call is not None:  # the def a traced call binds to reads the call's values
            defaults = {**defaults, **self.build.call.python_values(fn), CONSTANT: None}
        return Guards(q.conditions_over(self.con, fn["file"], q.span(fn)), self.device, defaults, fn["file"],
                      self.build)


class BuildContext:
    """The build a trace is for (pytorch/build_config.py): each macro's value, asked in order from the user's
    settings, what the checkout requires, the upstream defaults of the traced device's build, and the checkout's own
    #defines; `used` keeps every setting a test of this trace read, for the trace's header."""

    def __init__(self, con, device: str, user: dict[str, Setting] | None = None, dtype: str = "float32"):
        self.con, self.device, self.user, self.dtype = con, device, user or {}, dtype
        self.call = None  # a traced call's values (trace/call.py CallValues), when the trace is of a call
        # arguments a name trace reads as given, value unknown: their defaults rule out every way on (torch.clamp's
        # min=None, max=None: the op needs one of them)
        self.unknown_arguments: frozenset[str] = frozenset()
        self.defaults = {k: Setting(k, v, f"upstream default ({_BUILD_OF.get(device, device)})")
                         for k, v in _DEFAULTS.get(device, {}).items()}
        self.values: dict[str, object] = {}  # name -> int, UNDEFINED or None (unknown)
        self.used: dict[str, Setting] = {}
        self.recorders: list[dict[str, Setting]] = []  # (recording)
        self.settings_of: dict[str, Setting | None] = {}  # every name asked, used or not
        self.quiet = 0  # > 0: what is asked now decides nothing yet (false_at reads a whole file's #ifs)
        self.active: set[str] = set()  # names being resolved (a #define under a test of itself)
        self.resolving: list[str] = []  # the same, innermost last
        self.reads: dict[str, set[str]] = {}  # name -> the names its setting was read from (note_name)
        self._required: dict[str, Setting] | None = None
        self.cache: dict[str, bool | None] = {}
        # header -> file_built, kept per open index and user settings (every trace of a process asks the same)
        self.files: dict[str, tuple[bool | None, str]] = q.resident(con).built_files.setdefault(
            (device, "; ".join(sorted(s.text() for s in self.user.values()))), {})
        self.false_spans: dict[str, list[dict]] = {}  # file -> its #if branches this build does not compile
        self.root = q.checkout_root(con)  # its CMakeLists.txt's options are settings too (cmake_setting)

    def holds(self, test: str) -> bool | None:
        found = self.cache.get(test, _UNSET)
        if found is _UNSET:
            found = self.cache[test] = evaluate(test, self.value_of)
        elif not self.quiet:  # first read quietly (false_at reads a whole file), now it decides something
            self.note_used(test)
        return found

    def value_of(self, name: str):
        if self.resolving:  # USE_CUDNN_RNN_V8_API's #define reads CUDNN_VERSION: used wherever it is
            self.reads.setdefault(self.resolving[-1], set()).add(name)
        if name not in self.values:
            if name in self.active:
                return None
            self.active.add(name)
            self.resolving.append(name)
            try:
                setting = self.setting(name)
            finally:
                self.active.discard(name)
                self.resolving.pop()
            self.values[name] = None if setting is None else as_number(setting.value)
            if self.values[name] is DEFINED and _TRUTH_EXPRESSION.search(str(setting.value)):
                self.values[name] = self._truth_of(name, str(setting.value))
            self.settings_of[name] = setting
            if setting is not None and not self.quiet:
                self.note_name(name)
        elif not self.quiet:
            self.note_name(name)
        return self.values[name]

    def _truth_of(self, name: str, body: str):
        """A macro whose body is a test, as #if reads it (`#define HAS_WARP_MERGE_SORT() (CUDA_VERSION >=
        110600)`, SortUtils.cuh:13): 1 or 0 where the build settles the test, else DEFINED (a value #if cannot
        read: the test stays undecided)."""
        self.active.add(name)
        self.resolving.append(name)
        try:
            found = evaluate(body, self.value_of)
        finally:
            self.active.discard(name)
            self.resolving.pop()
        return DEFINED if found is None else int(found)

    def compute_capability(self) -> tuple[int, int] | None:
        """(major, minor) of the GPU traced for: TORCH_CUDA_ARCH_LIST naming one architecture
        (pytorch/device_props.py); None for a list, or where the build sets none."""
        if self.device != "cuda":
            return None
        self.value_of(device_props.SETTING)  # (listed in the trace's Build: line, with where it came from)
        setting = self.settings_of.get(device_props.SETTING)
        return device_props.capability(setting.value) if setting is not None and setting.value is not UNDEFINED \
            else None

    @contextlib.contextmanager
    def recording(self):
        """The settings noted as used while the block runs (each, even one used before it): what a reading kept for
        later traces says again (BodyGuards._kept)."""
        kept: dict[str, Setting] = {}
        self.recorders.append(kept)
        try:
            yield kept
        finally:
            self.recorders.remove(kept)

    def note_used(self, test: str) -> None:
        """Say that `test` decided something: the settings it reads are the trace's (Trace.build)."""
        for name in re.findall(r"[A-Za-z_]\w*(?:\(\))?", test):
            self.note_name(name)

    def note_name(self, name: str, seen: frozenset = frozenset()) -> None:
        """A setting is the trace's, and so is each one its value was read from (a #define's own #if)."""
        if self.settings_of.get(name) is not None:
            self.used[name] = self.settings_of[name]
            for kept in self.recorders:
                kept[name] = self.settings_of[name]
        for other in self.reads.get(name, ()):
            if other not in seen and other != name:
                self.note_name(other, seen | {name})

    def setting(self, name: str) -> Setting | None:
        for where in (self.user, self.required(), self.defaults):
            if name in where:
                return where[name]
        return self.cmake_setting(name) or self.defined_here(name)

    def cmake_setting(self, name: str) -> Setting | None:
        """An option of the checkout's CMakeLists.txt (pytorch/build_config.cmake_options): its default, or, for a
        cmake_dependent_option, the default where its condition holds under this build and the other value where
        it does not (unknown: None). ON is the macro defined, OFF undefined."""
        option = cmake_options(self.root).get(name)
        lines = []
        while option is not None:  # the first declaration the build reaches: its if() blocks hold
            lines.append(option.line)
            reached = True if option.guard is None else cmake_condition(option.guard, self.cmake_value,
                                                                        self.cmake_defined)
            if reached is None:
                return None
            if reached:
                break
            option = option.later
        if option is None:  # declared only in blocks this build does not reach: never set
            return Setting(name, UNDEFINED, f"CMake option at CMakeLists.txt:{', '.join(map(str, lines))}, not "
                                            f"declared in this build") if lines else None
        guard = option.guard[1:-1] if option.guard and closes_at_end(option.guard) else option.guard
        where = f"CMake option at CMakeLists.txt:{option.line}" + (f" in if({guard})" if guard else "")
        if option.depends is None:
            return Setting(name, "1" if option.value == "ON" else UNDEFINED, where)
        holds = cmake_condition(option.depends, self.cmake_value, self.cmake_defined)
        if holds is None:
            return None
        value = option.value if holds else option.otherwise
        return Setting(name, "1" if value == "ON" else UNDEFINED, f"{where} ({option.depends})")

    def cmake_defined(self, name: str) -> bool:
        """`if(NOT DEFINED USE_VULKAN)`: a fresh configure defines a variable only where the user gives it."""
        return name in self.user

    def cmake_value(self, name: str) -> bool | None:
        """A name in a CMake condition: a setting's truth; a variable neither the build nor an option sets is
        false, as CMake reads an unset variable."""
        if name in CMAKE_PLATFORM and name not in self.user:
            return CMAKE_PLATFORM[name]
        value = self.value_of(name)
        if value is None:
            return None if self.settings_of.get(name) is not None or name in cmake_options(self.root) else False
        return value is not UNDEFINED and value != 0

    def defined_here(self, name: str) -> Setting | None:
        """A macro the checkout #defines: defined where a site's own #if tests hold (the first such site); unknown
        when a site's tests cannot be settled, or when no site holds (the build system may still define it)."""
        function_like = name.endswith("()")
        for site in q.macro_sites(self.con, name.removesuffix("()"), function_like):
            tests = [self.holds(c["condition"]) for c in site["around"]]
            if None in tests:
                return None
            if all(tests):
                where = f"{site['file']}:{site['line']}"
                return Setting(name, site["body"].strip() or "", f"#define at {where}")
        return None

    def required(self) -> dict[str, Setting]:
        """What the checkout requires: the #if branch around an `#error` or `static_assert(0)` is never built, so
        a plain `defined(X)` / `!defined(X)` test of it must be false. Only for macros the checkout never
        #defines itself (those a build sets, -DUSE_MACA), and not from tests' code."""
        if self._required is None:
            found: dict[str, list[Setting]] = {}
            for site in q.requirement_sites(self.con):
                if is_test(site["file"]) or not site["around"]:
                    continue
                m = _PLAIN_TEST.match(site["around"][-1]["condition"])
                if m is None:
                    continue
                name = m.group("name")
                negated = (m.group("neg1") is not None) != (m.group("neg2") is not None)
                # the branch `defined(X)` cannot be built: X is not defined; `!defined(X)`: X is
                value = UNDEFINED if not negated else ""
                where = f"required by {site['file']}:{site['line']} ({site['condition'][:60]})"
                found.setdefault(name, []).append(Setting(name, value, where))
            self._required = {}
            for name, settings in found.items():
                if len({s.value is UNDEFINED for s in settings}) == 1 and not q.macro_sites(self.con, name, False):
                    self._required[name] = settings[0]
        return self._required

    def false_at(self, file: str, line: int) -> dict | None:
        """The first #if branch around a line of a file that this build does not compile, if any (each file's
        false branches read once)."""
        spans = self.false_spans.get(file)
        if spans is None:
            self.quiet += 1
            try:
                spans = self.false_spans[file] = [c for c in q.if_groups_over(self.con, file, None)
                                                  if self.holds(c["condition"]) is False]
            finally:
                self.quiet -= 1
        found = next((c for c in spans if c["line"] <= line <= c["end_line"]), None)
        if found is not None:
            self.note_used(found["condition"])
        return found

    def file_built(self, file: str) -> tuple[bool | None, str]:
        """Whether a header is compiled in this build: some file that includes it does so outside any false #if
        (three values, over the includers' own builds too), and, when it is not, the include line that says why.
        A source file (.cpp, .cu) is a translation unit of the build: compiled; a header nothing includes: None."""
        found = self.files.get(file)
        if found is None:
            self.files[file] = (None, "")  # (an include cycle reads unknown)
            self.quiet += 1  # the tests read here decide something only where a hop is marked (note_used)
            try:
                found = self.files[file] = self._file_built(file)
            finally:
                self.quiet -= 1
        if found[0] is False and " under #if " in found[1]:
            self.note_used(found[1].partition(" under #if ")[2])
        return found

    def _file_built(self, file: str) -> tuple[bool | None, str]:
        if not file.endswith(CPP_HEADERS):
            return True, ""
        values, why = [], ""
        for includer, line in q.include_sites(self.con, file):
            tests = q.if_groups_over(self.con, includer, (line, line))
            held = [self.holds(c["condition"]) for c in tests]
            value = False if False in held else None if None in held else True
            if value is not False:
                above, _ = self.file_built(includer)
                value = False if above is False else None if None in (value, above) else value
            if value is False and not why:
                false = [c["condition"] for c, v in zip(tests, held) if v is False]
                why = f"included at {includer}:{line}" + (f" under #if {false[0]}" if false else "")
            values.append(value)
        if not values:
            return None, ""
        return (True if True in values else None if None in values else False), why

    def key(self) -> str:
        """The user's settings as one string ("" for the default build): what a path walked under them is kept by."""
        return "; ".join(sorted(s.text() for s in self.user.values())
                         + ([f"dtype {self.dtype}"] if self.dtype != "float32" else []))

    def conflicts(self) -> list[str]:
        """The user's settings that contradict what the checkout requires (that build cannot compile)."""
        out = []
        for name, s in self.user.items():
            req = self.required().get(name)
            if req is not None and (req.value is UNDEFINED) != (s.value is UNDEFINED):
                out.append(f"{s.text()} ({s.source}): this checkout cannot build so, {req.source}")
        return out


_UNSET = object()
# `defined(X)`, `!defined(X)`, `not (defined(X))`, `not (!defined(X))`: one macro's presence
_PLAIN_TEST = re.compile(r"^(?P<neg1>not \()?\s*(?P<neg2>!\s*)?defined\s*\(?\s*(?P<name>\w+)\s*\)?\s*\)?$")
_BUILD_OF = {"cuda": "a current CUDA build", "cpu": "a current CUDA build", "mps": "a macOS MPS build"}
_MPS_BUILD = {**{k: v for k, v in UPSTREAM_CUDA.items() if v is UNDEFINED and k != "__APPLE__"},
              "USE_MPS": "1", "__APPLE__": "1", "USE_CUDA": UNDEFINED, "AT_CUDNN_ENABLED()": "0"}
_DEFAULTS = {"cuda": UPSTREAM_CUDA, "cpu": UPSTREAM_CUDA, "mps": _MPS_BUILD}
