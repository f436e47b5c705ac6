"""A method call is an op call only when its receiver may be a Tensor (opindex/pytorch/receivers.py), and
`f<T>(MACRO(T));` is a call even where the grammar reads a declaration."""
from __future__ import annotations

from opindex.extract import cpp
from opindex.pytorch.receivers import may_be_tensor, parameter_type, takes_arguments


def test_non_tensor_accessors_and_declared_types():
    assert not may_be_tensor("options.device()", None)  # options.device().index(): c10::Device::index
    assert not may_be_tensor("iter", "(TensorIteratorBase& iter)")
    assert not may_be_tensor("src_device", None, "Device")
    assert not may_be_tensor("d", None, "auto = self.device()")
    assert may_be_tensor("self", "(const Tensor& self, int64_t dim)")
    assert may_be_tensor("t", None, "at::Tensor")
    assert may_be_tensor("x", None)  # nothing is known: it may be a Tensor
    assert parameter_type("(const Tensor& self, c10::optional<Tensor> w = c10::nullopt, int64_t d)", "w") == \
        "c10::optional<Tensor>"


def test_most_vexing_parse_is_a_call():
    src = b"""namespace at::cuda::blas {
template <>
void gemm<float>(CUDABLAS_GEMM_ARGTYPES(float)) {
  if (ctx->enabled()) {
    gemm_tunable<float>(CUDABLAS_GEMM_ARGS(float));
  } else {
    gemm_internal<float>(CUDABLAS_GEMM_ARGS(float));
  }
  std::vector<int> v(3);
}
}"""
    calls = [(r[1], r[4], r[5], r[6]) for r in cpp.extract("x/CUDABlas.cpp", src, "cpp").rows["calls"]]
    assert calls == [(4, "enabled", "ctx", 1), (5, "gemm_tunable", "", 0), (7, "gemm_internal", "", 0)]


def test_an_overload_takes_the_arguments_its_parameters_count():
    """C++ first keeps the overloads a call's number of arguments fits: 1.8's sum(self, dtype) (ReduceOps.cpp:529)
    calling `at::native::sum(self, std::vector<int64_t>{}, false, dtype)` takes the four-parameter overload."""
    two = "(const Tensor &self, c10::optional<ScalarType> dtype)"
    four = "(const Tensor& self, IntArrayRef dim, bool keepdim, c10::optional<ScalarType> dtype)"
    assert (takes_arguments(two, 4), takes_arguments(four, 4), takes_arguments(two, 2)) == (False, True, True)
    assert takes_arguments("(const Tensor& self, int64_t dim = 0)", 1) is True  # a default may be left out
    assert takes_arguments("(const Tensor& self, int64_t dim = 0)", 3) is False
    assert takes_arguments("(Args&&... args)", 5) is True
    assert takes_arguments("()", 0) is True and takes_arguments("(void)", 0) is True
    assert takes_arguments(None, 2) is None
