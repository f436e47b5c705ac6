"""Where the inputs leave open which kernel runs, on the real 2.4 tree: a launcher's switch on a number of dimensions
ends the main chain, and a copy into a view a body narrows is walked as strided (each file:line read in the
source)."""
from __future__ import annotations

MACA = "aten/src/ATen/native/cuda/maca_kernels/"


def _end(t) -> tuple[str, str, int]:
    h = t.main_chain()[-1]
    return h.name, h.file, h.line


def test_the_fork_s_strided_launcher_switch_on_ndim_ends_f_glu(real_index):
    """F.glu halves its input with two narrow()s (GatedLinearUnit.cpp:22), so its iterator is strided. On the
    fork's build glu_kernel's gpu_kernel_maca_arity2 reaches gpu_kernel_impl_maca_arity2 (CUDALoops_maca_arity2.cuh
    :5945), whose non-contiguous side is `if (ndim == 1)` (:5984), `else if (ndim == 2)` ... each with its own
    kernels: the chain stops there (the expert's end). Stock CUDA (-U USE_MACA) has no such switch: gpu_kernel ->
    launch_legacy_kernel -> elementwise_kernel (CUDALoops.cuh:292)."""
    t = real_index.trace("F.glu")
    assert _end(t) == ("gpu_kernel_impl_maca_arity2", MACA + "CUDALoops_maca_arity2.cuh", 5945)
    stop = t.to_dict()["open"][-1]
    assert (stop["condition"], stop["condition_file"], stop["condition_line"]) == (
        "ndim == 1", MACA + "CUDALoops_maca_arity2.cuh", 5984)
    names = {t.hops[o["end"]].name for o in stop["options"] if o["end"] is not None}
    assert {"__global__ elementwise_kernel_1_2", "__global__ elementwise_kernel_2_2"} <= names
    stock = real_index.trace("F.glu", undefines=["USE_MACA"])
    assert _end(stock) == ("__global__ at::native::elementwise_kernel", "aten/src/ATen/native/cuda/CUDALoops.cuh",
                           292)


def test_a_copy_into_a_view_narrowed_under_an_open_test_reads_its_contiguity_as_open(real_index):
    """F.pad's default mode, constant: constant_pad_nd (PadNd.cpp:29) narrows c_output inside a loop's `if
    (pad[pad_idx] > 0)` (:98-99), then `c_output.copy_(c_input)` (:105). The copy's iterator may be strided, so
    gpu_kernel_impl_maca_arity1_copy's `if (contiguous)` (CUDALoops_copy.cuh:4123; Copy.cu:159 calls it with no
    #if) is open, and its other side switches on ndim (:4127): the chain ends at the launcher (:4094) on both
    builds, as the expert's does."""
    for undefines in ([], ["USE_MACA"]):
        t = real_index.trace("F.pad", undefines=undefines)
        chain = [(h.file, h.line) for h in t.main_chain()]
        assert ("aten/src/ATen/native/PadNd.cpp", 105) in chain
        assert _end(t) == ("at::native::gpu_kernel_impl_maca_arity1_copy", MACA + "CUDALoops_copy.cuh", 4094)
        launcher = t.main_chain()[-1]
        below = [h for h in t.hops if h.parent == launcher.id]
        contiguous = [c for h in below for c in h.conditions if c.text == "iter.is_contiguous()"]
        assert contiguous and all(c.assumed is None for c in contiguous)
        stop = t.to_dict()["open"][-1]
        assert (stop["condition"], stop["condition_line"]) == ("ndim == 1", 4127)


def test_a_special_shape_ranks_after_the_general_way_before_names_do(real_index):
    """The fork's gpu_index_kernel (IndexKernel.cu:64) launches a kernel per `num_indices == N && iter.ndim() == M`
    (:139 on) before its general launch_kernel: each pins two values (a special shape), so index_put_ by name
    ends at the general index_elementwise_kernel (IndexKernel.cu:33), although launch_kernel_index_2_1 and its
    kernel are named like the op once more."""
    t = real_index.trace("torch.Tensor.index_put_")
    assert _end(t) == ("__global__ at::native::index_elementwise_kernel", "aten/src/ATen/native/cuda/IndexKernel.cu",
                       33)
    assert ("aten/src/ATen/native/cuda/IndexKernel.cu", 64) in [(h.file, h.line) for h in t.main_chain()]


