"""The build a trace is for, on the PyTorch 2.4 tree (MetaX-MACA/mcPytorch): the main chain's end read under the
stated build and the op's default arguments (hops checked by reading the source)."""
from __future__ import annotations

from opindex.render.trace_text import render

RNN = "aten/src/ATen/native/cudnn/RNN.cpp"


def _end(t):
    h = t.main_chain()[-1]
    return h.name, h.file, h.line


def test_lstm_runs_the_cudnn_v8_rnn_api_of_a_current_build(real_index):
    """cudnn/Descriptors.h:22 defines USE_CUDNN_RNN_V8_API under `CUDNN_VERSION >= 8907`; _cudnn_rnn then calls
    cudnnRNNForward (RNN.cpp:1596, the #else of `#ifndef USE_CUDNN_RNN_V8_API` at :1572). A stated older cuDNN
    takes cudnnRNNForwardTraining (:1573)."""
    t = real_index.trace("nn.LSTM")
    assert _end(t) == ("cudnnRNNForward", RNN, 1596)
    build = {s["name"]: s for s in t.build}
    assert build["USE_CUDNN_RNN_V8_API"]["source"] == "#define at aten/src/ATen/cudnn/Descriptors.h:22"
    assert build["CUDNN_VERSION"] == {"name": "CUDNN_VERSION", "value": "90100",
                                      "source": "upstream default (a current CUDA build)"}
    # this fork cannot build without USE_MACA: a static_assert(0) in the #else of an #ifdef USE_MACA says so
    assert build["USE_MACA"]["value"] == "" and build["USE_MACA"]["source"].startswith("required by ")
    old = real_index.trace("nn.LSTM", defines=["CUDNN_VERSION=8600"])
    assert _end(old) == ("cudnnRNNForwardTraining", RNN, 1573)
    assert {s["name"]: s["source"] for s in old.build}["CUDNN_VERSION"] == "-D"


def test_a_stock_build_of_the_fork_is_said_to_be_impossible(real_index):
    t = real_index.trace("nn.LSTM", undefines=["USE_MACA"])
    assert len(t.build_conflicts) == 1 and t.build_conflicts[0].startswith(
        "USE_MACA undefined (-U): this checkout cannot build so, required by ")
    assert "WARNING: USE_MACA undefined (-U)" in t.to_text(context=0)


def test_nll_loss_default_reduction_reaches_the_cuda_kernel(real_index):
    """F.nll_loss(reduction='mean'): the schema's `int reduction=Mean` flows by name into nll_loss_forward's `int
    reduction` and nll_loss_forward_out_cuda_template's `if (reduction == Reduction::None && n_dims == 2)`
    (Loss.cu:293), false: the launch at :385 of nll_loss_forward_reduce_cuda_kernel_2d (:230), not the no-reduce
    kernel of :313."""
    name, file, line = _end(real_index.trace("F.nll_loss"))
    assert (name, file, line) == ("__global__ at::native::nll_loss_forward_reduce_cuda_kernel_2d",
                                  "aten/src/ATen/native/cuda/Loss.cu", 230)


def test_the_input_dtype_chooses_exp_s_path(real_index):
    """exp_kernel_cuda (UnaryOpsKernel.cu:38): `if (at::isComplexType(common_dtype))` holds the jiterator path
    (under `#if AT_USE_JITERATOR()`, which this fork turns off with USE_MACA); float32 takes the else branch's
    gpu_kernel (:64), whose machinery ends in vectorized_elementwise_kernel (CUDALoops.cuh:63). complex64 on a
    stock CUDA build (-U USE_MACA) launches the jitted kernel (CUDAJitLoops.cuh:209)."""
    loops = "aten/src/ATen/native/cuda/CUDALoops.cuh"
    assert _end(real_index.trace("torch.exp")) == ("__global__ at::native::vectorized_elementwise_kernel", loops, 63)
    jitted = real_index.trace("torch.exp", dtype="complex64", undefines=["USE_MACA"])
    assert jitted.dtype == "complex64"
    assert _end(jitted)[1:] == ("aten/src/ATen/native/cuda/CUDAJitLoops.cuh", 209)


def test_calls_not_tuned_for_take_the_side_their_inputs_take(real_index):
    """Read hop by hop against the source (2026-12-05):
    - torch.tanh, bfloat16: tanh_kernel_cuda (cuda/UnaryGeometricTanhKernel.cu:19) tests `at::isComplexType
      (common_dtype)` (:21): false, so the else branch's gpu_kernel_maca_arity1 (:49), whose arity-1 machinery in
      this fork (USE_MACA, required) launches vectorized_elementwise_kernel_unary_opt: the overload its enable_if
      takes for BFloat16 (CUDALoops.cuh:129), not the `assert(0)` one at :121 it keeps for other types; the
      complex branch's `#if AT_USE_JITERATOR()` (false here: jit_macros.h:7 under USE_MACA) is not on the chain.
    - F.mse_loss, reduction='mean' by default: mse_loss_out (Loss.cpp:128) tests `reduction != Reduction::None`
      (:130): true, so the mse_stub call at :133 (not the else's at :140), to mse_kernel_cuda's gpu_kernel (cuda/
      BinaryMiscOpsKernels.cu:37) and vectorized_elementwise_kernel (CUDALoops.cuh:63); the mean after it
      (at::mean_out, :135) is a branch."""
    tanh = real_index.trace("torch.tanh", dtype="bfloat16")
    chain = [(h.file, h.line) for h in tanh.main_chain()]
    assert ("aten/src/ATen/native/cuda/UnaryGeometricTanhKernel.cu", 49) in chain
    assert ("aten/src/ATen/native/cuda/UnaryGeometricTanhKernel.cu", 27) not in chain  # the jitted launch
    assert _end(tanh) == ("__global__ at::native::vectorized_elementwise_kernel_unary_opt",
                          "aten/src/ATen/native/cuda/CUDALoops.cuh", 129)
    assert {s["name"]: s["source"] for s in tanh.build}["AT_USE_JITERATOR()"] == \
        "#define at aten/src/ATen/jit_macros.h:7"
    mse = real_index.trace("F.mse_loss")
    chain = [(h.name, h.file, h.line) for h in mse.main_chain()]
    assert ("mse_stub", "aten/src/ATen/native/Loss.cpp", 133) in chain
    assert ("aten/src/ATen/native/cuda/BinaryMiscOpsKernels.cu", 37) in [c[1:] for c in chain]
    assert _end(mse) == ("__global__ at::native::vectorized_elementwise_kernel",
                         "aten/src/ATen/native/cuda/CUDALoops.cuh", 63)


def test_a_trace_that_starts_at_a_function_that_runs_what_it_is_passed(real_index_1_4):
    """1.4's __global__ batch_norm_collect_statistics_kernel (cuda/Normalization.cuh:216, a template over the
    VarTransform its launcher passes) is walked per caller when reached from one; traced down from itself it has no
    caller: one root, walked once (the crash sweep of 2026-12-05 found an AttributeError here)."""
    t = real_index_1_4.trace("at::native::batch_norm_collect_statistics_kernel", up=False)
    assert (t.hops[0].name, t.hops[0].file, t.hops[0].line) == (
        "at::native::batch_norm_collect_statistics_kernel", "aten/src/ATen/native/cuda/Normalization.cuh", 216)
    assert t.hops[0].parent is None and len([h for h in t.hops if h.parent is None]) == 1


def test_a_header_s_call_reaches_the_definition_its_translation_unit_reads(real_index):
    """torch.where's CUDA kernel where_kernel_impl (cuda/TensorCompare.cu:14) calls gpu_kernel_maca_arity3 (:16),
    whose machinery (maca_kernels/CUDALoops_maca_arity3.cuh:609) calls launch_vectorized_kernel (:642). That header
    is a fragment #included by both CUDALoops.cuh (:446) and maca_kernels/CUDALoops_copy.cuh (:4744), each defining
    launch_vectorized_kernel before the #include (CUDALoops.cuh:174, the USE_MACA side; CUDALoops_copy.cuh:162).
    TensorCompare.cu reads Loops.cuh (:6), which reads CUDALoops.cuh (Loops.cuh:68), never CUDALoops_copy.cuh (only
    Copy.cu's translation unit does): the chain goes through CUDALoops.cuh:174 to its launch (:223) and the
    __global__ vectorized_elementwise_kernel at CUDALoops.cuh:63, not the copy's namesake at CUDALoops_copy.cuh:75."""
    loops = "aten/src/ATen/native/cuda/CUDALoops.cuh"
    chain = [(h.name, h.file, h.line) for h in real_index.trace("torch.where").main_chain()]
    assert chain[-3:] == [("at::native::launch_vectorized_kernel", loops, 174),
                          ("vectorized_elementwise_kernel<4, func_t, array_t><<<grid, num_threads(), 0, stream>>>",
                           loops, 223),
                          ("__global__ at::native::vectorized_elementwise_kernel", loops, 63)]
    assert not any(f.endswith("CUDALoops_copy.cuh") for _, f, _ in chain)


