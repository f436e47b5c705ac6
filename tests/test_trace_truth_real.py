"""Trace truth on PyTorch 2.4 (OPINDEX_REAL_CHECKOUT, e.g. MetaX-MACA/mcPytorch extracted): each hop named here was
read in the source (file:line); the trace must show it, and must not show the wrong hops named."""
from __future__ import annotations

def where(t) -> set[tuple[str, int]]:
    return {(h.file, h.line) for h in t.hops if not h.absent}


def names(t) -> set[str]:
    return {h.name for h in t.hops if not h.absent}


CUDALOOPS = "aten/src/ATen/native/cuda/CUDALoops.cuh"


def test_exp_reaches_the_tensor_iterator_kernels(real_index):
    t = real_index.trace("torch.exp")
    assert {
        ("aten/src/ATen/native/cuda/UnaryOpsKernel.cu", 38),  # exp_kernel_cuda, registered for exp_stub
        ("aten/src/ATen/native/cuda/UnaryOpsKernel.cu", 56),  # gpu_kernel(iter, []GPU_LAMBDA ...): the op's body
        ("aten/src/ATen/native/cuda/Loops.cuh", 80),  # gpu_kernel
        (CUDALOOPS, 383),  # gpu_kernel_impl
        (CUDALOOPS, 404),  # launch_vectorized_kernel(numel, f, data)
        (CUDALOOPS, 223),  # vectorized_elementwise_kernel<4, ...><<<...>>>
        (CUDALOOPS, 63),  # __global__ vectorized_elementwise_kernel
        (CUDALOOPS, 292),  # __global__ elementwise_kernel (launch_legacy_kernel's)
    } <= where(t)


def test_mm_follows_the_cublas_wrapper_to_the_cublas_call(real_index):
    t = real_index.trace("torch.mm")
    assert {
        ("aten/src/ATen/native/cuda/Blas.cpp", 393),  # at::cuda::blas::gemm<scalar_t>(...) in addmm_out_cuda_impl
        ("aten/src/ATen/cuda/CUDABlas.cpp", 1125),  # gemm<float>, written through CUDABLAS_GEMM_ARGTYPES(float)
        ("aten/src/ATen/cuda/CUDABlas.cpp", 1008),  # gemm_internal<float>
        ("aten/src/ATen/cuda/CUDABlas.cpp", 808),  # gemm_internal_cublas<float>
        ("aten/src/ATen/cuda/CUDABlas.cpp", 816),  # cublasSgemm
    } <= where(t)
    assert "aten::index.Tensor" not in names(t)  # self.device().index() is c10::Device::index


def test_lstm_runs_the_real_forward_and_the_cudnn_op(real_index):
    t = real_index.trace("nn.LSTM")
    assert {
        ("torch/nn/modules/rnn.py", 856),  # LSTM.forward: the def that runs, after the @overload stubs
        ("aten/src/ATen/native/cudnn/RNN.cpp", 2623),  # at::_cudnn_rnn_symint(...) in _cudnn_impl
        ("aten/src/ATen/native/cudnn/RNN.cpp", 1395),  # _cudnn_rnn under AT_CUDNN_ENABLED(), not the stand-in
    } <= where(t)
    assert ("aten/src/ATen/native/cudnn/RNN.cpp", 50) not in where(t)  # #if !AT_CUDNN_ENABLED(): only raises
    assert "aten::index.Tensor" not in names(t)  # options.device().index()
    assert not [h for h in t.hops if h.file and "/miopen/" in h.file and not h.absent]  # ROCm's code
    assert {h.name for h in t.hops if h.layer == "library"} >= {"cudnnRNNForward", "cudnnRNNForwardTraining"}


def test_batch_norm_takes_the_real_cudnn_function(real_index):
    t = real_index.trace("F.batch_norm")
    assert ("aten/src/ATen/native/cudnn/BatchNorm.cpp", 121) in where(t)
    assert ("aten/src/ATen/native/cudnn/BatchNorm.cpp", 19) not in where(t)  # #if !AT_CUDNN_ENABLED() stand-in


def test_linear_alias_and_the_backward_of_what_it_calls(real_index):
    t = real_index.trace("F.linear")
    assert (t.hops[0].kind, t.hops[0].file, t.hops[0].line) == ("alias", "torch/nn/functional.py", 2038)
    assert ("tools/autograd/derivatives.yaml", 256) in where(t)  # addmm's formula: linear is composite


def test_named_dimension_overloads_are_not_the_kernel_of_a_dim_schema(real_index):
    rows = real_index.rows("SELECT file, line FROM op_kernels WHERE function = 'sort'")
    assert rows == [{"file": "aten/src/ATen/native/Sorting.cpp", "line": 966}]  # not NamedTensor.cpp:381/384


ADD_KERNEL = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
              "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)")


def test_a_kernel_name_as_the_profiler_prints_it(real_index):
    t = real_index.trace(ADD_KERNEL)
    assert t.direction == "up"
    assert [(h.file, h.line) for h in t.hops][:2] == [(CUDALOOPS, 63), (CUDALOOPS, 223)]  # __global__, <<<>>>
    assert ("aten/src/ATen/native/ufunc/add.h", 15) in where(t)  # the op body CUDAFunctor_add is generated around
    assert ("aten/src/ATen/native/native_functions.yaml", 570) in where(t)  # add.out's CUDA row: ufunc_add_CUDA
    missing = real_index.trace("void at::native::no_such_kernel<float>(int)")
    assert not missing.hops and "not in this checkout" in missing.message


def test_add_goes_through_the_ufunc_codegen_to_the_launch_machinery(real_index):
    t = real_index.trace("torch.add")
    assert {
        ("aten/src/ATen/native/BinaryOps.cpp", 151),  # TORCH_META_FUNC2(add, Tensor)
        ("torchgen/dest/ufunc.py", 284),  # compute_ufunc_cuda writes ufunc_add_CUDA
        ("torchgen/dest/ufunc.py", 268),  # the `gpu_kernel(iter, ufunctor);` it writes
        ("aten/src/ATen/native/cuda/Loops.cuh", 80),  # gpu_kernel
        (CUDALOOPS, 63),  # __global__ vectorized_elementwise_kernel
    } <= where(t)


