"""Readable traces and limits that speak on a real PyTorch tree (OPINDEX_REAL_CHECKOUT, e.g. the 2.4 tree; skipped
without it): the default text of the largest traces fits a screen, the main chain ends where the op's work runs,
--depth only adds, absent claims say what opindex could not know, --backward shows the backward, and bottom-up
fan-in is grouped, not cut."""
from __future__ import annotations

import re

import pytest

SCREEN_TRACES = ("nn.LSTM", "F.scaled_dot_product_attention", "nn.MultiheadAttention")
DEPTH_TRACES = ("nn.LSTM", "F.scaled_dot_product_attention", "nn.MultiheadAttention", "F.layer_norm", "relu",
                "F.interpolate", "F.conv2d", "torch.mm")


@pytest.mark.parametrize("name", SCREEN_TRACES)
def test_the_default_text_fits_a_screen_and_accounts_for_every_hop(real_index, name):
    t = real_index.trace(name)
    lines = t.to_text().splitlines()
    assert len(lines) <= 60, len(lines)
    # no hop cap cut it; a fan-out cap (a few of many overloads followed) is said in the text, within the 60 lines
    assert set(t.truncated) <= {"fan_out", "reason"}
    assert bool(t.truncated) == any(line.startswith("TRUNCATED: ") for line in lines)
    assert lines[0].endswith(f"; {len(t.hops)} hops)")
    assert lines[-1].startswith(f"Expand: --tree (all {len(t.hops)} hops)")
    folded = [line for line in lines if line.startswith("  … and ")]
    assert all(re.fullmatch(r"  … and \d+ more branches \(\d+ hops\): --tree shows them", line) for line in folded)


def _shows_every_hop(t, lines: list[str]) -> bool:
    """Each main-chain hop's location is shown, in order: its file:line, or (a chain whose lines wrap) `:line`
    where the hop above is in the same file."""
    text, at = "\n".join(lines), 0
    for i, h in enumerate(t.main_chain()):
        same = i and h.file == t.main_chain()[i - 1].file
        found = [text.find(w, at) for w in ([f"{h.file}:{h.line}"] + ([f" :{h.line}"] if same else []))]
        found = [f for f in found if f >= 0]
        if not found:
            return False
        at = min(found)
    return True


@pytest.mark.parametrize("name", SCREEN_TRACES + ("F.conv2d", "F.layer_norm"))
def test_at_100_columns_the_default_text_fits_the_screen_with_its_main_chain_whole(real_index, name):
    """Counted in wrapped lines (issue 29: 69-98 lines before); every main-chain hop keeps its location."""
    t = real_index.trace(name)
    lines = t.to_text(width=100).splitlines()
    assert len(lines) <= 60 and all(len(line) <= 100 for line in lines), len(lines)
    assert _shows_every_hop(t, lines)
    assert bool(t.truncated) == any(line.startswith("TRUNCATED: ") for line in lines)
    assert lines[-1].startswith(f"Expand: --tree (all {len(t.hops)} hops)")


def test_at_100_columns_the_lstm_chain_marks_its_choices_on_their_lines(real_index):
    """nn.LSTM's choices (RNN.cpp:1431 lstm_cudnn_stub, the stub call; cudnn/RNN.cpp:1596 cudnnRNNForward, in
    AT_CUDNN_CHECK) in the short form where the long one would not fit the name column (the last less padded to
    fit)."""
    lines = real_index.trace("nn.LSTM").to_text(width=100).splitlines()
    assert "  7  stub         lstm_cudnn_stub                    aten/src/ATen/native/RNN.cpp:1431  ◆2 ranked" \
        in lines
    assert " 15  library      cudnnRNNForward                 aten/src/ATen/native/cudnn/RNN.cpp:1596  ◆6 ranked" \
        in lines


