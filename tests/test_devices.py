"""The device table (opindex/pytorch/devices.py) is the one place a backend is declared."""
from __future__ import annotations

from click.testing import CliRunner

from opindex.indexer.discover import classify
from opindex.cli import main
from opindex.extract.cpp_names import device_from_path, registration
from opindex.pytorch import devices


def test_registration_device_comes_from_where_the_file_is_compiled():
    assert device_from_path("aten/src/ATen/native/cuda/Foo.cu") == "CUDA"
    assert device_from_path("aten/src/ATen/native/cudnn/RNN.cpp") == "CUDA"
    assert device_from_path("aten/src/ATen/native/cpu/cuda_named/Foo.cpp") == "CPU"  # the deepest folder decides
    assert device_from_path("aten/src/ATen/native/mps/operations/Foo.mm") == "MPS"
    assert device_from_path("aten/src/ATen/native/Foo.cpp") == "CPU"
    assert registration("REGISTER_XPU_DISPATCH", ["s", "k"], "x.cpp")[1] == "XPU"
    assert registration("REGISTER_NO_CPU_DISPATCH", ["s"], "x.cpp")[1] == "CPU"


def test_literal_devices():
    assert [devices.literal_device(t) for t in ("kCUDA", "at::kCPU", "c10::DeviceType::MPS", "DeviceType::XPU",
                                                "iter.device_type()", "CUDA", "kFoo")] == \
        ["CUDA", "CPU", "MPS", "XPU", None, None, None]


def test_device_code_folders_are_the_cuda_layer_but_cuda_the_language_is_not_a_device():
    assert classify("aten/src/ATen/native/cudnn/Conv_v7.cpp") == ("cpp", "cuda")
    assert classify("aten/src/ATen/native/cuda/Loops.cuh") == ("cuda", "cuda")
    assert classify("aten/src/ATen/native/cpu/Loops.h") == ("cpp", "cpp")


def test_the_cli_offers_every_backend_with_an_option():
    out = CliRunner().invoke(main, ["trace", "--help"]).output
    assert "[cpu|cuda|mps|xpu|all]" in out
    assert devices.DEVICE_OPTIONS == tuple(b.option for b in devices.BACKENDS if b.option) + ("all",)


def test_which_calls_are_calls_of_the_op_api():
    call = devices.op_api_call
    assert call("at", "at::native::f", linked=False) and call("at::_ops", "f", linked=True)
    # torchgen's per-key API, unless the call links a helper of that name
    assert call("at::cuda", "at::native::f", linked=False) and not call("at::cuda", "at::native::f", linked=True)
    # a bare call in namespace at finds at::x (AdaptiveAveragePooling.cpp:138 `_adaptive_avg_pool2d_symint(...)`)
    assert call("", "at::native::adaptive_avg_pool2d_symint", linked=False)
    assert not call("", "at::native::adaptive_avg_pool2d_symint", linked=True)  # a helper defined for it
    assert not call("", "c10::cuda::f", linked=False) and not call("cpublas", "at::native::f", linked=False)
