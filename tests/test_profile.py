"""From a GPU profile to the source: kernel names as profilers print them, the Chrome trace reader, and the
attribution of kernels to an index (the sample checkout, and the PyTorch 2.4 tree when OPINDEX_REAL_CHECKOUT names
it). The profile in tests/data is our own measurement: one training step on an H200 with torch 2.11."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLE

from opindex.api import Index, build
from opindex.profile import demangle as kname
from opindex.profile.chrome import read_profile
from opindex.profile.kernel_name import itanium_demangle, parse_kernel_name

DATA = Path(__file__).parent / "data"
TRACE = DATA / "train_step_h200_torch2.11.json.gz"
ANON = "(anonymous namespace)"


def kernel_names() -> list[str]:
    """The kernel names of the fixture, as the profiler printed them."""
    events = json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"]
    return sorted({e["name"] for e in events if e.get("cat") == "kernel"})


def named(fragment: str, *more: str) -> str:
    """The one fixture kernel name containing every fragment."""
    hits = [n for n in kernel_names() if fragment in n and all(m in n for m in more)]
    assert len(hits) == 1, hits
    return hits[0]


# -- kernel names -------------------------------------------------------------------------------------------------
# (name fragments that pick one fixture kernel) -> the exact fields the parser must give
PARSED = {
    "elementwise with a functor": (
        ("vectorized_elementwise_kernel<4, at::native::FillFunctor<float>",),
        dict(kind="global", library=None, name="vectorized_elementwise_kernel", namespace="at::native",
             return_type="void", template_args=["4", "at::native::FillFunctor<float>", "std::array<char*, 1ul>"],
             params=["int", "at::native::FillFunctor<float>", "std::array<char*, 1ul>"],
             functors=["at::native::FillFunctor"], lambdas=[])),
    "elementwise with a wrapped functor": (
        ("vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor",),
        dict(kind="global", name="vectorized_elementwise_kernel", namespace="at::native",
             functors=["at::native::binary_internal::MulFunctor"], lambdas=[])),
    "elementwise with a lambda": (
        ("GeluCUDAKernelImpl",),
        dict(kind="global", name="vectorized_elementwise_kernel", namespace="at::native",
             functors=[], lambdas=["at::native::GeluCUDAKernelImpl"])),
    "elementwise with a lambda in an anonymous namespace": (
        ("launch_clamp_scalar",),
        dict(name="vectorized_elementwise_kernel", lambdas=[f"at::native::{ANON}::launch_clamp_scalar"],
             functors=[])),
    "legacy elementwise through gpu_kernel_impl_nocast": (
        ("elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda",),
        dict(name="elementwise_kernel", namespace="at::native", lambdas=["at::native::direct_copy_kernel_cuda"],
             functors=[], template_args=["128", "2", "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}"])),
    "reduce_kernel with a functor's lambda": (
        ("reduce_kernel<128, 4",),
        dict(name="reduce_kernel", namespace="at::native", functors=["at::native::sum_functor"], lambdas=[],
             template_args=["128", "4", "at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>"])),
    "reduce_kernel with ops": (
        ("MeanOps",),
        dict(name="reduce_kernel", functors=["at::native::MeanOps"], lambdas=[])),
    "layer norm forward": (
        ("vectorized_layer_norm_kernel",),
        dict(kind="global", name="vectorized_layer_norm_kernel", namespace=f"at::native::{ANON}",
             template_args=["float", "float", "false"],
             params=["int", "float", "float const*", "float const*", "float const*", "float*", "float*", "float*"],
             functors=[], lambdas=[])),
    "layer norm backward": (
        ("layer_norm_grad_input_kernel_vectorized",),
        dict(name="layer_norm_grad_input_kernel_vectorized", namespace=f"at::native::{ANON}",
             template_args=["float", "float", "false"])),
    "softmax forward": (
        ("softmax_warp_forward<float, float, float, 10",),
        dict(name="softmax_warp_forward", namespace=ANON, template_args=["float", "float", "float", "10", "true",
                                                                         "false"])),
    "softmax backward": (
        ("softmax_warp_backward<float, float, float, 10",),
        dict(name="softmax_warp_backward", namespace=ANON)),
    "dropout": (
        ("fused_dropout_kernel_vec",),
        dict(name="fused_dropout_kernel_vec", namespace=f"at::native::{ANON}",
             template_args=["float", "float", "unsigned int", "1", "4", "bool"])),
    "nll_loss": (
        ("nll_loss_forward_reduce_cuda_kernel_2d",),
        dict(name="nll_loss_forward_reduce_cuda_kernel_2d", namespace=f"at::native::{ANON}",
             template_args=["float", "float", "long"])),
    "max_pool forward": (
        ("max_pool_forward_nchw",),
        dict(name="max_pool_forward_nchw", namespace=f"at::native::{ANON}", template_args=["float", "int"])),
    "max_pool backward": (
        ("max_pool_backward_nchw",),
        dict(name="max_pool_backward_nchw", namespace=f"at::native::{ANON}", template_args=["float", "float", "int"])),
    "multi_tensor_apply for the optimizer": (
        ("BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies",),
        dict(name="multi_tensor_apply_kernel", namespace=f"at::native::{ANON}",
             functors=[f"at::native::{ANON}::BinaryOpScalarFunctor", "std::multiplies"], lambdas=[])),
    "multi_tensor_apply with two functors": (
        ("LerpFunctor",),
        dict(name="multi_tensor_apply_kernel",
             functors=[f"at::native::{ANON}::TernaryOpScalarFunctor", "at::native::LerpFunctor"])),
    "memory-efficient attention forward": (
        ("fmha_cutlassF",),
        dict(kind="global", library=None, name="fmha_cutlassF_f32_aligned_64x64_rf_sm80", namespace="",
             return_type="", params=["PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params"])),
    "memory-efficient attention backward": (
        ("fmha_cutlassB",),
        dict(kind="global", name="fmha_cutlassB_f32_aligned_64x64_k32_dropout_sm80", namespace="")),
    "cuDNN RNN": (
        ("RNN_blockPersist_fp_LSTM",),
        dict(kind="library", library="cudnn", name="RNN_blockPersist_fp_LSTM", namespace="",
             template_args=["float", "float", "float", "128"])),
    "cuBLAS gemm": (
        ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8",),
        dict(kind="library", library="cublas", namespace="", template_args=[], params=[],
             name="sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas")),
    "CUTLASS gemm shipped in cuBLAS": (
        ("cutlass_80_simt_sgemm_128x64",),
        dict(kind="library", library="cublas", name="Kernel2", namespace="cutlass",
             template_args=["cutlass_80_simt_sgemm_128x64_8x5_nt_align1"])),
    "cublasLt split-K reduction": (
        ("splitKreduce_kernel",),
        dict(kind="library", library="cublas", name="splitKreduce_kernel", namespace="cublasLt")),
    "cuDNN convolution": (
        ("sm80_xmma_fprop_implicit_gemm",),
        dict(kind="library", library="cudnn", namespace="")),
    "cuDNN batch norm": (
        ("bn_fw_tr_1C11_singleread",),
        dict(kind="library", library="cudnn", name="bn_fw_tr_1C11_singleread", namespace="cudnn")),
}


@pytest.mark.parametrize("family", sorted(PARSED))
def test_parse_fixture_kernel_names(family):
    fragments, expected = PARSED[family]
    kn = parse_kernel_name(named(*fragments))
    got = {k: getattr(kn, k) for k in expected}
    assert got == expected


def test_fixture_has_the_families():
    assert len(kernel_names()) == 89      # 91 GPU rows less Memcpy and Memset
    assert len(PARSED) >= 15


@pytest.mark.parametrize("name,kind,library", [
    ("nvjet_tst_128x64_64x4_1x2_h_bz_coopA_NNT", "library", "cublas"),
    ("ampere_sgemm_128x64_nn", "library", "cublas"),
    ("void cub::DeviceReduceKernel<cub::DeviceReducePolicy<float>::Policy600, float*, float*, int>(float*)",
     "library", "cub"),
    ("triton_poi_fused_add_mul_0", "generated", "triton"),
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "library", "nccl"),
    ("Memcpy DtoD (Device -> Device)", "runtime", None),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 64, 64>(float*)",
     "global", None),
])
def test_library_and_other_kinds(name, kind, library):
    kn = parse_kernel_name(name)
    assert (kn.kind, kn.library) == (kind, library)


MANGLED = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
DEMANGLED = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
             "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")


def test_mangled_names_with_and_without_cxxfilt(monkeypatch):
    assert itanium_demangle(MANGLED) == DEMANGLED          # the built-in subset, no c++filt
    monkeypatch.setattr(kname, "_CXXFILT", None)
    kn = parse_kernel_name(MANGLED)
    assert (kn.mangled, kn.demangled, kn.name, kn.namespace, kn.functors) == (
        True, DEMANGLED, "vectorized_elementwise_kernel", "at::native", ["at::native::FillFunctor"])
    # a local name (Z...E) is beyond the built-in subset: said, not guessed
    local = "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE7_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_"
    kn = parse_kernel_name(local)
    assert kn.demangle_error and kn.name == local


def test_mangled_with_cxxfilt():
    if not kname._CXXFILT:
        pytest.skip("c++filt (binutils) is not installed")
    local = "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE7_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_"
    kn = parse_kernel_name(local)
    assert (kn.name, kn.namespace, kn.lambdas) == ("elementwise_kernel", "at::native",
                                                   ["at::native::direct_copy_kernel_cuda"])


MANGLED_LIST = DATA / "profiles" / "mangled_torch2.11.0.txt"   # cuobjdump -symbols of libtorch_cuda.so, torch 2.11


def test_builtin_demangler_is_never_wrong():
    """On the 74 mangled names of the list, the built-in demangler gives c++filt's answer or none at all."""
    if not kname._CXXFILT:
        pytest.skip("c++filt (binutils) is the reference here")
    names = read_profile(MANGLED_LIST)
    names = [g.name for g in names.kernels]
    ref = kname.demangle_many(names)
    mine = {n: itanium_demangle(n) for n in names}
    assert len(names) == 74 and all(ref[n] for n in names)
    assert [n for n in names if mine[n] is not None and mine[n] != ref[n]] == []
    assert sum(1 for n in names if mine[n] == ref[n]) == 39      # local names ({lambda} scopes) are beyond it