def test_at_100_columns_a_long_chain_fits_the_screen(real_index):
    """nn.MultiheadAttention: 19 hops. With need_weights=True (the default), native_multi_head_attention_cuda's SDPA
    branch (attention.cu:554, `... && dim_per_head % 8 == 0 && !need_weights`) is ruled out: its math path ends in
    the output projection, transform0213_gemm_nt_bias (called at attention.cu:670), whose addmm runs cublasSgemm
    (CUDABlas.cpp:816). Long names wrap to two lines at 100 columns, and the text stays within 60 lines."""
    t = real_index.trace("nn.MultiheadAttention")
    lines = t.to_text(width=100).splitlines()
    assert len(t.main_chain()) == 19 and len(lines) <= 60
    assert "  5  dispatch     CUDA: native_multi_head_attention_cuda" in lines
    assert "       aten/src/ATen/native/native_functions.yaml:14680" in lines
    assert " 19  library      cublasSgemm                                    aten/src/ATen/cuda/CUDABlas.cpp:816" \
        in lines
    sdpa = next(h for h in t.hops if h.name == "at::scaled_dot_product_attention" and h.line == 585)
    # need_weights=True rules out :554; the backend test at :572 (a chooser's result) stays undecided
    assert [(c.line, c.assumed) for c in sdpa.conditions] == [(554, False), (572, None)]
    gemm = next(h for h in t.main_chain() if h.name == "at::native::transform0213_gemm_nt_bias")
    assert gemm.called_at == "aten/src/ATen/native/transformers/cuda/attention.cu:670"


def _chain_end(ix, name: str):
    return ix.trace(name).main_chain()[-1]


def test_the_main_chain_ends_where_the_op_s_work_runs(real_index):
    lstm = _chain_end(real_index, "nn.LSTM")
    assert lstm.layer == "library" and lstm.name.startswith("cudnnRNNForward")  # not cudnnSetStream
    # a fused attention kernel (for float32 the memory-efficient one: flash needs fp16/bf16), not the math
    # fallback; sdp's backend is chosen at run time, and the choice says it was ranked; the kernel_fn launch
    # (attention.cu:1289) runs what dispatch_cutlassF hands it: for an sm_90 GPU the f32 sm80 kernel
    t = real_index.trace("F.scaled_dot_product_attention")
    end = t.main_chain()[-1]
    assert (end.file, end.kernel) == (
        "aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/cutlassF_f32_aligned.cu",
        "fmha_cutlassF_f32_aligned_64x64_rf_sm80")
    assert "aten::_scaled_dot_product_efficient_attention" in [h.name for h in t.main_chain()]
    # (convert_boolean_attn_mask, attention.cpp:664, whose `new_attn_mask.masked_fill_(...)` reaches device code
    # too, runs before the `switch (backend)` each time: work done before the chain's, not a seventh way)
    choice = next(c for c in t.to_dict()["choices"] if c["ways"] == 6 and not c["settled"])
    assert [(t.hops[s["hop"]].name, t.hops[s["hop"]].called_at, s["order"]) for s in choice["sequence"]] == [
        ("at::native::convert_boolean_attn_mask", "aten/src/ATen/native/transformers/attention.cpp:664", "before")]
    # nn.MultiheadAttention's default need_weights=True rules the fused kernels out: its output projection's gemm
    assert _chain_end(real_index, "nn.MultiheadAttention").name == "cublasSgemm"
    assert "vectorized_layer_norm_kernel" in _chain_end(real_index, "F.layer_norm").name
    assert _chain_end(real_index, "F.conv2d").layer == "library"  # cuDNN before the own fallback kernels
    # an op's own kernels before the shared elementwise machinery of a helper (the floor of a size, a masked_fill_);
    # a 4-D input, since by name F.interpolate stops at its switch on the input's rank (test_trace_switch_real.py)
    assert "upsample" in _chain_end(real_index, "F.interpolate(torch.randn(8, 16, 32, 32), scale_factor=2)").name
    assert re.search(r"SoftMax|softmax|nll_loss", _chain_end(real_index, "F.cross_entropy").name)


