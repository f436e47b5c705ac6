"""A TensorIterator's operands as a traced call makes them (trace/iterators.py): a Python number given for a Tensor
parameter is a CPU scalar, a traced call's tensor is on the device, outputs come first."""
from __future__ import annotations

from opindex.pytorch.call_expr import Tensor
from opindex.trace.conditions import holds
from opindex.trace.iterators import Operands, cpu_scalar_holds, factory_locals, passed_iterators, structured

X = Tensor("float32", (1024, 1024), "torch.randn(1024, 1024)")
DIV_OUT = "div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"


def test_a_structured_ops_iterator_is_its_outputs_then_its_tensor_arguments():
    assert structured(DIV_OUT, {"self": X, "other": 2.0}) == Operands((False, False, True))
    assert structured(DIV_OUT, {"self": X, "other": X}) == Operands((False, False, False))
    assert structured(DIV_OUT, {"self": X}) == Operands((False, False, None))  # other not known
    # a functional schema: its Tensor returns are the outputs
    assert structured("mul.Tensor(Tensor self, Tensor other) -> Tensor", {"self": X, "other": 3}) == \
        Operands((False, False, True))
    # two outputs; a Scalar is no operand
    assert structured("frexp.Tensor_out(Tensor self, *, Tensor(a!) mantissa, Tensor(b!) exponent) -> (Tensor(a!) "
                      "mantissa, Tensor(b!) exponent)", {"self": X}) == Operands((False, False, False), outputs=2)
    assert structured("lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)",
                      {"self": X, "end": X, "weight": 0.5}) == Operands((False, False, False))
    # an optional tensor ends what is known: whether it is an operand is the meta function's say
    assert structured("clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> "
                      "Tensor(a!)", {"self": X}) == Operands((False, False))
    assert structured("randperm(SymInt n) -> Tensor", {"n": 4}) is None


def test_a_local_a_factory_makes_is_its_arguments_the_first_the_output():
    body = """void div(const Tensor& self, const Tensor& other) {
      Tensor result;
      auto iter = TensorIterator::binary_op(result, self, other,
          /*check_mem_overlap=*/true);
      div_stub(iter.device_type(), iter);
    }"""
    assert factory_locals(body, {"self": X, "other": 2.0}) == {"iter": Operands((False, False, True))}
    assert factory_locals("auto it = at::TensorIterator::unary_op(out, self);", {"self": X}) == \
        {"it": Operands((False, False))}
    assert factory_locals("auto iter = TensorIterator::binary_op(result, self);", {"self": X}) == {}
    assert factory_locals("auto iter = TensorIteratorConfig().add_output(out).build();", {}) == {}


def test_is_cpu_scalar_reads_the_operand_and_says_nothing_of_one_not_known():
    values = {"iter": Operands((False, False, True)), "self": X}
    assert cpu_scalar_holds("iter.is_cpu_scalar(2)", values) is True
    assert cpu_scalar_holds("iter.is_cpu_scalar(1)", values) is False
    assert cpu_scalar_holds("!iter.is_cpu_scalar(2)", values) is False
    assert cpu_scalar_holds("not (iter.is_cpu_scalar(2))", values) is False
    assert cpu_scalar_holds("not (!iter.is_cpu_scalar(1))", values) is False
    assert cpu_scalar_holds("iter.is_cpu_scalar(3)", values) is None  # no such operand
    assert cpu_scalar_holds("iter.is_cpu_scalar(2)", {"iter": Operands((False, False, None))}) is None
    assert cpu_scalar_holds("other.is_cpu_scalar(2)", values) is None  # not an iterator the trace knows
    # through holds(), parts of a test too (1.8's mul_kernel_cuda, BinaryMulDivKernel.cu:172-173)
    assert holds("iter.is_cpu_scalar(1) || iter.is_cpu_scalar(2)", values) is True
    assert holds("not (iter.is_cpu_scalar(1) || iter.is_cpu_scalar(2))", values) is False
    assert holds("iter.is_cpu_scalar(2)", {}) is None


def test_an_iterator_is_handed_on_by_the_callees_parameter_place():
    known = {"iter": Operands((False, False, True)), "n": 3}
    assert passed_iterators(["device_type()", "iter"], known, skip=1) == {0: Operands((False, False, True))}
    assert passed_iterators(["iter", "f"], known) == {0: Operands((False, False, True))}
    assert passed_iterators(["sub_iter", "f"], known) == {}
    assert passed_iterators(None, known) == {}