def test_parser_survives_malformed_names():
    for junk in ("", "void", "<<<>>>", "f(", "a::<b>(c", "{lambda(", "operator()", "x" * 5000, "((((((("):
        parse_kernel_name(junk)


# -- the Chrome trace reader -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def prof():
    return read_profile(TRACE)


def group(prof, *fragments):
    hits = [g for g in prof.kernels if all(f in g.name for f in fragments)]
    assert len(hits) == 1, [g.name for g in hits]
    return hits[0]


def test_chrome_reader_totals(prof):
    assert prof.format == "chrome"
    assert len(prof.kernels) == 91
    assert round(prof.total_us, 3) == 1258.225
    assert (prof.torch_version, prof.version_source) == ("2.11", "file name")
    assert prof.unlinked == 0
    assert prof.kernels[0].name.startswith("void RNN_blockPersist_fp_LSTM<")


@pytest.mark.parametrize("fragments,calls,us,op,inner_op", [
    (("RNN_blockPersist_fp_LSTM",), 2, 195.55, "aten::lstm", "aten::_cudnn_rnn"),
    (("vectorized_elementwise_kernel<4, at::native::FillFunctor<float>",), 13, 12.861, None, "aten::fill_"),
    (("elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda",), 19,
     38.684, "aten::reshape", "aten::copy_"),
    (("BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies",), 3, 46.815, "aten::_foreach_mul_",
     "aten::_foreach_mul_"),
    (("fmha_cutlassB",), 1, 48.192, "aten::_scaled_dot_product_efficient_attention_backward",
     "aten::_efficient_attention_backward"),
    (("max_pool_forward_nchw",), 1, 3.169, "aten::max_pool2d", "aten::max_pool2d_with_indices"),
])
def test_chrome_reader_ties_kernels_to_ops(prof, fragments, calls, us, op, inner_op):
    g = group(prof, *fragments)
    assert (g.calls, round(g.total_us, 3), g.inner_op) == (calls, us, inner_op)
    if op:
        assert g.op == op
    assert sum(g.inner_ops.values()) == calls