def test_topk_reaches_the_kernels_its_function_local_macros_launch(real_index):
    t = real_index.trace("torch.topk")
    assert {
        ("aten/src/ATen/native/cuda/TensorTopK.cu", 793),  # launch_gather_topk_kernel (called at TensorTopK.cpp:67)
        ("aten/src/ATen/native/cuda/TensorTopK.cu", 181),  # sbtopk::launch, reached through RUN_T -> RUN_K
        ("aten/src/ATen/native/cuda/TensorTopK.cu", 642),  # mbtopk::launch, the same macros' other branch
        ("aten/src/ATen/native/cuda/TensorTopK.cu", 200),  # sbtopk: gatherTopK<<<...>>>
        ("aten/src/ATen/native/cuda/TensorTopK.cu", 708),  # mbtopk: radixFindKthValues<<<...>>>
        ("aten/src/ATen/native/cuda/TensorTopK.cu", 496),  # __global__ mbtopk::gatherTopK, launched at 742
    } <= where(t)
    called = {h.called_at for h in t.hops if h.name == "at::native::launch_gather_topk_kernel"}
    assert called == {"aten/src/ATen/native/cuda/TensorTopK.cpp:67"}


def test_ops_that_cannot_run_on_the_device_are_not_hops(real_index):
    # at::native::linear: `if (input.is_mkldnn()) return at::mkldnn_linear(...)`: MkldnnCPU only
    assert "mkldnn_linear" not in {h.name for h in real_index.trace("F.linear").hops}
    t = real_index.trace("torch.sort")
    # sort(Tensor, Dimname, ...) only calls reportNYIDimnameOverload: a statement, not a kernel hop
    assert ("aten/src/ATen/native/NamedTensor.cpp", 381) not in where(t)
    assert any(h.absent and "NamedTensor.cpp:381) only raises (reportNYIDimnameOverload)" in h.name for h in t.hops)


def test_optimizer_step_and_the_implementation_a_local_name_holds(real_index):
    t = real_index.trace("torch.optim.AdamW")
    assert {
        ("torch/optim/adamw.py", 192),  # AdamW.step: the method that does an optimizer's work
        ("torch/optim/adamw.py", 703),  # adamw(), called from step
        ("torch/optim/adamw.py", 612),  # _fused_adamw: `func = _fused_adamw` ... `func(...)`
        ("torch/optim/adamw.py", 441),  # _multi_tensor_adamw, the foreach branch of the same name
        ("aten/src/ATen/native/cuda/MultiTensorApply.cuh", 341),  # multi_tensor_apply_kernel<<<...>>>
    } <= where(t)


def test_memory_efficient_attention_reaches_the_kernels_handed_to_its_launcher(real_index):
    t = real_index.trace("aten::_scaled_dot_product_efficient_attention")
    mem_eff = "aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/"
    assert {
        (mem_eff + "cutlassF.h", 277),  # cb(..., fmha_cutlassF_f32_aligned_64x64_rf_sm80), in dispatch_cutlassF_f32_sm80
        (mem_eff + "cutlassF_f32_aligned.cu", 68),  # __global__ fmha_cutlassF_f32_aligned_64x64_rf_sm80
    } <= where(t)
    # dispatch_cutlassF<scalar_t>(launchKernel, computeCapability), the call that hands the launcher over
    assert "aten/src/ATen/native/transformers/cuda/attention.cu:1294" in {h.called_at for h in t.hops}


def test_sort_reaches_the_kernels_of_the_functors_passed_to_sortCommon(real_index):
    t = real_index.trace("torch.sort")
    cu = "aten/src/ATen/native/cuda/Sort.cu"
    assert {
        (cu, 390),  # sortKeyValueInplace
        (cu, 308),  # sortCommon(Sorter sorter, ...): calls sorter.template sort<A>(...)
        (cu, 49),  # SmallBitonicSort::sort, passed as SmallBitonicSort{} at Sort.cu:401
        (cu, 116),  # WarpMergeSort<128>::sort, at 404
        (cu, 187),  # MediumRadixSort::sort, at 407
        (cu, 82),  # bitonicSortKVInPlace<<<...>>>
        (cu, 294),  # radixSortKVInPlace<<<...>>> in MediumRadixSort::fixed_size_sort
        ("aten/src/ATen/native/cuda/SortUtils.cuh", 90),  # __global__ bitonicSortKVInPlace
    } <= where(t)
    functors = {h.detail.rsplit("[", 1)[1] for h in t.hops if h.kind == "functor"}
    assert functors == {f"sorter.sort(...): {c} passed at {cu}:{n}]" for c, n in
                        (("SmallBitonicSort", 401), ("WarpMergeSort", 404), ("MediumRadixSort", 407))}


def test_a_kernel_whose_only_device_work_is_fills_and_copies(real_index):
    # select_backward_symint: at::zeros_symint(...), then grad_input.select_symint(dim, index).copy_(grad)
    t = real_index.trace("aten::select_backward")
    assert {
        ("aten/src/ATen/native/TensorShape.cpp", 1880),  # select_backward_symint
        ("aten/src/ATen/native/native_functions.yaml", 1757),  # aten::copy_, called at TensorShape.cpp:1882
        ("aten/src/ATen/native/cuda/Copy.cu", 288),  # copy_kernel_cuda, registered for copy_stub
    } <= where(t)
    # select_symint is a view (a plumbing op, _symint or not): its sparse path is not this kernel's work
    assert ("aten/src/ATen/native/TensorShape.cpp", 1746) not in where(t)


