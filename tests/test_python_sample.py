"""The Python layer of the bundled sample_checkout: exact rows (restricted to torch/, the Python sample)."""
from __future__ import annotations


def q(ix, sql, **p):
    return [tuple(r.values()) for r in ix.rows(sql, p)]


def test_symbol_counts(ix):
    assert q(ix, "SELECT kind, count(*) FROM symbols WHERE language = 'python' AND file LIKE 'torch/%' "
                 "GROUP BY kind ORDER BY kind") == [("class", 11), ("function", 29), ("method", 22)]


def test_lstm_forward_and_its_bridge(ix):
    assert q(ix, "SELECT file, line, end_line, kind, scope, signature FROM symbols "
                 "WHERE qualified_name = 'torch.nn.modules.rnn.LSTM.forward'") == [
        ("torch/nn/modules/rnn.py", 29, 32, "method", "LSTM", "(self, input, hx=None)")]
    assert q(ix, "SELECT line, kind, namespace, op, overload, text FROM python_bridges "
                 "WHERE caller = 'torch.nn.modules.rnn.LSTM.forward'") == [(30, "VF", "_VF", "lstm", None, "_VF.lstm")]


def test_functional_bridges(ix):
    rows = q(ix, "SELECT line, caller, kind, namespace, op, overload, text FROM python_bridges "
                 "WHERE file = 'torch/nn/functional.py' ORDER BY line, text")
    fn = "torch.nn.functional"
    assert rows == [
        (9, "", "c_namespace", "_nn", "linear", None, "torch._C._nn.linear"),
        (16, f"{fn}.relu", "torch", "torch", "relu_", None, "torch.relu_"),
        (17, f"{fn}.relu", "torch", "torch", "relu", None, "torch.relu"),
        (21, f"{fn}.layer_norm", "torch", "torch", "layer_norm", None, "torch.layer_norm"),
        (26, f"{fn}.softmax", "tensor_method", "Tensor", "softmax", None, "input.softmax"),
        (27, f"{fn}.softmax", "tensor_method", "Tensor", "softmax", None, "input.softmax"),
        (31, f"{fn}.matmul_2d", "torch_ops", "aten", "mm", "default", "torch.ops.aten.mm.default"),
        (35, f"{fn}.add_scaled", "torch_ops", "aten", "add", "Tensor", "aten.add.Tensor"),
        (40, f"{fn}.cross_entropy", "torch", "torch", "log_softmax", None, "torch.log_softmax"),
        (41, f"{fn}.cross_entropy", "tensor_method", "Tensor", "unsqueeze", None, "target.unsqueeze"),
        (49, f"{fn}.gelu_tanh", "torch", "torch", "tanh", None, "torch.tanh"),
        (50, f"{fn}.gelu_tanh", "torch", "torch", "add", None, "torch.add"),
        (50, f"{fn}.gelu_tanh", "torch", "torch", "mul", None, "torch.mul"),
    ]
    # torch-function plumbing is a call, never a bridge
    assert q(ix, "SELECT callee FROM calls WHERE caller = 'torch.nn.functional.relu' ORDER BY line, callee") == [
        ("has_torch_function_unary",), ("handle_torch_function",), ("relu_",), ("relu",)]


def test_tensor_class_bridges(ix):
    # self is a Tensor only inside class Tensor; self.relu().relu has a call as receiver: not a parameter
    assert q(ix, "SELECT caller, kind, op, text FROM python_bridges WHERE file = 'torch/_tensor.py' ORDER BY line") == [
        ("torch._tensor.Tensor.__rsub__", "variable_functions", "rsub", "_C._VariableFunctions.rsub"),
        ("torch._tensor.Tensor.double_relu", "tensor_method", "relu", "self.relu"),
    ]


def test_module_state(ix):
    rows = q(ix, "SELECT line, name, kind FROM module_state WHERE class_name = 'torch.nn.modules.linear.Linear' "
                 "ORDER BY line, name")
    assert rows == [(9, "bias", "init_param"), (9, "in_features", "init_param"), (9, "out_features", "init_param"),
                    (11, "weight", "parameter"), (13, "bias", "parameter"), (15, "bias", "parameter")]
    rows = q(ix, "SELECT line, name, kind FROM module_state WHERE class_name = 'torch.nn.modules.rnn.RNNBase' "
                 "AND kind != 'init_param' ORDER BY line")
    assert rows == [(19, "weight_ih_l0", "parameter"), (20, "weight_hh_l0", "parameter"),
                    (22, "_sample_steps", "buffer")]