def test_a_forward_trace_does_not_end_in_a_backward_function(real_index):
    """F.conv2d on a stock CUDA build (-U USE_MACA): _convolution (Convolution.cpp:1521) switches over the backend
    _select_conv_backend chose, which a name trace's values leave open (an open choice); its CudnnTranspose case calls
    cudnn_convolution_transpose (:1617), whose cuDNN work is cudnn_convolution_backward_input (cudnn/ConvShared.cpp
    :365): a backward function, ranked after the forward ways. The chain takes the Cudnn case's cudnn_convolution
    (:1605) -> cudnn_convolution_forward_out (ConvShared.cpp:205) -> raw_cudnn_convolution_forward_out
    (cudnn/Conv_v8.cpp:1172) -> run_single_conv (:974) -> run_conv_plan (:358) -> cudnnBackendExecute (:400)."""
    t = real_index.trace("F.conv2d", undefines=["USE_MACA"])
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    v8 = "aten/src/ATen/native/cudnn/Conv_v8.cpp"
    assert ("at::cudnn_convolution", "aten/src/ATen/native/Convolution.cpp", 1605) in chain
    assert chain[-4:] == [("raw_cudnn_convolution_forward_out", v8, 1172), ("run_single_conv", v8, 974),
                          ("run_conv_plan", v8, 358), ("cudnnBackendExecute", v8, 400)]
    assert not any("backward" in name for name, _, _ in chain)
    # the choice is the ranking's, and says so (6 ways: the bias's add after the cuDNN call, :1609, is no way)
    assert any(c["ways"] == 6 and not c["settled"] for c in t.to_dict()["choices"])


def test_a_parameter_compared_with_a_constant_its_file_defines(real_index):
    """F.embedding_bag: _embedding_bag_cuda (cuda/EmbeddingBag.cu) launches EmbeddingBag_updateOutputKernel_max
    under `if (mode == MODE_MAX)` (:404) and EmbeddingBag_updateOutputKernel_sum_mean (:115) in its else (:413).
    MODE_MAX is `constexpr int MODE_MAX = 2;` (:48); mode is the schema's `int mode=0` (native_functions.yaml:2338;
    F.embedding_bag's default mode='mean' passes 1): the test is false, the chain ends at the sum/mean kernel."""
    name, file, line = _end(real_index.trace("F.embedding_bag"))
    assert (name, file, line) == ("__global__ at::native::EmbeddingBag_updateOutputKernel_sum_mean",
                                  "aten/src/ATen/native/cuda/EmbeddingBag.cu", 115)


def test_a_function_s_value_and_a_flag_set_under_ifs_decide_the_blas_path(real_index):
    """torch.mm and torch.addmm (cuda/Blas.cpp, addmm_out_cuda_impl :199): `bool useLtInterface = false;` (:215) is
    set only inside `if (&result != &self)` / `if (!disable_addmm_cuda_lt)` (:229, under `#if CUDA_VERSION >= 11040`)
    and an `#if defined(USE_ROCM)` else branch (:268). `disable_addmm_cuda_lt` is `getDisableAddmmCudaLt()` (:216),
    which in this fork reads ENABLE_ADDMM_CUDA_LT (:175) and returns true when it is unset (PyTorch's default, an
    empty environment): both assignments are ruled out, `if (useLtInterface)` (:318) is false, and the else branch
    calls at::cuda::blas::gemm (:393) -> gemm_internal_cublas (CUDABlas.cpp:808) -> cublasSgemm (:816), on the
    fork's build and with -U USE_MACA alike (the function has no #if)."""
    blas = "aten/src/ATen/cuda/CUDABlas.cpp"
    for name, kw in (("torch.mm", {}), ("torch.addmm", {}), ("torch.addmm", {"undefines": ["USE_MACA"]})):
        chain = [(h.name, h.file, h.line) for h in real_index.trace(name, **kw).main_chain()]
        assert ("at::cuda::blas::gemm", "aten/src/ATen/native/cuda/Blas.cpp", 393) in chain, name
        assert chain[-2:] == [("at::cuda::blas::gemm_internal_cublas", blas, 808), ("cublasSgemm", blas, 816)], name


def test_a_function_that_returns_a_constant_in_the_build_traced(real_index):
    """cudnnv8_enabled_check_debug (ConvUtils.h:78) returns false first under `#if defined(USE_MACA)` (:79-81): in
    the fork's build raw_cudnn_convolution_forward_out (cudnn/Conv_v8.cpp:1172) takes its else branch (:1199), the
    v7 path: raw_cudnn_convolution_forward_out_v7 (Conv_v7.cpp:780) -> cudnnConvolutionForward (:759). A stock build
    (-U USE_MACA) reads TORCH_CUDNN_V8_API_DISABLED, unset: v8 (test_a_forward_trace_does_not_end_in_a_backward_
    function)."""
    chain = [(h.name, h.file, h.line) for h in real_index.trace("F.conv2d").main_chain()]
    v7 = "aten/src/ATen/native/cudnn/Conv_v7.cpp"
    assert ("at::native::raw_cudnn_convolution_forward_out_v7", v7, 780) in chain
    assert chain[-1] == ("cudnnConvolutionForward", v7, 759)


def test_up_from_a_cuda_kernel_reaches_the_module_not_a_namesake_helper(real_index):
    """layer_norm_cuda --up: its CUDA dispatch row (native_functions.yaml:3263) of aten::native_layer_norm (:3260),
    whose composite caller layer_norm_symint (layer_norm.cpp:187) is aten::layer_norm's kernel (:3256), called by
    F.layer_norm (torch/nn/functional.py:2576), which nn.LayerNorm.forward calls (nn/modules/normalization.py:202).
    transformers/transformer.cpp:63 defines an anonymous-namespace helper `norm` that calls at::layer_norm: named
    like aten::norm's kernel but never the definition the link step chose for it (ReduceOps.cpp), so no torch.norm
    or F.normalize above it."""
    t = real_index.trace("layer_norm_cuda", up=True)
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    yaml = "aten/src/ATen/native/native_functions.yaml"
    assert chain == [
        ("at::native::layer_norm_cuda", "aten/src/ATen/native/cuda/layer_norm_kernel.cu", 1575),
        ("CUDA: layer_norm_cuda", yaml, 3263), ("aten::native_layer_norm", yaml, 3260),
        ("at::native::layer_norm_symint", "aten/src/ATen/native/layer_norm.cpp", 187),
        ("aten::layer_norm", yaml, 3256),
        ("torch.nn.functional.layer_norm: torch.layer_norm", "torch/nn/functional.py", 2576),
        ("torch.nn.modules.normalization.LayerNorm", "torch/nn/modules/normalization.py", 202)]
    assert not any(h.name in ("torch.norm", "at::native::norm") for h in t.hops)


def test_a_chooser_of_arguments_read_with_the_call_s_values(real_index):
    """F.batch_norm traced by name (its defaults: weight=None, bias=None, training=False) on 2.4:
    _batch_norm_impl_index (Normalization.cpp:540) sets `BatchNormBackend backend = _select_batch_norm_backend(input,
    weight, bias, running_mean, running_var, training, eps);` (:584) and tests `backend == BatchNormBackend::Cudnn`
    (:586). _select_batch_norm_backend (:487) returns Cudnn and Miopen only under tests that hold
    `weight.defined()`, false for weight=None, so Native (:531): the chain calls at::native_batch_norm (:615), whose
    CUDA kernel batch_norm_cuda (cuda/Normalization.cu:461) passes `train` (schema `training`, false) on to
    batch_norm_cuda_out (:435): its `if (train)` (:440) is not taken, and the eval path's batch_norm_elementwise
    (:97) ends at batch_norm_transform_input_kernel (Normalization.cuh:218)."""
    chain = [(h.name, h.file, h.line) for h in real_index.trace("F.batch_norm").main_chain()]
    assert ("at::native_batch_norm", "aten/src/ATen/native/Normalization.cpp", 615) in chain
    assert ("at::native::batch_norm_elementwise", "aten/src/ATen/native/cuda/Normalization.cu", 97) in chain
    assert chain[-1] == ("__global__ at::native::batch_norm_transform_input_kernel",
                         "aten/src/ATen/native/cuda/Normalization.cuh", 218)
    assert not any(name.startswith("cudnn") for name, _, _ in chain)