def test_chrome_reader_scope_and_runtime_rows(prof):
    g = group(prof, "RNN_blockPersist_bp_LSTM_FMA")
    assert g.scopes.most_common(1)[0][0] == "autograd::engine::evaluate_function: CudnnRnnBackward0"
    memset = group(prof, "Memset (Device)")
    assert (memset.kind, memset.calls) == ("memset", 6)


def test_plain_list_and_bad_input(tmp_path):
    p = tmp_path / "kernels_torch2.4.txt"
    p.write_text("# copied from nsys\nsm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_x_cublas\n\n"
                 "ampere_sgemm_32x32_nn\nampere_sgemm_32x32_nn\n")
    lst = read_profile(p)
    assert lst.format == "list" and lst.torch_version == "2.4"
    assert [(g.name, g.calls) for g in lst.kernels] == [
        ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_x_cublas", 1), ("ampere_sgemm_32x32_nn", 2)]
    from opindex.model import OpindexError
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    with pytest.raises(OpindexError, match="not valid JSON"):
        read_profile(bad)
    (tmp_path / "x.json").write_text('{"a": 1}')
    with pytest.raises(OpindexError, match="not a Chrome trace"):
        read_profile(tmp_path / "x.json")


PROFILES = DATA / "profiles"   # made by tests/data/make_profiles.py on an H200 with torch 2.11


def test_more_profiles_read():
    counts = {p.name.split("_h200")[0]: len(read_profile(p).kernels) for p in sorted(PROFILES.glob("*.json.gz"))}
    assert counts == {"bf16_step": 72, "compiled": 7, "fp16_attention": 19, "sort_index": 48}
    compiled = read_profile(PROFILES / "compiled_h200_torch2.11.0.json.gz")
    triton = [g for g in compiled.kernels if g.name.startswith("triton_")]
    assert len(triton) == 2 and all(parse_kernel_name(g.name).kind == "generated" for g in triton)
    bf16 = read_profile(PROFILES / "bf16_step_h200_torch2.11.0.json.gz")
    adam = [g for g in bf16.kernels if "FusedAdamMathFunctor" in g.name]
    assert len(adam) == 1 and adam[0].inner_op == "aten::_fused_adamw_"
    assert any(g.python for g in bf16.kernels)          # with_stack: the Python functions around the launch
    kn = parse_kernel_name(adam[0].name)
    assert kn.name == "multi_tensor_apply_kernel" and any(f.endswith("FusedAdamMathFunctor") for f in kn.functors)
    sort = read_profile(PROFILES / "sort_index_h200_torch2.11.0.json.gz")
    cub = [g for g in sort.kernels if "DeviceRadixSortOnesweepKernel" in g.name]
    assert cub and all(parse_kernel_name(g.name).library == "cub" for g in cub)   # at_cuda_detail::cub::


# -- attribution on the sample checkout ----------------------------------------------------------------------------
# The sample has no TensorIterator loop kernels; a copy of it gets one small file of our own with the shared
# vectorized_elementwise_kernel, so that functor and lambda answers can be checked there too.
LOOPS_CUH = """\
#pragma once
namespace at::native {

template <int vec_size, typename func_t, typename array_t>
__global__ void vectorized_elementwise_kernel(int N, func_t f, array_t data) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < N) { data[0][idx] = f(data[1][idx]); }
}

template <typename func_t, typename array_t>
void launch_vectorized_kernel(int64_t N, const func_t& f, array_t data) {
  auto stream = at::cuda::getCurrentCUDAStream();
  vectorized_elementwise_kernel<4, func_t, array_t><<<N / 128 + 1, 128, 0, stream>>>(N, f, data);
}

} // namespace at::native
"""


@pytest.fixture(scope="module")
def sample_ix(tmp_path_factory):
    root = tmp_path_factory.mktemp("profile") / "checkout"
    shutil.copytree(SAMPLE, root)
    (root / "aten/src/ATen/native/cuda/CUDALoops.cuh").write_text(LOOPS_CUH)
    db = root.parent / "index.sqlite"
    build(str(root), db, jobs=1)
    with Index(db) as ix:
        yield ix


def chrome_trace(path: Path, launches: list[tuple[str, list[str]]]) -> Path:
    """A minimal Chrome trace: each kernel launched under the given stack of CPU ops (outermost first)."""
    events, t = [], 1000.0
    for i, (kernel, stack) in enumerate(launches):
        for depth, op in enumerate(stack):
            events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": t + depth,
                           "dur": 100 - 2 * depth, "args": {"External id": 10 * i + depth}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t + 50, "dur": 5, "args": {"correlation": 100 + i}})
        events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": t + 60, "dur": 10.0,
                       "args": {"correlation": 100 + i, "External id": 10 * i + len(stack) - 1}})
        t += 200
    path.write_text(json.dumps({"traceEvents": events}))
    return path


ROWWISE = "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)"
SOFTMAX = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float>(float*, float const*, int)"
ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, std::array<char*, 3ul> >"
       "(int, at::native::AddFunctor<float>, std::array<char*, 3ul>)")