def test_an_op_called_with_a_view_its_caller_made_copies_a_strided_source(real_index):
    """torch.repeat_interleave with an int repeats binds repeat_interleave.self_int, whose kernel expands its input
    (`input = input.expand_symint(expand_shape)`, Repeat.cpp:112) and returns `input.clone(...)` (:123). clone gets
    that view: its `self.copy_(src)` (TensorFactories.cpp:1766) copies a strided source, so the fork's copy launcher
    (gpu_kernel_impl_maca_arity1_copy, CUDALoops_copy.cuh:4094; Copy.cu:159 calls it with no #if) reads
    `iter.is_contiguous()` (:4123) false and switches on ndim (:4127): the chain ends at the launcher on both
    builds, the expert's end. Before, clone's copy was walked as contiguous, to the vectorized launch."""
    for undefines in ([], ["USE_MACA"]):
        t = real_index.trace("torch.repeat_interleave(torch.randn(8, 16), 2)", undefines=undefines)
        chain = [(h.file, h.line) for h in t.main_chain()]
        assert [p for p in chain if p[0] != "aten/src/ATen/native/native_functions.yaml"][:3] == [
            ("aten/src/ATen/native/Repeat.cpp", 101), ("aten/src/ATen/native/Repeat.cpp", 123),
            ("aten/src/ATen/native/TensorFactories.cpp", 1748)]
        assert ("aten/src/ATen/native/TensorFactories.cpp", 1766) in chain
        assert _end(t) == ("at::native::gpu_kernel_impl_maca_arity1_copy", MACA + "CUDALoops_copy.cuh", 4094)
        launcher = t.main_chain()[-1]
        below = [h.name for h in t.hops if h.parent == launcher.id]
        assert below and not [n for n in below if "vectorized" in n]  # the contiguous side is ruled out
        assert (t.to_dict()["open"][-1]["condition"], t.to_dict()["open"][-1]["condition_line"]) == ("ndim == 1", 4127)


def test_a_factory_traces_with_the_dtype_its_schema_gives(real_index):
    """torch.randperm's schemas default `ScalarType? dtype=long` (native_functions.yaml:4749): a trace that states no
    dtype is of an int64 tensor, as PyTorch makes; a stated dtype= wins."""
    assert real_index.trace("torch.randperm").dtype == "int64"
    assert real_index.trace("torch.randperm(1024, device='cuda')").dtype == "int64"
    assert real_index.trace("torch.randperm(1024, dtype=torch.float32)").dtype == "float32"
    assert real_index.trace("torch.exp").dtype == "float32"


def test_f_interpolate_by_name_stops_at_its_switch_on_the_input_s_rank(real_index):
    """F.interpolate's default mode is "nearest"; which kernel runs is `input.dim() == 3 and mode == "nearest"`
    (functional.py:4047), `== 4` (:4049), `== 5` (:4051): a name does not say the input's rank, so the main chain
    stops at interpolate (:3878), naming each way's kernel. Each way's upsample template tests a local holding the
    input's suggested memory format (`memory_format == at::MemoryFormat::ChannelsLast && ...`), read as the
    input's, Contiguous: the 2-D way's kernel is upsample_nearest2d_out_frame, not the NHWC one. A 4-D input
    settles it: upsample_nearest2d (:4050) -> upsample_nearest2d_out_frame (UpSampleNearest2d.cu:41), the expert's
    end for 4-D."""
    for undefines in ([], ["USE_MACA"]):
        t = real_index.trace("F.interpolate", undefines=undefines)
        assert _end(t) == ("torch.nn.functional.interpolate", "torch/nn/functional.py", 3878)
        stop = t.to_dict()["open"][-1]
        assert (stop["condition"], stop["condition_line"]) == ('input.dim() == 3 and mode == "nearest"', 4047)
        assert [t.hops[o["end"]].name for o in stop["options"]] == [
            f"__global__ at::native::upsample_nearest{n}d_out_frame" for n in (1, 2, 3)]
        called = real_index.trace("F.interpolate(torch.randn(8, 16, 32, 32), scale_factor=2)", undefines=undefines)
        assert ("torch/nn/functional.py", 4050) in [(h.file, h.line) for h in called.main_chain()]
        assert _end(called) == ("__global__ at::native::upsample_nearest2d_out_frame",
                                "aten/src/ATen/native/cuda/UpSampleNearest2d.cu", 41)


def test_a_python_def_reads_the_values_the_def_calling_it_passes(real_index):
    """F.upsample_bilinear calls `interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)`
    (functional.py:4216): interpolate's tests read mode="bilinear", so of its rank switch only `input.dim() == 4
    and mode == "bilinear"` is left, and the chain goes upsample_bilinear2d (:4087) ->
    upsample_bilinear2d_out_frame (UpSampleBilinear2d.cu:35). Before, interpolate was read with its own default,
    "nearest", and the chain ended at the 1-D nearest kernel."""
    t = real_index.trace("F.upsample_bilinear", undefines=["USE_MACA"])
    assert [(h.file, h.line) for h in t.main_chain()][:3] == [
        ("torch/nn/functional.py", 4191), ("torch/nn/functional.py", 3878), ("torch/nn/functional.py", 4087)]
    assert _end(t) == ("__global__ at::native::upsample_bilinear2d_out_frame",
                       "aten/src/ATen/native/cuda/UpSampleBilinear2d.cu", 35)