def test_a_name_trace_gives_its_tensors_so_an_operand_not_known_is_on_the_device():
    assert structured(DIV_OUT, {}, unknown=False) == Operands((False, False, False))
    assert structured(DIV_OUT, {"other": 2}, unknown=False) == Operands((False, False, True))
    assert factory_locals("auto iter = TensorIterator::binary_op(result, self, other);", {}, unknown=False) == \
        {"iter": Operands((False, False, False))}


def test_a_meta_functions_build_gives_the_operands_in_its_order():
    """threshold's meta function (Activation.cpp:86-97, PyTorch 2.4) adds `self` twice, so its iterator has three
    operands and `iter.is_cpu_scalar(2)` is false for a tensor; a Scalar overload's `wrapped_scalar_tensor(other)`
    (the comparison ops' meta, BinaryOps.cpp:359-363) is a CPU scalar; div.Tensor's
    `build_borrowing_binary_float_op(maybe_get_output(), self, other)` is the schema's order."""
    from opindex.trace.iterators import built
    threshold = """TORCH_META_FUNC(threshold)(const Tensor& self, const Scalar& threshold, const Scalar& value) {
  const Tensor& result = maybe_get_output();
  build(TensorIteratorConfig()
    .set_check_mem_overlap(false)  // threshold is idempotent, so overlap is okay
    .add_output(result)
    .add_const_input(self)
    .add_const_input(self) // other
    .allow_cpu_scalars(true)
    .enforce_safe_casting_to_output(true));
}"""
    assert built(threshold, {"self": X}) == Operands((False, False, False))
    compare = """TORCH_META_FUNC2(eq, Scalar)(const Tensor& self, const Scalar& other) {
    auto other_tensor =
        native::wrapped_scalar_tensor(other);
    build_borrowing_except_last_argument_comparison_op(maybe_get_output(), self, other_tensor);
  }"""
    assert built(compare, {}, unknown=False) == Operands((False, False, True))
    div = "TORCH_META_FUNC2(div, Tensor) (const Tensor& self, const Tensor& other) {\n" \
          "  build_borrowing_binary_float_op(maybe_get_output(), self, other);\n}"
    assert built(div, {"self": X, "other": 2.0}) == Operands((False, False, True))
    assert built(div, {"self": X}) == Operands((False, False, None))
    assert built("TORCH_META_FUNC(sum)(...) { auto iter = make_reduction(...); }", {}) is None
    two = div.replace("}", "  build_borrowing_unary_op(maybe_get_output(), self);\n}")
    assert built(two, {"self": X}) is None  # (two builds: which one the kernel gets is not said here)


SYMMETRIC = """void opmath_symmetric_gpu_kernel_with_scalars(TensorIteratorBase& iter, const func_t& f) {
  opmath_arg_t scalar_val{};
  if (iter.is_cpu_scalar(1)) {
    scalar_val = iter.scalar_value<opmath_arg_t>(1);
    iter.remove_operand(1);
    device_guard.reset_device(iter.device(1));
  } else if (iter.is_cpu_scalar(2)) {
    scalar_val = iter.scalar_value<opmath_arg_t>(2);
    iter.remove_operand(2);
  }
  if (iter.ninputs() == 2) {
    gpu_kernel(iter, BinaryFunctor<scalar_t, scalar_t, return_t, func_t>(f));
  } else {
    AUnaryFunctor<scalar_t, scalar_t, return_t, func_t> unary_f(f, scalar_val);
    gpu_kernel(iter, unary_f);
  }
}"""