def test_an_op_whose_work_is_a_fill_and_a_copy(real_index):
    """F.pad by name (mode='constant', its default): _pad_enum_symint (PadNd.cpp:191) returns
    at::constant_pad_nd_symint (:199) when `mode == at::padding_mode::constant` (:198, true), and its reflection and
    replication cases are ruled out. constant_pad_nd (:29) fills the output and copies the input into a narrowed
    view of it (`c_output.copy_(c_input)`, :105): those writes are its whole work, so they rank as its work, not as a
    fill/copy made besides; the chain goes through copy_ (Copy.cpp:350) to the copy kernel, never reflection_pad2d."""
    t = real_index.trace("F.pad")
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    pad = "aten/src/ATen/native/PadNd.cpp"
    assert ("at::constant_pad_nd_symint", pad, 199) in chain and ("c_output.copy_", pad, 105) in chain
    assert ("at::native::copy_", "aten/src/ATen/native/Copy.cpp", 350) in chain
    assert not any("reflection" in name or "replication" in name for name, _, _ in chain)
    assert not any(c.assumed is False for h in t.main_chain() for c in h.conditions)


def test_an_and_with_a_flag_the_defaults_set_rules_out_cudnn_s_grid_sampler(real_index):
    """GridSampler.cpp:1053: `if (cond_cudnn_grid_sampler(input, grid) && ... && align_corners)` guards the cuDNN
    call at :1059; F.grid_sample's align_corners=None becomes False (functional.py), so the chain takes
    `at::grid_sampler_2d` (:1063) to grid_sampler_2d_kernel (cuda/GridSampler.cu:26)."""
    t = real_index.trace("F.grid_sample")
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    assert ("at::grid_sampler_2d", "aten/src/ATen/native/GridSampler.cpp", 1063) in chain
    assert _end(t) == ("__global__ at::native::grid_sampler_2d_kernel", "aten/src/ATen/native/cuda/GridSampler.cu",
                       26)
    cudnn = next(h for h in t.hops if h.name == "cudnn_grid_sampler" and h.line == 1059)
    assert [(c.line, c.assumed) for c in cudnn.conditions] == [(1053, False)]


def test_of_two_calls_in_sequence_the_later_makes_the_result(real_index):
    """batch_norm_cuda_out (cuda/Normalization.cu:435) computes the statistics (batch_norm_mean_var, :441, inside
    `if (train)`) and then, after the if/else, the output (batch_norm_elementwise, :457), whose launch at
    Normalization.cuh:884 runs batch_norm_transform_input_kernel (:218): F.instance_norm's last kernel."""
    t = real_index.trace("F.instance_norm")
    chain = t.main_chain()
    assert any(h.name == "at::native::batch_norm_elementwise" and h.called_at ==
               "aten/src/ATen/native/cuda/Normalization.cu:457" for h in chain)
    assert _end(t) == ("__global__ at::native::batch_norm_transform_input_kernel",
                       "aten/src/ATen/native/cuda/Normalization.cuh", 218)


def test_launches_of_one_body_in_sequence_are_work_beside_the_chain_s_not_other_ways(real_index):
    """mbtopk::launch (cuda/TensorTopK.cu:642) launches fill (:680), radixFindKthValues and
    computeBlockwiseWithinKCounts in a loop (:708, :724), computeBlockwiseKthCounts (:732), two
    inclusive_sum_by_key scans (:739-740), then gatherTopK (:742), which writes the result. torch.multinomial by
    name reaches it through topk_out (Distributions.cpp:636) and ends at gatherTopK (TensorTopK.cu:496), not at
    the first launch, fill. The launches before are listed as work done in sequence, not as other ways: the
    hop's only other way is the `#else` gatherTopK (:754), which this build (CUB_SUPPORTS_SCAN_BY_KEY()) leaves
    out. randperm_out_cuda (cuda/Randperm.cu:58) makes random keys (:93) and radix-sorts them (:101) before
    randperm_handle_duplicate_keys (:106), whose kernel returns unless a thread's key equals the next
    (Randperm.cuh:18) and shuffles in place: a fix-up, so the chain ends at the sort (cub-RadixSortPairs.cu:46)
    and names it after. Its `bits` (:85-86, C++ math of n) is 23 for n = 1024: `bits <= 32` (:89) holds, and the
    `bits > 32` side's keys (:109) and radix sort (:117) are ruled out; for n = 100000 `bits` is 36, and the chain
    takes that side's sort (:117), after its keys and before its randperm_handle_duplicate_keys (:122)."""
    tk = "aten/src/ATen/native/cuda/TensorTopK.cu"
    t = real_index.trace("torch.multinomial", undefines=["USE_MACA"])
    assert _end(t) == ("__global__ at::native::mbtopk::gatherTopK", tk, 496)
    chain = t.main_chain()
    c = next(c for c in t.to_dict()["choices"] if c["hop"] == chain[-2].id)
    assert (chain[-2].file, chain[-2].line, c["ways"], c["settled"]) == (tk, 742, 2, True)
    assert [(t.hops[s["hop"]].line, s["order"]) for s in c["sequence"]] == [
        (680, "before"), (708, "before"), (724, "before"), (732, "before"), (739, "before"), (740, "before")]
    assert t.hops[c["others"][0]].line == 754
    text = render(t)
    assert "runs after fill, radixFindKthValues, computeBlockwiseWithinKCounts, computeBlockwiseKthCounts (+2 " \
        "more) (in sequence, body at TensorTopK.cu:642)" in text
    # ctc_loss_backward_gpu_template (LossCTC.cu:614) launches its log_beta kernel (:667), its collect kernels under
    # `if (is_large)` (:683, open), then zeroes padded gradients (:769): with launches under an open test between
    # them the later is no surer the result, and the chain keeps the first, ctc_loss_backward_log_beta_gpu_kernel
    assert _end(real_index.trace("aten::_ctc_loss_backward")) == (
        "__global__ at::native::ctc_loss_backward_log_beta_gpu_kernel", "aten/src/ATen/native/cuda/LossCTC.cu", 329)
    r = real_index.trace("torch.randperm(1024, device='cuda')", undefines=["USE_MACA"])
    sort = ("cub::DeviceRadixSort::SortPairs", "aten/src/ATen/cuda/cub-RadixSortPairs.cu", 46)
    assert _end(r) == sort
    hop = next(h for h in r.main_chain() if h.name == "at::cuda::cub::radix_sort_pairs")
    c = next(c for c in r.to_dict()["choices"] if c["hop"] == hop.id)
    assert [(_site_of(r.hops[s["hop"]]), s["order"], s["fix_up"]) for s in c["sequence"]] == [
        (93, "before", None), (106, "after", "aten/src/ATen/native/cuda/Randperm.cuh:18")]
    assert (hop.line, c["ways"], c["settled"], [_site_of(r.hops[k]) for k in c["others"]]) == (
        101, 3, True, [117, 109])
    assert "runs after distribution_elementwise_grid_stride_kernel; then randperm_handle_duplicate_keys_kernel " \
        "(a fix-up: writes where the data test at Randperm.cuh:18 holds) (in sequence, body at Randperm.cu:58)" \
        in render(r)
    r = real_index.trace("torch.randperm(100000, device='cuda')", undefines=["USE_MACA"])
    assert _end(r) == sort
    hop = next(h for h in r.main_chain() if h.name == "at::cuda::cub::radix_sort_pairs")
    c = next(c for c in r.to_dict()["choices"] if c["hop"] == hop.id)
    assert (hop.line, c["settled"]) == (117, True)
    # the fix-up at :122 is a repeat of the one at :106 (walked there): it runs after the sort all the same
    assert [(_site_of(r.hops[s["hop"]]), s["order"], s["fix_up"]) for s in c["sequence"]] == [
        (109, "before", None), (122, "after", "aten/src/ATen/native/cuda/Randperm.cuh:18")]


def _site_of(hop) -> int:
    """The line a hop is called from in its parent's body (its own line where it has no call site)."""
    return int(hop.called_at.rpartition(":")[2]) if hop.called_at else hop.line


