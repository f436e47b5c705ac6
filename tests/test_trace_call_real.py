"""Tracing a call on the PyTorch 2.4 tree (MetaX-MACA/mcPytorch): two calls that differ only in an argument end at
the device code that argument chooses (each file:line read in the source)."""
from __future__ import annotations

X = "torch.randn(8, 16, 32, 32)"
CUDA = "aten/src/ATen/native/cuda/"


def _end(t):
    h = t.main_chain()[-1]
    return h.name, h.file, h.line


def _on_chain(t, file: str, line: int) -> bool:
    return any(h.file == file and h.line == line for h in t.main_chain())


def test_nll_loss_reduction_none_runs_the_no_reduce_kernel(real_index):
    """torch/nn/functional.py:2778 passes `_Reduction.get_enum(reduction)` (torch/nn/_reduction.py:8, 'none' -> 0)
    to nll_loss_nd's `int reduction`; Loss.cu:293 `if (reduction == Reduction::None && n_dims == 2)` with
    `const int64_t n_dims = input.dim();` of a 2-D input holds: the launch at :312 of
    nll_loss_forward_no_reduce_cuda_kernel (:172). The default ('mean') reaches nll_loss_forward_reduce_cuda_kernel_2d
    (:230)."""
    args = "torch.randn(64, 1000), torch.randint(0, 1000, (64,))"
    none = real_index.trace(f"F.nll_loss({args}, reduction='none')")
    mean = real_index.trace(f"F.nll_loss({args})")
    assert _end(none) == ("__global__ at::native::nll_loss_forward_no_reduce_cuda_kernel", CUDA + "Loss.cu", 172)
    assert _on_chain(none, CUDA + "Loss.cu", 312)
    assert _end(mean) == ("__global__ at::native::nll_loss_forward_reduce_cuda_kernel_2d", CUDA + "Loss.cu", 230)


def test_interpolate_mode_and_rank_choose_the_upsample_op(real_index):
    """F.interpolate (functional.py:3878) tests `input.dim() == 4 and mode == "bilinear"`: the bridge at :4087
    (upsample_bilinear2d), whose template (UpSampleBilinear2d.cu:262) takes the contiguous path of a default-made
    input (`memory_format == at::MemoryFormat::ChannelsLast && ...` is false): upsample_bilinear2d_out_frame (:35).
    The default mode ('nearest') on a 4-D input: the bridge at :4050, upsample_nearest2d_out_frame
    (UpSampleNearest2d.cu:41)."""
    bilinear = real_index.trace(f"F.interpolate({X}, scale_factor=2, mode='bilinear')")
    nearest = real_index.trace(f"F.interpolate({X}, scale_factor=2, mode='nearest')")
    assert _end(bilinear) == ("__global__ at::native::upsample_bilinear2d_out_frame",
                              CUDA + "UpSampleBilinear2d.cu", 35)
    assert _on_chain(bilinear, "torch/nn/functional.py", 4087)
    assert _end(nearest) == ("__global__ at::native::upsample_nearest2d_out_frame", CUDA + "UpSampleNearest2d.cu", 41)
    assert _on_chain(nearest, "torch/nn/functional.py", 4050)
    assert nearest.to_dict()["call"]["tensors"] == [{"name": "input", "dtype": "float32", "sizes": [8, 16, 32, 32]}]


def test_embedding_bag_mode_reaches_the_kernel_of_that_mode(real_index):
    """F.embedding_bag sets `mode_enum = 2` under `elif mode == "max":` (functional.py:2428-2429) and passes it to
    torch.embedding_bag (:2454); EmbeddingBag.cu:404 `if (mode == MODE_MAX)` (`constexpr int MODE_MAX = 2;` at :48)
    launches EmbeddingBag_updateOutputKernel_max (:65); mode='sum' (mode_enum 0) the sum/mean kernel (:115)."""
    args = "torch.randint(0, 1000, (256,)), torch.randn(1000, 128), torch.arange(0, 256, 8)"
    big = real_index.trace(f"F.embedding_bag({args}, mode='max')")
    total = real_index.trace(f"F.embedding_bag({args}, mode='sum')")
    assert big.dtype == total.dtype == "float32"  # the weight's, not the int64 indices'
    assert _end(big) == ("__global__ at::native::EmbeddingBag_updateOutputKernel_max", CUDA + "EmbeddingBag.cu", 65)
    assert _end(total) == ("__global__ at::native::EmbeddingBag_updateOutputKernel_sum_mean",
                           CUDA + "EmbeddingBag.cu", 115)


def test_gelu_approximate_tanh_takes_the_tanh_launch(real_index):
    """The schema's `str approximate='none'` reaches GeluCUDAKernelImpl's `if (approximate == GeluType::Tanh)`
    (ActivationGeluKernel.cu:22): 'tanh' names GeluType::Tanh, so the launch at :24 inside it; the default the one
    at :35 in its else."""
    tanh = real_index.trace("F.gelu(torch.randn(1024, 1024), approximate='tanh')")
    exact = real_index.trace("F.gelu(torch.randn(1024, 1024))")
    gelu = CUDA + "ActivationGeluKernel.cu"
    assert _on_chain(tanh, gelu, 24) and not _on_chain(tanh, gelu, 35)
    assert _on_chain(exact, gelu, 35) and not _on_chain(exact, gelu, 24)