def test_the_down_walk_states_its_fan_out_caps_and_limit_0_lifts_them(real_index):
    t = real_index.trace("aten::copy_")  # copy_kernel_cuda holds more AT_DISPATCH sites than the 2 followed
    capped = [h for h in t.hops if h.kind == "capped"]
    assert capped and all(h.absent and "not followed (the first 2 are; --limit 0 follows all)" in h.name
                          for h in capped if "AT_DISPATCH" in h.name)
    assert t.truncated["fan_out"] == len(capped)
    everything = real_index.trace("aten::copy_", limit=0)
    assert everything.truncated == {} and len(everything.hops) > len(t.hops)
    assert not [h for h in everything.hops if h.kind == "capped"]


def test_a_fill_besides_the_op_own_kernel_is_followed_to_its_kernels(real_index):
    # nll_loss_backward_out_cuda (Loss.cu:605) calls grad_input.zero_() (Loss.cu:615), then the template whose
    # <<<>>> runs nll_loss_backward_no_reduce_cuda_kernel: the GPU runs a fill kernel, then the op's own
    t = real_index.trace("aten::nll_loss_backward")
    zero = [h for h in t.hops if h.kind == "writes" and (h.file, h.line) == ("aten/src/ATen/native/cuda/Loss.cu", 615)]
    assert [h.name for h in zero] == ["grad_input.zero_"]
    inside, path = {zero[0].id}, set()
    for h in t.hops[zero[0].id + 1:]:
        if h.parent in inside:
            inside.add(h.id)
            path.add((h.file, h.line))
    assert {
        ("aten/src/ATen/native/Fill.cpp", 155),  # zero_: self.fill_(0)
        ("aten/src/ATen/native/Fill.cpp", 35),  # fill_out: fill_stub(iter.device_type(), iter, value)
        ("aten/src/ATen/native/cuda/FillKernel.cu", 28),  # REGISTER_DISPATCH(fill_stub, &fill_kernel_cuda)
        ("aten/src/ATen/native/cuda/FillKernel.cu", 24),  # gpu_kernel(iter, FillFunctor<scalar_t>(...))
        (CUDALOOPS, 63),  # __global__ vectorized_elementwise_kernel
        # __global__ vectorized_elementwise_kernel_nullary_opt (this fork, large outputs): the overload its enable_if
        # takes for a nullary functor (narity == 0), not the `assert(0)` one at :85
        (CUDALOOPS, 92),
    } <= path
    assert (t.main_chain()[-1].file, t.main_chain()[-1].line) == ("aten/src/ATen/native/cuda/Loss.cu", 408)


def test_a_ufunc_launch_seen_before_points_to_it(real_index):
    # linear's output.add_(bias) (Linear.cpp:118) reaches add.out's generated CUDA kernel a second time: its
    # launcher is a "(shown above)" hop, not a dead end
    t = real_index.trace("aten::linear")
    add = [h for h in t.hops if (h.file, h.line) == ("aten/src/ATen/native/Linear.cpp", 118)]
    inside, below = {add[0].id}, []
    for h in t.hops[add[0].id + 1:]:
        if h.parent in inside:
            inside.add(h.id)
            below.append(h)
    launch = [h for h in below if (h.file, h.line) == ("torchgen/dest/ufunc.py", 268)]
    assert [h.name for h in launch] == ["gpu_kernel"]
    assert ("at::native::gpu_kernel", "aten/src/ATen/native/cuda/Loops.cuh", 80, "(shown above)") in {
        (h.name, h.file, h.line, h.detail) for h in below if h.parent == launch[0].id}


def test_operators_on_tensors_are_op_calls(real_index):
    # cross_entropy_loss_label_smoothing (LossNLL.cpp:558) is written with operators: `-(input * weight_)` (579),
    # `target == ignore_index` (584), `~ignore_mask` (604), `(1 - label_smoothing) * nllloss + ret * ...` (621)
    # call neg, mul, eq, bitwise_not, add (an op called twice in one body is shown at its first call)
    t = real_index.trace("F.cross_entropy")
    calls = {(h.name, h.line) for h in t.hops if h.file == "aten/src/ATen/native/LossNLL.cpp" and h.kind == "calls_op"}
    assert {("operator* on input", 579), ("operator== on target", 584), ("unary operator~ on ignore_mask", 604),
            ("operator+ on (...)", 621)} <= calls
    ops = {}  # (operator hop, line) -> the ops below it
    for h in t.hops:
        above = t.hops[h.parent] if h.parent is not None else None
        if above is not None and above.kind == "calls_op" and h.kind == "entry":
            ops.setdefault((above.name, above.line), set()).add(h.name.split(".")[0])
    assert ops[("operator* on input", 579)] == {"aten::mul"}
    assert ops[("operator== on target", 584)] == {"aten::eq"}
    assert ops[("unary operator~ on ignore_mask", 604)] == {"aten::bitwise_not"}
    assert ops[("operator+ on (...)", 621)] == {"aten::add"}
    # an operand that is a call of a function that is not an op is no Tensor (Indexing.cu:2168,
    # `at::has_internal_overlap(self) == MemOverlap::Yes`), nor is a pointer from data_ptr<scalar_t>()
    assert not [h for h in t.hops if h.name.startswith(("operator== on at::has_internal_overlap",
                                                        "operator+= on input_ptr"))]


def test_a_boolean_dispatch_object_leads_to_both_branch_defs(real_index):
    # functional.py:799 `max_pool2d = boolean_dispatch(..., if_true=max_pool2d_with_indices, if_false=_max_pool2d)`
    t = real_index.trace("F.max_pool2d")
    roots = [h for h in t.hops if h.parent is None]
    assert [(h.kind, h.name, h.file, h.line) for h in roots][:1] == [
        ("boolean_dispatch", "torch.nn.functional.max_pool2d", "torch/nn/functional.py", 799)]
    assert {(h.name, h.line) for h in t.hops if h.parent == roots[0].id} == {
        ("torch.nn.functional.max_pool2d_with_indices", 724), ("torch.nn.functional._max_pool2d", 774)}
    assert ("torch/nn/functional.py", 796) in where(t)  # torch.max_pool2d(...) in _max_pool2d


