"""One home per PyTorch concept (opindex/pytorch/): the tables others read are derived from it, not written twice."""
from __future__ import annotations

from opindex.extract.cpp_conditions import preprocessor
from opindex.extract.cpp_names import launch_kind
from opindex.extract.native_yaml import is_out_fn
from opindex.indexer.definitions import _disjuncts
from opindex.profile import attribute, kernel_name
from opindex.pytorch import devices, launchers, receivers, syntax, tensor_methods
from opindex.pytorch.devices import BACKENDS, VENDOR_PLATFORMS


def test_platform_folders_macros_and_options_derive_from_the_backends_and_vendor_platforms():
    vendor_folders = {f: p.name for p in VENDOR_PLATFORMS for f in p.folders}
    for b in BACKENDS:
        for f in (*b.folders, *b.library_folders):
            assert devices.PLATFORM_FOLDERS[f] == vendor_folders.get(f, b.device)
        for m in b.macros:
            assert devices.PLATFORM_MACROS[m] == b.device
    for p in VENDOR_PLATFORMS:
        assert p.device in {b.device for b in BACKENDS}
        for m in p.macros:
            assert devices.PLATFORM_MACROS[m] == p.name
    assert devices.OPTION_PLATFORMS == {b.option: (b.device,) for b in BACKENDS if b.option}
    # what the hand-written tables said before they were derived (plus xpu/, which is XPU's folder)
    assert devices.PLATFORM_FOLDERS == {
        "miopen": "ROCm", "hip": "ROCm", "mkldnn": "CPU", "mkl": "CPU", "xnnpack": "CPU", "cpu": "CPU", "mps": "MPS",
        "vulkan": "Vulkan", "metal": "Metal", "cudnn": "CUDA", "cuda": "CUDA", "xpu": "XPU"}
    assert devices.PLATFORM_MACROS == {"USE_ROCM": "ROCm", "__HIP_PLATFORM_HCC__": "ROCm",
                                       "__HIP_PLATFORM_AMD__": "ROCm", "USE_MPS": "MPS"}
    assert devices.platform_of("aten/src/ATen/native/miopen/RNN_miopen.cpp") == "ROCm"
    assert not devices.runs_on("aten/src/ATen/native/miopen/RNN_miopen.cpp", "cuda")
    assert devices.platform_off("defined(USE_ROCM)", "cuda") and not devices.platform_off("defined(USE_ROCM)", "all")


def test_launcher_vendor_suffixes_come_from_the_platform_tables():
    suffixes = {s for row in (*BACKENDS, *VENDOR_PLATFORMS) for s in row.launcher_suffixes}
    assert set(devices.LAUNCHER_VENDOR_SUFFIXES) == suffixes == {"maca", "hip", "rocm", "nv"}
    for s in suffixes:
        assert launchers.is_launcher(f"gpu_kernel_{s}_arity1")
        assert launch_kind(f"gpu_kernel_impl_{s}", "") == "tensor_iterator"
    assert not launchers.is_launcher("gpu_kernel_foo") and not launchers.is_launcher("gpu_kernel_arity")
    assert launchers.is_launcher("gpu_kernel_impl_nocast") and launchers.is_launcher("launch_vectorized_kernel")


def test_the_profile_and_the_extractor_share_one_launcher_list():
    for name in launchers.TENSOR_ITERATOR_LAUNCHERS | {"gpu_kernel_impl", "gpu_kernel_impl_nocast"}:
        assert kernel_name.is_infra(name)
        assert launch_kind(name, "") == "tensor_iterator"
    assert not set(kernel_name.INFRA) & launchers.TENSOR_ITERATOR_LAUNCHERS  # not written twice
    assert kernel_name.is_infra("OffsetCalculator") and not kernel_name.is_infra("sum_functor")


def test_non_tensor_results_are_built_on_the_metadata_accessors():
    assert receivers.NON_TENSOR_ACCESSORS is tensor_methods.METADATA_ACCESSORS
    assert tensor_methods.METADATA_ACCESSORS < tensor_methods.NON_TENSOR_RESULTS
    # a receiver `opt.value()` may be a Tensor, `x.item()` runs a kernel: results, not accessors
    assert receivers.may_be_tensor("bias.value()", None) and not receivers.may_be_tensor("x.options()", None)
    assert not receivers.metadata_query("item") and receivers.metadata_query("sizes")


def test_one_top_level_splitter_for_each_bracket_kind():
    split = syntax.split_top_level
    assert split("a<b, c>, d") == ["a<b, c>", " d"]
    assert split("f(a, b), c") == ["f(a, b)", " c"]
    assert split("x[1, 2], y") == ["x[1, 2]", " y"]
    assert split("T{1, 2}, z") == ["T{1, 2}", " z"]
    assert split("a<b, c>, d", brackets="([") == ["a<b", " c>", " d"]  # only the brackets asked for
    assert split("T{1, 2}, z", brackets="<([") == ["T{1", " 2}", " z"]
    assert split("a,,b,") == ["a", "", "b", ""]
    assert split("a || (b || c) || d", "||", brackets="(") == ["a ", " (b || c) ", " d"]
    # its callers, as they were
    assert receivers.split_parameters("(const Tensor& a, std::pair<int, int> b = {1, 2}, )") == \
        ["const Tensor& a", " std::pair<int, int> b = {1, 2}"]
    assert _disjuncts("defined(A) || !(B || C)") == ["defined(A) ", " !(B || C)"]
    assert is_out_fn("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert not is_out_fn("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert attribute._targs_agree("<4, func_t, std::array<char*, 2>>", ["4", "FillFunctor<float>", "x"])
    assert not attribute._targs_agree("<4, func_t>", ["2", "FillFunctor<float>"])


def test_one_define_reader():
    text = (b"#define A(x, \\\n  y) body(x) \\\n  more(y)\n  // #define B(z) not\n"
            b"  #  define C(z) z\n#define D 1\n")
    found = [(m.group(1), m.group(2), syntax.define_body(m.group(3).decode())) for m in syntax.function_defines(text)]
    assert found == [(b"A", b"x, \\\n  y", " body(x)    more(y)"), (b"C", b"z", " z")]
    assert syntax.define_at(b"#define D 1\n", 0) == "D" and syntax.define_at(b"int x;\n", 0) is None
    # the include guard test reads #defines with it
    assert preprocessor(b"#ifndef X_H\n#define X_H\nint a;\n#endif\n") == []