def test_pad_mode_reaches_the_reflection_or_replication_kernel(real_index):
    """pad_symint passes the mode as `int mode_int` to _pad_enum_symint (PadNd.cpp:191), whose switch over
    `static_cast<at::padding_mode>(mode_int)` on a 4-element pad of a 4-D input goes to reflection_pad2d at :214
    or replication_pad2d at :215: reflection_pad2d_out_kernel (ReflectionPad.cu:125),
    replication_pad_forward_kernel2d (ReplicationPadding.cu:89)."""
    reflect = real_index.trace(f"F.pad({X}, (1, 1, 1, 1), mode='reflect')")
    replicate = real_index.trace(f"F.pad({X}, (1, 1, 1, 1), mode='replicate')")
    assert _on_chain(reflect, "aten/src/ATen/native/PadNd.cpp", 214)
    assert _end(reflect) == ("__global__ at::native::reflection_pad2d_out_kernel", CUDA + "ReflectionPad.cu", 125)
    assert _on_chain(replicate, "aten/src/ATen/native/PadNd.cpp", 215)
    assert _end(replicate) == ("__global__ at::native::replication_pad_forward_kernel2d",
                               CUDA + "ReplicationPadding.cu", 89)


def test_untuned_calls_read_hop_by_hop(real_index):
    """Two calls not tuned for, read against the 2.4 source on a stock build (2026-12-05):
    - F.max_pool2d(x, 2, return_indices=True): F.max_pool2d is `boolean_dispatch(arg_name="return_indices", ...,
      if_true=max_pool2d_with_indices, ...)` (torch/nn/functional.py:799); the call's True takes
      max_pool2d_with_indices (:724), whose torch._C._nn.max_pool2d_with_indices (:771) reaches
      structured_max_pool2d_with_indices_out_cuda (cuda/DilatedMaxPool2d.cu:299): a tensor made the default way is
      contiguous, so `case MemoryFormat::Contiguous` launches max_pool_forward_nchw (:430, the kernel at :50),
      what an H200 ran (benchmarks/runtime_h200_torch2.11.json).
    - torch.sum(float16 [64, 64], dim=1): sum_kernel_cuda (cuda/ReduceSumProdKernel.cu:173) reaches sum_functor,
      gpu_reduce_kernel and launch_reduce_kernel (Reduce.cuh:778), whose `switch (config.output_vec_size)` is a
      run-time value: the chain ends at reduce_kernel (Reduce.cuh:188, what ran) and the choice says it is ranked."""
    pool = real_index.trace("F.max_pool2d(torch.randn(8, 16, 32, 32), 2, return_indices=True)",
                            undefines=["USE_MACA"])
    assert _on_chain(pool, "torch/nn/functional.py", 724)
    assert _on_chain(pool, "aten/src/ATen/native/cuda/DilatedMaxPool2d.cu", 430)
    assert _end(pool) == ("__global__ at::native::max_pool_forward_nchw",
                          "aten/src/ATen/native/cuda/DilatedMaxPool2d.cu", 50)
    total = real_index.trace("torch.sum(torch.randn(64, 64, dtype=torch.float16), dim=1)", undefines=["USE_MACA"])
    assert total.dtype == "float16"
    assert _on_chain(total, "aten/src/ATen/native/cuda/ReduceSumProdKernel.cu", 173)
    assert _end(total) == ("__global__ at::native::reduce_kernel", "aten/src/ATen/native/cuda/Reduce.cuh", 188)
    assert {"file": "aten/src/ATen/native/cuda/Reduce.cuh", "line": 778, "settled": False} in [
        {k: c[k] for k in ("file", "line", "settled")} for c in total.to_dict()["choices"]]


def test_adaptive_avg_pool2d_to_one_by_one_is_a_mean(real_index):
    """F.adaptive_avg_pool2d(x, 1): functional.py:1259 `_list_with_default(output_size, input.size())` returns the
    int (modules/utils.py `isinstance(out_size, (int, torch.SymInt))`), which the `SymInt[2] output_size` schema
    argument makes [1, 1]. adaptive_avg_pool2d_symint (AdaptiveAveragePooling.cpp:109) skips `if
    (input.is_mkldnn())` (:116: a CUDA tensor is not MKL-DNN) and takes :120's `!input.is_quantized() &&
    output_size[0] == 1 && output_size[1] == 1 && !input.is_xpu()`: `input.mean({-1, -2}, true)` (:129) ->
    aten::mean.dim (native_functions.yaml:3914). Given (7, 7), the else's _adaptive_avg_pool2d_symint (:138) ->
    adaptive_average_pool (cuda/AdaptiveAveragePooling.cu:53)."""
    pool = "aten/src/ATen/native/AdaptiveAveragePooling.cpp"
    t = real_index.trace("F.adaptive_avg_pool2d(torch.randn(8, 16, 32, 32), 1)", undefines=["USE_MACA"])
    chain = [(h.name, h.file, h.line) for h in t.main_chain()]
    at = chain.index(("at::native::adaptive_avg_pool2d_symint", pool, 109))
    assert chain[at + 1:at + 3] == [("input.mean", pool, 129),
                                    ("aten::mean.dim", "aten/src/ATen/native/native_functions.yaml", 3914)]
    other = next(h for h in t.hops if h.name == "_adaptive_avg_pool2d_symint" and h.line == 138)
    assert [(c.line, c.assumed) for c in other.conditions if c.kind == "if"] == [(137, False)]
    seven = real_index.trace("F.adaptive_avg_pool2d(torch.randn(8, 16, 32, 32), (7, 7))", undefines=["USE_MACA"])
    assert _end(seven) == ("__global__ at::native::adaptive_average_pool",
                           "aten/src/ATen/native/cuda/AdaptiveAveragePooling.cu", 53)