def test_the_same_op_called_twice_in_a_body_is_a_hop_at_each_call(real_index):
    # embedding_symint (Embedding.cpp): weight.index_select(0, indices) at line 45 for 1-d indices, and
    # weight.index_select(0, indices.reshape(-1)) at line 53 otherwise: both calls are hops, the second points up
    t = real_index.trace("F.embedding")
    calls = [h for h in t.hops if h.file == "aten/src/ATen/native/Embedding.cpp" and h.name == "weight.index_select"]
    assert [(h.line, h.detail == "(shown above)") for h in calls] == [(45, False), (53, True)]


def test_a_helper_called_directly_is_walked_at_that_call(real_index):
    # copy_device_to_device (Copy.cu:173) calls conj_kernel_cuda (whose non-complex branch calls
    # direct_copy_kernel_cuda) and direct_copy_kernel_cuda itself: a plain copy's default path is the direct call
    t = real_index.trace("aten::copy_")
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    c2d = chain.index(("at::native::copy_device_to_device", "aten/src/ATen/native/cuda/Copy.cu", 173))
    assert chain[c2d + 1] == ("at::native::direct_copy_kernel_cuda", "aten/src/ATen/native/cuda/Copy.cu", 142)
    assert "at::native::conj_kernel_cuda" not in [name for name, _, _ in chain]
    # under conj_kernel_cuda the same helper is a pointer to where it is walked
    assert [h.detail for h in t.hops if h.name == "at::native::direct_copy_kernel_cuda"
            and h.file == "aten/src/ATen/native/cuda/Copy.cu" and "shown below" in h.detail] == [
        "(shown below, where at::native::copy_device_to_device calls it directly)"]


def test_cumsum_reaches_the_cub_call_its_wrapper_hands_to_a_macro(real_index):
    t = real_index.trace("torch.cumsum")
    assert {
        ("aten/src/ATen/native/cuda/ScanKernels.cpp", 91),  # cumsum_cuda_kernel, registered for cumsum_stub
        ("aten/src/ATen/native/cuda/CumsumKernel.cu", 10),  # launch_cumsum_cuda_kernel
        ("aten/src/ATen/native/cuda/ScanUtils.cuh", 444),  # scan_dim: 1-d inputs take the cub path
        ("aten/src/ATen/native/cuda/ScanUtils.cuh", 451),  # cuda::cub::inclusive_scan(...)
        ("aten/src/ATen/cuda/cub.cuh", 235),  # at::cuda::cub::inclusive_scan
    } <= where(t)
    cub = {(h.file, h.line) for h in t.hops if h.layer == "library" and h.name == "cub::DeviceScan::InclusiveScan"}
    assert ("aten/src/ATen/cuda/cub.cuh", 250) in cub  # CUB_WRAPPER(NO_ROCM(at_cuda_detail)::cub::DeviceScan::...)


def test_functors_built_for_a_launcher_are_the_op_body(real_index):
    def functors(t):
        return {(h.file, h.line, h.called_at) for h in t.hops if h.kind == "op_body"}
    # foreach_tensor_list_op_ hands BinaryOpListAlphaFunctor<T, 2, 2, 0>() to multi_tensor_apply
    assert ("aten/src/ATen/native/cuda/ForeachFunctors.cuh", 255,
            "aten/src/ATen/native/cuda/ForeachBinaryOpList.cu:69") in functors(real_index.trace("torch._foreach_add_"))
    # _fused_adamw_cuda_impl_ hands FusedAdamMathFunctor<scalar_t, 4, ADAMW, false>() to the fused-optimizer apply
    assert ("aten/src/ATen/native/cuda/fused_adam_utils.cuh", 106,
            "aten/src/ATen/native/cuda/fused_adamw_impl.cu:44") in functors(real_index.trace("torch.optim.AdamW"))
    # mul_kernel_cuda hands binary_internal::MulFunctor<opmath_t>() to the launcher: the template and its <bool>
    # specialization (BinaryInternal.h:30, :39) cannot be told apart from `<opmath_t>`, so both, marked
    t = real_index.trace("torch.mul")
    assert {("aten/src/ATen/native/cuda/BinaryInternal.h", 30, "aten/src/ATen/native/cuda/BinaryMulKernel.cu:74"),
            ("aten/src/ATen/native/cuda/BinaryInternal.h", 39, "aten/src/ATen/native/cuda/BinaryMulKernel.cu:74")} \
        <= functors(t)
    assert all("[one of 2 definitions" in h.detail for h in t.hops if h.kind == "op_body" and not h.shown_above)
    # the float32 call of :81 (the else of `if (common_dtype == kComplexHalf)`) repeats the functor shown at :74
    [again] = [h for h in t.hops if h.kind == "op_body" and h.shown_above]
    assert again.called_at == "aten/src/ATen/native/cuda/BinaryMulKernel.cu:81"
    assert t.main_chain()[-1].kind != "op_body"  # the chain still ends in the kernel


