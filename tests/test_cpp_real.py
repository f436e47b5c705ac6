"""The C++ extractor on files of a real PyTorch checkout (the 2.4 tree, docs/testing.md); skipped without one.

Only facts PyTorch has kept for many releases are asserted; the accuracy over the whole tree is
benchmarks/accuracy.py's job."""
from __future__ import annotations

import pytest

from opindex.extract.cpp import extract

from conftest import no_tree, real_checkout

ROOT = real_checkout()
# ROOT is read at import: the tier is named here (conftest marks a test `real` from what its functions call)
pytestmark = [pytest.mark.real, pytest.mark.skipif(ROOT is None, reason=no_tree("2.4"))]
NATIVE = "aten/src/ATen/native/"


def facts(rel: str):
    path = ROOT / rel
    if not path.is_file():
        pytest.skip(f"{rel} is not in this checkout")
    return extract(rel, path.read_bytes(), "cuda" if rel.endswith((".cu", ".cuh")) else "cpp")


def test_rnn_stubs_come_from_a_token_pasting_macro():
    f = facts(NATIVE + "RNN.cpp")
    generated = {(r[2], r[3]) for r in f.rows["dispatch_stubs"] if r[5]}
    assert {("gru_cudnn_stub", "define"), ("rnn_tanh_miopen_stub", "define")} <= generated
    # lstm has two hidden states: its stubs are written out by hand
    assert ("lstm_cudnn_stub", "define", None) in {(r[2], r[3], r[5]) for r in f.rows["dispatch_stubs"]}
    regs = {(r[2], r[4]) for r in f.rows["dispatch_registrations"] if r[7]}
    assert ("gru_cudnn_stub", "REGISTER_NO_CPU_DISPATCH") in regs
    assert any(r[2] == "lstm_cudnn_stub" for r in f.rows["stub_calls"])


def test_cudnn_rnn_registrations():
    f = facts(NATIVE + "cudnn/RNN.cpp")
    regs = {(r[2], r[3], r[5]) for r in f.rows["dispatch_registrations"]}
    assert ("lstm_cudnn_stub", "lstm_cudnn", "CUDA") in regs
    assert ("gru_cudnn_stub", "gru_cudnn", "CUDA") in regs  # from the ONE_HIDDEN_RNN macro
    assert any(r[2] == "cudnn" and r[3].startswith("cudnn") for r in f.rows["library_calls"])


def test_structured_kernels_in_binary_ops():
    f = facts(NATIVE + "BinaryOps.cpp")
    kinds = {(r[5], r[4]) for r in f.rows["symbols"]}
    assert ("add_Tensor", "meta_func") in kinds
    assert ("sub_out", "impl_func") in kinds  # add.out's kernel is generated from ufunc_inner_loop
    assert any(r[2] == "div_true_stub" and r[3] == "define" for r in f.rows["dispatch_stubs"])
    # CREATE_COMPARISON_SCALAR_TENSOR_IMPL_FUNC(eq) pastes eq##_Tensor_out and calls eq##_stub
    generated = {(r[5], r[10]) for r in f.rows["symbols"] if r[4] == "impl_func" and r[10]}
    assert ("eq_Tensor_out", "CREATE_COMPARISON_SCALAR_TENSOR_IMPL_FUNC") in generated
    assert any(r[2] == "eq_stub" and r[4] == "at::native::structured_eq_Tensor_out" for r in f.rows["stub_calls"])


def test_registration_family_in_dispatchstub_h():
    f = facts(NATIVE + "DispatchStub.h")
    names = {r[2] for r in f.rows["macros"]}
    assert {"REGISTER_DISPATCH", "REGISTER_CUDA_DISPATCH", "REGISTER_NO_CPU_DISPATCH", "DECLARE_DISPATCH"} <= names
    assert f.rows["dispatch_registrations"] == []


def test_launch_bounds_do_not_hide_global_kernels():
    f = facts(NATIVE + "cuda/CUDALoops.cuh")
    kernels = {r[5] for r in f.rows["symbols"] if r[4] == "global_kernel"}
    assert "vectorized_elementwise_kernel" in kernels


def test_facts_of_a_split_brace_branch_keep_their_function_s_namespace():
    """layer_norm_kernel.cu: `#ifdef USE_MACA if (...) { #endif ... #ifdef USE_MACA } else { ... launches ... #endif`.
    The launches of the blanked side come from reading the file as written, which loses the namespaces around
    launch_vectorized_layer_norm_kernel; they are named by the function the chosen side read on those lines."""
    f = facts(NATIVE + "cuda/layer_norm_kernel.cu")
    launches = {(r.line, r.kernel, r.caller) for r in f.rows["kernel_launches"]}
    caller = "at::native::launch_vectorized_layer_norm_kernel"
    assert {(782, "vectorized_layer_norm_kernel", caller), (807, "vectorized_layer_norm_kernel_opt_wave1", caller),
            (827, "vectorized_layer_norm_kernel_opt_pass1", caller),
            (846, "vectorized_layer_norm_kernel_opt", caller)} <= launches
