"""Trace truth on the PyTorch 1.8 layout (OPINDEX_REAL_CHECKOUT_1_8): legacy TH/THC/THNN code reached through the
`legacy::cuda::_th_*` / `_thnn_*` dispatch names and the token-pasting generic names (`THCTensor_(sort)`,
`THNN_(ClassNLLCriterion_updateOutput)`). Every hop named here was read in the source (file:line)."""
from __future__ import annotations


def where(t) -> set[tuple[str, int]]:
    return {(h.file, h.line) for h in t.hops if not h.absent}


def test_sort_goes_through_the_legacy_thc_generic_code(real_index_1_8):
    t = real_index_1_8.trace("torch.sort")
    assert {
        ("aten/src/ATen/native/native_functions.yaml", 6423),  # CUDA: legacy::cuda::_th_sort
        ("aten/src/ATen/cuda/LegacyTHFunctionsCUDA.cpp", 534),  # _th_sort: THCudaTensor_sort(...) per dtype
        ("aten/src/THC/generic/THCTensorSort.cu", 279),  # void THCTensor_(sort)(...)
        ("aten/src/THC/generic/THCTensorSort.cu", 10),  # THCTensor_(sortKeyValueInplace)
        ("aten/src/THC/generic/THCTensorSort.cu", 128),  # HANDLE_SORT_CASE -> bitonicSortKVInPlace<<<...>>>
        ("aten/src/THC/THCSortUtils.cuh", 151),  # __global__ bitonicSortKVInPlace
    } <= where(t)


def test_nll_loss_goes_through_the_legacy_thnn_generic_code(real_index_1_8):
    t = real_index_1_8.trace("F.nll_loss")
    assert {
        ("aten/src/ATen/cuda/LegacyTHFunctionsCUDA.cpp", 1473),  # legacy::cuda::_thnn_nll_loss_forward
        ("aten/src/THCUNN/generic/ClassNLLCriterion.cu", 5),  # void THNN_(ClassNLLCriterion_updateOutput)(...)
        ("aten/src/THCUNN/generic/ClassNLLCriterion.cu", 57),  # ..._no_reduce_kernel<scalar_t><<<...>>>
        ("aten/src/THCUNN/ClassNLLCriterion.cu", 44),  # __global__ ClassNLLCriterion_updateOutput_no_reduce_kernel
    } <= where(t)
    called = {h.called_at for h in t.hops if h.name == "THNN_ClassNLLCriterion_updateOutput"}
    assert called & {"aten/src/ATen/cuda/LegacyTHFunctionsCUDA.cpp:1492"}  # THNN_CudaClassNLLCriterion_updateOutput


def test_conv2d_reaches_cudnn_past_the_deprecated_overloads(real_index_1_8):
    # 1.8's YAML lists cudnn_convolution.deprecated (:1175) and .deprecated2 (:1180) before the current overload
    # (:1184); _convolution's at::cudnn_convolution(...) (Convolution.cpp:710) is followed into the current one
    t = real_index_1_8.trace("F.conv2d")
    assert {
        ("aten/src/ATen/native/native_functions.yaml", 1184),  # cudnn_convolution(..., bool allow_tf32)
        ("aten/src/ATen/native/cudnn/ConvShared.cpp", 261),  # Tensor cudnn_convolution(...)
        ("aten/src/ATen/native/cudnn/Conv_v7.cpp", 617),  # raw_cudnn_convolution_forward_out_32bit
        ("aten/src/ATen/native/cudnn/Conv_v7.cpp", 650),  # cudnnConvolutionForward
    } <= where(t)


def test_the_1_8_names_of_the_composite_keys(real_index_1_8):
    # `cat: dispatch: DefaultBackend: cat` (YAML :908-910): DefaultBackend is 1.8's CompositeExplicitAutograd, the
    # kernel for every backend: TensorShape.cpp:418 cat -> at::_cat (:430) -> CUDA: cat_cuda (Shape.cu:428)
    t = real_index_1_8.trace("torch.cat")
    assert [(h.kind, h.name) for h in t.hops[:4]] == [
        ("binding", "torch.cat"), ("entry", "aten::cat"), ("DefaultBackend", "DefaultBackend: cat"),
        ("function", "at::native::cat")]
    assert {("aten/src/ATen/native/TensorShape.cpp", 418), ("aten/src/ATen/native/TensorShape.cpp", 430),
            ("aten/src/ATen/native/cuda/Shape.cu", 428)} <= where(t)


