"""A TensorIterator's operands as a traced call makes them: which are CPU scalars (`iter.is_cpu_scalar(2)`).

A Python number given for a Tensor parameter (`torch.div(x, 2.0)`, `x * 2`) reaches C++ as a wrapped number, a
0-dim CPU tensor; a C++ Scalar overload wraps its number the same way (`wrapped_scalar_tensor(other)`). The tensors
of a trace are on the traced device. TensorIterator numbers its operands outputs first, then inputs in the order
they were added, so `iter.is_cpu_scalar(2)` of a one-output binary op is its second input: div_true_kernel_cuda
multiplies by the reciprocal of a Python number (BinaryDivTrueKernel.cu:35) and divides two device tensors.

Where an iterator comes from:
- a structured op's own (the impl passes `*this` to its stub: `div_true_stub(device_type(), *this)`): as its meta
  function builds it (`build_borrowing_binary_op(maybe_get_output(), self, other)`, a TensorIteratorConfig chain),
  else (a meta function a macro writes) from the op's outputs, then its Tensor arguments in schema order; an
  optional tensor argument ends what is known;
- a local made by a TensorIterator factory (`auto iter = TensorIterator::binary_op(result, self, other);`, 1.8's
  non-structured ops): its arguments in order, the first the output.
A name trace calls the op with its tensors: an operand it gives no value is a tensor of the traced device.
Passed on by name to the kernels and helpers that take it (walk/bodies.literal_arguments)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..pytorch.call_expr import Tensor
from ..pytorch.receivers import split_parameters
from ..pytorch.syntax import closing_bracket, parenthesized, schema_arguments, split_top_level
from ..pytorch.views import CONFIG, CONFIG_OPERAND
from .function_value import TensorArg


@dataclass(frozen=True)
class Operands:
    """A TensorIterator's operands in its order, outputs first: True a CPU scalar (a wrapped number), False a
    tensor of the traced device, None not known; `outputs` of them outputs. `ninputs`: the inputs left where a
    body removes its CPU scalar (`iter.remove_operand(2)` under `if (iter.is_cpu_scalar(2))`, after_removals),
    None where it removes none, -1 where which it removes is not known: such an iterator is not handed on."""
    cpu_scalar: tuple[bool | None, ...]
    outputs: int = 1
    ninputs: int | None = None


# A Scalar overload's operand: `self.mul_(wrapped_scalar_tensor(other))` (mul_.Scalar) passes a 0-dim CPU tensor
WRAPPED = re.compile(r"^(?:(?:at::)?native::)?wrapped_scalar_tensor\s*\(")
CPU_SCALAR = TensorArg("cpu", None, ())


def operand(value) -> bool | None:
    """Whether a known value is a CPU scalar as an iterator's operand (a number: wrapped; a wrapped scalar
    tensor), a device tensor (a traced call's tensor), or not known."""
    if value == CPU_SCALAR:
        return True
    if isinstance(value, (Tensor, TensorArg)):
        return False
    if isinstance(value, (bool, int, float)):
        return True
    return None


def structured(schema: str, values: dict, unknown: bool | None = None) -> Operands | None:
    """The operands of a structured op's own iterator: its outputs (`Tensor(a!) out` arguments, else its Tensor
    returns) then its Tensor arguments in schema order, up to the first optional or list one; None when the
    schema has no Tensor argument. `unknown`: an argument the values do not give (a name trace's: False, a tensor
    of the trace)."""
    outs, ins = 0, []
    for part in split_parameters(schema_arguments(schema)):
        decl = part.partition("=")[0].split()
        if part.strip() == "*" or len(decl) < 2 or not decl[0].startswith("Tensor"):
            continue
        if "!" in decl[0]:
            outs += 1
        elif decl[0] != "Tensor":  # `Tensor?`, `Tensor[]`: whether it is an operand is the meta function's say
            break
        else:
            found = operand(values.get(decl[-1]))
            ins.append(unknown if found is None else found)
    if not outs:
        returns = schema.rpartition("->")[2]
        outs = max(1, len(re.findall(r"\bTensor\b", returns)))
    return Operands((False,) * outs + tuple(ins), outs) if ins else None


# A meta function's build of the op's iterator: TensorIteratorBase's build_*_op(out, a[, b[, c]]) (its operand
# count by its kind), or a TensorIteratorConfig chain's add_*output / add_*input calls (outputs first, as
# TensorIterator numbers them)
_BUILD_OP = re.compile(r"\bbuild_(?:borrowing_)?(?:except_last_argument_)?(binary|binary_float|comparison|ternary|unary|"
                       r"unary_float|unary_force_boolean)_op\s*\(")
_BUILD_OPERANDS = {"binary": 3, "binary_float": 3, "comparison": 3, "ternary": 4, "unary": 2, "unary_float": 2,
                   "unary_force_boolean": 2}
_LOCAL_WRAPPED = re.compile(r"\b(?:auto|(?:at::)?Tensor)\s*&?\s+([A-Za-z_]\w*)\s*=\s*(?:(?:at::)?native::)?"
                            r"wrapped_scalar_tensor\s*\(")


def built(body: str, values: dict, unknown: bool | None = None) -> Operands | None:
    """The operands of the iterator a structured op's meta function builds (its body's text), in TensorIterator's
    order: threshold's TensorIteratorConfig adds `self` twice (Activation.cpp:91-92), so `iter.is_cpu_scalar(2)`
    is false for a tensor; a `wrapped_scalar_tensor(other)` operand (a Scalar overload's, or a local made so) is
    a CPU scalar. None when the body builds no iterator this reads, or more than one."""
    wrapped = set(_LOCAL_WRAPPED.findall(body))

    def value(arg: str) -> bool | None:
        arg = arg.strip()
        if WRAPPED.match(arg) or arg in wrapped:
            return True
        found = operand(values.get(arg))
        return unknown if found is None else found

    found = []
    for m in _BUILD_OP.finditer(body):
        args = split_top_level(parenthesized(body, m.end()))
        n = _BUILD_OPERANDS[m.group(1)]
        if len(args) >= n:
            found.append(Operands((False,) + tuple(value(a) for a in args[1:n])))
    for m in CONFIG.finditer(body):
        end = body.find(".build()", m.end())
        chain = body[m.end():end if end > 0 else len(body)]
        kinds = [(op.group(1), parenthesized(chain, op.end())) for op in CONFIG_OPERAND.finditer(chain)]
        outs = sum(k == "output" for k, _ in kinds)
        if outs:
            found.append(Operands((False,) * outs + tuple(value(a) for k, a in kinds if k == "input"), outs))
    return found[0] if len(found) == 1 else None


# a meta function's head: TORCH_META_FUNC(name), TORCH_META_FUNC2(name, overload) (its symbol name_overload)
_META_HEAD = re.compile(r"\bTORCH_META_FUNC(2)?\s*\(\s*(\w+)\s*(?:,\s*(\w+)\s*)?\)")
_MACRO_USE = re.compile(r"\s*([A-Za-z_]\w*)\s*\(")


def macro_meta_body(use: str, macro_of, name: str) -> str | None:
    """The body of the meta function `name` (its symbol name: gt_Scalar) that a macro's use line writes: the
    macro's body with its parameters replaced by the use's arguments (`##` pasting joined), then the function
    whose TORCH_META_FUNC head names it. CREATE_COMPARISON_SCALAR_TENSOR_META_FUNC(gt); (BinaryOps.cpp:369)
    writes gt.Scalar's, which wraps its Scalar (`native::wrapped_scalar_tensor(other)`) as the iterator's third
    operand (:359-362). None where the use or the macro is not read so."""
    m = _MACRO_USE.match(use) if "{" not in use else None  # (a use line, not a definition with its body)
    macro = macro_of(m.group(1)) if m is not None else None  # (the function-like #define it names, or None)
    if macro is None or not macro.get("parameters") or macro.get("body") is None:
        return None
    params = [p.strip() for p in macro["parameters"].strip().strip("()").split(",") if p.strip()]
    args = [a.strip() for a in split_top_level(parenthesized(use, m.end()))]
    if len(params) != len(args):
        return None
    body = macro["body"]
    for param, arg in zip(params, args):
        body = re.sub(r"\b%s\b" % re.escape(param), arg, body)
    body = re.sub(r"\s*##\s*", "", body)
    for head in _META_HEAD.finditer(body):
        if (f"{head.group(2)}_{head.group(3)}" if head.group(1) else head.group(2)) != name:
            continue
        at = body.find("{", head.end())
        close = closing_bracket(body, at)
        return body[at + 1:close] if close is not None else None
    return None


# `auto iter = TensorIterator::binary_op(result, self, other);` (one output, the first argument)
_FACTORY = re.compile(r"(?:auto|(?:at::)?TensorIterator)\s+([A-Za-z_]\w*)\s*=\s*(?:at::)?TensorIterator::"
                      r"(?:borrowing_)?(binary|binary_float|comparison|unary|unary_float|nullary)_op\s*\(")
_FACTORY_OPERANDS = {"binary": 3, "binary_float": 3, "comparison": 3, "unary": 2, "unary_float": 2, "nullary": 1}
# (the arguments after them are flags: 1.8's `binary_op(result, self, other, /*check_mem_overlap=*/true)`)


def factory_locals(body: str, values: dict, unknown: bool | None = None) -> dict[str, Operands]:
    """The iterators a body makes with a TensorIterator factory, by local name, their operands valued by
    `values` (a name the trace knows: a tensor, a number), one it does not know by `unknown`."""
    out = {}
    for m in _FACTORY.finditer(body):
        args = [a.strip() for a in split_top_level(parenthesized(body, m.end()))][:_FACTORY_OPERANDS[m.group(2)]]
        if len(args) == _FACTORY_OPERANDS[m.group(2)]:
            found = (operand(values.get(a)) for a in args[1:])
            out[m.group(1)] = Operands((False,) + tuple(unknown if f is None else f for f in found))
    return out


_CPU_SCALAR = re.compile(r"^(!\s*)?\(?\s*([A-Za-z_]\w*)\.is_cpu_scalar\(\s*(\d+)\s*\)\s*\)?$")


def cpu_scalar_holds(condition: str, values: dict) -> bool | None:
    """`iter.is_cpu_scalar(2)` (or its negation, `not (...)` around it) with `iter` an iterator the trace knows
    the operands of; None otherwise."""
    negate = condition.startswith("not (") and condition.endswith(")")
    m = _CPU_SCALAR.match(condition[5:-1].strip() if negate else condition.strip())
    if m is None or not isinstance(values.get(m.group(2)), Operands):
        return None
    ops, i = values[m.group(2)].cpu_scalar, int(m.group(3))
    if i >= len(ops) or ops[i] is None:
        return None
    result = ops[i] != bool(m.group(1))  # (`!iter.is_cpu_scalar(2)`)
    return result != negate


def passed_iterators(args: list[str] | None, known: dict, skip: int = 0) -> dict[int, Operands]:
    """The iterators among a call's arguments whose operands the trace knows (`known`, the caller's values), by
    the callee parameter's place (the first `skip` arguments aside: a stub's device argument); not one the caller
    removes an operand of, or may (its operands differ after that)."""
    out = {}
    for i, a in enumerate((args or [])[skip:]):
        ops = known.get(a)
        if isinstance(ops, Operands) and ops.ninputs in (None, len(ops.cpu_scalar) - ops.outputs):
            out[i] = Operands(ops.cpu_scalar, ops.outputs)
    return out


def _removal_chain(body: str, name: str) -> list[int] | None:
    """The operands a body removes, each under its own test in one if/else-if chain (`if (iter.is_cpu_scalar(1))
    { ... iter.remove_operand(1); ... } else if (iter.is_cpu_scalar(2)) { ... iter.remove_operand(2); }`), in
    the chain's order; None when it removes operands otherwise."""
    tests = [int(k) for k in re.findall(r"\bif\s*\(\s*%s\.is_cpu_scalar\(\s*(\d+)\s*\)\s*\)" % re.escape(name),
                                        body)]
    removed = [int(k) for k in re.findall(r"\b%s\.remove_operand\(\s*(\d+)\s*\)" % re.escape(name), body)]
    return tests if tests and removed == tests else None


def after_removals(body: str, name: str, ops: Operands) -> Operands:
    """`ops` as the body leaves them where it removes its CPU scalar operand before testing `iter.ninputs()`
    (opmath_symmetric_gpu_kernel_with_scalars, Loops.cuh:321-340: the first of operands 1, 2 that is a CPU scalar
    is removed, then `if (iter.ninputs() == 2)` picks BinaryFunctor, else AUnaryFunctor with the scalar)."""
    if f"{name}.remove_operand(" not in body:
        return ops
    inputs = len(ops.cpu_scalar) - ops.outputs
    if not any(v is not False for v in ops.cpu_scalar[ops.outputs:]):
        # PyTorch removes an operand only once it has read it as a CPU scalar (`iter.scalar_value<T>(k)`, then
        # `iter.remove_operand(k)`, however the test is written: 1.8's mul_kernel_cuda, BinaryMulDivKernel.cu:178)
        return Operands(ops.cpu_scalar, ops.outputs, inputs)
    chain = _removal_chain(body, name)
    for k in chain or ():
        scalar = ops.cpu_scalar[k] if k < len(ops.cpu_scalar) else None
        if scalar is None:
            break
        if scalar:
            return Operands(ops.cpu_scalar, ops.outputs, inputs - 1)
    else:
        if chain:
            return Operands(ops.cpu_scalar, ops.outputs, inputs)
    return Operands(ops.cpu_scalar, ops.outputs, -1)


_NINPUTS = re.compile(r"^(!\s*)?\(?\s*([A-Za-z_]\w*)\.ninputs\(\)\s*(==|!=|>|<|>=|<=)\s*(\d+)\s*\)?$")


def ninputs_holds(condition: str, values: dict) -> bool | None:
    """`iter.ninputs() == 2` of an iterator whose inputs the trace counts after the body's removals (None where
    it does not)."""
    negate = condition.startswith("not (") and condition.endswith(")")
    m = _NINPUTS.match(condition[5:-1].strip() if negate else condition.strip())
    ops = values.get(m.group(2)) if m is not None else None
    if not isinstance(ops, Operands) or ops.ninputs == -1:
        return None
    n = len(ops.cpu_scalar) - ops.outputs if ops.ninputs is None else ops.ninputs
    want = int(m.group(4))
    result = {"==": n == want, "!=": n != want, ">": n > want, "<": n < want, ">=": n >= want,
              "<=": n <= want}[m.group(3)] != bool(m.group(1))
    return result != negate