def test_softmax_values_reach_host_softmax_and_choose_its_kernel(real_index):
    """F.softmax(torch.randn(64, 1024), dim=-1): functional.py:1888 `input.softmax(dim)` binds the tensor as self
    and -1 as dim; softmax (SoftMax.cpp:452) takes the else's `at::_softmax(converted, dim_, false)` (:459, walked
    before the Half branch's call at :456, which the input rules out) and passes -1 and half_to_float=false on.
    host_softmax (cuda/SoftMax.cu:678): `input = input_.contiguous()`, `dim = maybe_wrap_dim(dim_, input.dim())`
    = 1, `dim_size = input.size(dim)` = 1024, and `inner_size` the product of the sizes after dim (:706) = 1: so
    `inner_size == 1` (:711), `!half_to_float` (:718) and `dim_size <= 1024 && dim_size*sizeof(scalar_t) <= 4096`
    (:719) hold, and the chain takes the persistent dispatch_softmax_forward called at :725 (not the half-to-float
    one at :870). Over dim 1 of an 8x64x32 input inner_size is 32: cunn_SpatialSoftMaxForward (:252, launched at
    :1020); a 4096 last dim is past 1024: not the persistent dispatch."""
    softmax = f"{CUDA}SoftMax.cu"
    t = real_index.trace("F.softmax(torch.randn(64, 1024), dim=-1)")
    chain = t.main_chain()
    assert [(h.line, h.called_at) for h in chain if h.file == "aten/src/ATen/native/SoftMax.cpp"] == [(452, None),
                                                                                                       (459, None)]
    persistent = next(h for h in chain if h.name == "dispatch_softmax_forward")
    assert persistent.called_at == f"{softmax}:725"
    assert not any(c.assumed is None and c.file == softmax for c in persistent.conditions)
    spatial = real_index.trace("F.softmax(torch.randn(8, 64, 32), dim=1)")
    assert _end(spatial) == ("__global__ at::native::cunn_SpatialSoftMaxForward", softmax, 252)
    long = real_index.trace("F.softmax(torch.randn(64, 4096), dim=-1)")
    assert not any(h.name == "dispatch_softmax_forward" for h in long.main_chain())


def test_dropout_in_eval_runs_no_kernel(real_index):
    """F.dropout(x, p=0.1, training=False): aten::dropout's kernel (Dropout.cpp:132) takes native_dropout (:139)
    only when `input.is_nested() || (train && is_fused_kernel_acceptable(input, p))` (:138): a dense input is not
    nested and train is false, so not; `_dropout<false>(input, p, train)` returns its input under `p == 0 ||
    !train || ...`. Every way on to device code is ruled out: the chain stops at at::native::dropout and names
    native_dropout's test. With training=True (the default) it goes on to fused_dropout_kernel_vec (cuda/Dropout.cu:62)."""
    t = real_index.trace("F.dropout(torch.randn(64, 128), p=0.1, training=False)", undefines=["USE_MACA"])
    assert _end(t) == ("at::native::dropout", "aten/src/ATen/native/Dropout.cpp", 132)
    stop = t.ruled_out()
    assert (stop.name, stop.line) == ("at::native_dropout", 139)
    assert [(c.line, c.assumed) for c in stop.conditions] == [(138, False)]
    train = real_index.trace("F.dropout(torch.randn(64, 128), p=0.1)", undefines=["USE_MACA"])
    assert _end(train) == ("__global__ at::native::fused_dropout_kernel_vec", f"{CUDA}Dropout.cu", 62)


def test_a_jitted_kernel_is_named_as_the_run_compiles_it(real_index):
    """ReduceSumProdKernel.cu:87 (`#if AT_USE_JITERATOR() && !defined(_MSC_VER)`, true on the stock build:
    jit_macros.h:9) makes prod_functor launch `jitted_gpu_reduce_kernel<prod_name, ...>` (:94), prod_name being
    "prod" (:82); Reduce.cuh:821 names the kernel `"reduction_" + name`, jit_utils.cpp `+ "_kernel"`: the H200
    ran reduction_prod_kernel. Complex exp takes UnaryOpsKernel.cu:48's jitted_gpu_kernel<exp_name> ("exp_kernel",
    :37): the H200 ran exp_kernel_vectorized2_kernel."""
    prod = real_index.trace("torch.prod(torch.randn(1024, 1024), dim=1)", undefines=["USE_MACA"])
    end = prod.main_chain()[-1]
    assert (end.name, end.file, end.line, end.kernel) == (
        "launch_jitted_reduce_kernel", "aten/src/ATen/native/cuda/Reduce.cuh", 1217, "reduction_prod_kernel")
    assert ("TensorIterator launch: jitted_gpu_reduce_kernel -> jitted reduction_prod_kernel (7 hops folded)"
            in prod.to_text(context=0))
    exp = real_index.trace("torch.exp(torch.randn(1024, 1024, dtype=torch.complex64))", undefines=["USE_MACA"])
    end = exp.main_chain()[-1]
    assert (end.name, end.file, end.line, end.kernel) == (
        "launch_jitted_vectorized_kernel", "aten/src/ATen/native/cuda/CUDAJitLoops.cuh", 209,
        "exp_kernel_vectorized<N>_kernel")


def test_a_jitted_kernel_name_is_traced_from_the_code_that_launches_it(real_index):
    """A profiler's reduction_prod_kernel is no __global__ of the source: opindex walks up from prod_functor's
    operator() (ReduceSumProdKernel.cu:88), which launches it at :94, to its stub registration (:213) and
    aten::prod.int_out, through the CUDA dispatch row (native_functions.yaml:5914, `CPU, CUDA: prod_out`)."""
    t = real_index.trace("reduction_prod_kernel")
    assert t.direction == "up" and t.message.startswith(
        "'reduction_prod_kernel' is no __global__ of the source: the jiterator compiles it at run time (NVRTC) for "
        "jitted_gpu_reduce_kernel at aten/src/ATen/native/cuda/ReduceSumProdKernel.cu:94 (name constant at :82)")
    assert [(h.name, h.file, h.line) for h in t.main_chain()[:9]] == [
        ("at::native::prod_functor::operator()", "aten/src/ATen/native/cuda/ReduceSumProdKernel.cu", 88),
        ("at::native::prod_kernel_cuda", "aten/src/ATen/native/cuda/ReduceSumProdKernel.cu", 201),
        ("CUDA: prod_stub", "aten/src/ATen/native/cuda/ReduceSumProdKernel.cu", 213),
        ("prod_stub", "aten/src/ATen/native/ReduceOps.h", 22),
        ("prod_stub(iter.device_type(), ...)", "aten/src/ATen/native/ReduceOps.cpp", 1315),
        ("at::native::impl_func_prod", "aten/src/ATen/native/ReduceOps.cpp", 1305),
        ("at::native::structured_prod_out", "aten/src/ATen/native/ReduceOps.cpp", 1319),
        ("CUDA: prod_out", "aten/src/ATen/native/native_functions.yaml", 5914),
        ("aten::prod.int_out", "aten/src/ATen/native/native_functions.yaml", 5910)]


