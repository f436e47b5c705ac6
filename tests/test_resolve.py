"""Name resolution over the sample index: re-exports, conventional aliases, inherited members, native bindings."""
from __future__ import annotations

import time

import pytest

from opindex.trace.names import resolve


def got(ix, name):
    return [(r.kind, r.qualified_name, r.file, r.line) for r in resolve(ix.con, name)]


LSTM = ("python_class", "torch.nn.modules.rnn.LSTM", "torch/nn/modules/rnn.py", 25)
RELU = ("python_function", "torch.nn.functional.relu", "torch/nn/functional.py", 12)
YAML = "aten/src/ATen/native/native_functions.yaml"


@pytest.mark.parametrize("name", ["nn.LSTM", "torch.nn.LSTM", "torch.nn.modules.LSTM", "torch.nn.modules.rnn.LSTM"])
def test_lstm_through_reexports(ix, name):
    assert got(ix, name) == [LSTM]


@pytest.mark.parametrize("name", ["F.relu", "torch.nn.functional.relu", "nn.functional.relu"])
def test_functional(ix, name):
    assert got(ix, name) == [RELU]


def test_how_it_was_reached(ix):
    (r,) = resolve(ix.con, "nn.LSTM")
    assert r.via == ("nn.LSTM", "torch.nn.LSTM", "torch.nn.modules.LSTM", "torch.nn.modules.rnn.LSTM")
    assert not r.stub


def test_torch_function_is_stub_plus_native(ix):
    assert got(ix, "torch.relu") == [
        ("python_function", "torch._C._VariableFunctions.relu", "torch/_C/_VariableFunctions.pyi", 5),
        ("native_function", "aten::relu", YAML, 4)]
    assert [r.stub for r in resolve(ix.con, "torch.relu")] == [True, False]


def test_torch_add_all_function_overloads(ix):
    natives = [g for g in got(ix, "torch.add") if g[0] == "native_function"]
    assert natives == [("native_function", "aten::add.Tensor", YAML, 33), ("native_function", "aten::add.out", YAML, 43),
                       ("native_function", "aten::add.Scalar", YAML, 51)]


def test_tensor_method_without_python_def_is_the_yaml_method_variant(ix):
    assert got(ix, "Tensor.add_") == [("native_function", "aten::add_.Tensor", YAML, 39)]
    assert got(ix, "torch.Tensor.softmax") == [
        ("python_function", "torch._C.TensorBase.softmax", "torch/_C/__init__.pyi", 6),
        ("native_function", "aten::softmax.int", YAML, 107)]
    assert got(ix, "Tensor.__rsub__") == [("python_function", "torch._tensor.Tensor.__rsub__", "torch/_tensor.py", 8)]


def test_alias_to_c_namespace(ix):
    assert got(ix, "F.linear") == [("python_function", "torch._C._nn.linear", "torch/_C/_nn.pyi", 4),
                                   ("native_function", "aten::linear", YAML, 80)]


def test_vf_and_ops(ix):
    assert got(ix, "torch._VF.lstm") == [("native_function", "aten::lstm.input", YAML, 83)]
    assert got(ix, "torch.ops.aten.mm.default") == [("native_function", "aten::mm", YAML, 70)]
    assert got(ix, "aten.mm.out") == [("native_function", "aten::mm.out", YAML, 74)]
    assert [g[1] for g in got(ix, "torch.ops.aten.mm")] == ["aten::mm", "aten::mm.out"]


def test_inherited_member(ix):
    assert got(ix, "nn.Linear.register_buffer") == [
        ("python_function", "torch.nn.modules.module.Module.register_buffer", "torch/nn/modules/module.py", 10)]


def test_unknown(ix):
    assert resolve(ix.con, "nn.NoSuchThing") == []
    assert resolve(ix.con, "x'; DROP TABLE symbols; --") == []


def bridge_hops(ix, name):
    """What a Python name reaches in C++, as the trace shows it (the live API; names.bridges_of is gone)."""
    return [(h.line, h.kind, h.name) for h in ix.trace(name).hops if h.layer == "bridge"]


def test_bridges_in_the_trace(ix):
    assert bridge_hops(ix, "nn.LSTM") == [(30, "VF", "_VF.lstm")]  # through LSTM.forward
    assert bridge_hops(ix, "F.linear") == [(9, "c_namespace", "torch._C._nn.linear")]  # a module-level alias
    assert [name for _, _, name in bridge_hops(ix, "F.relu")] == ["torch.relu_", "torch.relu"]


def test_fast(ix):
    start = time.perf_counter()
    for _ in range(20):
        resolve(ix.con, "nn.LSTM")
        resolve(ix.con, "Tensor.add_")
    assert (time.perf_counter() - start) / 40 < 0.05