def test_work_after_the_chain_s_under_a_test_of_its_own_is_said_with_its_test(real_index):
    """structured_topk_out_cuda (cuda/TensorTopK.cpp:47) gathers the top k (launch_gather_topk_kernel, :67; the
    only other way, topk_out_with_sort at :58, needs should_use_sort, false here), then sorts them `if (sorted &&
    values.numel() > 1)` (:71): sortKeyValueInplace (:76) under should_use_small_sort (:72), else a sort and
    indices.gather (:90). Those run after the gather, under tests the inputs leave open: no other way, and the text
    says when they run. torch.topk(torch.randn(16, 30000), 10) ends at mbtopk's gatherTopK (TensorTopK.cu:496)."""
    t = real_index.trace("torch.topk(torch.randn(16, 30000), 10)", undefines=["USE_MACA"])
    assert _end(t) == ("__global__ at::native::mbtopk::gatherTopK", "aten/src/ATen/native/cuda/TensorTopK.cu", 496)
    gather = next(h for h in t.main_chain() if h.name == "at::native::launch_gather_topk_kernel")
    c = next(c for c in t.to_dict()["choices"] if c["hop"] == gather.id)
    assert (gather.called_at, c["ways"], c["settled"]) == ("aten/src/ATen/native/cuda/TensorTopK.cpp:67", 2, True)
    assert [(t.hops[s["hop"]].name, t.hops[s["hop"]].line if s["hop"] else None, s["order"],
             [k["text"] for k in s["conditions"]]) for s in c["sequence"]] == [
        ("at::native::sortKeyValueInplace", 390, "after", ["sorted && values.numel() > 1",
                                                            "should_use_small_sort(values, dim)"]),
        ("indices.gather", 90, "after", ["sorted && values.numel() > 1", "not (should_use_small_sort(values, dim))"])]
    assert "       then bitonicSortKVInPlace (if sorted && values.numel() > 1 && should_use_small_sort(values, dim)), " \
        "_gather_elementwise_kernel_dim2_opt (if sorted && values.numel() > 1 && not (should_use_small_sort(values, " \
        "dim))) (in sequence, body at TensorTopK.cpp:47)" in render(t).splitlines()


def test_an_op_whose_result_another_op_takes_runs_before_it(real_index):
    """cross_entropy_loss_symint's default branch: `at::nll_loss_nd_symint(at::log_softmax(self, ...), ...)`
    (LossNLL.cpp:651-652): log_softmax's hop says it feeds nll_loss_nd_symint, and the chain ends at the loss's
    kernel, nll_loss_forward_reduce_cuda_kernel_2d (cuda/Loss.cu:230)."""
    t = real_index.trace("F.cross_entropy")
    fed = [h for h in t.hops if h.kind == "calls_op" and h.line == 652]
    assert fed and all(h.feeds == "nll_loss_nd_symint" for h in fed)
    assert _end(t) == ("__global__ at::native::nll_loss_forward_reduce_cuda_kernel_2d",
                       "aten/src/ATen/native/cuda/Loss.cu", 230)


def test_the_default_path_s_call_of_a_helper_called_twice(real_index):
    """std_var_kernel_cuda (cuda/ReduceMomentKernel.cu:23) calls std_var_kernel_impl under `if (input_dtype ==
    kHalf && iter.dtype() == kFloat)` (:25, false for float32) and again in the else's AT_DISPATCH (:34): the
    main chain takes the call at :34."""
    chain = real_index.trace("torch.var").main_chain()
    impl = [h for h in chain if h.name == "at::native::std_var_kernel_impl"]
    assert [h.called_at for h in impl] == ["aten/src/ATen/native/cuda/ReduceMomentKernel.cu:34"]
    assert not any(h.not_default for h in chain)


def test_arguments_whose_defaults_rule_out_every_way_are_read_as_given(real_index):
    """torch.clamp by name: min and max default to None, so `if (min && max)` (TensorCompare.cpp:699) and the
    `else if`s after it are all false; such a call raises. A name does not say which arguments a call gives: min
    and max are read as given, values unknown (Trace.given, the text's `Given:` line), and the chain goes on by
    ranking through clamp_scalar_stub (:704) to launch_clamp_scalar (cuda/TensorCompare.cu:59) and its launch
    (:65), marked ranked; nothing is ruled out. A call that gives them reads their values."""
    t = real_index.trace("torch.clamp")
    assert t.given == {"arguments": ["max", "min"], "file": "aten/src/ATen/native/TensorCompare.cpp", "line": 704,
                       "why": "with their defaults every way on is ruled out (clamp_scalar_stub needs min && max)"}
    assert t.ruled_out() is None
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    assert ("clamp_scalar_stub", "aten/src/ATen/native/TensorCompare.cpp", 704) in chain
    assert ("at::native::launch_clamp_scalar", "aten/src/ATen/native/cuda/TensorCompare.cu", 59) in chain
    assert t.main_chain()[-1].layer == "cuda"
    assert "Given: max, min (values unknown): with their defaults every way on is ruled out" in t.to_text(context=0)
    given = real_index.trace("torch.clamp(torch.randn(8, 8), -1.0, 1.0)")
    assert given.given is None and given.ruled_out() is None and given.main_chain()[-1].layer == "cuda"
    only_min = real_index.trace("torch.clamp(torch.randn(8, 8), min=0.0)")
    assert [h.name for h in only_min.main_chain() if h.layer == "stub"] == ["clamp_min_scalar_stub"]


def test_an_early_return_makes_the_rest_of_the_body_its_else(real_index):
    """multinomial_out: `if (!with_replacement || n_sample == 1) { ... return result; }` (Distributions.cpp:601);
    with the default replacement=False (the kernel's `with_replacement`, by position) the stub call after it
    (:641) is ruled out and off the main chain."""
    t = real_index.trace("torch.multinomial")
    stub = next(h for h in t.hops if h.name == "multinomial_with_replacement_stub")
    assert [(c.text, c.assumed) for c in stub.conditions] == [("not (!with_replacement || n_sample == 1)", False)]
    assert stub not in t.main_chain()


def test_a_global_namespace_call_in_a_device_lambda_is_no_op_call(real_index):
    """launch_clamp_scalar's lambda (cuda/TensorCompare.cu:65) returns `::max(static_cast<opmath_t>(v), lim0_val)`
    (:70) and `::min(...)` (:72, :74): the global functions of the device code, not the ops at::max or at::min,
    which a bare `max(...)` written in namespace at::native would be."""
    t = real_index.trace("F.relu")
    assert not [h for h in t.hops if h.kind == "calls_op" and h.file == "aten/src/ATen/native/cuda/TensorCompare.cu"
                and h.line in (70, 72, 74)]


def test_untuned_calls_of_the_last_session_read_hop_by_hop(real_index):
    """Read against the source (2026-12-05 07:55). F.avg_pool2d with ceil_mode=True (a size option only): the
    contiguous input takes `case MemoryFormat::Contiguous` (cuda/AveragePool2d.cu:330), whose launch at :331 runs
    avg_pool2d_out_cuda_frame (:33), not the nhwc kernel of the ChannelsLast case. torch.neg on bfloat16:
    neg_kernel_cuda's `if (at::isComplexType(dtype))` (UnarySignKernels.cu:31) is false, so the chain passes the
    else branch's gpu_kernel_maca_arity1 launch (:55), never the jiterator's (the REGISTER_DISPATCH at :132 first).
    Found short: the launcher then takes the fork's unary_opt kernel, whose test `N == 64 * 1024 * 1024 || ...`
    (maca_kernels/CUDALoops_maca_arity1.cuh:35) this 4,096-element call makes false; that test is not read."""
    t = real_index.trace("F.avg_pool2d(torch.randn(8, 16, 32, 32), 2, ceil_mode=True)")
    chain = t.main_chain()
    assert [(h.kind, h.line) for h in chain if h.file == "aten/src/ATen/native/cuda/AveragePool2d.cu"][-2:] == [
        ("launch", 331), ("global_kernel", 33)]
    neg = real_index.trace("torch.neg(torch.randn(64, 64, dtype=torch.bfloat16))")
    sign = [(h.name, h.line) for h in neg.main_chain() if h.file == "aten/src/ATen/native/cuda/UnarySignKernels.cu"]
    assert sign == [("CUDA: neg_kernel_cuda", 132), ("at::native::neg_kernel_cuda", 29), ("gpu_kernel_maca_arity1", 55)]
    assert neg.dtype == "bfloat16"