def test_efficient_attention_runs_the_kernel_its_launcher_is_handed_for_the_gpu_traced(real_index):
    """Float32 SDPA on the stock build takes _efficient_attention_forward (attention.cu:951). Its `kernel_fn<<<...>>>`
    (:1289) launches a parameter of the lambda at :1136, which dispatch_cutlassF<scalar_t>(launchKernel,
    computeCapability) (:1294) is handed; computeCapability is `p->major * 10 + p->minor` (:1131). cutlassF.h:302's
    `std::is_same<DT, float>::value && 80 <= cc && cc < 100` holds for an sm_90 GPU (TORCH_CUDA_ARCH_LIST=9.0, the
    default), so dispatch_cutlassF_f32_sm80 (:276) hands fmha_cutlassF_f32_aligned_64x64_rf_sm80 first (:277): the
    kernel the H200 ran. Stated sm_75, the sm75 kernel; two architectures leave the choice open (ranked)."""
    call = ("F.scaled_dot_product_attention(torch.randn(4, 8, 128, 64), torch.randn(4, 8, 128, 64), "
            "torch.randn(4, 8, 128, 64))")
    cutlass = "aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/"
    t = real_index.trace(call, undefines=["USE_MACA"])
    assert [(h.name, h.file, h.line) for h in t.main_chain()[-5:]] == [
        ("at::native::_efficient_attention_forward", "aten/src/ATen/native/transformers/cuda/attention.cu", 951),
        ("dispatch_cutlassF", cutlass + "cutlassF.h", 284),
        ("dispatch_cutlassF_f32_sm80", cutlass + "cutlassF.h", 276),
        ("fmha_cutlassF_f32_aligned_64x64_rf_sm80 (handed to a launcher)", cutlass + "cutlassF.h", 277),
        ("__global__ fmha_cutlassF_f32_aligned_64x64_rf_sm80", cutlass + "cutlassF_f32_aligned.cu", 68)]
    launch = next(h for h in t.hops if h.name.startswith("kernel_fn<<<"))
    assert (launch.found, launch.line) == ("passed_in", 1289) and launch not in t.ends()
    assert {"name": "TORCH_CUDA_ARCH_LIST", "value": "9.0", "source": "upstream default (a current CUDA build)"} \
        in t.build
    sm75 = real_index.trace(call, undefines=["USE_MACA"], defines=["TORCH_CUDA_ARCH_LIST=7.5"])
    assert [(h.name, h.line) for h in sm75.main_chain()[-2:]] == [
        ("fmha_cutlassF_f32_aligned_64x64_rf_sm75 (handed to a launcher)", 254),
        ("__global__ fmha_cutlassF_f32_aligned_64x64_rf_sm75", 49)]
    several = real_index.trace(call, undefines=["USE_MACA"], defines=["TORCH_CUDA_ARCH_LIST=8.0;9.0"])
    arch = next(c for c in several.to_dict()["choices"] if c["file"] == cutlass + "cutlassF.h" and c["line"] == 284)
    assert arch["settled"] is False and arch["ways"] == 9


def test_three_untuned_calls_of_the_session_of_14_40_read_hop_by_hop(real_index):
    """Read against the 2.4 source on the stock build (-U USE_MACA), none tuned for:
    - bfloat16 SDPA: the backend is ranked (select_sdp_backend is not evaluated; the line says so), then
      dispatch_cutlassF's `std::is_same<DT, cutlass::bfloat16_t>::value && 80 <= cc && cc < 100` (cutlassF.h:286)
      holds for DISPATCH_TYPES' cutlass::bfloat16_t on sm_90, so dispatch_cutlassF_bf16_sm80 (:26) hands
      fmha_cutlassF_bf16_aligned_64x64_rf_sm80 first (:27; defined at cutlassF_bf16_aligned.cu:11);
    - float16 torch.sum over a dim: reduce_dispatch's `iter.dtype() == kHalf` (ReduceSumProdKernel.cu:159) takes
      sum_functor<at::Half, float>, whose gpu_reduce_kernel ends at reduce_kernel (Reduce.cuh:188);
    - F.mse_loss(reduction='sum'): mse_loss_out's `reduction != Reduction::None` (Loss.cpp:130) holds, so the
      mse_stub call at :133 (not the one of the else, :141) -> mse_kernel_cuda -> vectorized_elementwise_kernel
      (CUDALoops.cuh:63); the sum that follows is a separate op (at::sum_out, :137)."""
    sdpa = real_index.trace("F.scaled_dot_product_attention(torch.randn(2, 4, 64, 32, dtype=torch.bfloat16), "
                            "torch.randn(2, 4, 64, 32, dtype=torch.bfloat16), torch.randn(2, 4, 64, 32, "
                            "dtype=torch.bfloat16))", undefines=["USE_MACA"])
    chain = sdpa.main_chain()
    assert [(h.name, h.line) for h in chain[-3:]] == [
        ("dispatch_cutlassF_bf16_sm80", 26), ("fmha_cutlassF_bf16_aligned_64x64_rf_sm80 (handed to a launcher)", 27),
        ("__global__ fmha_cutlassF_bf16_aligned_64x64_rf_sm80", 11)]
    backend = next(c for c in sdpa.to_dict()["choices"] if c["hop"] == chain[5].id)
    assert chain[5].name == "at::_scaled_dot_product_efficient_attention" and backend["settled"] is False
    total = real_index.trace("torch.sum(torch.randn(128, 64, dtype=torch.float16), dim=1)", undefines=["USE_MACA"])
    end = total.main_chain()[-1]
    assert (end.name, end.file, end.line) == ("__global__ at::native::reduce_kernel",
                                              "aten/src/ATen/native/cuda/Reduce.cuh", 188)
    mse = real_index.trace("F.mse_loss(torch.randn(32, 10), torch.randn(32, 10), reduction='sum')",
                           undefines=["USE_MACA"])
    names = [(h.name, h.line) for h in mse.main_chain()]
    assert ("mse_stub", 133) in names and ("CUDA: mse_kernel_cuda", 74) in names
    assert (names[-1], mse.main_chain()[-1].file) == (("__global__ at::native::vectorized_elementwise_kernel", 63),
                                                      "aten/src/ATen/native/cuda/CUDALoops.cuh")