def test_a_body_that_removes_its_cpu_scalar_counts_the_inputs_left():
    """opmath_symmetric_gpu_kernel_with_scalars (Loops.cuh:305-341, PyTorch 2.4) removes the first CPU scalar of
    operands 1, 2, then `iter.ninputs() == 2` picks BinaryFunctor, else AUnaryFunctor with the scalar: x * 2.0
    runs the AUnaryFunctor, x * y the BinaryFunctor. Where a removed operand is not known, neither is the count,
    and an iterator whose operands a body removes is not handed on (they differ after the removal)."""
    from opindex.trace.iterators import after_removals, ninputs_holds
    scalar = after_removals(SYMMETRIC, "iter", Operands((False, False, True)))
    assert scalar == Operands((False, False, True), 1, 1)
    assert [ninputs_holds(c, {"iter": scalar}) for c in ("iter.ninputs() == 2", "not (iter.ninputs() == 2)")] == \
        [False, True]
    both = after_removals(SYMMETRIC, "iter", Operands((False, False, False)))
    assert both.ninputs == 2 and ninputs_holds("iter.ninputs() == 2", {"iter": both}) is True
    first = after_removals(SYMMETRIC, "iter", Operands((False, True, None)))
    assert first.ninputs == 1  # (operand 1 is removed first: operand 2 is not tested)
    open_ = after_removals(SYMMETRIC, "iter", Operands((False, None, False)))
    assert open_.ninputs == -1 and ninputs_holds("iter.ninputs() == 2", {"iter": open_}) is None
    assert after_removals("gpu_kernel(iter, f);", "iter", Operands((False, False, True))) == \
        Operands((False, False, True))  # (no removal: unchanged, and its count is its inputs)
    assert ninputs_holds("iter.ninputs() == 2", {"iter": Operands((False, False, True))}) is True
    assert passed_iterators(["iter", "f"], {"iter": scalar}) == {}
    # (a body whose test removes nothing for these operands hands the iterator on unchanged)
    assert passed_iterators(["iter"], {"iter": both}) == {0: Operands((False, False, False))}
    assert passed_iterators(["iter"], {"iter": open_}) == {}
    # PyTorch removes only a CPU scalar: with none, nothing is removed however the body writes it (1.8's
    # mul_kernel_cuda: `int scalar_arg = iter.is_cpu_scalar(1) ? 1 : 2; ... iter.remove_operand(scalar_arg);`)
    mul18 = "int scalar_arg = iter.is_cpu_scalar(1) ? 1 : 2;\n  iter.remove_operand(scalar_arg);"
    assert after_removals(mul18, "iter", Operands((False, False, False))).ninputs == 2
    assert after_removals(mul18, "iter", Operands((False, False, True))).ninputs == -1


def test_a_scalar_overloads_wrapped_operand_is_a_cpu_scalar():
    """mul_.Scalar calls `self.mul_(wrapped_scalar_tensor(other))` (BinaryOps.cpp): mul_.Tensor's `other` is then
    a 0-dim CPU tensor, a CPU scalar of the iterator, not a tensor of the trace (hamming_window's
    `window.mul_(c10::pi<double> * 2. / ...)` runs the AUnaryFunctor launch)."""
    from opindex.trace.conditions import _pass
    from opindex.trace.iterators import CPU_SCALAR
    values: dict = {}
    _pass(values, "other", "wrapped_scalar_tensor(other)")
    _pass(values, "alpha", "at::native::wrapped_scalar_tensor(alpha)")
    assert values == {"other": CPU_SCALAR, "alpha": CPU_SCALAR}
    assert structured(DIV_OUT, {"self": X, **values}, unknown=False) == Operands((False, False, True))


def test_a_meta_function_a_macro_writes_is_read_through_the_macro():
    """CREATE_COMPARISON_SCALAR_TENSOR_META_FUNC(gt); (PyTorch 2.4 BinaryOps.cpp:369) writes gt.Tensor's and
    gt.Scalar's meta functions (:353-363): the Scalar one wraps its number as the iterator's third operand."""
    from opindex.trace.iterators import built, macro_meta_body
    macro = {"parameters": "(func)", "body": (
        "TORCH_META_FUNC2(func, Tensor)(const Tensor& self, const Tensor& other) { const Tensor& result = "
        "maybe_get_output(); build_borrowing_comparison_op(result, self, other); } TORCH_META_FUNC2(func, Scalar)("
        "const Tensor& self, const Scalar& other) { auto other_tensor = native::wrapped_scalar_tensor(other); "
        "build_borrowing_except_last_argument_comparison_op(maybe_get_output(), self, other_tensor); }")}
    use = "CREATE_COMPARISON_SCALAR_TENSOR_META_FUNC(gt);"
    scalar = macro_meta_body(use, lambda _: macro, "gt_Scalar")
    assert scalar == (" auto other_tensor = native::wrapped_scalar_tensor(other); "
                      "build_borrowing_except_last_argument_comparison_op(maybe_get_output(), self, other_tensor); ")
    assert built(scalar, {}, False).cpu_scalar == (False, False, True)
    assert built(macro_meta_body(use, lambda _: macro, "gt_Tensor"), {}, False).cpu_scalar == (False, False, False)
    # another op's name, a use with other arguments than the macro's parameters, a token pasted with ##
    assert macro_meta_body(use, lambda _: macro, "lt_Scalar") is None
    assert macro_meta_body("CREATE_COMPARISON_SCALAR_TENSOR_META_FUNC(gt, x);", lambda _: macro, "gt_Scalar") is None
    pasted = {"parameters": "(name)", "body": "TORCH_META_FUNC(name ## _out)(const Tensor& self) { "
                                              "build_borrowing_unary_op(maybe_get_output(), self); }"}
    assert macro_meta_body("UNARY_META(sin)", lambda _: pasted, "sin_out") == (
        " build_borrowing_unary_op(maybe_get_output(), self); ")