def test_a_stock_build_walks_the_stem_of_a_launcher_only_the_fork_defines(real_index):
    """sigmoid_kernel_cuda's float32 way calls gpu_kernel_maca_arity1 (UnarySpecialOpsKernel.cu:161, the else of
    `if (disable_sigmoid_opt)`: the fork's getter get_maca_disable_sigmoid_opt(), written by
    DEFINE_MACA_ENV_API_NE at Context.cpp:118, is false with its variable unset), which
    Loops.cuh defines only under `#ifdef USE_MACA` (the directive at :102, its branch from :103). On -U USE_MACA
    that call cannot compile; beside it Loops.cuh:80 defines gpu_kernel, with the same parameters
    `(TensorIteratorBase& iter, const func_t& f)`, the name upstream 2.4 calls there. It stands in, marked, and the
    chain goes on through gpu_kernel_impl to vectorized_elementwise_kernel (CUDALoops.cuh:63), the kernel the
    expert names for a stock build, not to the complex-only jiterator branch (:126) that float32 rules out."""
    t = real_index.trace("torch.sigmoid", undefines=["USE_MACA"])
    cu = "aten/src/ATen/native/cuda/UnarySpecialOpsKernel.cu"
    loops = "aten/src/ATen/native/cuda/Loops.cuh"
    assert _end(t) == ("__global__ at::native::vectorized_elementwise_kernel",
                       "aten/src/ATen/native/cuda/CUDALoops.cuh", 63)
    assert t.ruled_out() is None
    chain = t.main_chain()
    launch = next(h for h in chain if h.kind == "tensor_iterator")
    assert (launch.name, launch.file, launch.line) == ("gpu_kernel_maca_arity1", cu, 161)
    stem = chain[chain.index(launch) + 1]
    assert (stem.name, stem.file, stem.line, stem.found) == ("at::native::gpu_kernel", loops, 80, "stand_in")
    assert [(c.kind, c.text, c.file, c.line, c.assumed) for c in stem.conditions] == [
        ("#if", "!(defined(USE_MACA))", loops, 103, True)]
    assert "stands in for gpu_kernel_maca_arity1 (aten/src/ATen/native/cuda/Loops.cuh:104)" in stem.detail
    left_out = [h for h in t.hops if h.parent == launch.id and h.name == "at::native::gpu_kernel_maca_arity1"]
    assert [(h.line, h.main) for h in left_out] == [(104, False)]
    assert "TensorIterator launch: gpu_kernel_maca_arity1 -> gpu_kernel (stand-in) -> __global__ " \
        "vectorized_elementwise_kernel" in " ".join(render(t).split())
    fork = real_index.trace("torch.sigmoid")
    assert fork.ruled_out() is None and not any(h.found == "stand_in" for h in fork.hops)


def test_a_traced_calls_sizes_decide_size_tests(real_index):
    """cumsum(torch.randn(1024, 1024), dim=1): scan_dim's `if (self.numel() == self.size(dim))` (ScanUtils.cuh:450)
    is false and `else if (dim == ndim - 1)` true, so tensor_kernel_scan_innermost_dim (:372), settled; by name
    the choice stays ranked. index_add with 256 indices: `numIndex = index.numel()` (Indexing.cu:1071) makes
    `if (numIndex <= 16)` false: indexFuncLargeIndex (:912) on the stock build (the fork's own build takes its
    vendor copy of it, maca_kernels/indexing_opt.cuh)."""
    t = real_index.trace("torch.cumsum(torch.randn(1024, 1024), dim=1)")
    utils = "aten/src/ATen/native/cuda/ScanUtils.cuh"
    assert _end(t) == ("__global__ at::native::tensor_kernel_scan_innermost_dim", utils, 372)
    scan = next(c for c in t.to_dict()["choices"] if t.hops[c["hop"]].name == "at::native::scan_innermost_dim")
    assert scan["settled"] is True
    by_name = real_index.trace("torch.cumsum")
    assert not any(c["settled"] for c in by_name.to_dict()["choices"]
                   if by_name.hops[c["hop"]].file == utils)
    added = real_index.trace("torch.index_add(torch.zeros(1024, 64), 0, torch.randint(0, 1024, (256,)), "
                             "torch.randn(256, 64))", undefines=["USE_MACA"])
    assert _end(added) == ("__global__ at::native::indexFuncLargeIndex", "aten/src/ATen/native/cuda/Indexing.cu",
                           912)


def test_ctc_loss_reads_the_bool_op_that_chooses_cudnn(real_index):
    """LossCTC.cpp:501: `bool use_cudnn = (log_probs.device().type() == at::kCUDA) && at::_use_cudnn_ctc_loss(
    log_probs, targets, input_lengths, target_lengths, BLANK);`, tested at :507 (cuDNN's call at :510, else
    at::_ctc_loss at :514). The op's CUDA kernel _use_cudnn_ctc_loss has two definitions in cudnn/LossCTC.cpp: :28
    under `#if (!AT_CUDNN_ENABLED())` (not this build) and :83, whose use_cudnn needs `targets.device().type() ==
    at::kCPU`: false for a tensor of the trace (on cuda); the .Tensor overload (:115) calls the IntArrayRef one.
    So the main chain takes at::_ctc_loss to ctc_loss_gpu (cuda/LossCTC.cu:787) and ends at the kernel its
    template launches (:313): ctc_loss_log_alpha_gpu_kernel, whose definition starts at `__global__ void` (:74;
    the name is on :78)."""
    t = real_index.trace("F.ctc_loss")
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    ctc = "aten/src/ATen/native/LossCTC.cpp"
    assert ("at::_ctc_loss", ctc, 514) in chain
    assert ("at::native::ctc_loss_gpu", "aten/src/ATen/native/cuda/LossCTC.cu", 787) in chain
    assert _end(t) == ("__global__ at::native::ctc_loss_log_alpha_gpu_kernel", "aten/src/ATen/native/cuda/LossCTC.cu",
                       74)
    assert not any("cudnn" in name.lower() for name, _, _ in chain)
    cudnn = next(h for h in t.hops if h.name == "at::_cudnn_ctc_loss" and h.line == 510)
    test = ("(log_probs.device().type() == at::kCUDA) && at::_use_cudnn_ctc_loss( log_probs, targets, input_lengths, "
            "target_lengths, BLANK) (= false: aten/src/ATen/native/cudnn/LossCTC.cpp:83, "
            "aten/src/ATen/native/cudnn/LossCTC.cpp:115)")
    assert [(c.text, c.file, c.line, c.assumed) for c in cudnn.conditions] == [(test, ctc, 507, False)]
    # the JSON says the same: the choice at ctc_loss_impl (:498) and the ruled-out option's condition
    data = t.to_dict()
    choice = next(c for c in data["choices"] if c["file"] == ctc and c["line"] == 498)
    ruled_out = next(o for o in choice["options"] if o["hop"] == cudnn.id)
    assert ruled_out["conditions"] == [{"text": test, "file": ctc, "line": 507, "assumed": False}]
    assert f"[called when {test}: not with the default arguments]" in cudnn.detail


def test_three_untuned_calls_read_hop_by_hop(real_index):
    """Read against the 2.4 source, not tuned for. cumsum(16x32, dim=0): impl_func_cum_ops' `self.dim() == 0` and
    `self.numel() == 0` false, scan_dim's `self.numel() == self.size(dim)` false (512 vs 16) and `dim == ndim - 1`
    false: tensor_kernel_scan_outer_dim (ScanUtils.cuh:272). gelu(bfloat16, approximate='tanh'): the Tanh branch's
    launch (ActivationGeluKernel.cu:24), the erf one (:35) ruled out. clamp(x, max=1.0): `min && max` false, `max`
    has a value: clamp_max_scalar_stub (TensorCompare.cpp:707)."""
    utils = "aten/src/ATen/native/cuda/ScanUtils.cuh"
    cumsum = real_index.trace("torch.cumsum(torch.randn(16, 32), dim=0)")
    assert _end(cumsum) == ("__global__ at::native::tensor_kernel_scan_outer_dim", utils, 272)
    gelu = real_index.trace("F.gelu(torch.randn(1024, 1024, dtype=torch.bfloat16), approximate='tanh')")
    cu = "aten/src/ATen/native/cuda/ActivationGeluKernel.cu"
    assert [h.line for h in gelu.main_chain() if h.file == cu and h.kind == "tensor_iterator"] == [24]
    erf = next(h for h in gelu.hops if h.file == cu and h.line == 35 and h.kind == "tensor_iterator")
    assert erf.not_default
    clamp = real_index.trace("torch.clamp(torch.randn(8, 8), max=1.0)")
    assert [(h.name, h.line) for h in clamp.main_chain() if h.layer == "stub"] == [("clamp_max_scalar_stub", 707)]


def test_a_number_for_a_tensor_parameter_rules_the_tensor_overload_out(real_index):
    """torch.clamp(x, max=1.0): python_arg_parser.cpp:87 `should_allow_numbers_as_tensors` lists add, div, mul,
    sub, ... (not clamp), so 1.0 does not fit clamp.Tensor's `Tensor? max` (native_functions.yaml:1491): that
    overload is ruled out, aten::clamp (:1482, `Scalar? max`) is the settled way. torch.add(x, 1) is in the list:
    add.Tensor stays a way."""
    clamp = real_index.trace("torch.clamp(torch.randn(8, 8), max=1.0)")
    yaml = "aten/src/ATen/native/native_functions.yaml"
    assert [(h.name, h.line) for h in clamp.main_chain()[1:2]] == [("aten::clamp", 1482)]
    tensor = next(h for h in clamp.hops if h.name == "aten::clamp.Tensor" and h.file == yaml)
    assert [(c.kind, c.file, c.line, c.assumed) for c in tensor.conditions] == [
        ("overload", "torch/csrc/utils/python_arg_parser.cpp", 87, False)]
    assert tensor.conditions[0].text.startswith("a Tensor for max (1.0 given; ")
    choice = next(c for c in clamp.to_dict()["choices"] if c["hop"] == clamp.main_chain()[1].id)
    assert choice["settled"] is True
    add = real_index.trace("torch.add(torch.randn(8, 8), 1)")
    assert not any(c.kind == "overload" for h in add.hops for c in h.conditions)


