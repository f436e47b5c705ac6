"""A bare name defined for several devices resolves to the traced device's definition, or is ambiguous when none
is the device's; __global__ kernels of one name in several files are told apart (issue 29, item 4)."""
from __future__ import annotations

import pytest


def test_a_name_defined_for_cpu_and_cuda_traces_the_devices_definition(ix):
    cuda = ix.trace("LayerNormKernelImpl", device="cuda")
    assert (cuda.hops[0].file, cuda.hops[0].line) == ("aten/src/ATen/native/cuda/layer_norm_kernel.cu", 44)
    assert all(h.file != "aten/src/ATen/native/cpu/layer_norm_kernel.cpp" for h in cuda.hops)
    assert cuda.message == ("at::native::LayerNormKernelImpl is defined for CPU/CUDA: the CUDA definition is traced "
                            "(the others: CPU at aten/src/ATen/native/cpu/layer_norm_kernel.cpp:16; --device picks "
                            "another)")
    assert f"note: {cuda.message}" in cuda.to_text()
    cpu = ix.trace("LayerNormKernelImpl", device="cpu")
    assert (cpu.hops[0].file, cpu.hops[0].line) == ("aten/src/ATen/native/cpu/layer_norm_kernel.cpp", 16)


def test_a_name_with_no_definition_for_the_device_is_ambiguous(ix):
    mps = ix.trace("LayerNormKernelImpl", device="mps")
    assert mps.hops == [] and not mps.unknown  # exit 2 from the CLI: name one
    assert mps.message == ("at::native::LayerNormKernelImpl is defined for CPU/CUDA, not for --device mps: name one "
                           "of the candidates")
    assert mps.candidates == [
        "at::native::LayerNormKernelImpl (cpp, aten/src/ATen/native/cpu/layer_norm_kernel.cpp:16)",
        "at::native::LayerNormKernelImpl (cpp, aten/src/ATen/native/cuda/layer_norm_kernel.cu:44)"]


def test_name_at_file_picks_the_definitions_of_that_file(ix):
    t = ix.trace("LayerNormKernelImpl@cpu/layer_norm_kernel.cpp", device="cuda")
    assert (t.hops[0].file, t.hops[0].line) == ("aten/src/ATen/native/cpu/layer_norm_kernel.cpp", 16)


def test_kernels_of_one_name_in_two_files_are_told_apart_on_2_4(real_index):
    t = real_index.trace("RowwiseMomentsCUDAKernel")
    # group_norm_kernel.cu:37 and layer_norm_kernel.cu:62: `__global__ void RowwiseMomentsCUDAKernel(`; each is
    # launched in its own file only (:620 `RowwiseMomentsCUDAKernel<T><<<N * G, ...`, :891 `...<<<M, ...`)
    roots = [h for h in t.hops if h.parent is None]
    assert [(h.file, h.line) for h in roots] == [("aten/src/ATen/native/cuda/group_norm_kernel.cu", 37),
                                                ("aten/src/ATen/native/cuda/layer_norm_kernel.cu", 62)]
    assert [[(k.file, k.line) for k in t.children(r.id)] for r in roots] == [
        [("aten/src/ATen/native/cuda/group_norm_kernel.cu", 620)],
        [("aten/src/ATen/native/cuda/layer_norm_kernel.cu", 891)]]
    assert t.message == (
        "'RowwiseMomentsCUDAKernel' names __global__ kernels of 2 files, each shown with its own launches; NAME@FILE "
        "traces one: at::native::RowwiseMomentsCUDAKernel@aten/src/ATen/native/cuda/group_norm_kernel.cu, "
        "at::native::RowwiseMomentsCUDAKernel@aten/src/ATen/native/cuda/layer_norm_kernel.cu")
    layer = real_index.trace("RowwiseMomentsCUDAKernel@layer_norm_kernel.cu")
    assert [(h.file, h.line) for h in layer.main_chain()[:2]] == [
        ("aten/src/ATen/native/cuda/layer_norm_kernel.cu", 62), ("aten/src/ATen/native/cuda/layer_norm_kernel.cu", 891)]
    assert all("group_norm" not in (h.file or "") for h in layer.hops if h.layer == "cuda")


@pytest.mark.parametrize("device, where", [("cuda", ("aten/src/ATen/native/cuda/layer_norm_kernel.cu", 901)),
                                           ("cpu", ("aten/src/ATen/native/cpu/layer_norm_kernel.cpp", 164))])
def test_layer_norm_kernel_impl_on_2_4_is_the_devices(real_index, device, where):
    t = real_index.trace("LayerNormKernelImpl", device=device)  # `void LayerNormKernelImpl(` at both lines
    assert (t.hops[0].file, t.hops[0].line) == where