def test_an_aten_call_passing_reduction_as_a_number(real_index):
    """A profiler records nll_loss_forward's `int reduction` as its number (1: Mean, Reduction.h's `enum Reduction
    { None, Mean, Sum, END }`): Loss.cu's `reduction == Reduction::None && n_dims == 2` (:293) is false for 1,
    true for 0 with a 2-d input."""
    call = "torch.ops.aten.nll_loss_forward(torch.empty(16, 10), torch.empty(16, dtype=torch.int64), None, {}, -100)"
    mean = real_index.trace(call.format(1), undefines=["USE_MACA"]).main_chain()[-1]
    none = real_index.trace(call.format(0), undefines=["USE_MACA"]).main_chain()[-1]
    assert (mean.name, mean.line) == ("__global__ at::native::nll_loss_forward_reduce_cuda_kernel_2d", 230)
    assert (none.name, none.line) == ("__global__ at::native::nll_loss_forward_no_reduce_cuda_kernel", 172)


def test_a_non_contiguous_operand_takes_the_strided_launch(real_index):
    """torch.add of a transposed operand (`x.t()`): add's TensorIterator is then not contiguous, so gpu_kernel_impl's
    `if (contiguous)` (CUDALoops.cuh:403) is false, so it takes launch_legacy_kernel's elementwise_kernel
    (CUDALoops.cuh:292), the kernel the H200 ran for the train step's broadcast add (strides (1, 0)); the same
    tensor made contiguous again takes vectorized_elementwise_kernel (:63)."""
    t = real_index.trace("torch.add(torch.randn(1000, 256).t(), torch.randn(256, 1000))", undefines=["USE_MACA"])
    assert t.call_summary == "self=float32[256x1000] strided, other=float32[256x1000]; defaults alpha=1"
    strided = t.main_chain()[-1]
    assert (strided.name, strided.file, strided.line) == ("__global__ at::native::elementwise_kernel",
                                                          "aten/src/ATen/native/cuda/CUDALoops.cuh", 292)
    dense = real_index.trace("torch.add(torch.randn(1000, 256).t().contiguous(), torch.randn(256, 1000))",
                             undefines=["USE_MACA"]).main_chain()[-1]
    assert (dense.name, dense.line) == ("__global__ at::native::vectorized_elementwise_kernel", 63)


def test_a_call_s_tensors_reach_the_helper_they_are_passed_to(real_index):
    """at::native::matmul (LinearAlgebra.cpp:2187) passes its tensors to _matmul_impl (:2007), whose `const auto
    dim_tensor1 = tensor1.dim();` then reads the call's rank: two vectors take `dim_tensor1 == 1 && dim_tensor2 ==
    1` (:2034), tensor1.dot (:2035), and end at cublasSdot; two matrices take the mm of :2042 and cublasSgemm."""
    dot = real_index.trace("torch.matmul(torch.randn(32), torch.randn(32))", undefines=["USE_MACA"]).main_chain()
    assert [(h.name, h.line) for h in dot[4:6]] == [("at::native::_matmul_impl", 2007), ("tensor1.dot", 2035)]
    assert (dot[-1].name, str(dot[-1].layer)) == ("cublasSdot", "library")
    mm = real_index.trace("torch.matmul(torch.randn(64, 32), torch.randn(32, 16))", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in mm.main_chain()[4:6]] == [("at::native::_matmul_impl", 2007),
                                                                ("at::mm_out", 2042)]
    assert mm.main_chain()[-1].name == "cublasSgemm"


def test_a_string_argument_picks_the_overload_that_takes_one(real_index):
    """torch.nn.functional.conv2d is torch.conv2d (functional.py:87), bound to two overloads: conv2d (`SymInt[2]
    padding=0`, native_functions.yaml:1707) and conv2d.padding (`str padding="valid"`, :1720). As Python's argument
    parser does, an int padding fits only the first, a string only the second: each is a settled way, its other
    overload ruled out with the reason, and padding='same' goes on to conv2d_padding_symint (Convolution.cpp:1093)."""
    yaml = "aten/src/ATen/native/native_functions.yaml"
    ints = real_index.trace(f"F.conv2d({X}, torch.randn(16, 16, 3, 3), padding=1)")
    same = real_index.trace(f"F.conv2d({X}, torch.randn(16, 16, 3, 3), padding='same')")
    for t, (name, line) in ((ints, ("aten::conv2d", 1707)), (same, ("aten::conv2d.padding", 1720))):
        entry = t.main_chain()[2]
        assert (entry.name, entry.file, entry.line) == (name, yaml, line)
        assert all(c["settled"] for c in t.to_dict()["choices"] if c["hop"] == entry.id)
    c = next(c for c in ints.to_dict()["choices"] if c["hop"] == ints.main_chain()[2].id)
    assert [ints.hops[k].line for k in c["others"]] == [1720]  # (for 'same', conv2d's way repeats what is above)
    unfit = next(h for h in ints.hops if h.parent == ints.main_chain()[1].id and h.line == 1720)
    assert [(c.kind, c.text, c.assumed) for c in unfit.conditions] == [
        ("overload", "padding of type str (the call passes padding=1)", False)]
    assert _on_chain(same, "aten/src/ATen/native/Convolution.cpp", 1093)