def test_an_overload_whose_required_argument_the_call_leaves_out_is_ruled_out(real_index):
    """torch.median(torch.randn(1024)): median.dim (native_functions.yaml:3952) and median.names_dim (:3963) need a
    `dim`, which the call does not give: ruled out (kind overload, at their YAML lines); aten::median (:3944) ->
    median_cuda (cuda/Sorting.cpp:189) -> median_impl (:130), whose `self.flatten().sort()` (:140) reaches the
    sort kernels. A slice of 1024 elements is too long for the bitonic sort (`sort_size <= 32`, Sort.cu:399) and
    the warp merge sort is not built (HAS_WARP_MERGE_SORT(), :402): radixSortKVInPlace (SortUtils.cuh:251), the
    kernel torch 2.11 ran for this call on an H100 (2026-12-06)."""
    yaml = "aten/src/ATen/native/native_functions.yaml"
    t = real_index.trace("torch.median(torch.randn(1024))", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain()[1:2]] == [("aten::median", 3944)]
    dim = next(h for h in t.hops if h.name == "aten::median.dim" and h.file == yaml)
    assert [(c.kind, c.text, c.file, c.line, c.assumed) for c in dim.conditions] == [
        ("overload", "a value for int dim (the call gives none, and it has no default)", yaml, 3952, False)]
    assert [(h.file, h.line) for h in t.main_chain() if h.name == "self.flatten().sort"] == [
        ("aten/src/ATen/native/cuda/Sorting.cpp", 140)]
    assert _end(t) == ("__global__ at::native::radixSortKVInPlace", "aten/src/ATen/native/cuda/SortUtils.cuh", 251)


def test_a_number_for_other_takes_where_scalar_other_and_its_at_where_call(real_index):
    """torch.where(c, x, 0.0): 0.0 does not fit where.self's `Tensor other` (where is not in
    python_arg_parser.cpp's numbers-as-tensors list) and the one-argument where(Tensor condition) takes fewer
    values: both are ruled out. where.ScalarOther (native_functions.yaml:6462) is walked first; its kernel
    at::native::where (TensorCompare.cpp:562) calls `at::where(condition, self_converted, other_converted)` (:566),
    the overload where.self (:6447), whose CUDA kernel (TensorCompare.cpp:547) reaches where_kernel's CUDA
    registration (cuda/TensorCompare.cu:96)."""
    yaml = "aten/src/ATen/native/native_functions.yaml"
    cmp = "aten/src/ATen/native/TensorCompare.cpp"
    t = real_index.trace("torch.where(torch.randn(64, 128) > 0, torch.randn(64, 128), 0.0)")
    assert [(h.name, h.file, h.line) for h in t.main_chain()[1:7]] == [
        ("aten::where.ScalarOther", yaml, 6462), ("CompositeImplicitAutograd: where", yaml, 6462),
        ("at::native::where", cmp, 562), ("at::where", cmp, 566), ("aten::where.self", yaml, 6447),
        ("CUDA: where", yaml, 6451)]
    ruled = {h.name: [c.kind for c in h.conditions if c.assumed is False] for h in t.hops
             if h.parent == t.main_chain()[0].id and h.layer == "native"}
    # a 64x128 tensor for where.Scalar's and where.ScalarSelf's `Scalar self`: the parser takes a tensor for a
    # number only with 0 dims (python_arg_parser.cpp:871)
    assert ruled["aten::where.Scalar"] == ruled["aten::where.ScalarSelf"] == ["overload"]
    scalar = next(h for h in t.hops if h.name == "aten::where.Scalar" and h.parent == t.main_chain()[0].id)
    assert (scalar.conditions[0].file, scalar.conditions[0].line) == ("torch/csrc/utils/python_arg_parser.cpp", 871)
    assert ruled["aten::where.self"] == ["overload"]  # (the one-argument where, past the cap of 4, is not walked:
    assert "aten::where" not in ruled                  # ruled-out overloads are walked after the others)


def test_clamp_by_name_on_cpu_reads_its_optional_arguments_as_given(real_index):
    """On --device cpu, as on CUDA: torch.clamp's defaults (min=None, max=None) rule out every stub of
    structured_clamp_out (TensorCompare.cpp:692), so min and max are read as given, values unknown (`Given:`),
    and the chain goes on: clamp_scalar_stub (:704, its NaN fill_ at :702 ruled out: a number is not NaN) ->
    the CPU registration clamp_scalar_kernel_impl (cpu/TensorCompareKernel.cpp:410)."""
    t = real_index.trace("torch.clamp", device="cpu")
    assert t.given["arguments"] == ["max", "min"]
    assert (t.given["file"], t.given["line"]) == ("aten/src/ATen/native/TensorCompare.cpp", 704)
    assert [(h.name, h.line) for h in t.main_chain() if h.layer in ("stub", "registration")] == [
        ("clamp_scalar_stub", 704), ("CPU: clamp_scalar_kernel_impl", 410)]


def test_relu_on_a_stock_build_takes_the_launcher_stem_not_the_nan_fill(real_index):
    """F.relu -U USE_MACA: relu (Activation.cpp:504) calls at::clamp_min(self, 0); clamp_min_out
    (TensorCompare.cpp:742) fills with NaN only under `min.toDouble() != min.toDouble()` (:744, false for 0), else
    clamp_min_scalar_stub (:747) -> clamp_min_scalar_kernel_impl (cuda/TensorCompare.cu:85) -> launch_clamp_scalar
    (:59), whose `gpu_kernel_maca_arity1(...)` (:65) only `#if defined(USE_MACA)` defines (Loops.cuh:103): its stem
    gpu_kernel (Loops.cuh:80) stands in, and the chain ends at vectorized_elementwise_kernel (CUDALoops.cuh:63), the
    kernel the expert names for upstream 2.4 (the way is reached through the torch.relu bridge's repeat of what the
    relu_ branch walked first)."""
    t = real_index.trace("F.relu", undefines=["USE_MACA"])
    cu = "aten/src/ATen/native/cuda/TensorCompare.cu"
    assert [(h.name, h.line) for h in t.main_chain() if h.layer == "stub"] == [("clamp_min_scalar_stub", 747)]
    assert _end(t) == ("__global__ at::native::vectorized_elementwise_kernel",
                       "aten/src/ATen/native/cuda/CUDALoops.cuh", 63)
    assert [(h.name, h.file, h.line) for h in t.main_chain() if h.found == "stand_in"] == [
        ("at::native::gpu_kernel", "aten/src/ATen/native/cuda/Loops.cuh", 80)]
    assert [(h.name, h.line) for h in t.main_chain() if h.file == cu] == [
        ("CUDA: clamp_min_scalar_kernel_impl", 101), ("at::native::clamp_min_scalar_kernel_impl", 85),
        ("at::native::launch_clamp_scalar", 59), ("gpu_kernel_maca_arity1", 65)]


def test_three_more_untuned_calls_read_hop_by_hop(real_index):
    """Read against the 2.4 source on the stock build, not tuned for. leaky_relu(x, 0.2): `if inplace` false
    (functional.py:1674), leaky_relu_stub (Activation.cpp:325) -> leaky_relu_kernel (ActivationLeakyReluKernel.cu:22)
    -> gpu_kernel on a contiguous input: vectorized_elementwise_kernel (CUDALoops.cuh:63). cumprod of a float64
    64x128 over dim 1: scan_dim's `numel == size(dim)` false (8192 vs 128), `dim == ndim - 1` true:
    tensor_kernel_scan_innermost_dim (ScanUtils.cuh:372). avg_pool2d(x, 2): `count != 0` (AveragePool2d.cu:293,
    an element count) and `case MemoryFormat::Contiguous` (:330): avg_pool2d_out_cuda_frame launched at :331."""
    stock = ["USE_MACA"]
    relu = real_index.trace("F.leaky_relu(torch.randn(64, 128), 0.2)", undefines=stock)
    assert [(h.name, h.line) for h in relu.main_chain() if h.layer == "stub"] == [("leaky_relu_stub", 325)]
    assert _end(relu) == ("__global__ at::native::vectorized_elementwise_kernel",
                          "aten/src/ATen/native/cuda/CUDALoops.cuh", 63)
    assert any((h.file, h.line) == ("aten/src/ATen/native/cuda/ActivationLeakyReluKernel.cu", 31)
               for h in relu.main_chain())  # its gpu_kernel(...) call
    cumprod = real_index.trace("torch.cumprod(torch.randn(64, 128, dtype=torch.float64), dim=1)", undefines=stock)
    assert _end(cumprod) == ("__global__ at::native::tensor_kernel_scan_innermost_dim",
                             "aten/src/ATen/native/cuda/ScanUtils.cuh", 372)
    pool = real_index.trace("F.avg_pool2d(torch.randn(8, 16, 32, 32), 2)", undefines=stock)
    cu = "aten/src/ATen/native/cuda/AveragePool2d.cu"
    assert [(h.file, h.line) for h in pool.main_chain()[-2:]] == [(cu, 331), (cu, 33)]
    assert not any(not c["settled"] for c in pool.to_dict()["choices"])


