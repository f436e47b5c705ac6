"""Trace truth on the PyTorch 1.4 layout (OPINDEX_REAL_CHECKOUT_1_4): the legacy kernels a dispatch row names
(`legacy::cuda::_th_sort`) are written at build time from aten/src/ATen/Declarations.cwrap and nn.yaml, so the
source has no definition of them; the trace goes from the declaration to the generic THC/THCUNN function its cname
names. Every hop named here was read in the source (file:line)."""
from __future__ import annotations


def where(t) -> set[tuple[str, int]]:
    return {(h.file, h.line) for h in t.hops if not h.absent}


def test_sort_goes_from_its_cwrap_declaration_to_the_thc_generic_code(real_index_1_4):
    t = real_index_1_4.trace("torch.sort")
    assert [(h.kind, h.file, h.line) for h in t.main_chain()[2:6]] == [
        ("CUDA", "aten/src/ATen/native/native_functions.yaml", 5030),  # CUDA: legacy::cuda::_th_sort
        ("legacy_declaration", "aten/src/ATen/Declarations.cwrap", 581),  # name: _th_sort / cname: sort
        ("generated_call", "aten/src/THC/generic/THCTensorSort.cu", 275),  # void THCTensor_(sort)(...)
        ("calls", "aten/src/THC/generic/THCTensorSort.cu", 8)]  # THCTensor_(sortKeyValueInplace)
    assert ("aten/src/THC/THCSortUtils.cuh", 151) in where(t)  # __global__ bitonicSortKVInPlace


def test_nll_loss_goes_from_its_nn_yaml_declaration_to_the_thcunn_generic_code(real_index_1_4):
    t = real_index_1_4.trace("F.nll_loss")
    assert {
        ("aten/src/ATen/nn.yaml", 30),  # - name: _thnn_nll_loss(...) / cname: ClassNLLCriterion
        ("aten/src/THCUNN/generic/ClassNLLCriterion.cu", 5),  # void THNN_(ClassNLLCriterion_updateOutput)(...)
        ("aten/src/THCUNN/ClassNLLCriterion.cu", 42),  # __global__ ..._no_reduce_kernel
    } <= where(t)


def test_mm_reaches_cublas_through_the_generated_th_mm(real_index_1_4):
    t = real_index_1_4.trace("torch.mm")
    assert {
        ("aten/src/ATen/Declarations.cwrap", 1191),  # name: _th_mm (options: cname: addmm)
        ("aten/src/THC/generic/THCTensorMathBlas.cu", 460),  # void THCTensor_(addmm)(...)
        ("aten/src/THC/THCBlas.cu", 214),  # THCudaBlas_Sgemm
        ("aten/src/ATen/cuda/CUDABlas.cpp", 173),  # cublasSgemm
    } <= where(t)
    rows = real_index_1_4.rows("SELECT declaration, decl_line, cname, definition FROM legacy_kernel_links WHERE "
                                "kernel = 'legacy::cuda::_th_mm'")
    assert rows == [{"declaration": "_th_mm", "decl_line": 1191, "cname": "addmm", "definition": "THCTensor_addmm"}]


def test_the_real_cudnn_convolution_not_the_stub_built_without_cudnn(real_index_1_4):
    # cudnn/Conv.cpp:13 is under `#if !AT_CUDNN_ENABLED()` (:7) and only raises; the real one is at :930 (`#else`,
    # :76). The stub's `const at::Tensor& bias /* optional */` fits the schema's parameters as well: still a stand-in
    t = real_index_1_4.trace("aten::cudnn_convolution")
    assert [(h.file, h.line) for h in t.main_chain()[2:6]] == [
        ("aten/src/ATen/native/cudnn/Conv.cpp", 930), ("aten/src/ATen/native/cudnn/Conv.cpp", 897),
        ("aten/src/ATen/native/cudnn/Conv.cpp", 858), ("aten/src/ATen/native/cudnn/Conv.cpp", 889)]
    assert ("aten/src/ATen/native/cudnn/Conv.cpp", 13) not in where(t)


def test_an_op_passed_by_its_api_name_is_the_op_not_another_callers_helper(real_index_1_4):
    # UnaryOps.cpp:137 `sigmoid(self) { return unary_op_impl(self, at::sigmoid_out); }`; unary_op_impl (:50) calls
    # out_impl(result, self) (:52). digamma (:113) passes its own digamma_out: never part of sigmoid's trace
    t = real_index_1_4.trace("torch.sigmoid")
    assert [(h.name, h.line) for h in t.main_chain()[3:7]] == [
        ("at::native::sigmoid", 137), ("at::native::unary_op_impl", 50), ("at::sigmoid_out", 52),
        ("aten::sigmoid.out", 2349)]
    assert ("aten/src/ATen/native/cuda/UnaryOpsKernel.cu", 231) in where(t)  # sigmoid_kernel_cuda
    assert not any("digamma" in h.name for h in t.hops)