def test_the_folded_launch_of_relu_names_its_kernels(real_index):
    """relu (Activation.cpp:504) is `at::clamp_min(self, 0)` (:506): its main chain runs clamp_min's CUDA kernel,
    launch_clamp_scalar (cuda/TensorCompare.cu:59), whose `gpu_kernel_maca_arity1(iter, ...)` launch (:65) is folded
    to one line; its launcher reaches CUDALoops.cuh's launch_vectorized_kernel, shown first under another op: the
    folded line names the kernels of what it stands for."""
    text = real_index.trace("F.relu").to_text()
    line = next(x for x in text.splitlines() if "TensorIterator launch:" in x and "TensorCompare.cu:65" in x)
    assert "__global__ vectorized_elementwise_kernel" in line, line


def test_backend_choosers_are_shown_where_they_choose(real_index):
    """_convolution (Convolution.cpp:1577) sets `ConvBackend backend = _select_conv_backend(...)` (defined :1207) and
    switches on it at :1586; _batch_norm_impl_index (Normalization.cpp:584) sets `BatchNormBackend backend =
    _select_batch_norm_backend(...)` (:487) and tests `backend == BatchNormBackend::Cudnn` at :586; dropout calls
    is_fused_kernel_acceptable (:43) in an if condition at :138. The chooser
    runs no device code; the trace shows it under the function that branches, with where the branch is."""
    conv = real_index.trace("F.conv2d")
    [hop] = [h for h in conv.hops if h.kind == "chooser" and h.name == "at::native::_select_conv_backend"]
    assert (hop.file, hop.line, hop.called_at) == ("aten/src/ATen/native/Convolution.cpp", 1207,
                                                  "aten/src/ATen/native/Convolution.cpp:1577")
    parent = next(h for h in conv.hops if h.id == hop.parent)
    assert (parent.name, parent.line) == ("at::native::_convolution", 1521)
    assert "switch (backend) at aten/src/ATen/native/Convolution.cpp:1586" in hop.detail
    text = real_index.trace("F.batch_norm").to_text()
    line = next(x for x in text.splitlines() if "_select_batch_norm_backend" in x)
    assert "Normalization.cpp:487" in line and "(chooses the path: backend == BatchNormBackend::... at :586)" in line
    # dropout (Dropout.cpp:138): `if (input.is_nested() || (train && is_fused_kernel_acceptable(input, p)))`
    [fused] = [h for h in real_index.trace("F.dropout").hops if h.kind == "chooser" and "fused" in h.name]
    assert (fused.name, fused.file, fused.line, fused.called_at) == (
        "at::native::is_fused_kernel_acceptable", "aten/src/ATen/native/Dropout.cpp", 43,
        "aten/src/ATen/native/Dropout.cpp:138")
    # topk: RUN_MB's `if (should_use_multiblock(numInputSlices, sliceSize))` (TensorTopK.cu:820, a #define in
    # launch_gather_topk_kernel), expanded where RUN_T is used at :897
    topk = [h for h in real_index.trace("torch.topk").hops if h.kind == "chooser" and "multiblock" in h.name]
    assert [(h.file, h.line, h.called_at) for h in topk][:1] == [
        ("aten/src/ATen/native/cuda/TensorTopK.cu", 773, "aten/src/ATen/native/cuda/TensorTopK.cu:897")]


@pytest.mark.parametrize("name", DEPTH_TRACES)
def test_depth_only_adds(real_index, name):
    previous = None
    for depth in (0, 1, 2):
        hops = {(h.layer, h.name, h.file, h.line) for h in real_index.trace(name, depth=depth).hops}
        if previous is not None:
            assert previous <= hops, (depth, sorted(previous - hops, key=str)[:5])
        previous = hops


