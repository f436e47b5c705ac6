"""`opindex coverage` on the PyTorch 2.4 tree (MetaX-MACA/mcPytorch): each expectation read from the source at the
file:line it names (skips without the tree)."""
from __future__ import annotations

import pytest

YAML = "aten/src/ATen/native/native_functions.yaml"


@pytest.fixture(scope="module")
def rows(real_index):
    keys = ["QuantizedCPU", "CPU", "CUDA", "MPS", "XPU", "Meta", "CompositeImplicitAutograd",
            "CompositeExplicitAutograd"]
    ops = ["quantized::add", "quantized_lstm", "c10d::allreduce_", "add", "vdot", "layer_norm", "prims::add", "relu",
           "cross_entropy_loss", "linear"]
    return {(r["op"], r["key"]): r for r in real_index.coverage(keys, ops=ops).rows}


def _where(row):
    return row["status"], row["file"], row["line"], row["registered_line"], row["kernel"]


def test_manual_registrations_carry_the_call_and_the_block(rows):
    # BinaryOps.cpp:474 `TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) {`, 475 `m.impl(...("quantized::add"), ...`
    assert _where(rows[("quantized::add", "QuantizedCPU")]) == (
        "kernel", "aten/src/ATen/native/quantized/cpu/BinaryOps.cpp", 475, 474, "qadd< false>")
    # RNN.cpp:1963 `TORCH_LIBRARY_IMPL(aten, CPU, m) {`, 1965 `m.impl(...("aten::quantized_lstm.data"), ...`; the op is
    # defined by m.def in TORCH_LIBRARY_FRAGMENT(aten, m) at RNN.cpp:1934, not in native_functions.yaml
    assert _where(rows[("aten::quantized_lstm.data", "CPU")]) == (
        "kernel", "aten/src/ATen/native/RNN.cpp", 1965, 1963, "quantized_lstm_data")
    assert rows[("aten::quantized_lstm.data", "CUDA")]["status"] == "missing"


def test_a_macro_that_writes_a_block_per_key_registers_each(rows):
    # Ops.cpp:503 `REGISTER_C10D_OP(allreduce_)`: REGISTER_C10D_OP1(FUNC, DEV) (Ops.cpp:485) pastes FUNC##DEV
    for key in ("CPU", "CUDA"):
        assert _where(rows[("c10d::allreduce_", key)]) == (
            "kernel", "torch/csrc/distributed/c10d/Ops.cpp", 503, 503, f"allreduce_{key}")


def test_yaml_delegate_composite_and_fallback(rows):
    # add.Tensor: structured_delegate add.out (native_functions.yaml:562), whose entry at :570 is a ufunc
    assert _where(rows[("aten::add.Tensor", "CUDA")]) == ("inherited", YAML, 570, None, "ufunc_add_CUDA")
    # layer_norm: `CompositeImplicitAutograd: layer_norm_symint` under the entry at native_functions.yaml:3256
    assert _where(rows[("aten::layer_norm", "CompositeImplicitAutograd")]) == (
        "composite_implicit", YAML, 3258, None, "layer_norm_symint")
    # vdot has no MPS row: MPSFallback.mm:75 `TORCH_LIBRARY_IMPL(_, MPS, m)`, :80 `m.fallback(...<&mps_fallback>())`
    assert _where(rows[("aten::vdot", "MPS")]) == ("fallback", "aten/src/ATen/mps/MPSFallback.mm", 80, 75,
                                                   "mps_fallback")


def test_python_registrations(rows):
    # torch/_refs/nn/functional/__init__.py:254 `def relu(`: activate_meta registers it as relu's Meta kernel
    assert _where(rows[("aten::relu", "Meta")]) == (
        "kernel", "torch/_refs/nn/functional/__init__.py", 254, None, "torch._refs.nn.functional.relu")
    # torch/_prims/__init__.py:107 `"add",` in __all__: prims::add is made by _make_elementwise_binary_prim
    assert _where(rows[("prims::add", "CompositeExplicitAutograd")]) == (
        "composite_explicit", "torch/_prims/__init__.py", 107, None, "torch._prims.add")