def test_a_number_argument_picks_the_c_overload_that_takes_a_number(real_index):
    """trapezoid (Integration.cpp:122) calls `do_trapezoid(y, dx.toDouble(), dim)` (:129); C++ has two overloads,
    `do_trapezoid(const Tensor& y, const Tensor& dx, int64_t dim)` (:32) and `do_trapezoid(const Tensor& y, double
    dx, int64_t dim)` (:42). A double argument binds the `double dx` one (no conversion makes a Tensor of it): the
    chain takes :42, and :32 is marked not taken, with why."""
    t = real_index.trace("torch.trapezoid(torch.randn(64, 100))")
    hop = next(h for h in t.main_chain() if h.name == "at::native::do_trapezoid")
    assert (hop.file, hop.line) == ("aten/src/ATen/native/Integration.cpp", 42)
    other = next(h for h in t.hops if h.name == "at::native::do_trapezoid" and h.line == 32 and h.parent == hop.parent)
    assert [(c.text, c.line, c.assumed) for c in other.conditions] == [("dx.toDouble() is Tensor", 129, False)]


def test_a_rounding_mode_string_reaches_its_stub_and_the_input_dtype_its_branch(real_index):
    """div_out_mode (BinaryOps.cpp:450): `if (!rounding_mode.has_value())` (:453) `else if (*rounding_mode ==
    "trunc")` (:455) `else if (*rounding_mode == "floor")` (:457): rounding_mode='floor' takes div_floor_stub (:458)
    as a settled way. div_floor_kernel_cuda (BinaryDivFloorKernel.cu:21) reads `const auto dtype =
    iter.common_dtype();` then `if (dtype == kByte)` (:24, the trunc kernel) and `isIntegralType(dtype, false)`
    (:29): both false for float32, so the chain launches the float branch's gpu_kernel_with_scalars (:72) and ends
    at vectorized_elementwise_kernel (CUDALoops.cuh:63)."""
    t = real_index.trace("torch.div(torch.randn(1024, 1024), torch.randn(1024, 1024), rounding_mode='floor')")
    stub = next(h for h in t.main_chain() if h.layer == "stub")
    assert (stub.name, stub.file, stub.line) == ("div_floor_stub", "aten/src/ATen/native/BinaryOps.cpp", 458)
    c = next(c for c in t.to_dict()["choices"] if c["hop"] == stub.id)
    assert c["settled"] is True
    assert not any("div_trunc" in h.name for h in t.main_chain())
    launch = next(h for h in t.main_chain() if h.file == CUDA + "BinaryDivFloorKernel.cu" and h.layer == "cuda")
    assert (launch.name, launch.line) == ("gpu_kernel_with_scalars", 72)
    assert _end(t) == ("__global__ at::native::vectorized_elementwise_kernel", CUDA + "CUDALoops.cuh", 63)


def test_a_python_number_is_a_cpu_scalar_of_the_ops_iterator(real_index):
    """torch.div(x, 2.0): the Python number is div.Tensor's `other`, a wrapped CPU scalar; structured_div_out hands
    its own iterator (outputs, then self, other) to div_true_kernel_cuda (BinaryDivTrueKernel.cu:20), whose
    `iter.is_cpu_scalar(2)` (:35) holds: it multiplies by the reciprocal through gpu_kernel_maca_arity1 (:44), a
    settled choice. Two tensors take the else's gpu_kernel_with_scalars_arity2 (:54), and the iterator reaches
    opmath_gpu_kernel_with_scalars_arity2 (Loops.cuh:275) through the launchers: neither operand is a CPU scalar,
    so its BinaryFunctor launch (:300), not the AUnary/BUnary ones (:294, :298)."""
    div = CUDA + "BinaryDivTrueKernel.cu"
    t = real_index.trace("torch.div(torch.randn(1024, 1024), 2.0)")
    launch = next(h for h in t.main_chain() if h.file == div and h.layer == "cuda")
    assert (launch.name, launch.line) == ("gpu_kernel_maca_arity1", 44)
    assert next(c for c in t.to_dict()["choices"] if c["hop"] == launch.id)["settled"] is True
    both = real_index.trace("torch.div(torch.randn(1024, 1024), torch.randn(1024, 1024))")
    assert [(h.name, h.line) for h in both.main_chain() if h.layer == "cuda"][:3] == [
        ("gpu_kernel_with_scalars_arity2", 54), ("opmath_gpu_kernel_with_scalars_arity2", 410),
        ("gpu_kernel_maca_arity2", 300)]
    inner = next(h for h in both.main_chain() if h.name == "gpu_kernel_maca_arity2")
    assert next(c for c in both.to_dict()["choices"] if c["hop"] == inner.id)["settled"] is True
    assert _end(t) == _end(both) == ("__global__ at::native::vectorized_elementwise_kernel", CUDA + "CUDALoops.cuh",
                                     63)


def test_the_iterator_a_meta_function_builds_gives_the_operands(real_index):
    """threshold's meta function builds its iterator from `self` twice (Activation.cpp:90-92: output, self, self),
    so in opmath_gpu_kernel_with_scalars (Loops.cuh:244), reached from threshold_kernel_impl's
    gpu_kernel_with_scalars_arity2 (ActivationThresholdKernel.cu:29), neither `iter.is_cpu_scalar(1)` (:254) nor
    `iter.is_cpu_scalar(2)` (:264) holds: the BinaryFunctor launch (:269), not the AUnary/BUnary ones (:263,
    :267). Read by the schema alone (one Tensor argument) operand 2 would be unknown."""
    t = real_index.trace("F.threshold(torch.randn(1024), 0.1, 20.0)", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain() if h.file == CUDA + "Loops.cuh" and h.layer == "cuda"][:2] == [
        ("opmath_gpu_kernel_with_scalars", 397), ("gpu_kernel", 269)]
    assert _end(t) == ("__global__ at::native::vectorized_elementwise_kernel", CUDA + "CUDALoops.cuh", 63)