def test_absent_claims_say_what_opindex_could_not_know(real_index):
    # floor_out is defined by CREATE_UNARY_TORCH_IMPL_INTEGER_NO_OP_FUNC(floor_out, floor_stub): found, or if an
    # index misses it, said to be "not found by opindex" and why, never absent from the checkout
    t = real_index.trace("F.interpolate")
    floor = [h for h in t.hops if "floor_out" in h.name]
    assert floor
    assert all("found by opindex" in h.name and "macro" in h.name for h in floor if h.absent)
    assert not [h.name for h in t.hops if h.absent and "in this checkout" in h.name]


def test_backward_flag_shows_the_backward(real_index):
    plain = real_index.trace("F.layer_norm").to_text()
    backward = real_index.trace("F.layer_norm", backward=True).to_text()
    assert plain != backward
    assert re.search(r"→ native +aten::native_layer_norm_backward", backward)


def test_bottom_up_fan_in_is_grouped_not_cut(real_index):
    cut = real_index.trace("vectorized_elementwise_kernel", up=True)
    assert cut.truncated["callers"] == 6 and "--limit 0" in cut.truncated["reason"]
    grouped = [h for h in cut.hops if h.kind == "grouped"]
    assert grouped and all(h.detail.startswith("not walked (--limit): ") for h in grouped)
    for t in (cut, real_index.trace("vectorized_elementwise_kernel", up=True, limit=0)):
        seen = [(h.parent, h.name, h.file, h.line) for h in t.hops]
        assert len(seen) == len(set(seen))  # no caller listed twice under one hop
    whole = real_index.trace("vectorized_elementwise_kernel", up=True, limit=0)
    assert whole.truncated == {}
    # every caller of gpu_kernel the full walk reaches is named in the grouped trace, walked or grouped
    gpu_kernel = next(h for h in whole.hops if h.name == "at::native::gpu_kernel")
    callers = {h.name for h in whole.children(gpu_kernel.id)}
    cut_kernel = next(h for h in cut.hops if h.name == "at::native::gpu_kernel")
    named = " ".join(h.name + " " + h.detail for h in cut.children(cut_kernel.id))
    assert all(c in named for c in callers)
    text = cut.to_text().splitlines()
    assert len(text) <= 60
    assert any(re.search(r"\d+ more callers in \d+ files, grouped by file", line) for line in text)


def test_the_backward_of_a_composite_lists_the_formulas_of_the_ops_it_calls(real_index):
    # cross_entropy_loss is CompositeImplicitAutograd: its backward is that of _log_softmax and nll_loss_forward
    # (derivatives.yaml:2112, :2019), both shown, though the main chain follows nll_loss only
    text = real_index.trace("F.cross_entropy").to_text()
    back = text.split("\nBackward\n", 1)[1].split("\n\nAlso in the tree", 1)[0]
    assert re.search(r"derivatives.yaml: _log_softmax +tools/autograd/derivatives.yaml:2112", back)
    assert re.search(r"derivatives.yaml: nll_loss_forward +tools/autograd/derivatives.yaml:2019", back)
    # embedding_bag (EmbeddingBag.cpp:1241) calls _embedding_bag_forward_only (:1262) or _embedding_bag (:1266), one
    # kernel for both: the second op call leads to that kernel too (shown above), and _embedding_bag's formula
    # (derivatives.yaml:1990) is embedding_bag's backward
    t = real_index.trace("F.embedding_bag")
    call = [h for h in t.hops if (h.file, h.line, h.kind) == ("aten/src/ATen/native/EmbeddingBag.cpp", 1266, "calls_op")]
    assert call and "leads to no device code" not in call[0].detail
    assert re.search(r"derivatives.yaml: _embedding_bag +tools/autograd/derivatives.yaml:1990", t.to_text())


