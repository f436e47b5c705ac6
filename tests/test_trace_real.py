"""Traces on real trees: the installed torch wheel (Python, YAML and backward layers) whenever torch is installed,
and the PyTorch 2.4 source tree (docs/testing.md; down to CUDA code or a library call)."""
from __future__ import annotations

import pytest

from opindex.api import Index, build


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    pytest.importorskip("torch")
    db = tmp_path_factory.mktemp("wheel") / "wheel.sqlite"
    # the layers a wheel has: Python, the .pyi bindings and the packaged registries (headers are not needed here)
    build(None, db, installed=True, exclude=("torch/include", "torch/testing", "torch/_inductor", "torch/distributed",
                                             "torch/onnx", "torch/_dynamo", "torch/fx", "torch/ao", "torch/export"))
    with Index(db) as ix:
        yield ix


def names(t, layer):
    return [h.name for h in t.hops if h.layer == layer and not h.absent]


def test_wheel_lstm(wheel):
    t = wheel.trace("nn.LSTM")
    assert t.hops[0].name == "torch.nn.modules.rnn.LSTM"
    assert "torch.nn.modules.rnn.LSTM.forward" in names(t, "python")
    assert "_VF.lstm" in names(t, "bridge")
    assert {"aten::lstm.input", "aten::lstm.data"} <= set(names(t, "native"))
    assert any(h.absent and h.name.startswith("no C++ definition of lstm") for h in t.hops)  # headers only


def test_wheel_relu(wheel):
    t = wheel.trace("F.relu")
    assert t.hops[0].name == "torch.nn.functional.relu"
    assert {"torch.relu", "torch.relu_"} <= set(names(t, "bridge"))
    assert "aten::relu" in names(t, "native")
    assert "self: threshold_backward(grad, result, 0)" in names(t, "backward")


def test_wheel_add(wheel):
    t = wheel.trace("torch.add")
    assert t.hops[0].detail.startswith("no Python wrapper: bound from variants:")
    assert {"aten::add.Tensor", "aten::add.out"} <= set(names(t, "native"))
    assert any(n.startswith("Generic: add") for n in (h.name for h in t.hops if h.kind == "ufunc_inner_loop"))
    assert "derivatives.yaml: add.Tensor" in names(t, "backward")


def test_wheel_mm(wheel):
    t = wheel.trace("torch.mm")
    assert {"aten::mm", "aten::mm.out"} <= set(names(t, "native"))
    backward = names(t, "backward")
    assert "derivatives.yaml: mm" in backward
    assert any(b.startswith("self: mm_mat1_backward(") for b in backward)


def test_wheel_layer_norm(wheel):
    t = wheel.trace("F.layer_norm")
    assert t.hops[0].name == "torch.nn.functional.layer_norm"
    assert "torch.layer_norm" in names(t, "bridge")
    assert "aten::layer_norm" in names(t, "native")
    assert any(h.kind == "dispatch" or h.layer == "dispatch" for h in t.hops)


# -- a source tree --------------------------------------------------------------------------------------------------
def _kernel(hop, name: str) -> bool:
    """A __global__ kernel hop whose (qualified) name contains `name`."""
    return hop.name.startswith("__global__ ") and name in hop.name


# What each trace must reach on the PyTorch 2.4 tree (a PyTorch engineer's answer; see the closing notes).
REACHES = {
    "relu": lambda t: any("gpu_kernel" in h.name for h in t.ends()),
    "add": lambda t: any(h.kind == "ufunc_inner_loop" and "ufunc::add" in h.name for h in t.ends()),
    "mm": lambda t: "at::cuda::blas::gemm" in [h.name for h in t.ends()],
    "nn.LSTM": lambda t: any(h.layer == "library" and h.name.startswith("cudnn") for h in t.ends()),
    "F.layer_norm": lambda t: any(_kernel(h, "LayerNormForwardCUDAKernel") for h in t.ends()),
    "F.softmax": lambda t: any(_kernel(h, "cunn_SoftMaxForward") for h in t.ends()),
    "F.cross_entropy": lambda t: any(_kernel(h, "cunn_SoftMaxForward") for h in t.ends()),
    "F.conv2d": lambda t: "cudnnBackendExecute" in [h.name for h in t.ends()],
}


@pytest.fixture(scope="module")
def source_tree(real_index):
    """The 2.4 tree's index, built once per session: conftest's real_index, the same build this module used to make
    of its own."""
    return real_index


@pytest.mark.parametrize("name", sorted(REACHES))
def test_source_tree_trace_reaches_device_code(source_tree, name):
    t = source_tree.trace(name)
    assert REACHES[name](t), [f"{h.layer}:{h.name}" for h in t.ends()]


def test_source_tree_add_runs_the_kernel_torchgen_writes(source_tree):
    # add.out has ufunc_inner_loop and no CUDA kernel in the source: torchgen's compute_ufunc_cuda
    # (torchgen/dest/ufunc.py:284) writes ufunc_add_CUDA, whose text calls gpu_kernel(iter, ufunctor) at :268; the
    # Generic inner loop at::native::ufunc::add (ufunc/add.h:15) is the math its functor runs, a branch beside it
    t = source_tree.trace("torch.add")
    chain = [(h.layer, h.name, h.file, h.line) for h in t.main_chain()]
    yaml = "aten/src/ATen/native/native_functions.yaml"
    assert chain[1:4] == [("native", "aten::add.Tensor", yaml, 547), ("native", "aten::add.out", yaml, 570),
                          ("dispatch", "CUDA: ufunc_add_CUDA", yaml, 570)]
    assert chain[5:7] == [("codegen", "torchgen.dest.ufunc.compute_ufunc_cuda", "torchgen/dest/ufunc.py", 284),
                          ("cuda", "gpu_kernel", "torchgen/dest/ufunc.py", 268)]
    assert any(h.kind == "ufunc_inner_loop" and h.name == "Generic: at::native::ufunc::add"
               and (h.file, h.line) == ("aten/src/ATen/native/ufunc/add.h", 15) for h in t.hops)
    # the launcher's first launch, vectorized_elementwise_kernel_nullary_opt (CUDALoops.cuh:197, `if (narity == 0`),
    # is for functors of no inputs: add's two reach vectorized_elementwise_kernel (:63), launched at :223 (vec 4)
    assert [(h.name, h.file, h.line) for h in t.main_chain()[-2:]] == [
        ("vectorized_elementwise_kernel<4, func_t, array_t><<<grid, num_threads(), 0, stream>>>",
         "aten/src/ATen/native/cuda/CUDALoops.cuh", 223),
        ("__global__ at::native::vectorized_elementwise_kernel", "aten/src/ATen/native/cuda/CUDALoops.cuh", 63)]