def test_a_meta_function_a_macro_writes_gives_the_operands(real_index):
    """gt.Scalar's meta function is written by `CREATE_COMPARISON_SCALAR_TENSOR_META_FUNC(gt);` (BinaryOps.cpp:369):
    its body (:359-362) wraps the Scalar, `native::wrapped_scalar_tensor(other)`, as the iterator's third operand.
    So for torch.gt(x, 0.5) compare_kernel_impl (CompareKernels.cu:55) takes `iter.is_cpu_scalar(2)` (:65),
    compare_scalar_kernel (:47) and its gpu_kernel (:49), settled; two tensors take the else, whose `iter.ninputs()
    == 2` (:71) holds: the fork's gpu_kernel_maca_arity2 (:72), on the stock build its stand-in gpu_kernel."""
    compare = CUDA + "CompareKernels.cu"
    t = real_index.trace("torch.gt(torch.randn(1024), 0.5)", undefines=["USE_MACA"])
    chain = [(h.name, h.line) for h in t.main_chain() if h.file == compare]
    assert chain[-3:] == [("at::native::compare_kernel_impl", 55), ("at::native::compare_scalar_kernel", 47),
                          ("gpu_kernel", 49)]
    hop = next(h for h in t.main_chain() if h.name == "at::native::compare_scalar_kernel")
    assert next(c for c in t.to_dict()["choices"] if c["hop"] == hop.id)["settled"] is True
    t = real_index.trace("torch.gt(torch.randn(1024), torch.randn(1024))", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain() if h.file == compare][-2:] == [
        ("at::native::compare_kernel_impl", 55), ("gpu_kernel_maca_arity2", 72)]
    assert _end(t) == ("__global__ at::native::vectorized_elementwise_kernel", CUDA + "CUDALoops.cuh", 63)


def test_three_untuned_calls_of_the_session_of_13_54_read_hop_by_hop(real_index):
    """Read hop by hop against the source (stock build). `torch.lt(float16[1024], 2)`: lt.Scalar (yaml:9070), whose
    meta function the comparison macro writes (BinaryOps.cpp:367) wraps the 2 as operand 2; AT_DISPATCH_ALL_TYPES_AND3
    covers Half; compare_kernel_impl (CompareKernels.cu:55) takes `iter.is_cpu_scalar(2)`: compare_scalar_kernel
    (:47), gpu_kernel (:49). `torch.randperm(50000, device='cuda', dtype=torch.int32)` (a dtype named, which binds):
    `bits` is 34, so the int64 keys' radix sort (Randperm.cu:117) to SortPairs (cub-RadixSortPairs.cu:46), the
    fix-up kernel after it. `F.gelu(x, approximate='tanh')` (a non-default argument): get_gelutype_enum gives Tanh,
    so GeluCUDAKernelImpl's `approximate == GeluType::Tanh` (ActivationGeluKernel.cu:22) side, the launch at :24."""
    t = real_index.trace("torch.lt(torch.randn(1024, dtype=torch.float16), 2)", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain()[1:3]] == [("aten::lt.Scalar", 9070), ("aten::lt.Scalar_out", 9060)]
    assert [(h.name, h.line) for h in t.main_chain() if h.file == CUDA + "CompareKernels.cu"][-3:] == [
        ("at::native::compare_kernel_impl", 55), ("at::native::compare_scalar_kernel", 47), ("gpu_kernel", 49)]
    t = real_index.trace("torch.randperm(50000, device='cuda', dtype=torch.int32)", undefines=["USE_MACA"])
    assert t.dtype == "int32" and t.call["args"]
    hop = next(h for h in t.main_chain() if h.name == "at::cuda::cub::radix_sort_pairs")
    assert (hop.file, hop.line) == (CUDA + "Randperm.cu", 117)
    assert _end(t) == ("cub::DeviceRadixSort::SortPairs", "aten/src/ATen/cuda/cub-RadixSortPairs.cu", 46)
    t = real_index.trace("F.gelu(torch.randn(1024, 1024), approximate='tanh')", undefines=["USE_MACA"])
    hop = next(h for h in t.main_chain() if h.file == CUDA + "ActivationGeluKernel.cu" and h.layer == "cuda")
    assert hop.line == 24
    assert next(c for c in t.to_dict()["choices"] if c["hop"] == hop.id)["settled"] is True
    assert _end(t) == ("__global__ at::native::vectorized_elementwise_kernel", CUDA + "CUDALoops.cuh", 63)


def test_the_inputs_left_after_a_cpu_scalar_is_removed_pick_the_functor(real_index):
    """The fork's opmath_symmetric_gpu_kernel_with_scalars_arity3 (BinaryMulKernel.cu:22) removes a CPU scalar
    operand (`iter.remove_operand(2)` under `iter.is_cpu_scalar(2)`, :48-50), then `if (iter.ninputs() == 2)`
    (:53): x * 2.0 leaves one input, so the AUnaryFunctor launch (:57), what an H200 ran for this call; x * y keeps
    two, the BinaryFunctor launch (:54). Each a settled choice."""
    mul = CUDA + "BinaryMulKernel.cu"
    for call, line in (("torch.mul(torch.randn(1024, 1024), 2.0)", 57),
                       ("torch.mul(torch.randn(1024, 1024), torch.randn(1024, 1024))", 54)):
        t = real_index.trace(call, undefines=["USE_MACA"])
        hop = next(h for h in t.main_chain() if h.file == mul and h.layer == "cuda" and h.line in (54, 57))
        assert hop.line == line, call
        assert next(c for c in t.to_dict()["choices"] if c["hop"] == hop.id)["settled"] is True