def test_choices_say_what_the_call_settled_and_what_it_did_not(real_index):
    """F.conv2d in float32 (read from Convolution.cpp): at :962 `if (at::isComplexType(input_.scalar_type()))`
    takes complex_convolution only for complex inputs, so the main chain's at::convolution_symint (:965) is
    settled by the dtype; at _convolution's `switch (backend)` the backend comes from select_conv_backend at run
    time, so the choice among cudnn_convolution (:1605), cudnn_convolution_transpose (:1617) and four more is the
    ranking's, and the trace says so."""
    t = real_index.trace("F.conv2d")
    hops = t.hops
    found = {(hops[c["hop"]].name, hops[c["hop"]].line): c for c in t.to_dict()["choices"]}
    settled = found[("at::convolution_symint", 965)]
    assert settled["settled"] is True and settled["ways"] == 2
    assert [(hops[o].name, hops[o].file, hops[o].line) for o in settled["others"]] == [
        ("at::native::complex_convolution", "aten/src/ATen/native/Convolution.cpp", 850)]
    chosen = next(c for (name, line), c in found.items() if hops[c["hop"]].file == "aten/src/ATen/native/Convolution.cpp"
                  and line in (1605, 1617))
    assert chosen["settled"] is False and chosen["ways"] == 6
    # (the bias's `output.add_(...)` under `if (bias.defined())`, :1609, runs after the cuDNN call: no seventh way)
    assert [(hops[s["hop"]].line, s["order"], [k["text"] for k in s["conditions"]]) for s in chosen["sequence"]] == [
        (1609, "after", ["bias.defined()"])]
    assert ("at::cudnn_convolution", 1605) in {(hops[o].name, hops[o].line) for o in chosen["others"]} | {
        (hops[chosen["hop"]].name, hops[chosen["hop"]].line)}
    text = t.to_text()
    assert re.search(r"at::convolution_symint +aten/src/ATen/native/Convolution\.cpp:965  ◆ default of 2\n", text)
    assert re.search(r"Convolution\.cpp:16(05|17)  ◆ default of 6, ranked\n", text)


def test_a_switch_on_the_input_s_memory_format_takes_the_contiguous_case(real_index):
    """F.max_pool2d on a tensor made the default way (contiguous): DilatedMaxPool2d.cu:332 sets `memory_format =
    input_.suggest_memory_format()`, :360 switches on it; `case MemoryFormat::ChannelsLast` (:361) launches the
    nhwc kernels (:396 under the fork's USE_MACA, :409), `case MemoryFormat::Contiguous` (:427) launches
    max_pool_forward_nchw at :430, whose __global__ is at :50."""
    t = real_index.trace("F.max_pool2d")
    end = t.main_chain()[-1]
    assert (end.name, end.file, end.line) == (
        "__global__ at::native::max_pool_forward_nchw", "aten/src/ATen/native/cuda/DilatedMaxPool2d.cu", 50)
    nhwc = [h for h in t.hops if h.kind == "launch" and h.line in (396, 409)]
    assert len(nhwc) == 2
    for h in nhwc:
        assert [(c.kind, c.text, c.line, c.assumed) for c in h.conditions if c.kind == "switch"] == [
            ("switch", "input_.suggest_memory_format() == MemoryFormat::ChannelsLast", 361, False)]


def test_the_input_s_dtype_picks_the_explicit_specialization_and_the_blas_setting_its_library(real_index):
    """torch.bmm in float32 (read from the 2.4 tree): baddbmm_out_cuda_impl calls `at::cuda::blas::bgemm<scalar_t>`
    at Blas.cpp:499 (its `if (num_batches == 1)` gemm at :490 is the one-batch special case); of bgemm's explicit
    specializations the float one is CUDABlas.cpp:729, whose bgemm_internal<float> (:608) tests
    `blasPreferredBackend() == BlasBackend::Cublaslt` (cuBLAS by default) and calls bgemm_internal_cublas<float>
    (:475), which calls cublasSgemmStridedBatched at :483."""
    t = real_index.trace("torch.bmm")
    chain = [(h.name, h.file.rsplit("/", 1)[-1], h.line) for h in t.main_chain()[-5:]]
    assert chain == [("at::cuda::blas::bgemm", "Blas.cpp", 499), ("at::cuda::blas::bgemm", "CUDABlas.cpp", 729),
                     ("at::cuda::blas::bgemm_internal", "CUDABlas.cpp", 608),
                     ("at::cuda::blas::bgemm_internal_cublas", "CUDABlas.cpp", 475),
                     ("cublasSgemmStridedBatched", "CUDABlas.cpp", 483)]
    double = [h for h in t.hops if h.name == "at::cuda::blas::bgemm" and h.file.endswith("CUDABlas.cpp")
              and any(c.text == "scalar_t is float64" and c.assumed is False for c in h.conditions)]
    assert len(double) == 1