def test_python_defs_that_overwrite_aten_bindings_and_a_temporary_functor_call(real_index):
    # torch/__init__.py:1755 `from .functional import *` comes after the ATen bindings "so we can overwrite from
    # Python side": torch.norm is torch/functional.py's def (the last of its @overload stubs), not aten::norm
    t = real_index.trace("torch.norm")
    assert (t.hops[0].name, t.hops[0].file, t.hops[0].line) == ("torch.functional.norm", "torch/functional.py", 1501)
    # torch.unique = boolean_dispatch(if_true=_return_inverse_true, ...) whose branches are boolean_dispatch
    # objects too (functional.py:1011, :1020): each def is reached; _unique_impl calls torch._unique2 (:911)
    t = real_index.trace("torch.unique")
    assert {
        ("torch/functional.py", 1032),  # unique = boolean_dispatch(...)
        ("torch/functional.py", 761),  # _unique_impl
        ("torch/functional.py", 911),  # torch._unique2(...)
        ("aten/src/ATen/native/cuda/Unique.cu", 197),  # _unique2_cuda
        ("aten/src/ATen/native/cuda/UniqueCub.cu", 305),  # internal::unique_cuda_template
        ("aten/src/ATen/native/cuda/UniqueCub.cu", 147),  # UniqueCub<scalar_t>{}(...) at :321: its operator()
        ("aten/src/ATen/native/cuda/UniqueCub.cu", 165),  # cuda::cub::radix_sort_keys(...)
        ("aten/src/ATen/cuda/cub-RadixSortKeys.cu", 34),  # CUB_WRAPPER(...cub::DeviceRadixSort::SortKeys, ...)
    } <= where(t)
    called = {h.called_at for h in t.hops if h.file == "aten/src/ATen/native/cuda/UniqueCub.cu" and h.line == 147}
    assert called == {"aten/src/ATen/native/cuda/UniqueCub.cu:321"}


def test_a_bare_op_call_and_a_helper_that_runs_what_each_caller_passes(real_index):
    # AdaptiveAveragePooling.cpp:138, in at::native: `return _adaptive_avg_pool2d_symint(input, output_size);` is
    # at::_adaptive_avg_pool2d_symint, the op aten::_adaptive_avg_pool2d and its CUDA kernel
    t = real_index.trace("F.adaptive_avg_pool2d")
    assert [h.name for h in t.hops if h.kind == "calls_op" and h.line == 138] == ["_adaptive_avg_pool2d_symint"]
    assert {
        ("aten/src/ATen/native/AdaptiveAveragePooling.cpp", 138),
        ("aten/src/ATen/native/native_functions.yaml", 12017),  # aten::_adaptive_avg_pool2d
        ("aten/src/ATen/native/cuda/AdaptiveAveragePooling.cu", 776),  # adaptive_avg_pool2d_cuda
        ("aten/src/ATen/native/cuda/AdaptiveAveragePooling.cu", 53),  # __global__ adaptive_average_pool
    } <= where(t)
    # split_batch_dim_to_32bit_out runs the worker its caller passes: under the forward path the forward worker,
    # under conv_transpose2d's backward-input path (Conv_v7.cpp:909) the backward-input one
    t = real_index.trace("F.conv_transpose2d")
    v7 = "aten/src/ATen/native/cudnn/Conv_v7.cpp"
    assert {(v7, 898), (v7, 606), (v7, 812), (v7, 870)} <= where(t)  # ..._v7, split, ..._32bit, BackwardData
    worker = [h for h in t.hops if (h.file, h.line) == (v7, 812)]
    assert worker and t.hops[worker[0].parent].line == 606


def test_a_class_passed_as_a_template_argument_for_a_parameter_the_template_calls(real_index):
    # Distributions.cpp:232 exponential_impl_<ExponentialStub, Generator>(...); DistributionTemplates.h:338's
    # template<template<typename> class exponential_kernel, typename RNG> runs exponential_kernel<RNG>()(...) (:342)
    t = real_index.trace("torch.Tensor.exponential_")
    assert {
        ("aten/src/ATen/native/DistributionTemplates.h", 338),  # exponential_impl_
        ("aten/src/ATen/native/Distributions.cpp", 226),  # ExponentialStub::operator()
        ("aten/src/ATen/native/Distributions.cpp", 227),  # exponential_stub(iter.device_type(), ...)
        ("aten/src/ATen/native/cuda/DistributionExponentialKernel.cu", 8),  # the CUDA registration's kernel
        # which calls a function of its own name in another namespace: not a recursion
        ("aten/src/ATen/native/cuda/DistributionTemplates.h", 595),  # templates::cuda::exponential_kernel
        ("aten/src/ATen/native/cuda/DistributionTemplates.h", 130),  # distribution_nullary_kernel
    } <= where(t)
    stub = [h for h in t.hops if (h.file, h.line) == ("aten/src/ATen/native/Distributions.cpp", 226)]
    assert "ExponentialStub passed at aten/src/ATen/native/Distributions.cpp:232" in stub[0].detail
    assert not any(h.name.endswith("NormalStub::operator()") for h in t.hops)  # another caller's template argument


def test_a_definition_a_macro_writes_shows_the_macro(real_index):
    # ForeachBinaryOpList.cu:217 FOREACH_BINARY_OP_LIST_ALPHA(all_types_complex_bool_half_bfloat16, add, std::plus)
    # writes foreach_tensor_add_list_kernel_cuda_; the code is the #define's body at :194
    t = real_index.trace("torch._foreach_add_")
    cu = "aten/src/ATen/native/cuda/ForeachBinaryOpList.cu"
    kernel = [h for h in t.hops if h.name == "at::native::foreach_tensor_add_list_kernel_cuda_"][0]
    assert (kernel.file, kernel.line) == (cu, 217)
    assert [(h.kind, h.name, h.file, h.line) for h in t.hops if h.parent == kernel.id and h.kind == "macro"] == [
        ("macro", "#define FOREACH_BINARY_OP_LIST_ALPHA", cu, 194)]