def test_glu_on_a_stock_build_runs_the_legacy_kernel_for_its_narrowed_halves(real_index):
    """F.glu -U USE_MACA: glu's meta function (GatedLinearUnit.cpp:22) builds the iterator from `firstHalf` and
    `secondHalf`, each `self.narrow(...)` (:35, :36): strided views, so in gpu_kernel_impl `bool contiguous =
    iter.is_contiguous()` (CUDALoops.cuh:399) is false and the else launches launch_legacy_kernel's
    elementwise_kernel (CUDALoops.cuh:292), the expert's end; the launcher gpu_kernel_maca_arity2
    (ActivationGluKernel.cu:29) is the fork's, and gpu_kernel (Loops.cuh:80) stands in for it."""
    t = real_index.trace("F.glu", undefines=["USE_MACA"])
    assert _end(t) == ("__global__ at::native::elementwise_kernel", "aten/src/ATen/native/cuda/CUDALoops.cuh", 292)
    meta = next(h for h in t.hops if h.name == "at::meta::structured_glu")
    assert (meta.file, meta.line) == ("aten/src/ATen/native/GatedLinearUnit.cpp", 22)
    assert "strided views (firstHalf, secondHalf)" in meta.detail
    assert [(h.name, h.line) for h in t.main_chain() if h.found == "stand_in"] == [("at::native::gpu_kernel", 80)]
    leaky = real_index.trace("F.leaky_relu(torch.randn(64, 128), 0.2)", undefines=["USE_MACA"])
    assert _end(leaky)[0] == "__global__ at::native::vectorized_elementwise_kernel"  # its own input: contiguous


def test_group_norm_on_a_stock_build_ends_at_its_broadcast_elementwise_kernel(real_index):
    """F.group_norm -U USE_MACA: GroupNormKernelImplInternal (group_norm_kernel.cu:574) launches
    RowwiseMomentsCUDAKernel (:620), then, weight and bias None, builds an iterator of `Y.view({N * G, D * HxW})`,
    `X.view(...)` and `mean.view({N * G, 1})`, `rstd.view({N * G, 1})` (:629-635), which broadcast, and calls
    gpu_kernel (:637). As the build compiles it (the `#ifdef USE_MACA` lines blank) the second runs after the first
    and makes the op's result; its iterator is not contiguous, so gpu_kernel_impl takes launch_legacy_kernel's
    elementwise_kernel (CUDALoops.cuh:292), the kernel the H200 ran after RowwiseMoments and the expert names."""
    t = real_index.trace("F.group_norm", undefines=["USE_MACA"])
    assert _end(t) == ("__global__ at::native::elementwise_kernel", "aten/src/ATen/native/cuda/CUDALoops.cuh", 292)
    cu = "aten/src/ATen/native/cuda/group_norm_kernel.cu"
    assert [(h.name, h.line, h.kind) for h in t.main_chain() if h.file == cu] == [
        ("CUDA: GroupNormKernelImpl", 1047, "REGISTER_DISPATCH"), ("at::native::GroupNormKernelImpl", 676,
                                                                    "registered_kernel"),
        ("at::native::GroupNormKernelImplInternal", 574, "calls"), ("gpu_kernel", 637, "tensor_iterator")]
    body = next(h for h in t.main_chain() if h.name == "at::native::GroupNormKernelImplInternal")
    assert "broadcast operands (mean.view({N * G, 1}), rstd.view({N * G, 1})" in body.detail


def test_three_untuned_calls_of_this_session_read_hop_by_hop(real_index):
    """Read against the 2.4 source on the stock build (-U USE_MACA), not tuned for. torch.tanh of float16:
    tanh_kernel_cuda's `if (at::isComplexType(common_dtype))` (UnaryGeometricTanhKernel.cu:21) is false, its else's
    AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16) calls gpu_kernel_maca_arity1 (:49), which the build leaves out:
    gpu_kernel (Loops.cuh:80) stands in -> gpu_kernel_impl (:99) -> launch_vectorized_kernel (CUDALoops.cuh:404)
    -> vectorized_elementwise_kernel (:63). F.elu(x, alpha=0.5): `if inplace` false (functional.py:1590), so
    torch._C._nn.elu (:1593) -> elu_stub (Activation.cpp:273) -> elu_kernel's gpu_kernel (ActivationEluKernel.cu:37),
    upstream's own launcher, no stand-in. torch.addcdiv(..., value=0.5) of float32: the else of
    `if (at::isComplexType(dtype))` (PointwiseOpsKernel.cu:62) calls gpu_kernel (:97). Each ends at the kernel an
    upstream build's profiler shows for it."""
    stock = ["USE_MACA"]
    loops = "aten/src/ATen/native/cuda/CUDALoops.cuh"
    tanh = real_index.trace("torch.tanh(torch.randn(64, 64, dtype=torch.float16))", undefines=stock)
    assert [(h.name, h.file.rsplit("/", 1)[-1], h.line) for h in tanh.main_chain()[-8:]] == [
        ("gpu_kernel_maca_arity1", "UnaryGeometricTanhKernel.cu", 49), ("at::native::gpu_kernel", "Loops.cuh", 80),
        ("gpu_kernel_impl", "Loops.cuh", 99), ("at::native::gpu_kernel_impl", "CUDALoops.cuh", 383),
        ("launch_vectorized_kernel", "CUDALoops.cuh", 404), ("at::native::launch_vectorized_kernel", "CUDALoops.cuh",
                                                              247),
        ("vectorized_elementwise_kernel<4, func_t, array_t><<<grid, num_threads(), 0, stream>>>", "CUDALoops.cuh",
         256), ("__global__ at::native::vectorized_elementwise_kernel", "CUDALoops.cuh", 63)]
    assert tanh.main_chain()[-7].found == "stand_in" and tanh.dtype == "float16"
    elu = real_index.trace("F.elu(torch.randn(64, 128), alpha=0.5)", undefines=stock)
    assert [(h.name, h.line) for h in elu.main_chain() if h.layer in ("bridge", "stub")] == [
        ("torch._C._nn.elu", 1593), ("elu_stub", 273)]
    assert [(h.name, h.line) for h in elu.main_chain() if h.file.endswith("ActivationEluKernel.cu")] == [
        ("CUDA: elu_kernel", 83), ("at::native::elu_kernel", 22), ("gpu_kernel", 37)]
    assert not any(h.found == "stand_in" for h in elu.main_chain())
    assert _end(elu) == ("__global__ at::native::vectorized_elementwise_kernel", loops, 63)
    addcdiv = real_index.trace("torch.addcdiv(torch.randn(100), torch.randn(100), torch.randn(100), value=0.5)",
                               undefines=stock)
    assert [(h.name, h.line) for h in addcdiv.main_chain() if h.file.endswith("PointwiseOpsKernel.cu")] == [
        ("CUDA: addcdiv_cuda_kernel", 146), ("at::native::addcdiv_cuda_kernel", 60), ("gpu_kernel", 97)]
    assert _end(addcdiv) == ("__global__ at::native::vectorized_elementwise_kernel", loops, 63)


def test_an_up_walk_states_the_build_and_marks_what_it_does_not_compile(real_index):
    """Bottom-up from the fork's vectorized_elementwise_kernel_unary_opt (CUDALoops.cuh:121, under `#if
    defined(USE_MACA)`; launched in maca_kernels/CUDALoops_maca_arity1.cuh, a header CUDALoops.cuh:444 includes
    only under USE_MACA): with -U USE_MACA every hop of that code says this build does not compile it, and the
    header states the build; on the fork's own build nothing is marked."""
    stock = real_index.trace("vectorized_elementwise_kernel_unary_opt", undefines=["USE_MACA"])
    kernel, launch = stock.main_chain()[:2]
    assert [(c.kind, c.text, c.assumed) for c in kernel.conditions] == [("#if", "defined(USE_MACA)", False)]
    assert (launch.file, launch.line) == ("aten/src/ATen/native/cuda/maca_kernels/CUDALoops_maca_arity1.cuh", 52)
    assert [(c.kind, c.assumed) for c in launch.conditions] == [("#include", False)]
    assert launch.conditions[0].text.startswith("included at aten/src/ATen/native/cuda/CUDALoops.cuh:444 under")
    assert {"name": "USE_MACA", "value": None, "source": "-U"} in stock.build
    fork = real_index.trace("vectorized_elementwise_kernel_unary_opt")
    assert not any(c.assumed is False for h in fork.main_chain() for c in h.conditions)