CLAMP = ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
         "clamp_min_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::"
         "{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::"
         "clamp_min_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::"
         "{lambda(float)#1}, std::array<char*, 2ul>)")
GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_execute_kernel__5x_cublas"
WRONG_NS = "void at::other::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)"
NEWER = "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, 32u>(long)"


@pytest.fixture(scope="module")
def sample_rows(sample_ix, tmp_path_factory):
    trace = chrome_trace(tmp_path_factory.mktemp("trace") / "step_torch2.4.json", [
        (ROWWISE, ["aten::layer_norm", "aten::native_layer_norm"]),
        (SOFTMAX, ["aten::softmax", "aten::_softmax"]),
        (ADD, ["aten::add"]),
        (CLAMP, ["aten::relu", "aten::clamp_min"]),
        (GEMM, ["aten::linear", "aten::mm"]),
        (WRONG_NS, ["aten::layer_norm"]),
        (NEWER, ["aten::native_layer_norm_backward"]),
        ("triton_poi_fused_add_0", []),
    ])
    return {r["kernel"]: r for r in sample_ix.profile(trace)}


@pytest.mark.parametrize("path, host_only", [
    ("aten/src/ATen/native/cpu/Activation.cpp", True),
    ("aten/src/ATen/native/mkldnn/Conv.cpp", True),
    ("aten/src/ATen/native/quantized/cpu/qnnpack/src/conv-run.cc", True),
    ("aten/src/ATen/native/miopen/Conv_miopen.cpp", True),      # the ROCm build's, never a CUDA build's
    ("aten/src/ATen/native/mps/operations/Activation.mm", True),
    # what the old folder list's "sparse/cpu" entry meant: a sparse cpu/ folder (none in 1.4 to 2.4) is host-only;
    # written as one entry of path parts it could never match, the folder is matched part by part now
    ("aten/src/ATen/native/sparse/cpu/SparseKernels.cpp", True),
    ("aten/src/ATen/native/ao_sparse/quantized/cpu/fbgemm_utils.cpp", True),
    # the sparse folder itself holds the code both devices share (SparseBinaryOpIntersectionCommon.h)
    ("aten/src/ATen/native/sparse/SparseBinaryOpIntersectionCommon.h", False),
    ("aten/src/ATen/native/sparse/cuda/SparseCUDATensorMath.cu", False),
    ("aten/src/ATen/native/cuda/Activation.cu", False),
    ("aten/src/ATen/native/cudnn/Conv_v8.cpp", False),
    ("aten/src/ATen/native/Activation.cpp", False),
])
def test_host_only_folders_are_the_devices_table(path, host_only):
    """The profile's GPU context reads folders as the trace's --device cuda walk does (pytorch/devices.py)."""
    from opindex.profile.index import _host_only
    from opindex.pytorch.devices import runs_on
    assert _host_only(path) is host_only
    assert runs_on(path, "cuda") is not host_only


@pytest.mark.parametrize("device_arg, other", [
    ("kCPU", True), ("at::kCPU", True), ("c10::DeviceType::MPS", True), ("kXPU", True), ("kMeta", True),
    ("kCUDA", False), ("DeviceType::CUDA", False), ("device_type", False), ("", False), (None, False),
])
def test_stub_call_device_literal(device_arg, other):
    """stub(kCPU, ...) never reaches a CUDA registration; a device the code passes on (device_type) may."""
    from opindex.profile.index import _other_device
    assert _other_device(device_arg) is other


def test_sample_global_kernel_bottom_up(sample_rows):
    r = sample_rows[ROWWISE]
    assert (r["status"], r["definition"]) == ("attributed", "aten/src/ATen/native/cuda/layer_norm_kernel.cu:11")
    assert r["launch_sites"] == ["aten/src/ATen/native/cuda/layer_norm_kernel.cu:35 "
                                 "(at::native::LayerNormKernelImplInternal)"]
    assert r["dispatch"] == "native_layer_norm CUDA: layer_norm_cuda"
    assert r["registration"] is None     # the LayerNormKernel stub is only called with kCPU: not a CUDA path
    chain = [(h.kind, h.name, f"{h.file}:{h.line}") for h in r["chain"]]
    assert chain[:3] == [
        ("global_kernel", "at::native::RowwiseMomentsCUDAKernel", "aten/src/ATen/native/cuda/layer_norm_kernel.cu:11"),
        ("launch", "at::native::LayerNormKernelImplInternal", "aten/src/ATen/native/cuda/layer_norm_kernel.cu:35"),
        ("caller", "at::native::LayerNormKernelImpl", "aten/src/ATen/native/cuda/layer_norm_kernel.cu:49")]
    assert ("caller", "at::native::layer_norm_cuda", "aten/src/ATen/native/cuda/layer_norm_kernel.cu:62") in chain


def test_sample_structured_kernel(sample_rows):
    r = sample_rows[SOFTMAX]
    assert r["definition"] == "aten/src/ATen/native/cuda/SoftMax.cu:9"
    assert r["launch_sites"] == ["aten/src/ATen/native/cuda/SoftMax.cu:38 (at::native::host_softmax)"]
    assert r["dispatch"] == "_softmax.out CUDA: softmax_cuda_out"


def test_sample_shared_kernel_answered_for_its_functor(sample_rows):
    r = sample_rows[ADD]
    assert r["definition"] == "aten/src/ATen/native/cuda/CUDALoops.cuh:5"
    assert r["launch_sites"] == ["aten/src/ATen/native/cuda/CUDALoops.cuh:13 (at::native::launch_vectorized_kernel)"]
    assert r["body"]["definition"] == "aten/src/ATen/native/cuda/BinaryAddKernel.cu:7"
    assert (r["body"]["function"], r["body"]["function_at"]) == (
        "at::native::add_kernel_cuda", "aten/src/ATen/native/cuda/BinaryAddKernel.cu:19")
    assert (r["stub"], r["registration"]) == ("add_stub", "aten/src/ATen/native/cuda/BinaryAddKernel.cu:23")
    assert r["dispatch"] == "add.out CUDA: add_out"