def test_cast_op_names_header_template_parameters_and_the_ufunc_stub(real_index):
    # BinaryOps.cpp:1489 logical_xor: comparison_op(self, other, static_cast<OutFunc>(at::logical_xor_out)); the
    # comparison_op at :1393 calls out_impl(result, self, other) (:1395): the op logical_xor.out, its stub, its kernel
    t = real_index.trace("aten::logical_xor")
    assert {("aten/src/ATen/native/BinaryOps.cpp", 1393), ("aten/src/ATen/native/BinaryOps.cpp", 1395),
            ("aten/src/ATen/native/BinaryOps.cpp", 1388),  # logical_xor_stub(iter.device_type(), iter)
            ("aten/src/ATen/native/cuda/BinaryLogicalOpsKernels.cu", 125)} <= where(t)  # its CUDA registration
    # DistributionTemplates.h:363 bernoulli_impl_'s bernoulli_tensor_kernel<RNG>()(...) (:367) is its template
    # parameter (a header's call that the include rule would otherwise link to cuda's bernoulli_tensor_kernel)
    t = real_index.trace("aten::bernoulli_.Tensor")
    assert [(h.file, h.line) for h in t.main_chain()[3:6]] == [
        ("aten/src/ATen/native/DistributionTemplates.h", 363), ("aten/src/ATen/native/Distributions.cpp", 163),
        ("aten/src/ATen/native/Distributions.cpp", 164)]  # BernoulliStub::operator() -> bernoulli_tensor_stub
    # sub.out calls add_stub (BinaryOps.cpp:436), which only the ufunc codegen registers for CUDA
    t = real_index.trace("aten::rsub.Tensor")
    reg = [h for h in t.hops if h.kind == "ufunc" and h.layer == "registration"]
    assert reg and reg[0].name.startswith("CUDA: add_stub is registered by torchgen's ufunc codegen")
    assert ("aten/src/ATen/native/ufunc/add.h", 15) in where(t)  # ufunc::add, the inner loop


def test_an_op_whose_kernels_were_shown_for_another_overload_is_still_a_hop(real_index):
    # LinearAlgebra.cpp: _matmul_impl calls at::mm_out (:2039) and tensor1.mm(...) / t1_folded.mm(...) (:2040,
    # :2079); mm's kernels are mm.out's, walked under at::mm_out first: the tensor1.mm hop stays, with aten::mm
    # (YAML :4099) and its TORCH_META_FUNC(mm) (:196), not cut as "leads to no device code"
    t = real_index.trace("torch.matmul")
    assert {("aten/src/ATen/native/native_functions.yaml", 4099),
            ("aten/src/ATen/native/LinearAlgebra.cpp", 196)} <= where(t)
    call = [h for h in t.hops if h.kind == "calls_op" and h.line == 2040 and h.name.endswith(".mm")]
    assert call and "leads to no device code" not in call[0].detail


def test_a_temporary_made_by_parentheses_is_called_through_its_operator(real_index):
    # ScatterGatherKernel.cu:671 gather_cuda_kernel: cuda_scatter_gather_base_kernel<>()(self, dim, index, ...);
    # its operator()s (the TensorAssign overload at :418 among them) -> _cuda_scatter_gather_internal_kernel<...>()
    # (...)'s operator() (:164) -> _launch_scatter_gather_kernel (:135)
    t = real_index.trace("torch.gather")
    cu = "aten/src/ATen/native/cuda/ScatterGatherKernel.cu"
    assert {(cu, 418), (cu, 164), (cu, 135)} <= where(t)
    assert any(h.called_at == f"{cu}:671" for h in t.hops if h.name.endswith("cuda_scatter_gather_base_kernel::"
                                                                          "operator()"))


def test_a_branch_the_default_arguments_do_not_take_ranks_after_the_default_one(real_index):
    # LossNLL.cpp:624 cross_entropy_loss_symint: `else if (label_smoothing > 0.0)` (:642) calls
    # cross_entropy_loss_label_smoothing (:648), which calls at::log_softmax and at::nll_loss_nd_symint too; the
    # `else` (:649) calls them itself (:651, :652). label_smoothing=0.0 in the schema: the main chain is the
    # else's, to the op whose kernel does the loss (nll_loss_nd, :651; native_functions.yaml:11532), and the ops
    # are walked at the composite's own call, the helper pointing down to it
    from opindex.trace.model import NOT_DEFAULT
    t = real_index.trace("F.cross_entropy")
    f = "aten/src/ATen/native/LossNLL.cpp"
    smoothing = [h for h in t.hops if h.name == "at::native::cross_entropy_loss_label_smoothing"]
    assert smoothing and smoothing[0].called_at == f"{f}:648"
    assert smoothing[0].detail.endswith(f"[called when label_smoothing > 0.0: {NOT_DEFAULT}]")
    chain = t.main_chain()
    assert [(h.name, h.line) for h in chain[5:7]] == [("at::nll_loss_nd_symint", 651), ("aten::nll_loss_nd", 11532)]
    assert not any(h.name == smoothing[0].name for h in chain)
    below = [h for h in t.hops if h.parent == smoothing[0].id and h.name == "at::log_softmax"]
    assert below and below[0].detail.endswith(
        "(shown below, where at::native::cross_entropy_loss_symint calls it directly)")


def test_a_direct_call_of_a_copy_kernel_is_a_write(real_index):
    # cuda/Blas.cpp:285 addmm_out_cuda_impl: `at::native::copy_(result, *self_)` calls copy_'s CUDA kernel itself
    t = real_index.trace("torch.addmm")
    copy = [h for h in t.hops if (h.file, h.line) == ("aten/src/ATen/native/cuda/Blas.cpp", 285)]
    assert [(h.kind, h.name) for h in copy] == [("writes", "at::native::copy_")]
    assert copy[0].detail.startswith("calls the kernel of copy_ itself (not through the dispatcher)")


def test_an_in_place_op_shows_the_meta_function_of_its_functional_op(real_index):
    # TensorAdvancedIndexing.cpp:247 TORCH_META_FUNC(scatter_add): the meta of scatter_add_ too
    t = real_index.trace("torch.Tensor.scatter_add_")
    assert ("at::meta::structured_scatter_add", "aten/src/ATen/native/TensorAdvancedIndexing.cpp", 247) in {
        (h.name, h.file, h.line) for h in t.hops}