def test_a_depthwise_convolution_s_backend_is_read_from_the_chooser(real_index):
    """_convolution (Convolution.cpp:1521) switches on `backend = _select_conv_backend(input, weight, bias, ...,
    params)` (:1577). For `F.conv2d(torch.randn(8, 16, 32, 32), torch.randn(16, 1, 3, 3), padding=1, groups=16)`
    the chooser is read with the call's values: ConvParams::is_depthwise (:610) holds (groups 16 == the input's 16
    channels, 4-D, not transposed: conv2d passes `false`, :965), use_cudnn_depthwise (:463) is false for float32
    (its fp16-only tests), ConvParams::use_miopen (:509) is false (CUDAHooks::compiledWithMIOpen is
    AT_ROCM_ENABLED()), so `CudaDepthwise2d` (:1230): the chain takes at::_conv_depthwise2d (:1588) as a settled
    choice, not the ranked cuDNN case. The kernel size, `auto kernel_size = weight.sizes().slice(2);` (:1585, (3, 3)),
    is passed to at::_conv_depthwise2d and on, as `kernel_size[1], kernel_size[0]` (DepthwiseConv2d.cu:665), to
    conv_depthwise2d_forward_out's kW, kH: `kW == 3 && kH == 3` (:435) picks conv_depthwise2d_forward_kernel<3>
    (:436, what the H200 ran), settled; a 5x5 weight picks the `<5>` launch (:430)."""
    t = real_index.trace("F.conv2d(torch.randn(8, 16, 32, 32), torch.randn(16, 1, 3, 3), padding=1, groups=16)")
    chain = t.main_chain()
    hop = next(h for h in chain if h.name == "at::_conv_depthwise2d")
    assert (hop.file, hop.line) == ("aten/src/ATen/native/Convolution.cpp", 1588)
    c = next(c for c in t.to_dict()["choices"] if c["hop"] == hop.id)
    assert c["settled"] is True
    cudnn = next(h for h in t.hops if h.name == "at::cudnn_convolution" and h.parent == hop.parent)
    assert [(k.text, k.assumed) for k in cudnn.conditions] == [("backend == ConvBackend::Cudnn", False)]
    dw = "aten/src/ATen/native/cuda/DepthwiseConv2d.cu"
    assert _end(t) == ("__global__ at::native::conv_depthwise2d_forward_kernel", dw, 141)
    launch = chain[-2]
    assert (launch.name, launch.line) == ("conv_depthwise2d_forward_kernel<3><<<grid, block, 0, stream>>>", 436)
    c = next(c for c in t.to_dict()["choices"] if c["hop"] == launch.id)
    assert (c["ways"], c["settled"]) == (4, True)
    five = real_index.trace("F.conv2d(torch.randn(8, 16, 32, 32), torch.randn(16, 1, 5, 5), padding=2, groups=16)")
    assert (five.main_chain()[-2].file, five.main_chain()[-2].line) == (dw, 430)
    # a depthwise conv1d: `weight = view4d(weight);` (:1570, under `k == 3 && !input.is_mkldnn() && ...`, true for
    # its 3-d weight; view4d, :33, returns `tensor.unsqueeze(2)`) makes the kernel size (1, 3): kW 3, kH 1, neither
    # 5x5, 3x3 nor 1x1, so the generic launch (:448), what the H100 ran
    one = real_index.trace("F.conv1d(torch.randn(8, 16, 100), torch.randn(16, 1, 3), groups=16)")
    assert (one.main_chain()[-2].file, one.main_chain()[-2].line) == (dw, 448)
    assert next(c for c in one.to_dict()["choices"] if c["hop"] == one.main_chain()[-2].id)["settled"] is True
    # by name (groups=1): not depthwise; use_cudnn reads what a name trace does not know: the choice stays ranked
    c = next(c for c in real_index.trace("F.conv2d").to_dict()["choices"] if c["ways"] >= 5)
    assert c["settled"] is False


def test_a_depthwise_conv3d_call_read_hop_by_hop(real_index):
    """`F.conv3d(torch.randn(2, 8, 8, 16, 16), torch.randn(8, 1, 3, 3, 3), groups=8)` (not tuned for): conv3d_symint
    (Convolution.cpp:970) passes `false` for transposed (:990); _select_conv_backend reads is_depthwise true (5-D,
    8 groups of the 8 channels), use_cudnn_depthwise false (its kernels need 4-D fp16), use_miopen false, then
    `input.ndimension() == 5` -> CudaDepthwise3d (:1232): the chain takes at::conv_depthwise3d (:1592), settled, to
    conv_depthwise3d_cuda (cuda/DepthwiseConv3d.cu:390), whose first specialization, (3, 3, 3, 1, 1, 1) at :452,
    is the one a 3x3x3 kernel of stride 1 takes, launching conv_depthwise3d_cuda_kernel (:28)."""
    t = real_index.trace("F.conv3d(torch.randn(2, 8, 8, 16, 16), torch.randn(8, 1, 3, 3, 3), groups=8)",
                         undefines=["USE_MACA"])
    dw = "aten/src/ATen/native/cuda/DepthwiseConv3d.cu"
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    assert chain[-6:] == [
        ("at::conv_depthwise3d", "aten/src/ATen/native/Convolution.cpp", 1592),
        ("aten::conv_depthwise3d", "aten/src/ATen/native/native_functions.yaml", 12955),
        ("CUDA: conv_depthwise3d_cuda", "aten/src/ATen/native/native_functions.yaml", 12958),
        ("at::native::conv_depthwise3d_cuda", dw, 390),
        ("conv_depthwise3d_cuda_kernel<scalar_t, accscalar_t, (3), (3), (3), (1), (1), (1)><<<grid, block, (smem), "
         "at::cuda::getCurrentCUDAStream()>>>", dw, 452),
        ("__global__ at::native::conv_depthwise3d_cuda_kernel", dw, 28)]
    hop = t.main_chain()[-6]
    assert next(c for c in t.to_dict()["choices"] if c["hop"] == hop.id)["settled"] is True


def test_a_float64_multinomial_of_one_sample_read_hop_by_hop(real_index):
    """`torch.multinomial(torch.rand(8, 100, dtype=torch.float64), 1)` (not tuned for; an H100 ran, in order, the
    max/min checks, the sum test, the exponential sampler and argmax): multinomial_out (Distributions.cpp:562) takes
    `if (!with_replacement || n_sample == 1)` (:601); its sampler `at::empty_like(self).exponential_(1, ...)`
    (:625) is the chain's way, the checks before it said as work in sequence, and the chain ends at the sampler's
    kernel, distribution_elementwise_grid_stride_kernel (cuda/DistributionTemplates.h:81), which ran."""
    t = real_index.trace("torch.multinomial(torch.rand(8, 100, dtype=torch.float64), 1)", undefines=["USE_MACA"])
    hop = next(h for h in t.main_chain() if h.kind == "calls_op")
    assert (hop.name, hop.file, hop.line) == ("at::empty_like(self).exponential_",
                                              "aten/src/ATen/native/Distributions.cpp", 625)
    assert _end(t) == ("__global__ at::native::distribution_elementwise_grid_stride_kernel",
                       "aten/src/ATen/native/cuda/DistributionTemplates.h", 81)
    c = next(c for c in t.to_dict()["choices"] if c["hop"] == hop.id)
    # the sum test of the 2-d input's `else` (:612) runs before, argmax under `if (n_sample == 1)` (:632, held)
    # after: work in sequence (the tests the call settles as true hold their blocks), not other ways
    # (:612's `(self.sum(1) == 0).sum()`: its comparison and second sum repeat ops walked before, and run too)
    assert [(t.hops[s["hop"]].name, t.hops[s["hop"]].line, s["order"]) for s in c["sequence"]] == [
        ("self.max", 603, "before"), ("self.min", 603, "before"), ("self.sum", 612, "before"),
        ("(self.sum(1) == 0).sum", 612, "before"), ("operator== on self.sum(1)", 612, "before"),
        ("at::div_out", 631, "after"), ("at::argmax_out", 633, "after")]
    assert c["settled"] is True and [t.hops[k].line for k in c["others"]] == [641, 610, 610, 636]