def test_sample_shared_kernel_answered_for_its_lambda(sample_rows):
    r = sample_rows[CLAMP]
    assert r["body"] == {"kind": "lambda", "name": f"at::native::{ANON}::clamp_min_scalar_kernel_impl",
                         "definition": "aten/src/ATen/native/cuda/TensorCompare.cu:7",
                         "function": "at::native::clamp_min_scalar_kernel_impl"}
    assert (r["stub"], r["registration"]) == ("clamp_min_scalar_stub", "aten/src/ATen/native/cuda/TensorCompare.cu:16")
    assert r["dispatch"] == "clamp_min.out CUDA: clamp_min_out"


def test_sample_library_kernel(sample_rows):
    r = sample_rows[GEMM]
    assert (r["status"], r["library"], r["attributed"]) == ("library", "cublas", True)
    assert r["library_calls"][0].startswith("aten/src/ATen/native/cuda/Blas.cpp:10 at::cuda::blas::gemm")
    assert r["native_function"] == "mm.out"


def test_sample_never_a_wrong_match(sample_rows):
    assert sample_rows[WRONG_NS]["status"] == "not in this checkout"
    assert "at::native" in sample_rows[WRONG_NS]["note"]      # the same name exists in another namespace
    assert sample_rows[NEWER]["status"] == "not in this checkout"
    assert sample_rows["triton_poi_fused_add_0"]["status"] == "generated"
    assert not any(sample_rows[k]["definition"] for k in (WRONG_NS, NEWER, "triton_poi_fused_add_0"))


def test_sample_version_warning_and_share(sample_ix, sample_rows, tmp_path):
    trace = chrome_trace(tmp_path / "x_torch2.11.json", [(SOFTMAX, ["aten::_softmax"])])
    rows = sample_ix.profile(trace)
    assert any("torch 2.11" in w for w in rows.warnings)
    assert rows.attributed_share == 1.0


def test_cli_formats(sample_ix, tmp_path):
    from click.testing import CliRunner
    from opindex.cli import main
    trace = chrome_trace(tmp_path / "t.json", [(SOFTMAX, ["aten::_softmax"]), (GEMM, ["aten::mm"])])
    args = ["profile", str(trace), "--db", str(sample_ix.path)]
    res = CliRunner().invoke(main, args + ["--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{"):])
    assert data["summary"]["attributed_share"] == 1.0
    # equal GPU times: by name
    assert [k["definition"] for k in data["kernels"]] == [None, "aten/src/ATen/native/cuda/SoftMax.cu:9"]
    md = CliRunner().invoke(main, args + ["--markdown", "--limit", "1"]).output
    assert "| 1 | 50.0% |" in md and "showing the 1 kernels with the most GPU time of 2" in md
    page = CliRunner().invoke(main, args + ["--html"]).output
    assert page.startswith("<!doctype html>") and page.count("<details id=k") == 2 and "SoftMax.cu:9" in page
    csv_out = CliRunner().invoke(main, args + ["--csv"]).output
    assert csv_out.splitlines()[0].startswith("rank,share,gpu_us,calls")
    assert "SoftMax.cu:9" in CliRunner().invoke(main, args + ["--table"]).output
    missing = CliRunner().invoke(main, ["profile", str(tmp_path / "nope.json"), "--db", str(sample_ix.path)])
    assert missing.exit_code == 2 and "cannot read the profile" in missing.output  # a usage error


def test_dataframe(sample_ix, tmp_path):
    pytest.importorskip("pandas")
    trace = chrome_trace(tmp_path / "t.json", [(SOFTMAX, ["aten::_softmax"])])
    df = sample_ix.profile(trace, dataframe=True)
    assert list(df["definition"]) == ["aten/src/ATen/native/cuda/SoftMax.cu:9"]


# -- the PyTorch 2.4 tree (OPINDEX_REAL_CHECKOUT) ----------------------------------------------------------------
@pytest.fixture(scope="module")
def real_ix(real_index):
    """The 2.4 tree's index, built once per session: conftest's real_index, the same build this module used to make
    of its own."""
    if not (real_index.meta.get("pytorch_version") or "").startswith("2.4"):
        pytest.skip("these answers are for the PyTorch 2.4 tree")
    return real_index


@pytest.fixture(scope="module")
def real_rows(real_ix):
    return real_ix.profile(TRACE)


def real(rows, *fragments) -> dict:
    hits = [r for r in rows if all(f in r["kernel"] for f in fragments)]
    assert len(hits) == 1, [r["kernel"] for r in hits]
    return hits[0]