def test_a_python_branch_the_default_arguments_do_not_take_is_not_the_main_chain(real_index):
    # torch/nn/functional.py:2255 `if max_norm is not None:` (max_norm: Optional[float] = None) calls
    # _no_grad_embedding_renorm_ (:2266); the default path is torch.embedding (:2267) -> index_select
    from opindex.trace.model import NOT_DEFAULT
    t = real_index.trace("F.embedding")
    renorm = [h for h in t.hops if h.name == "torch.nn.functional._no_grad_embedding_renorm_"]
    assert renorm and renorm[0].detail.endswith(f"[called when max_norm is not None: {NOT_DEFAULT}]")
    chain = t.main_chain()
    assert [(h.name, h.line) for h in chain[1:3]] == [("torch.embedding", 2267), ("aten::embedding", 2280)]
    # check_device's `Device(kCUDA, current_device())` (cuda/CUDAUtils.h) is a constructor, not a stub call
    assert not [h for h in t.hops if h.kind == "stub_call" and h.name == "Device"]


def test_a_branch_a_default_setting_does_not_take_is_not_the_main_chain(real_index):
    # cuda/Indexing.cu:1052 index_add_cuda_impl: `if (globalContext().deterministicAlgorithms())` (off unless
    # torch.use_deterministic_algorithms(True)) calls result.index_put_ (:1059); by default it launches its own
    # kernels. On the fork's build (USE_MACA) `if (maca_unlikely(enable_indexing_with_assert))` (:1163) keeps the
    # assert kernel for PYTORCH_ENABLE_INDEXING_ASSERT; the else launches indexFuncSmallIndexWithoutAssert -> __global__
    # at maca_kernels/indexing_opt.cuh:188. A name says no rank: the general `<-1, -1, -1>` launch (:1184) ranks
    # before the ones for a special shape (`selfInfo.dims == 1 && sourceInfo.dims == 1 && indContig`, :1162, -> :1166)
    from opindex.trace.model import NOT_DEFAULT
    t = real_index.trace("torch.index_add")
    cu = "aten/src/ATen/native/cuda/Indexing.cu"
    put = [h for h in t.hops if (h.file, h.line, h.kind) == (cu, 1059, "calls_op")]
    assert put and put[0].detail.endswith(f"[called when globalContext().deterministicAlgorithms(): {NOT_DEFAULT}]")
    assert [(h.file, h.line) for h in t.main_chain()[-2:]] == [
        (cu, 1184), ("aten/src/ATen/native/cuda/maca_kernels/indexing_opt.cuh", 188)]


def test_a_one_thread_launch_is_not_the_work(real_index):
    # cuda/cub.cuh:235 inclusive_scan launches transform_vals<<<1, 1, 0, ...>>> (:264) to carry a value between
    # chunks; the scan is cub::DeviceScan::InclusiveScan (:250): torch.cumsum's 1-D path ends there
    t = real_index.trace("torch.cumsum")
    end = t.main_chain()[-1]
    assert (end.name, end.file, end.line) == ("cub::DeviceScan::InclusiveScan", "aten/src/ATen/cuda/cub.cuh", 250)


def test_a_kernel_shows_the_device_functions_it_calls(real_index):
    # cuda/layer_norm_kernel.cu: __global__ vectorized_layer_norm_kernel (:316) calls the __device__
    # vectorized_layer_norm_kernel_impl (:325; two overloads, :237 and :302), which calls compute_stats (:250 ->
    # :172), which calls cuWelfordOnlineSum (:190 -> :130) and cuWelfordCombine (:145). The stock build (-U
    # USE_MACA: the fork's own runs its maca_kernels/ launch instead, test_trace_text_real.py) launches it at :782.
    t = real_index.trace("F.layer_norm", undefines=["USE_MACA"])
    cu = "aten/src/ATen/native/cuda/layer_norm_kernel.cu"
    kernel = [h for h in t.hops if h.name == "__global__ at::native::vectorized_layer_norm_kernel"]
    assert kernel and kernel[0] in t.main_chain()

    def below(hop):
        return [(h.name.removeprefix("__device__ at::native::"), h.line, h.called_at) for h in t.hops
                if h.parent == hop.id and h.kind == "device_call"]
    impl = below(kernel[0])
    assert impl == [("vectorized_layer_norm_kernel_impl", 237, f"{cu}:325")]
    impl_hop = next(h for h in t.hops if h.parent == kernel[0].id and h.kind == "device_call")
    assert "[the first of 2 overloads the call may reach; --limit 0 shows each]" in impl_hop.detail
    stats = next(h for h in t.hops if h.parent == impl_hop.id and h.name.endswith("compute_stats"))
    assert (stats.line, stats.called_at) == (172, f"{cu}:250")
    assert [(n, line) for n, line, _ in below(stats)][:2] == [("cuWelfordOnlineSum", 130), ("cuWelfordCombine", 145)]


def test_a_functor_objects_operator_shows_the_device_functions_it_calls(real_index):
    # cuda/ForeachBinaryOpScalar.cu: multi_tensor_apply<2>(..., BinaryOpScalarFunctor<...>(), ...) hands the op's
    # body to the launcher (op_body, ForeachFunctors.cuh); its __device__ operator() calls binary_op_scalar
    # (ForeachFunctors.cuh:114), which calls load_args (:80) and store_args (:99)
    t = real_index.trace("torch._foreach_add_")
    body = [h for h in t.hops if h.kind == "op_body"]
    below = {(h.name, h.line) for b in body for h in t.hops if h.parent == b.id and h.kind == "device_call"}
    assert ("__device__ at::native::binary_op_scalar", 114) in below


def test_an_object_built_with_arguments_for_a_called_parameter_and_a_misread_launch(real_index):
    # cuda/Sorting.cu:257 launch_kthvalue_kernel: run_launcher<scalar_t, index_t>(..., KthValueLauncher(k));
    # run_launcher (SortingCommon.cuh:113) calls l.template launch<...>(...) (:150): KthValueLauncher::launch
    # (Sorting.cu:176) -> gatherKthValue<<<...>>> (:194) -> __global__ gatherKthValue (:24)
    t = real_index.trace("torch.kthvalue")
    cu = "aten/src/ATen/native/cuda/Sorting.cu"
    assert {(cu, 176), (cu, 194), (cu, 24)} <= where(t)
    # cuda/ReduceMomentKernel.cu:20, read by the grammar as a definition: the launch of torch.var's reduction
    t = real_index.trace("torch.var")
    launch = [h for h in t.main_chain() if h.kind == "tensor_iterator"]
    assert [(h.name, h.file, h.line) for h in launch][:1] == [
        ("gpu_reduce_kernel", "aten/src/ATen/native/cuda/ReduceMomentKernel.cu", 20)]
    assert t.hops[launch[0].parent].name == "at::native::std_var_kernel_impl"