def test_class_bases(ix):
    assert q(ix, "SELECT class_name, base FROM class_bases WHERE file LIKE 'torch/nn/%' ORDER BY class_name") == [
        ("torch.nn.modules.activation.ReLU", "Module"), ("torch.nn.modules.activation.Softmax", "Module"),
        ("torch.nn.modules.linear.Linear", "Module"), ("torch.nn.modules.normalization.LayerNorm", "Module"),
        ("torch.nn.modules.rnn.LSTM", "RNNBase"), ("torch.nn.modules.rnn.RNNBase", "Module"),
        ("torch.nn.parameter.Parameter", "torch.Tensor")]


def test_reexports(ix):
    assert q(ix, "SELECT name, target, kind FROM python_imports WHERE module = 'torch.nn' ORDER BY line") == [
        ("*", "torch.nn.modules", "from"), ("Parameter", "torch.nn.parameter.Parameter", "from"),
        ("functional", "torch.nn.functional", "from")]
    assert q(ix, "SELECT count(*) FROM python_imports WHERE module = 'torch.nn.modules' AND kind = 'all'") == [(7,)]
    assert q(ix, "SELECT name, target FROM python_imports WHERE kind = 'alias' AND file LIKE 'torch/%' "
                 "ORDER BY file, line") == [
        ("aten", "torch.ops.aten"), ("aten", "torch.ops.aten"), ("aten", "torch.ops.aten"),
        ("aten", "torch.ops.aten"), ("linear", "torch._C._nn.linear")]


def test_decompositions(ix):
    assert q(ix, "SELECT file, line, op, overload, kind, function FROM decompositions ORDER BY file, line, overload") == [
        ("torch/_decomp/decompositions.py", 8, "threshold_backward", None, "decomposition",
         "torch._decomp.decompositions.threshold_backward"),
        ("torch/_decomp/decompositions.py", 13, "mm", "default", "decomposition", "torch._decomp.decompositions.mm"),
        ("torch/_decomp/decompositions.py", 13, "mm", "out", "decomposition", "torch._decomp.decompositions.mm"),
        ("torch/_decomp/decompositions.py", 18, "clamp_min", None, "decomposition",
         "torch._decomp.decompositions.clamp_min"),
        ("torch/_meta_registrations.py", 16, "mm", "default", "meta", "torch._meta_registrations.meta_mm"),
        ("torch/_meta_registrations.py", 16, "mm", "out", "meta", "torch._meta_registrations.meta_mm"),
        ("torch/_refs/__init__.py", 11, "relu", None, "reference", "torch._refs.relu"),
        ("torch/_refs/__init__.py", 15, "add", None, "reference", "torch._refs.add"),
    ]


def test_stubs_indexed(ix):
    assert q(ix, "SELECT line, signature FROM symbols WHERE qualified_name = 'torch._C._VariableFunctions.add' "
                 "ORDER BY line") == [(8, "(input: Tensor, other: Tensor, *, alpha=1)"),
                                      (10, "(input: Tensor, other: float, alpha=1)")]
    assert q(ix, "SELECT path FROM files WHERE language = 'python' AND parse_errors > 0 AND path LIKE 'torch/%'") == []


def test_a_binding_called_through_its_python_name_is_shown_at_the_assignment(ix):
    """Linear.forward calls F.linear (torch/nn/modules/linear.py:18); F.linear is `linear =
    _add_docstr(torch._C._nn.linear, ...)` (torch/nn/functional.py:9): the bridge hop is that assignment, called
    at the forward's line."""
    t = ix.trace("nn.Linear")
    bridge = next(h for h in t.hops if h.layer == "bridge")
    assert (bridge.name, bridge.file, bridge.line, bridge.called_at) == (
        "torch._C._nn.linear", "torch/nn/functional.py", 9, "torch/nn/modules/linear.py:18")
    assert bridge.detail.endswith("(its Python name is assigned here; called at torch/nn/modules/linear.py:18)")
