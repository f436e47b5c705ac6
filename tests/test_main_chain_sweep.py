"""The classification rules of benchmarks/main_chain_sweep.py (issue 28), on hand-made Hops: no tree, no index."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from opindex.trace.model import Condition, Hop

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("main_chain_sweep", REPO / "benchmarks" / "main_chain_sweep.py")
sweep = importlib.util.module_from_spec(_spec)
sys.modules["main_chain_sweep"] = sweep
_spec.loader.exec_module(sweep)


def chain(*specs):
    """Hops root first, each the parent of the next: (layer, kind, name, file, line, extra fields)."""
    out = []
    for i, (layer, kind, name, file, line, *extra) in enumerate(specs):
        out.append(Hop(i, i - 1 if i else None, layer, kind, name, file, line, **(extra[0] if extra else {})))
    return out


ENTRY = ("native", "entry", "aten::conv2d", "aten/src/ATen/native/native_functions.yaml", 10, {"op": "conv2d"})
YAML = "aten/src/ATen/native/native_functions.yaml"


def test_a_backward_function_or_library_call_on_a_forward_chain_is_a_fault():
    hops = chain(ENTRY,
                 ("native", "calls_op", "at::cudnn_convolution_transpose", "aten/src/ATen/native/Convolution.cpp", 9),
                 ("cpp", "calls", "at::native::cudnn_convolution_backward_input",
                  "aten/src/ATen/native/cudnn/ConvShared.cpp", 365),
                 ("library", "cudnn", "cudnnConvolutionBackwardData", "aten/src/ATen/native/cudnn/Conv_v7.cpp", 870))
    found = sweep.classify(hops, "conv2d")
    assert found["backward"][0].name == "at::native::cudnn_convolution_backward_input"
    assert "backward_legit" not in found
    # each hop alone: the C++ name, the library's backward API, a launch's bare kernel name, an op entry
    assert sweep.backward_name(hops[3])
    launch = chain(("cuda", "launch", "indexing_backward_kernel_opt<scalar_t, 8><<<grid, block, 0, stream>>>",
                    "aten/src/ATen/native/cuda/Indexing.cu", 533))[0]
    assert sweep.backward_name(launch) and sweep.bare_name(launch.name) == "indexing_backward_kernel_opt"
    entry = chain(("native", "entry", "aten::max_pool2d_with_indices_backward", YAML, 1,
                   {"op": "max_pool2d_with_indices_backward"}))[0]
    assert sweep.backward_name(entry)


def test_forward_names_are_not_backward_ones():
    for name in ("at::native::cudnn_convolution_forward_out", "cudnnRNNForwardTraining",
                 "__global__ at::native::vectorized_elementwise_kernel", "at::native::_dirichlet_grad_cuda",
                 "CUDA: lstm_cudnn", "_fused_adagrad_kernel_cuda_"):
        hop = chain(("cpp", "function", name, "aten/src/ATen/native/cuda/X.cu", 1))[0]
        assert not sweep.backward_name(hop), name
    # an op hop is judged by its op name, not its C++ name
    hop = chain(("native", "calls_op", "grad_input.zero_", "x.cpp", 3, {"op": "zero_"}))[0]
    assert not sweep.backward_name(hop)


def test_a_forward_op_whose_algorithm_is_a_backward_function_is_counted_apart():
    hops = chain(("native", "entry", "aten::conv_transpose2d.input", YAML, 1, {"op": "conv_transpose2d.input"}),
                 ("cpp", "calls", "at::native::cudnn_convolution_backward_input",
                  "aten/src/ATen/native/cudnn/ConvShared.cpp", 365),
                 ("library", "cudnn", "cudnnConvolutionBackwardData", "aten/src/ATen/native/cudnn/Conv_v7.cpp", 870))
    found = sweep.classify(hops, "conv_transpose2d.input")
    assert "backward" not in found and found["backward_legit"][0] is hops[1]
    # istft's overlap-add: at::unfold_backward, and what it runs below (its op entry, its stub) is not a fault
    hops = chain(("native", "entry", "aten::istft", YAML, 1, {"op": "istft"}),
                 ("native", "calls_op", "at::unfold_backward", "aten/src/ATen/native/SpectralOps.cpp", 1143),
                 ("native", "entry", "aten::unfold_backward", YAML, 2, {"op": "unfold_backward"}),
                 ("stub", "stub_call", "unfold_backward_stub", "aten/src/ATen/native/UnfoldBackward.cpp", 31))
    found = sweep.classify(hops, "istft")
    assert "backward" not in found and found["backward_legit"][0] is hops[1]
    # the same call from another op is a fault
    assert "backward" in sweep.classify(hops[1:], "stft")


def test_if_values_of_a_stock_cuda_build_and_of_the_vendor_build():
    stock, maca = sweep.STOCK_CUDA, sweep.MACA_CUDA
    assert sweep.pp_value("!AT_CUDNN_ENABLED()") is False
    assert sweep.pp_value("not (!AT_CUDNN_ENABLED())") is True
    assert sweep.pp_value("AT_ROCM_ENABLED()") is False
    assert sweep.pp_value("defined(USE_ROCM)") is False and sweep.pp_value("!defined(USE_ROCM)") is True
    assert sweep.pp_value("defined(__HIP_PLATFORM_HCC__) || defined(__HIP_PLATFORM_AMD__)") is False
    assert sweep.pp_value("!defined(USE_CUDA)") is False
    assert sweep.pp_value("0") is False and sweep.pp_value("1") is True
    assert sweep.pp_value("USE_ROCM") is False  # an undefined macro reads 0
    assert sweep.pp_value("defined(USE_ROCM) && ROCM_VERSION >= 60200") is False
    # what the build does not decide stays unknown: that code is kept
    for text in ("CUDA_VERSION >= 11080", "defined(__CUDA_ARCH__)", "AT_MKLDNN_ENABLED()",
                 "!defined(USE_CUDNN_RNN_V8_API)",
                 "defined(USE_ROCM) || CUDNN_VERSION >= 8200", "x +", ""):
        assert sweep.pp_value(text) is None, text
    assert sweep.pp_value("defined(USE_MACA)", stock) is False and sweep.pp_value("defined(USE_MACA)", maca) is True
    text = "not (defined(USE_ROCM) || defined(_MSC_VER) || (defined(CUDA_VERSION) && CUDA_VERSION < 11080) " \
           "|| !defined(USE_MACA))"
    assert sweep.pp_value(text, stock) is False and sweep.pp_value(text, maca) is None


def test_a_hop_under_a_false_if_is_a_placeholder_and_one_a_vendor_macro_decides_is_counted_apart():
    table = sweep.IfTable([
        {"file": "aten/src/ATen/native/cudnn/RNN.cpp", "line": 31, "end_line": 113, "condition": "!AT_CUDNN_ENABLED()"},
        {"file": "aten/src/ATen/native/cudnn/RNN.cpp", "line": 115, "end_line": 2770,
         "condition": "not (!AT_CUDNN_ENABLED())"},
        {"file": "aten/src/ATen/native/cuda/CUDALoops.cuh", "line": 173, "end_line": 243,
         "condition": "defined(USE_MACA)"},
    ])
    stub = chain(("cpp", "function", "at::native::_cudnn_rnn", "aten/src/ATen/native/cudnn/RNN.cpp", 40))[0]
    real = chain(("cpp", "function", "at::native::_cudnn_rnn", "aten/src/ATen/native/cudnn/RNN.cpp", 1395))[0]
    assert sweep.placeholder_reason(stub, table) == "#if !AT_CUDNN_ENABLED()"
    assert sweep.placeholder_reason(real, table) is None and sweep.vendor_reason(real, table) is None
    # the hop's own #if (the condition of the call that reached it) counts too
    rocm = chain(("cuda", "launch", "k<<<1, 2>>>", "aten/src/ATen/native/cuda/Shape.cu", 9,
                  {"conditions": [Condition("#if", "defined(__HIP_PLATFORM_HCC__)")]}))[0]
    assert sweep.placeholder_reason(rocm, None) == "#if defined(__HIP_PLATFORM_HCC__)"
    maca = chain(("cpp", "launcher", "at::native::launch_vectorized_kernel",
                  "aten/src/ATen/native/cuda/CUDALoops.cuh", 174))[0]
    assert sweep.placeholder_reason(maca, table) is None
    assert sweep.vendor_reason(maca, table).startswith("#if defined(USE_MACA) (off in stock CUDA, on with USE_MACA)")
    raises = chain(("cpp", "raises", "sort (x.cpp:3) only raises", "x.cpp", 3, {"absent": True}))[0]
    assert sweep.placeholder_reason(raises, None) == "only raises"
    # a file named like a placeholder is not a rule (1.8's ConvPlaceholders.cpp holds real wrappers)
    wrapper = chain(("cpp", "function", "at::native::cudnn_convolution_deprecated",
                     "aten/src/ATen/native/cudnn/ConvPlaceholders.cpp", 105))[0]
    assert sweep.placeholder_reason(wrapper, table) is None


def test_another_platforms_code_dispatch_key_or_registration_is_another_device():
    for file in ("aten/src/ATen/native/cpu/Activation.cpp", "aten/src/ATen/native/mps/operations/Linear.mm",
                 "aten/src/ATen/native/miopen/RNN_miopen.cpp", "aten/src/ATen/native/mkldnn/Conv.cpp"):
        hop = chain(("cpp", "function", "f", file, 1))[0]
        assert sweep.other_device_reason(hop) == "another platform's folder", file
    for file in ("aten/src/ATen/native/cuda/Loops.cuh", "aten/src/ATen/native/cudnn/RNN.cpp",
                 "aten/src/ATen/native/BinaryOps.cpp", YAML):
        assert sweep.other_device_reason(chain(("cpp", "function", "f", file, 1))[0]) is None, file
    cpu = chain(("dispatch", "CPU", "CPU: add_out", YAML, 3))[0]
    both = chain(("dispatch", "CPU, CUDA", "CPU, CUDA: add_out", YAML, 3))[0]
    composite = chain(("dispatch", "CompositeImplicitAutograd", "CompositeImplicitAutograd: lstm", YAML, 3))[0]
    assert sweep.other_device_reason(cpu) == "dispatch key CPU"
    assert sweep.other_device_reason(both) is None and sweep.other_device_reason(composite) is None
    reg = chain(("registration", "REGISTER_CPU_DISPATCH", "CPU: k", "aten/src/ATen/native/X.cpp", 3))[0]
    assert sweep.other_device_reason(reg) == "registered by REGISTER_CPU_DISPATCH"
    assert sweep.classify([cpu], "add.out")["other_device"][0] is cpu


def test_a_chain_that_starts_at_another_overload_is_counted_apart():
    hops = chain(("native", "entry", "aten::all.dim", YAML, 1, {"op": "all.dim"}))
    assert sweep.classify(hops, "all")["other_overload"][1] == "starts at all.dim"
    assert "other_overload" not in sweep.classify(hops, "all.dim")