def test_a_legacy_function_cpp_code_calls_and_the_old_vf_module(real_index_1_4):
    # cuda/LinearAlgebra.cu:18 bmm_cuda: `return legacy::cuda::_th_bmm(self, mat2);` (generated: Declarations.cwrap
    # :1211, cname baddbmm) -> THCTensor_(baddbmm) (THCTensorMathBlas.cu:536) -> THCudaBlas_SgemmBatched (THCBlas.cu
    # :314) -> cublasSgemmBatched (:340)
    t = real_index_1_4.trace("torch.bmm")
    assert {("aten/src/ATen/native/cuda/LinearAlgebra.cu", 18), ("aten/src/ATen/Declarations.cwrap", 1211),
            ("aten/src/THC/generic/THCTensorMathBlas.cu", 536), ("aten/src/THC/THCBlas.cu", 340)} <= where(t)
    # torch/nn/functional.py:13 `from . import _VF`: 1.4's torch/nn/_VF.py forwards to torch._C._VariableFunctions
    t = real_index_1_4.trace("F.dropout")
    assert [(h.layer, h.name, h.line) for h in t.main_chain()[1:3]] == [
        ("bridge", "_VF.dropout", 807), ("native", "aten::dropout", 175)]
    t = real_index_1_4.trace("nn.LSTM")
    assert {("torch/nn/modules/rnn.py", 558),  # _VF.lstm(...)
            ("aten/src/ATen/native/cudnn/RNN.cpp", 677),  # _cudnn_rnn
            ("aten/src/ATen/native/cudnn/RNN.cpp", 782)} <= where(t)  # cudnnRNNForwardTraining


def test_a_function_with_directives_inside_its_calls_arguments_is_read(real_index_1_4):
    # 1.4 THC/generic/THCTensorSort.cu: THCTensor_(sort) (:275) calls THCTensor_(sortViaThrust) (:324), defined at
    # :154, whose thrust calls each take `#if CUDA_VERSION >= 7000 ... thrust::cuda::par(...), #endif` inside their
    # argument lists: thrust::copy (:223), thrust::sort (:231, :237, :244, :250)
    t = real_index_1_4.trace("torch.sort")
    cu = "aten/src/THC/generic/THCTensorSort.cu"
    via = [h for h in t.hops if h.name == "THCTensor_sortViaThrust"]
    assert via and (via[0].file, via[0].line, via[0].called_at) == (cu, 154, f"{cu}:324")
    assert [(h.name, h.line) for h in t.hops if h.parent == via[0].id][:5] == [
        ("thrust::copy", 223), ("thrust::sort", 231), ("thrust::sort", 237), ("thrust::sort", 244),
        ("thrust::sort", 250)]


def test_a_macro_each_function_defines_again_launches_its_own_kernel(real_index_1_4):
    # 1.4 THC/generic/THCTensorIndex.cu: THCTensor_(indexSelect) #defines LARGE_INDEX at :447 (its parameters
    # continued over two lines; indexFill's own LARGE_INDEX, :323, is #undef'd at :395) and uses it at :496-:528:
    # indexSelectLargeIndex<<<...>>>, the __global__ of THC/THCTensorIndex.cu:335 (not indexFillLargeIndex)
    t = real_index_1_4.trace("torch.index_select")
    gen = "aten/src/THC/generic/THCTensorIndex.cu"
    launches = [(h.line, h.name.split("<")[0]) for h in t.hops if h.kind == "launch" and h.file == gen]
    assert (496, "indexSelectLargeIndex") in launches and (528, "indexSelectLargeIndex") in launches
    assert not [n for _, n in launches if n.startswith("indexFill")]
    assert ("aten/src/THC/THCTensorIndex.cu", 335) in where(t)


def test_the_convolution_backends_are_chosen_by_conv_params_methods(real_index_1_4):
    """1.4's _convolution (Convolution.cpp:533) picks its backend with methods of its local `ConvParams params`
    (:553): `} else if (params.use_cudnn(input)) {` at :596 runs cudnn_convolution; ConvParams::use_cudnn is defined
    at :149. Each such method is a chooser hop at its definition, called at the test."""
    t = real_index_1_4.trace("F.conv2d")
    conv = next(h for h in t.hops if h.name == "at::native::_convolution")
    choosers = {(h.name, h.line, h.called_at) for h in t.hops if h.kind == "chooser" and h.parent == conv.id}
    assert {("at::native::ConvParams::use_cudnn", 149, "aten/src/ATen/native/Convolution.cpp:596"),
            ("at::native::ConvParams::use_cudnn_depthwise", 331, "aten/src/ATen/native/Convolution.cpp:584"),
            ("at::native::ConvParams::is_depthwise", 209, "aten/src/ATen/native/Convolution.cpp:577")} <= choosers
    assert t.main_chain()[-1].layer in ("library", "cuda")  # a chooser is never the end