N = "aten/src/ATen/native/"
# each answer was checked by reading the 2.4 tree at that line
REAL = {
    ("vectorized_elementwise_kernel<4, at::native::FillFunctor<float>",):
        dict(definition=N + "cuda/CUDALoops.cuh:63", body=N + "cuda/FillKernel.cu:13", stub="fill_stub",
             registration=N + "cuda/FillKernel.cu:28", dispatch="fill_.Scalar CUDA: fill_ | fill_.Tensor CUDA: fill_"),
    ("GeluCUDAKernelImpl",):
        dict(definition=N + "cuda/CUDALoops.cuh:63", body=N + "cuda/ActivationGeluKernel.cu:21",
             dispatch="gelu.out CUDA: gelu_out_cuda"),
    # launched under aten::clamp_min (relu, the conv net's) and aten::clamp (clip_grad_norm_): launch_clamp_scalar's
    # lambda serves clamp_scalar_kernel_impl (:82, clamp_scalar_stub) and clamp_min_scalar_kernel_impl (:86,
    # registered at :101); the op the profile names most is clamp_min
    ("launch_clamp_scalar",):
        dict(definition=N + "cuda/CUDALoops.cuh:63", body=N + "cuda/TensorCompare.cu:59", stub="clamp_min_scalar_stub",
             registration=N + "cuda/TensorCompare.cu:101", dispatch="clamp_min.out CUDA: clamp_min_out"),
    ("elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda",):
        dict(definition=N + "cuda/CUDALoops.cuh:292", body=N + "cuda/Copy.cu:142", stub="copy_stub",
             registration=N + "cuda/Copy.cu:395", dispatch="copy_ CompositeExplicitAutograd: copy_"),
    ("reduce_kernel<128, 4",):
        dict(definition=N + "cuda/Reduce.cuh:188", body=N + "cuda/ReduceSumProdKernel.cu:14", stub="sum_stub",
             registration=N + "cuda/ReduceSumProdKernel.cu:211", dispatch="sum.IntList_out CUDA: sum_out"),
    ("MeanOps",):
        dict(definition=N + "cuda/Reduce.cuh:188", body=N + "SharedReduceOps.h:162", stub="mean_stub",
             registration=N + "cuda/ReduceMomentKernel.cu:66", dispatch="mean.out CUDA: mean_out"),
    ("vectorized_layer_norm_kernel",):
        dict(definition=N + "cuda/layer_norm_kernel.cu:316", dispatch="native_layer_norm CUDA: layer_norm_cuda"),
    ("layer_norm_grad_input_kernel_vectorized",):
        dict(definition=N + "cuda/layer_norm_kernel.cu:416",
             dispatch="native_layer_norm_backward CUDA: layer_norm_backward_cuda"),
    ("softmax_warp_forward<float, float, float, 10",):
        dict(definition=N + "cuda/PersistentSoftmax.cuh:57", dispatch="_log_softmax.out CUDA: log_softmax_cuda_out"),
    ("softmax_warp_backward<float, float, float, 10",):
        dict(definition=N + "cuda/PersistentSoftmax.cuh:361",
             dispatch="_log_softmax_backward_data.out CUDA: log_softmax_backward_cuda_out"),
    ("fused_dropout_kernel_vec",):
        dict(definition=N + "cuda/Dropout.cu:62", dispatch="native_dropout CUDA: native_dropout_cuda"),
    ("masked_scale_kernel", "vectorized_elementwise_kernel"):
        dict(definition=N + "cuda/CUDALoops.cuh:63", body=N + "cuda/Dropout.cu:202",
             dispatch="native_dropout_backward CUDA: native_dropout_backward_cuda"),
    ("nll_loss_forward_reduce_cuda_kernel_2d",):
        dict(definition=N + "cuda/Loss.cu:230", dispatch="nll_loss_forward.output CUDA: nll_loss_forward_out_cuda"),
    ("nll_loss_backward_reduce_cuda_kernel_2d",):
        dict(definition=N + "cuda/Loss.cu:452",
             dispatch="nll_loss_backward.grad_input CUDA: nll_loss_backward_out_cuda"),
    ("max_pool_forward_nchw",):
        dict(definition=N + "cuda/DilatedMaxPool2d.cu:50",
             dispatch="max_pool2d_with_indices.out CUDA: max_pool2d_with_indices_out_cuda"),
    ("max_pool_backward_nchw",):
        dict(definition=N + "cuda/DilatedMaxPool2d.cu:182",
             dispatch="max_pool2d_with_indices_backward.grad_input CUDA: max_pool2d_with_indices_backward_out_cuda"),
    ("BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies",):
        dict(definition=N + "cuda/MultiTensorApply.cuh:100", body=N + "cuda/ForeachFunctors.cuh:207",
             dispatch="_foreach_mul_.Scalar CUDA: foreach_tensor_mul_scalar_kernel_cuda_"),
    ("TernaryOpScalarFunctor",):
        dict(definition=N + "cuda/MultiTensorApply.cuh:100", body=N + "cuda/ForeachTernaryOp.cu:19",
             dispatch="_foreach_lerp_.Scalar CUDA: foreach_tensor_lerp_list_cuda_"),
    ("PointwiseOpScalarListFunctor",):
        dict(definition=N + "cuda/MultiTensorApply.cuh:100", body=N + "cuda/ForeachFunctors.cuh:481",
             dispatch="_foreach_addcdiv_.ScalarList CUDA: foreach_tensor_addcdiv_scalarlist_cuda_"),
    ("UnaryOpFunctor<float, 2, 1, 1>, at::native::Sqrt",):
        dict(definition=N + "cuda/MultiTensorApply.cuh:100", body=N + "cuda/ForeachUnaryOp.cu:261",
             dispatch="_foreach_sqrt CUDA: foreach_tensor_sqrt_cuda"),
    ("fmha_cutlassF",):
        dict(definition=N + "transformers/cuda/mem_eff_attention/kernels/cutlassF_f32_aligned.cu:68",
             dispatch="_efficient_attention_forward CUDA: _efficient_attention_forward"),
    ("fmha_cutlassB",):
        dict(definition=N + "transformers/cuda/mem_eff_attention/kernels/cutlassB_f32_aligned_k32_dropout.cu:90",
             dispatch="_efficient_attention_backward CUDA: _efficient_attention_backward"),
    ("vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>",):
        dict(definition=N + "cuda/CUDALoops.cuh:63", body=N + "ufunc/add.h:15", dispatch="add.out CUDA: ufunc_add_CUDA"),
}
REAL_LIBRARY = {   # the library, then the call sites listed (the first function reached, all its calls of the library)
    # (a current CUDA build: cuDNN >= 8.9.7 defines USE_CUDNN_RNN_V8_API, so the `#ifndef` sides, RNN.cpp:1573 and
    # :1631, :1851 and :2038, are not compiled; Blas.cpp:326 is `#if defined(USE_ROCM)`)
    ("RNN_blockPersist_fp_LSTM",): ("cudnn", [
        N + "cudnn/RNN.cpp:1596 cudnnRNNForward (native::_cudnn_rnn)",
        N + "cudnn/RNN.cpp:1652 cudnnRNNForward (native::_cudnn_rnn)"]),
    ("RNN_blockPersist_bp_LSTM_FMA",): ("cudnn", [
        N + "cudnn/RNN.cpp:1880 cudnnRNNBackwardData_v8 (native::_cudnn_rnn_backward_input)",
        N + "cudnn/RNN.cpp:2055 cudnnRNNBackwardWeights_v8 (native::_cudnn_rnn_backward_weight)"]),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8",): ("cublas", [
        N + "cuda/Blas.cpp:361 at::cuda::blas::gemm_and_bias (at::native::addmm_out_cuda_impl)",
        N + "cuda/Blas.cpp:393 at::cuda::blas::gemm (at::native::addmm_out_cuda_impl)"]),
    ("cutlass_80_simt_sgemm_128x64",): ("cublas", [
        N + "cuda/Blas.cpp:361 at::cuda::blas::gemm_and_bias (at::native::addmm_out_cuda_impl)",
        N + "cuda/Blas.cpp:393 at::cuda::blas::gemm (at::native::addmm_out_cuda_impl)"]),
    ("sm80_xmma_fprop_implicit_gemm",): ("cudnn", [N + "cudnn/Conv_v8.cpp:400 cudnnBackendExecute (run_conv_plan)"]),
    ("sm80_xmma_wgrad_implicit_gemm",): ("cudnn", [
        N + "cudnn/Conv_v8.cpp:400 cudnnBackendExecute (run_conv_plan)",
        N + "cudnn/Conv_v7.cpp:989 cudnnConvolutionBackwardFilter "
            "(at::native::raw_cudnn_convolution_backward_weight_out_32bit)"]),
    ("bn_fw_tr_1C11_singleread",): ("cudnn", [
        N + "cudnn/BatchNorm.cpp:213 cudnnBatchNormalizationForwardTrainingEx (at::native::cudnn_batch_norm)",
        N + "cudnn/BatchNorm.cpp:244 cudnnBatchNormalizationForwardInference (at::native::cudnn_batch_norm)"]),
}


