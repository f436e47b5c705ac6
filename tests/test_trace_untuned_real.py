"""Calls not tuned for, read hop by hop against the 2.4 source on the stock build (-U USE_MACA), session of
2026-12-05 23:54: at each if/#if/switch the chain passes, the side those inputs take (each file:line read)."""
from __future__ import annotations

YAML = "aten/src/ATen/native/native_functions.yaml"
CUDA = "aten/src/ATen/native/cuda/"


def _chain(t) -> list[tuple[str, int]]:
    return [(h.file, h.line) for h in t.main_chain()]


def test_cumsum_over_the_outer_dim(real_index):
    """A non-default argument, dim=0 of a 64x1000 tensor: impl_func_cum_ops (ReduceOps.cpp:475) takes the stub
    (neither `self.dim() == 0` nor `self.numel() == 0`), cumsum_cuda_kernel (ScanKernels.cpp:91) ->
    launch_cumsum_cuda_kernel (CumsumKernel.cu:10) -> scan_dim (ScanUtils.cuh:444): `self.numel() ==
    self.size(dim)` (:450) is false (64,000 against 64), `dim == ndim - 1` false, so scan_outer_dim (:391) ->
    tensor_kernel_scan_outer_dim (:272), every choice settled."""
    t = real_index.trace("torch.cumsum(torch.randn(64, 1000), dim=0)", undefines=["USE_MACA"])
    assert _chain(t)[1:5] == [(YAML, 2003), (YAML, 2013), (YAML, 2017), ("aten/src/ATen/native/ReduceOps.cpp", 491)]
    assert _chain(t)[-5:] == [(CUDA + "CumsumKernel.cu", 10), (CUDA + "ScanUtils.cuh", 444),
                              (CUDA + "ScanUtils.cuh", 391), (CUDA + "ScanUtils.cuh", 410),
                              (CUDA + "ScanUtils.cuh", 272)]
    assert all(c["settled"] for c in t.to_dict()["choices"])
    inner = real_index.trace("torch.cumsum(torch.randn(64, 1000), dim=1)", undefines=["USE_MACA"])
    assert inner.main_chain()[-1].name == "__global__ at::native::tensor_kernel_scan_innermost_dim"


def test_hardswish_in_bfloat16(real_index):
    """Another dtype: F.hardswish (functional.py:2128) with inplace=False calls torch._C._nn.hardswish (:2150, not
    hardswish_ under `if inplace`), hardswish (native_functions.yaml:11816) -> its CUDA stub kernel
    (ActivationHardswishKernel.cu:22), whose AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16, ...) covers bfloat16,
    -> gpu_kernel (:29) on a contiguous input -> vectorized_elementwise_kernel (CUDALoops.cuh:63)."""
    t = real_index.trace("F.hardswish(torch.randn(1024, 1024, dtype=torch.bfloat16))", undefines=["USE_MACA"])
    assert t.dtype == "bfloat16"
    assert _chain(t)[:3] == [("torch/nn/functional.py", 2128), ("torch/nn/functional.py", 2150), (YAML, 11816)]
    assert (CUDA + "ActivationHardswishKernel.cu", 22) in _chain(t)
    assert t.main_chain()[-1].name == "__global__ at::native::vectorized_elementwise_kernel"
    assert (t.main_chain()[-1].file, t.main_chain()[-1].line) == (CUDA + "CUDALoops.cuh", 63)


def test_elementwise_calls_read_with_their_operands(real_index):
    """Three calls not tuned for (session of 2026-12-06 11:22), read hop by hop on the stock build:
    - torch.maximum of two tensors: maximum_kernel_cuda (MaxMinElementwiseKernel.cu:14), `iter.dtype() ==
      ScalarType::Bool` (:15) false, so opmath_symmetric_gpu_kernel_with_scalars_arity2 (:29; under #ifdef USE_MACA,
      so upstream's opmath_symmetric_gpu_kernel_with_scalars, Loops.cuh:305, stands in): no CPU scalar, nothing
      removed, `iter.ninputs() == 2` (:337) holds: the BinaryFunctor launch (:338), not the AUnary one (:341);
    - torch.mul in float16 by a Python number (another dtype): `common_dtype == kComplexHalf` (BinaryMulKernel.cu:64)
      false, the fork's _arity3 (:80) removes the CPU scalar, so the AUnaryFunctor launch (:57);
    - F.threshold with inplace=True (a non-default argument): threshold_ (functional.py:1468) delegates to
      threshold.out, whose meta function adds self twice; `maca_likely(!disable_threshold_opt)`
      (ActivationThresholdKernel.cu:28) holds with the variable unset: gpu_kernel_with_scalars_arity2 (:29), then
      opmath_gpu_kernel_with_scalars' BinaryFunctor launch (Loops.cuh:269)."""
    def launches(call):
        t = real_index.trace(call, undefines=["USE_MACA"])
        return [(h.file.rpartition("/")[2], h.line) for h in t.main_chain() if h.layer == "cuda"][:3]
    assert launches("torch.maximum(torch.randn(1024), torch.randn(1024))")[:2] == [
        ("MaxMinElementwiseKernel.cu", 29), ("Loops.cuh", 338)]
    assert launches("torch.mul(torch.randn(1024, dtype=torch.float16), 2.0)")[:2] == [
        ("BinaryMulKernel.cu", 80), ("BinaryMulKernel.cu", 57)]
    assert launches("F.threshold(torch.randn(1024), 0.5, 1.0, inplace=True)") == [
        ("ActivationThresholdKernel.cu", 29), ("Loops.cuh", 397), ("Loops.cuh", 269)]