def test_a_branch_the_source_marks_unlikely_is_not_the_main_chain(real_index):
    """F.layer_norm on the fork's own build (USE_MACA, required by the checkout): launch_vectorized_layer_norm_kernel
    (layer_norm_kernel.cu:759) keeps the stock vectorized_layer_norm_kernel launch (:782) under `if
    (maca_unlikely(disable_vectorized_layernorm_opt))` (:776); its else block launches the fork's kernels, the
    wave1 one first (:807, its __global__ at maca_kernels/layer_norm_kernel_opt.cuh:452)."""
    t = real_index.trace("F.layer_norm")
    end = t.main_chain()[-1]
    assert (end.name, end.file, end.line) == ("__global__ at::native::layernorm::vectorized_layer_norm_kernel_opt_wave1",
                                              "aten/src/ATen/native/cuda/maca_kernels/layer_norm_kernel_opt.cuh", 452)
    stock = next(h for h in t.hops if h.kind == "launch" and h.line == 782)
    assert [(c.text, c.line, c.assumed) for c in stock.conditions if c.kind == "if"] == [
        ("maca_unlikely(disable_vectorized_layernorm_opt)", 776, False)]


def test_the_stock_build_walks_the_stock_launcher_of_a_vendor_ifdef(real_index):
    """CUDALoops.cuh defines launch_vectorized_kernel twice: the fork's under `#ifdef USE_MACA` (:174) and the stock
    one under its #else (:247), which launches vectorized_elementwise_kernel (:256; __global__ at :63). gpu_kernel_impl
    calls it at :404 under `if (contiguous)` after `bool contiguous = iter.is_contiguous();` (:399): a contiguous
    input. On a stock build (-U USE_MACA) torch.add's main chain ends there."""
    t = real_index.trace("torch.add", undefines=["USE_MACA"])
    chain = [(h.name, h.line) for h in t.main_chain() if h.file == "aten/src/ATen/native/cuda/CUDALoops.cuh"]
    assert chain[-3:] == [("at::native::launch_vectorized_kernel", 247),
                          ("vectorized_elementwise_kernel<4, func_t, array_t><<<grid, num_threads(), 0, stream>>>",
                           256), ("__global__ at::native::vectorized_elementwise_kernel", 63)]