@pytest.mark.parametrize("fragments", sorted(REAL), ids=lambda f: f[0][:40])
def test_real_tree_global_kernels(real_rows, fragments):
    r = real(real_rows, *fragments)
    expected = REAL[fragments]
    got = {"definition": r["definition"], "body": (r["body"] or {}).get("definition"), "stub": r["stub"],
           "registration": r["registration"], "dispatch": r["dispatch"]}
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize("fragments", sorted(REAL_LIBRARY), ids=lambda f: f[0][:40])
def test_real_tree_library_kernels(real_rows, fragments):
    r = real(real_rows, *fragments)
    assert (r["library"], r["library_calls"]) == REAL_LIBRARY[fragments]
    assert r["attributed"] and r["native_function"]


def test_real_tree_not_in_checkout_and_share(real_rows):
    # kernels of torch 2.11 that the 2.4 tree does not have: said, never matched to a look-alike
    for frag in ("GammaBetaBackwardCUDAKernelTemplate", "CatArrayBatchedCopy_alignedK_contig"):
        r = real(real_rows, frag)
        assert (r["status"], r["definition"]) == ("not in this checkout", None)
    assert real_rows.attributed_share >= 0.95
    assert len(REAL) + len(REAL_LIBRARY) >= 15


def test_real_tree_more_profiles(real_ix):
    """The answers hold on other workloads: compiled Triton kernels are never matched, fused AdamW is found, cub
    kernels are tied to the op's cub call, mangled names are demangled and attributed."""
    compiled = real_ix.profile(PROFILES / "compiled_h200_torch2.11.0.json.gz")
    for r in compiled:
        if r["kernel"].startswith("triton_"):
            assert (r["status"], r["definition"], r["attributed"]) == ("generated", None, False)
    bf16 = {r["kernel"]: r for r in real_ix.profile(PROFILES / "bf16_step_h200_torch2.11.0.json.gz")}
    adam = next(r for k, r in bf16.items() if "FusedAdamMathFunctor" in k)
    assert (adam["definition"], adam["body"]["definition"]) == (
        N + "cuda/MultiTensorApply.cuh:100", N + "cuda/fused_adam_utils.cuh:106")
    assert adam["native_function"].startswith("_fused_adamw_")
    emb = next(r for k, r in bf16.items() if "embedding_backward_feature_kernel" in k)
    assert emb["definition"] == N + "cuda/Embedding.cu:48"
    sort = real_ix.profile(PROFILES / "sort_index_h200_torch2.11.0.json.gz")
    onesweep = [r for r in sort if "DeviceRadixSortOnesweepKernel" in r["kernel"] and r["op"] == "aten::sort"]
    assert onesweep and all(r["library_calls"][0].startswith(N + "cuda/SortStable.cu:123 at::cuda::cub::radix_sort_pairs")
                            for r in onesweep)
    fp16 = real_ix.profile(PROFILES / "fp16_attention_h200_torch2.11.0.json.gz")
    sdpa = [r for r in fp16 if "_sdpa_" in r["kernel"]]
    assert {r["library_calls"][0] for r in sdpa} == {
        N + "cudnn/MHA.cpp:593 cudnn_frontend graph mha_graph->execute (at::native::run_cudnn_SDP_fprop)",
        N + "cudnn/MHA.cpp:674 cudnn_frontend graph mha_graph->execute (at::native::run_cudnn_SDP_bprop)"}
    assert fp16.attributed_share >= 0.9
    mangled = real_ix.profile(MANGLED_LIST)
    assert all(not r.get("demangle_error") for r in mangled if kname._CXXFILT)
    abs_rows = [r for r in mangled if "AbsFunctor" in r["short"] and "vectorized" in r["short"]]
    assert abs_rows and all((r["definition"], r["body"]["definition"]) == (
        N + "cuda/CUDALoops.cuh:63", N + "cuda/AbsKernel.cu:12") for r in abs_rows)


