"""A method call is an op call only when its receiver may be a Tensor (opindex/pytorch/receivers.py), and
`f<T>(MACRO(T));` is a call even where the grammar reads a declaration."""
from __future__ import annotations

from opindex.extract import cpp
from opindex.pytorch.receivers import may_be_tensor, parameter_type


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