def test_an_untuned_call_read_hop_by_hop_avg_pool2d(real_index):
    """F.avg_pool2d in float32 on a contiguous input, read from AveragePool2d.cu (2.4): structured_avg_pool2d_out_cuda
    (:249) sets `memory_format = input_.suggest_memory_format()` and switches on it (:302); `case
    MemoryFormat::ChannelsLast` (:303) launches the nhwc kernel (:305), `case MemoryFormat::Contiguous` (:330)
    launches avg_pool2d_out_cuda_frame (:331; __global__ at :33). Both run under `if (count != 0)` (:293), `count`
    being `safe_downcast<int32_t, int64_t>(output.numel())` (:286): an element count, not 0 for an input of the
    general case. `input_.contiguous(...)` (:284), a copy that runs only for a non-contiguous input, is made
    besides the work, not instead of it: no other way. So the choice is settled by the memory format."""
    t = real_index.trace("F.avg_pool2d")
    cu = "aten/src/ATen/native/cuda/AveragePool2d.cu"
    assert [(h.name, h.file, h.line) for h in t.main_chain()[-3:]] == [
        ("at::native::structured_avg_pool2d_out_cuda", cu, 249),
        ("avg_pool2d_out_cuda_frame<scalar_t, accscalar_t><<<num_blocks, num_threads, 0, "
         "at::cuda::getCurrentCUDAStream()>>>", cu, 331),
        ("__global__ at::native::avg_pool2d_out_cuda_frame", cu, 33)]
    [choice] = t.to_dict()["choices"]
    assert choice["settled"] is True and [(t.hops[o].line, [(c.line, c.assumed) for c in t.hops[o].conditions])
                                          for o in choice["others"]] == [(305, [(303, False)])]


def test_an_untuned_call_read_hop_by_hop_sigmoid_in_float16(real_index):
    """torch.sigmoid with --dtype float16 on the fork's build, read from UnarySpecialOpsKernel.cu (2.4):
    sigmoid_kernel_cuda (:124) takes the jiterator only under `if (at::isComplexType(common_dtype))` (:126, the call
    at :136): false for float16. Its floating branch calls gpu_kernel_maca_arity1 at :155 or :161 by
    `disable_sigmoid_opt`, a setting of the fork's environment the index cannot read: the choice says `ranked`. Both
    launch vectorized_elementwise_kernel_unary_opt: the overload its enable_if takes for Half (CUDALoops.cuh:129), not
    the `assert(0)` one at :121 it keeps for other types."""
    t = real_index.trace("torch.sigmoid", dtype="float16")
    cu = "aten/src/ATen/native/cuda/UnarySpecialOpsKernel.cu"
    chain = t.main_chain()
    end = chain[-1]
    assert (end.name, end.file, end.line) == ("__global__ at::native::vectorized_elementwise_kernel_unary_opt",
                                              "aten/src/ATen/native/cuda/CUDALoops.cuh", 129)
    [call] = [h for h in chain if h.file == cu and h.kind == "tensor_iterator"]
    assert call.line in (155, 161)
    jitted = next(h for h in t.hops if h.file == cu and h.line == 136)
    assert [(c.text, c.assumed) for c in jitted.conditions] == [("at::isComplexType(common_dtype)", False),
                                                                ("AT_USE_JITERATOR()", False)]
    choice = next(c for c in t.to_dict()["choices"] if c["hop"] == call.id)
    assert choice["settled"] is False


def test_a_fold_line_names_what_this_call_and_build_may_run(real_index):
    """torch.add on -U USE_MACA: the fork's `#ifdef USE_MACA` launch_vectorized_kernel (CUDALoops.cuh:174) and its
    vendor kernels are counted in the fold, not named; gpu_kernel_impl's launch_legacy_kernel (:411, under `if
    (!contiguous)`) and launch_unrolled_kernel (:423, dynamic casting) are ruled out for a contiguous float32
    input. The fork's own build names its vendor launchers."""
    stock = real_index.trace("torch.add", undefines=["USE_MACA"])
    [fold] = [line for line in stock.to_text(context=0).splitlines() if "TensorIterator launch:" in line]
    assert ("TensorIterator launch: gpu_kernel -> gpu_kernel_impl -> launch_vectorized_kernel -> __global__ "
            "vectorized_elementwise_kernel, unrolled_elementwise_kernel (") in fold
    fork = real_index.trace("torch.add")  # the fork's launch_vectorized_kernel launches its nullary_opt kernel first
    assert ("launch_vectorized_kernel -> __global__ vectorized_elementwise_kernel_nullary_opt, "
            "vectorized_elementwise_kernel, unrolled_elementwise_kernel (") in next(
        line for line in fork.to_text(context=0).splitlines() if "TensorIterator launch:" in line)