def test_real_tree_no_kernel_is_tied_to_code_the_build_does_not_compile(real_rows):
    """cudnn/ConvPlaceholders.cpp and cudnn/BatchNorm.cpp:19 hold `#if !AT_CUDNN_ENABLED()` stand-ins that only raise;
    a current CUDA build compiles the real ones (ConvShared.cpp:240 cudnn_convolution, BatchNorm.cpp:121
    cudnn_batch_norm), and the kernels the GPU ran are theirs."""
    chains = {r["short"]: [(h.kind, h.name, h.file, h.line) for h in r["chain"]] for r in real_rows}
    assert not [k for k, chain in chains.items() for h in chain if "ConvPlaceholders.cpp" in (h[2] or "")]
    fprop = real(real_rows, "sm80_xmma_fprop_implicit_gemm")
    assert ("at::native::cudnn_convolution", "aten/src/ATen/native/cudnn/ConvShared.cpp", 240) in [
        (h.name, h.file, h.line) for h in fprop["chain"]]
    bn = real(real_rows, "bn_fw_tr_1C11_singleread")
    assert ("aten/src/ATen/native/cudnn/BatchNorm.cpp", 121) in [(h.file, h.line) for h in bn["chain"]]


def test_real_tree_jitted_kernels_are_attributed_to_their_launch(real_ix, tmp_path):
    """The H200 ran reduction_prod_kernel for torch.prod and exp_kernel_vectorized2_kernel for complex exp
    (benchmarks/runtime_h200_torch2.11.json): kernels the jiterator compiles at run time, named from
    ReduceSumProdKernel.cu:82's "prod" and UnaryOpsKernel.cu:37's "exp_kernel". Each is its op's, never "not in
    this checkout"."""
    names = tmp_path / "jitted.txt"
    names.write_text("reduction_prod_kernel\nexp_kernel_vectorized2_kernel\n")
    rows = {r["kernel"]: r for r in real_ix.profile(names)}
    prod, exp = rows["reduction_prod_kernel"], rows["exp_kernel_vectorized2_kernel"]
    assert (prod["status"], prod["definition"], prod["native_function"]) == (
        "attributed", N + "cuda/ReduceSumProdKernel.cu:82", "prod.int_out")
    assert prod["launch_sites"][0] == N + "cuda/ReduceSumProdKernel.cu:94 (at::native::prod_functor::operator())"
    assert (exp["status"], exp["definition"], exp["native_function"]) == (
        "attributed", N + "cuda/UnaryOpsKernel.cu:37", "exp.out")
    assert [(h.kind, h.file, h.line) for h in exp["chain"][:2]] == [
        ("jitted", N + "cuda/UnaryOpsKernel.cu", 37), ("launch", N + "cuda/UnaryOpsKernel.cu", 48)]


def test_real_tree_a_profile_with_shapes_traces_each_op_call(real_ix):
    """sort_index was recorded with shapes (tests/data/make_profiles.py): each kernel's op and its inputs. topk of a
    65536-vector with k=100 is `torch.ops.aten.topk(torch.empty(65536), 100, -1, True, True)`; traced with those
    inputs, TensorTopK.cu:773's should_use_multiblock(1, 65536) holds (`num_slices <= 20 && slice_size >= 20000`),
    so the chain ends at mbtopk::gatherTopK (:496), the kernel the H200 ran; its radixSortKVInPlace (the sorted
    output) is in that trace too, not its end. The cap says itself."""
    rows = real_ix.profile(PROFILES / "sort_index_h200_torch2.11.0.json.gz")
    by = {r["short"]: r for r in rows}
    gather = by["gatherTopK"]
    assert gather["call"] == "torch.ops.aten.topk(torch.empty(65536), 100, -1, True, True)"
    assert gather["traced"] == {"end": "__global__ at::native::mbtopk::gatherTopK",
                                "file": N + "cuda/TensorTopK.cu", "line": 496, "ends_here": True, "in_trace": True}
    assert (by["radixSortKVInPlace"]["traced"]["ends_here"], by["radixSortKVInPlace"]["traced"]["in_trace"]) == (
        False, True)
    assert rows.traced["rows"] >= 40 and rows.traced["in_trace"] >= rows.traced["rows"] - 2
    capped = real_ix.profile(PROFILES / "sort_index_h200_torch2.11.0.json.gz", trace_calls=1)
    assert capped.calls_traced == 1 and capped.calls_untraced > 0
    assert f"traced the first 1 distinct recorded op calls, by GPU time; {capped.calls_untraced} more not traced " \
           f"(--trace-calls N raises the cap)" in capped.caps
    none = real_ix.profile(PROFILES / "sort_index_h200_torch2.11.0.json.gz", trace_calls=0)
    assert not any(r.get("traced") for r in none) and none.traced["rows"] == 0


def test_real_tree_the_header_says_how_many_traced_kernels_the_checkout_lacks(real_ix):
    """sort_index's computeDigitCumSum and computeBlockDigitCounts are torch 2.11 kernels of topk that 2.4 does not
    have: not in their call's trace, and said so in the header."""
    from opindex.profile.render import to_table
    rows = real_ix.profile(PROFILES / "sort_index_h200_torch2.11.0.json.gz")
    assert (rows.traced["rows"], rows.traced["in_trace"], rows.traced["not_in_checkout"]) == (42, 40, 2)
    header = to_table(rows).splitlines()[3]
    assert header.startswith("traced with the recorded inputs: 42 kernels' op calls; the kernel that ran is in its "
                             "call's trace for 40 (") and "; 2 of the others are not in this checkout)" in header