def test_a_python_number_is_a_cpu_scalar_of_a_factory_made_iterator(real_index_1_8):
    """1.8's mul builds `TensorIterator::binary_op(result, self, other)` itself (BinaryOps.cpp:346); mul_kernel_cuda
    (BinaryMulDivKernel.cu:171) tests `!isIntegralType(...) && (iter.is_cpu_scalar(1) || iter.is_cpu_scalar(2))`
    (:172-173): for x * 2.0 it holds, gpu_kernel with MulScalarFunctor (:183); for two tensors the else's
    gpu_kernel_with_scalars (:188), then its `else` gpu_kernel (Loops.cuh:169), not the scalar sides (:163, :167)."""
    t = real_index_1_8.trace("torch.mul(torch.randn(1024, 1024), 2.0)")
    mul = CUDA + "BinaryMulDivKernel.cu"
    assert [(h.name, h.line) for h in t.main_chain() if h.file == mul and h.layer == "cuda"] == [("gpu_kernel", 183)]
    both = real_index_1_8.trace("torch.mul(torch.randn(1024, 1024), torch.randn(1024, 1024))")
    assert [(h.name, h.file, h.line) for h in both.main_chain() if h.layer == "cuda"][:2] == [
        ("gpu_kernel_with_scalars", mul, 188), ("gpu_kernel", CUDA + "Loops.cuh", 169)]
    assert all(c["settled"] for c in both.to_dict()["choices"] if c["file"] in (mul, CUDA + "Loops.cuh"))


def test_a_flag_a_loop_sets_is_read_by_running_the_loop(real_index):
    """constant_pad_nd (PadNd.cpp:29) sets `all_pads_non_positive` in a loop over the padded dims (:44-59): for
    F.pad's (1, 1, 1, 1) a pad is positive, so `if (all_pads_non_positive)` (:63, return c_input.clone()) is false
    and the chain takes `c_output.copy_(c_input)` (:105) as settled, after `output.fill_(value)` (:93), which runs
    before it in sequence (not another way). F.pad with (0, 0, 0, 0) takes the clone."""
    pad = "aten/src/ATen/native/PadNd.cpp"
    t = real_index.trace("F.pad(torch.randn(8, 16, 32, 32), (1, 1, 1, 1))", undefines=["USE_MACA"])
    copy = next(h for h in t.main_chain() if h.file == pad and h.line == 105)
    assert copy.name == "c_output.copy_"
    c = next(c for c in t.to_dict()["choices"] if c["hop"] == copy.id)
    assert c["settled"] is True
    assert [(t.hops[o["hop"]].line, [(x["line"], x["assumed"]) for x in o["conditions"]]) for o in c["options"]] == [
        (105, []), (64, [(63, False)])]
    assert [(t.hops[s["hop"]].name, s["order"]) for s in c["sequence"]] == [("output.fill_", "before")]
    none = real_index.trace("F.pad(torch.randn(8, 16, 32, 32), (0, 0, 0, 0))", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in none.main_chain() if h.file == pad][-1] == ("c_input.clone", 64)


def test_an_op_reserved_for_a_call_the_values_rule_out_is_walked_where_the_default_path_calls_it(real_index):
    """_convolution_mode_symint (Convolution.cpp:1061) calls at::convolution_symint itself (:1073) under
    `not (padding == "same")`, and convolution_same (:996), called under `padding == "same"` (:1072), calls it too
    (:1037, `if (symmetric_padding)`). For padding='same' the first call is ruled out, so the op is walked at the
    second: the chain goes on through convolution_same's call to cuDNN (cudnnBackendExecute, cudnn/Conv_v8.cpp:400,
    what the H100 ran for this call), not into the zero-padded copy of the asymmetric case (:1055)."""
    t = real_index.trace(f"F.conv2d({X}, torch.randn(16, 16, 3, 3), padding='same')", undefines=["USE_MACA"])
    conv = "aten/src/ATen/native/Convolution.cpp"
    assert [(h.name, h.line) for h in t.main_chain() if h.file == conv][:3] == [
        ("at::native::conv2d_padding_symint", 1093), ("at::_convolution_mode_symint", 1102),
        ("at::native::_convolution_mode_symint", 1061)]
    assert [(h.name, h.line) for h in t.main_chain() if h.file == conv][3:5] == [
        ("at::native::convolution_same", 996), ("at::convolution_symint", 1037)]
    assert _end(t) == ("cudnnBackendExecute", "aten/src/ATen/native/cudnn/Conv_v8.cpp", 400)


def test_calls_read_hop_by_hop_without_tuning_for_them(real_index):
    """Read against the source on 2026-12-06, no rule written for them. A 1-d float16 cumsum: scan_dim's
    `self.numel() == self.size(dim)` (ScanUtils.cuh:452) holds, so cub's inclusive_scan (:451), then
    DeviceScan::InclusiveScan (cuda/cub.cuh:250), the `!CUB_SUPPORTS_FUTURE_VALUE()` side ruled out by the build.
    avg_pool2d with ceil_mode (which sizes the output only): the contiguous case's launch of
    avg_pool2d_out_cuda_frame (AveragePool2d.cu:331, __global__ at :33), not the ChannelsLast one (:305)."""
    scan = real_index.trace("torch.cumsum(torch.randn(1024, dtype=torch.float16), 0)", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in scan.main_chain()[-3:]] == [
        ("cuda::cub::inclusive_scan", 451), ("at::cuda::cub::inclusive_scan", 235),
        ("cub::DeviceScan::InclusiveScan", 250)]
    pool = real_index.trace(f"F.avg_pool2d({X}, 3, stride=2, ceil_mode=True)", undefines=["USE_MACA"])
    assert [(h.file, h.line) for h in pool.main_chain()[-2:]] == [
        (CUDA + "AveragePool2d.cu", 331), (CUDA + "AveragePool2d.cu", 33)]