def test_a_choice_on_the_main_chain_says_what_decided_it(real_index):
    """Under a main-chain hop where the chain went one way of several, one short line: the test that rules the
    other way out (softmax's half-to-float fast path, SoftMax.cpp:455, needs a Half input: false for float32), or
    the test the inputs leave open (nll_loss_nd's `input_.dim() == 1 || input_.dim() == 2`, LossNLL.cpp:702: a
    name says no rank) and where each of its ways ends."""
    softmax = real_index.trace("F.softmax").to_text(context=0).splitlines()
    at = next(i for i, line in enumerate(softmax) if "at::_softmax" in line and "SoftMax.cpp:459" in line)
    assert softmax[at + 1] == ("       others need input_.is_cuda() && input_.scalar_type() == ScalarType::Half && "
                               "dtype == ScalarType::Float at SoftMax.cpp:455 (false here)")
    nll = real_index.trace("F.nll_loss").to_text(context=0).splitlines()
    at = next(i for i, line in enumerate(nll) if "at::nll_loss_symint" in line and "LossNLL.cpp:703" in line)
    # ... and, for an open one, the device code each way ends at, the chain's first: nll_loss's own 2-d reduce
    # kernel (Loss.cu), or nll_loss2d's kernel for reduction='mean' (NLLLoss2d.cu), not its no-reduce one
    assert nll[at + 1] == ("       open: input_.dim() == 1 || input_.dim() == 2 at LossNLL.cpp:702 -> "
                           "nll_loss_forward_reduce_cuda_kernel_2d; or nll_loss2d_forward_kernel")


def test_a_ranked_choice_no_test_parts_says_so(real_index_1_8):
    """1.8's THC_pointwiseApply2 (THCApply.cuh:335) launches kernelPointwiseApply2 in 12 ways, picked by a macro's
    switch on the tensors' dims that no condition row reads; the test every way shares, `if
    (!getApplyGrid(...)) return false;` (:361), holds (getApplyGrid returns true, :180), so it is not the open test.
    The line under the choice says nothing tells the ways apart, where the body is, and where they end."""
    lines = real_index_1_8.trace("torch.Tensor.masked_fill_").to_text(context=0).splitlines()
    at = next(i for i, line in enumerate(lines) if "kernelPointwiseApply2<Op, ScalarTypeA, ScalarTypeB, unsigned int, "
              "1, 1>" in line and "THCApply.cuh:447" in line and "◆ default of 12, ranked" in line)
    assert lines[at + 1] == ("       open: no test parts these 12 ways, ranked by the work each does (body at "
                             "THCApply.cuh:335) -> kernelPointwiseApply2; or vectorized_elementwise_kernel")


def test_up_from_a_kernel_tells_overloads_of_one_name_apart(real_index):
    """SoftMax.cpp defines three `at::native::log_softmax`: a static helper (:508), the kernel of log_softmax.int
    (:517, which calls at::_log_softmax at :521/:524) and of log_softmax.Dimname (:586, which calls the op
    at::log_softmax). Up from cunn_SoftMaxForward, through log_softmax's CUDA row, the composite caller is the
    overload that holds the call (:517), then its op and F.log_softmax's nn.LogSoftmax; the Dimname overload's
    `at::log_softmax(...)` is a call of the op's API, not of the helper."""
    t = real_index.trace("cunn_SoftMaxForward", undefines=["USE_MACA"])
    assert [(h.name, h.line) for h in t.main_chain()[3:]] == [
        ("at::native::structured_log_softmax_cuda_out", 1164), ("CUDA: log_softmax_cuda_out", 3683),
        ("aten::_log_softmax.out", 3679), ("at::native::log_softmax", 517), ("aten::log_softmax.int", 3664),
        ("torch.nn.functional.log_softmax: input.log_softmax", 1977),
        ("torch.nn.modules.activation.LogSoftmax", 1630)]