def test_a_rocm_only_call_is_not_walked_on_cuda(real_index_1_8):
    # 1.8 cuda/Shape.cu:557-568 `#ifdef __HIP_PLATFORM_HCC__` ... hip_parallel_cat<scalar_t>(...) (:567); the
    # #else (:569-) is what a CUDA build compiles: parallel_cat (:318, called at :584) -> CatArrayBatchedCopy (:139)
    t = real_index_1_8.trace("torch.cat")
    cu = "aten/src/ATen/native/cuda/Shape.cu"
    assert not [h for h in t.hops if "hip_parallel_cat" in h.name or "HIP_CatArrayBatchedCopy" in h.name]
    assert {(cu, 318), (cu, 139)} <= where(t)
    rocm = real_index_1_8.trace("torch.cat", device="all")
    hip = [h for h in rocm.hops if h.name.endswith("hip_parallel_cat")]
    assert hip and hip[0].called_at == f"{cu}:567"
    assert hip[0].detail.endswith("[called under #if defined(__HIP_PLATFORM_HCC__)]")


def test_a_template_template_parameter_called_on_a_temporary_runs_the_class_passed(real_index_1_8):
    # 1.8 ReduceSumProdKernel.cu:87 sum_kernel_cuda calls reduce_dispatch<sum_functor>(iter, ...); reduce_dispatch
    # (:64, whose template head takes :57-:63, OpFunctor a template template parameter) runs
    # `OpFunctor<at::Half, float>{}(iter)` (:66): sum_functor::operator() (:12), shown where sum_kernel_cuda's
    # own lambda calls it first (:83)
    t = real_index_1_8.trace("torch.sum")
    cu = "aten/src/ATen/native/cuda/ReduceSumProdKernel.cu"
    helper = [h for h in t.hops if h.name == "at::native::reduce_dispatch"]
    assert helper and (helper[0].line, helper[0].called_at) == (64, f"{cu}:87")
    below = [h for h in t.hops if h.parent == helper[0].id]
    assert [(h.kind, h.name, h.called_at) for h in below][:1] == [
        ("functor", "at::native::sum_functor::operator()", f"{cu}:66")]


def test_a_template_called_again_with_other_arguments_is_a_hop(real_index_1_8):
    # 1.8 Shape.cu cat_out_cuda: parallel_cat<scalar_t, CAT_ARRAY_BATCH_SIZE, 1>(...) (:584) and
    # parallel_cat<scalar_t, CAT_ARRAY_BATCH_SIZE/2, CAT_ARRAY_BATCH_SIZE/2>(...) (:595): two instantiations
    t = real_index_1_8.trace("torch.cat")
    cu = "aten/src/ATen/native/cuda/Shape.cu"
    assert [h.called_at for h in t.hops if h.name == "at::native::parallel_cat"] == [f"{cu}:584", f"{cu}:595"]


def test_topk_kernel_reaches_radix_select(real_index_1_8):
    # 1.8 THC/THCTensorTopK.cuh: __global__ gatherTopK calls radixSelect<...>(...) (:66), the __device__ function of
    # aten/src/ATen/native/cuda/SortingRadixSelect.cuh:294, which calls countRadixUsingMask (:323 -> :177)
    t = real_index_1_8.trace("torch.topk")
    select = [h for h in t.hops if h.kind == "device_call" and h.name == "__device__ at::native::radixSelect"]
    assert select and (select[0].file, select[0].line, select[0].called_at) == (
        "aten/src/ATen/native/cuda/SortingRadixSelect.cuh", 294, "aten/src/THC/THCTensorTopK.cuh:66")
    assert t.hops[select[0].parent].name == "__global__ gatherTopK"
    assert ("__device__ at::native::countRadixUsingMask", 177) in {(h.name, h.line) for h in t.hops
                                                                   if h.parent == select[0].id}


def test_a_python_default_reaches_the_cudnn_flag_of_batch_norm(real_index_1_8):
    """F.batch_norm (torch/nn/functional.py:2117) traced by name is a call with its defaults: weight=None reaches
    torch.batch_norm (:2149), aten::batch_norm, and _batch_norm_impl_index (Normalization.cpp:394), whose
    `bool use_cudnn = false; use_cudnn = (... && weight.defined() && ...);` (:416-:429) is false: `if (use_cudnn &&
    eps >= ...)` (:431) is not taken, and the chain goes on to at::native_batch_norm (:468), batch_norm_cuda
    (cuda/Normalization.cu:30) and the eval transform kernel (cuda/Normalization.cuh:159), not cuDNN."""
    t = real_index_1_8.trace("F.batch_norm")
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    assert ("at::native_batch_norm", "aten/src/ATen/native/Normalization.cpp", 468) in chain
    assert chain[-1] == ("__global__ at::native::batch_norm_transform_input_kernel",
                         "aten/src/ATen/native/cuda/Normalization.cuh", 159)
    assert not any(name.startswith("cudnn") for name, _, _ in chain)
    assert t.call is None  # a name, not a call: the JSON says so