def test_a_composite_names_what_a_backend_lacks(rows):
    # cross_entropy_loss (CIA, native_functions.yaml:9286) -> at::nll_loss_nd_symint (LossNLL.cpp:651, CIA :11535)
    # -> at::nll_loss2d_symint (LossNLL.cpp:705, CIA :11572) -> at::nll_loss2d_forward_symint (LossNLL2d.cpp:499),
    # whose rows are CPU, CUDA and MPS only (:11584-11586): XPU inherits cross_entropy_loss but for that op
    assert rows[("aten::cross_entropy_loss", "XPU")]["lacks"] == ["nll_loss2d_forward"]
    assert rows[("aten::cross_entropy_loss", "CUDA")]["lacks"] == []
    assert rows[("aten::linear", "XPU")]["lacks"] == []


@pytest.fixture(scope="module")
def meta_rows(real_index):
    ops = ["put_", "_add_relu_.Tensor", "_foreach_add_.Scalar", "clone", "zeros_like", "special_zeta.other_scalar",
           "mkldnn::_convolution_pointwise"]
    return {r["op"]: (r["status"], r["file"], r["line"], r["kernel"], r["via"])
            for r in real_index.coverage(["Meta"], ops=ops).rows}


def test_meta_kernels_torchgen_writes_for_inplace_ops(meta_rows):
    # native_functions.yaml:8025 `- func: put_(...) -> Tensor(a!)` (`CPU, CUDA: put_` only) and :591
    # `_add_relu_.Tensor` (`CPU: add_relu_`): the dispatcher's Meta kernel of each is in the generated RegisterMeta.cpp
    assert meta_rows["aten::put_"] == ("kernel", YAML, 8025, "meta", "inplace meta")
    assert meta_rows["aten::_add_relu_.Tensor"] == ("kernel", YAML, 591, "meta", "inplace meta")
    # _foreach_add_.Scalar returns `()`: no in-place Meta kernel; its CompositeExplicitAutograd row (:10339) serves
    assert meta_rows["aten::_foreach_add_.Scalar"][:3] == ("composite_explicit", YAML, 10339)


def test_meta_python_registrations_activate_meta_makes_or_leaves(meta_rows):
    # torch/_meta_registrations.py:6155 `"aten::clone",` in activate_meta's `elif op_overload.name() in {...}: pass`:
    # clone keeps `CompositeExplicitAutograd: clone` (native_functions.yaml:6787); clone.out, not on the list, gets
    # torch/_refs/__init__.py:1928's `def clone(` (registered by @register_decomposition(aten.clone) at :1926)
    assert meta_rows["aten::clone"] == ("composite_explicit", YAML, 6787, "clone", "CompositeExplicitAutograd")
    assert meta_rows["aten::clone.out"] == ("kernel", "torch/_refs/__init__.py", 1928, "torch._refs.clone", "python")
    # zeros_like has CompositeImplicitAutogradNestedTensor only: _meta_registrations.py:4732 `def zeros_like(`
    assert meta_rows["aten::zeros_like"][:3] == ("kernel", "torch/_meta_registrations.py", 4732)
    # torch/_refs/special/__init__.py:236 `def zeta(` under @_make_elementwise_binary_reference (:233): the
    # factory registers it for aten.special_zeta
    assert meta_rows["aten::special_zeta.other_scalar"] == (
        "kernel", "torch/_refs/special/__init__.py", 236, "torch._refs.special.zeta", "python")
    # _meta_registrations.py:2258 `@register_meta(torch.ops.mkldnn._convolution_pointwise.default)` on :2259's def
    assert meta_rows["mkldnn::_convolution_pointwise"] == (
        "kernel", "torch/_meta_registrations.py", 2259, "torch._meta_registrations.meta_mkldnn_convolution_default",
        "python")