def test_a_bare_call_of_another_devices_kernel_is_the_op(real_index):
    # TensorTransformations.h:17 roll_common (reached from roll_cuda, cuda/TensorTransformations.cu:110) calls
    # `roll(flattened, shifts[0], 0)`: at::native::roll (TensorTransformations.cpp:102) is the CPU/MPS kernel, not
    # declared in the CUDA file; C++ finds the op at::roll there, which dispatches back to roll_cuda (shown above)
    t = real_index.trace("torch.roll")
    assert ("aten/src/ATen/native/TensorTransformations.cpp", 102) not in where(t)
    call = [h for h in t.hops if (h.file, h.line) == ("aten/src/ATen/native/TensorTransformations.h", 17)]
    assert [(h.kind, h.name) for h in call] == [("calls_op", "roll")]
    assert [(h.name, h.detail) for h in t.hops if h.parent == call[0].id] == [("aten::roll", "(shown above)")]


def test_a_helper_calling_an_op_method_on_a_tensor_parameter_reaches_it(real_index):
    # Loss.cpp:382 binary_cross_entropy_with_logits returns apply_loss_reduction(loss, reduction) (Loss.cpp:64),
    # whose `unreduced.mean()` (:66) is the op mean on a parameter declared `const at::Tensor&`: the helper is walked
    t = real_index.trace("F.binary_cross_entropy_with_logits")
    helper = [h for h in t.hops if h.name.endswith("apply_loss_reduction")]
    assert helper and (helper[0].line, helper[0].called_at) == (64, "aten/src/ATen/native/Loss.cpp:382")
    assert ("unreduced.mean", 66) in {(h.name, h.line) for h in t.hops if h.parent == helper[0].id}


def test_helpers_without_device_code_are_shown_under_the_body_that_calls_them(real_index):
    """helper_leaves: addmm_out_cuda_impl (Blas.cpp:199) calls getDisableAddmmCudaLt (Blas.cpp:175, `static bool
    disable_addmm_cuda_lt = getDisableAddmmCudaLt();` at :216) and expand_size (ExpandBase.h:9, `self_ =
    expand_size(self, {mat1_sizes[0], mat2_sizes[1]}, "addmm");` at :263): shape and setting helpers an expert
    names, below which no device code runs. The CUDA foreach kernel's fallback to the op's CPU kernel
    (foreach_tensor_add_list_kernel_slow_, ForeachOpsKernels.cpp:332) is an op's kernel, not such a helper."""
    t = real_index.trace("torch.addmm")
    impl = next(h for h in t.hops if h.name == "at::native::addmm_out_cuda_impl")
    helpers = {(h.name, h.file, h.line, h.called_at) for h in t.hops if h.kind == "helper" and h.parent == impl.id}
    assert {("at::native::getDisableAddmmCudaLt", "aten/src/ATen/native/cuda/Blas.cpp", 175,
             "aten/src/ATen/native/cuda/Blas.cpp:216"),
            ("at::expand_size", "aten/src/ATen/ExpandBase.h", 9, "aten/src/ATen/native/cuda/Blas.cpp:263")} <= helpers
    assert t.main_chain()[-1].name == "cublasSgemm"  # getDisableAddmmCudaLt() is true: no Lt (test_trace_build_real)
    foreach = real_index.trace("torch._foreach_add_")
    assert not [h for h in foreach.hops if h.name == "at::native::foreach_tensor_add_list_kernel_slow_"]


def test_a_python_def_is_walked_in_source_order_and_read_with_its_defaults(real_index):
    """torch.norm (torch/functional.py:1501, p="fro"): `return torch.linalg.vector_norm(input, 2, _dim, ...)` at
    :1616 is its first call into C++, found through torch.linalg's names: the hop is the assignment that names the
    binding (`vector_norm = _add_docstr(_linalg.linalg_vector_norm, ...)`, torch/linalg/__init__.py:1403), called
    at :1616, walked in full before the `_VF` bridges below it (a later call of the same op points up); `if not
    isinstance(p, str):` (:1643) and `elif p == "nuc":` (:1669) are blocks the default p does not enter, so
    `_VF.norm` (:1645) and `_VF.nuclear_norm` (:1674) are marked so."""
    t = real_index.trace("torch.norm")
    top = [h for h in t.hops if h.parent == 0]
    assert (top[0].name, top[0].file, top[0].line, top[0].called_at) == (
        "torch._C._linalg.linalg_vector_norm", "torch/linalg/__init__.py", 1403, "torch/functional.py:1616")
    assert not any(c.detail == "(shown above)" for c in t.hops if c.parent == top[0].id)
    marked = {h.line: h.detail for h in top if h.name in ("_VF.norm", "_VF.nuclear_norm")}
    assert "[called when not isinstance(p, str): not with the default arguments]" in marked[1645]
    assert '[called when p == "nuc": not with the default arguments]' in marked[1674]
    # `if p == "fro" and (dim is None or ...):` returns on every path (:1615-1618): linalg.matrix_norm after it
    # (:1625) runs only when that test fails, which p="fro", dim=None do not; the main chain is vector_norm's
    matrix = next(h for h in top if h.called_at == "torch/functional.py:1625")
    assert "[called when not (p == \"fro\" and (dim is None or isinstance(dim, (int, torch.SymInt)) or len(dim) " \
           "<= 2)): not with the default arguments]" in matrix.detail
    assert t.main_chain()[1].called_at == "torch/functional.py:1616"
