"""The Python extractor on small inline sources: exact rows."""
from __future__ import annotations

import textwrap

import pytest

from opindex.extract.python import extract
from opindex.pytorch.python_rules import absolute_import, classify
from opindex.records import FACT_ROWS

F = "torch/nn/modules/rnn.py"
M = "torch.nn.modules.rnn"


def run(src: str, path: str = F, module: str | None = M):
    return extract(path, textwrap.dedent(src).lstrip("\n").encode(), module)


def rows(src, table, path=F, module=M, cols=None):
    facts = run(src, path, module)
    out = facts.rows.get(table, [])
    if cols:
        idx = [FACT_ROWS[table]._fields.index(c) for c in cols]
        out = [tuple(r[i] for i in idx) for r in out]
    return sorted(out, key=lambda r: tuple(str(x) for x in r))


def test_symbols_kinds_scopes_and_signatures():
    src = '''
    class RNNBase(Module):
        def __init__(self, mode: str,
                     input_size):
            def helper(x):
                pass

        @property
        async def flat(self): ...

    def top(a, *args, **kw) -> int:
        class Local:
            pass
    '''
    got = rows(src, "symbols")
    assert got == sorted([
        (F, 1, 8, "python", "class", "RNNBase", f"{M}.RNNBase", "", None, False, None, None, None),
        (F, 2, 5, "python", "method", "__init__", f"{M}.RNNBase.__init__", "RNNBase",
         "(self, mode: str, input_size)", False, None, None, None),
        (F, 4, 5, "python", "function", "helper", f"{M}.RNNBase.__init__.helper", "RNNBase.__init__", "(x)", False,
         None, None, None),
        (F, 8, 8, "python", "method", "flat", f"{M}.RNNBase.flat", "RNNBase", "(self)", False, None, None, None),
        (F, 10, 12, "python", "function", "top", f"{M}.top", "", "(a, *args, **kw)", False, None, None, None),
        (F, 11, 12, "python", "class", "Local", f"{M}.top.Local", "top", None, False, None, None, None),
    ], key=lambda r: tuple(str(x) for x in r))


def test_package_module_and_no_module():
    got = rows("def f(): pass\n", "symbols", path="torch/nn/__init__.py", module="torch.nn", cols=("qualified_name",))
    assert got == [("torch.nn.f",)]
    assert rows("def f(): pass\n", "symbols", module=None, cols=("qualified_name",)) == [("f",)]


def test_class_bases_as_written():
    got = rows("class A(nn.Module, Generic[T], metaclass=Meta):\n    pass\nclass B: pass\n", "class_bases")
    assert got == [(F, 1, f"{M}.A", "Generic[T]", 1), (F, 1, f"{M}.A", "nn.Module", 0)]


def test_calls_caller_callee_qualifier():
    src = '''
    import torch
    import torch.nn.functional as F
    x = torch.relu(y)

    class C:
        z = make()
        def forward(self, input):
            super().__init__()
            return F.relu(self.lin(input)).sum()
    '''
    got = rows(src, "calls", cols=("line", "caller", "callee", "qualifier", "is_method"))
    fwd = f"{M}.C.forward"
    assert got == sorted([
        (3, "", "relu", "torch", False),
        (6, f"{M}.C", "make", "", False),
        (8, fwd, "super", "", False),
        (8, fwd, "__init__", "super()", True),
        (9, fwd, "relu", "F", False),
        (9, fwd, "lin", "self", True),
        (9, fwd, "sum", "F.relu(self.lin(input))", True),
    ], key=lambda r: tuple(str(x) for x in r))


def test_imports_relative_and_star_and_all():
    src = '''
    import torch
    import torch.nn.functional
    import torch.nn.functional as F
    from torch import _VF
    from . import functional as G
    from .module import Module
    from .. import init
    from ...utils import hooks
    from .rnn import *
    if TYPE_CHECKING:
        from typing import Any
    def f():
        from torch import _C
    __all__ = ["Module", 'LSTM']
    __all__ += ("GRU",)
    __all__.append("RNN")
    '''
    got = rows(src, "python_imports", path="torch/nn/modules/__init__.py", module="torch.nn.modules",
               cols=("line", "name", "target", "kind"))
    assert got == sorted([
        (1, "torch", "torch", "import"),
        (2, "torch.nn.functional", "torch.nn.functional", "import"),
        (3, "F", "torch.nn.functional", "import"),
        (4, "_VF", "torch._VF", "from"),
        (5, "G", "torch.nn.modules.functional", "from"),
        (6, "Module", "torch.nn.modules.module.Module", "from"),
        (7, "init", "torch.nn.init", "from"),
        (8, "hooks", "torch.utils.hooks", "from"),
        (9, "*", "torch.nn.modules.rnn", "from"),
        (11, "Any", "typing.Any", "from"),
        (14, "Module", "torch.nn.modules", "all"),
        (14, "LSTM", "torch.nn.modules", "all"),
        (15, "GRU", "torch.nn.modules", "all"),
        (16, "RNN", "torch.nn.modules", "all"),
    ], key=lambda r: tuple(str(x) for x in r))


def test_absolute_import():
    assert absolute_import("torch.nn", ".modules") == "torch.nn.modules"
    assert absolute_import("torch.nn.modules", "..") == "torch.nn"
    assert absolute_import("torch.nn.modules", "..functional") == "torch.nn.functional"
    assert absolute_import("torch", "torch.nn") == "torch.nn"


BRIDGES = '''
import torch
import torch.nn.functional as F
from torch import _VF, Tensor
from torch._C import _add_docstr
from torch.overrides import has_torch_function, handle_torch_function
aten = torch._ops.ops.aten
_fft = torch._C._fft
linear = _add_docstr(torch._C._nn.linear, "doc")
fft = _add_docstr(_fft.fft_fft, "doc")
conv2d = torch.conv2d
F2 = torch.nn.functional

def lstm(input, hx, reduction: str, other: Tensor, n: int):
    if has_torch_function(input):
        return handle_torch_function(lstm, (input,), input)
    _VF.lstm(input, hx)
    torch._C._VariableFunctions.rnn_tanh(input)
    torch._C._linalg.linalg_vector_norm(input)
    torch.ops.aten.mm.default(input, input)
    aten.add(input, input)
    torch.ops.prims.convert_element_type(input)
    torch.relu(input)
    torch.no_grad()
    torch.Size([1])
    torch.cuda.synchronize()
    F.relu(input)
    input.softmax(1)
    other.sum()
    reduction.lower()
    n.bit_length()
    conv2d(input)
    self_like = input.__len__()
    torch.ops.load_library("x")
    torch._C._get_tracing_state()

class Tensor(torch._C.TensorBase):
    def double(self):
        return self.relu()

class Other:
    def m(self, x):
        return self.relu() + x.relu()
'''


def test_bridges_classified():
    got = rows(BRIDGES, "python_bridges", cols=("line", "caller", "kind", "namespace", "op", "overload", "text"))
    fn = f"{M}.lstm"
    assert got == sorted([
        (8, "", "c_namespace", "_nn", "linear", None, "torch._C._nn.linear"),
        (9, "", "c_namespace", "_fft", "fft_fft", None, "_fft.fft_fft"),
        (10, "", "torch", "torch", "conv2d", None, "torch.conv2d"),
        (16, fn, "VF", "_VF", "lstm", None, "_VF.lstm"),
        (17, fn, "variable_functions", "_VariableFunctions", "rnn_tanh", None,
         "torch._C._VariableFunctions.rnn_tanh"),
        (18, fn, "c_namespace", "_linalg", "linalg_vector_norm", None, "torch._C._linalg.linalg_vector_norm"),
        (19, fn, "torch_ops", "aten", "mm", "default", "torch.ops.aten.mm.default"),
        (20, fn, "torch_ops", "aten", "add", None, "aten.add"),
        (21, fn, "torch_ops", "prims", "convert_element_type", None, "torch.ops.prims.convert_element_type"),
        (22, fn, "torch", "torch", "relu", None, "torch.relu"),
        (27, fn, "tensor_method", "Tensor", "softmax", None, "input.softmax"),
        (28, fn, "tensor_method", "Tensor", "sum", None, "other.sum"),
        (31, fn, "torch", "torch", "conv2d", None, "conv2d"),
        (38, f"{M}.Tensor.double", "tensor_method", "Tensor", "relu", None, "self.relu"),
        (42, f"{M}.Other.m", "tensor_method", "Tensor", "relu", None, "x.relu"),
    ], key=lambda r: tuple(str(x) for x in r))


def test_aliases_are_imports_too():
    got = rows(BRIDGES, "python_imports", cols=("line", "name", "target", "kind"))
    aliases = [r for r in got if r[3] == "alias"]
    assert aliases == sorted([
        (6, "aten", "torch.ops.aten", "alias"), (7, "_fft", "torch._C._fft", "alias"),
        (8, "linear", "torch._C._nn.linear", "alias"), (9, "fft", "torch._C._fft.fft_fft", "alias"),
        (10, "conv2d", "torch.conv2d", "alias"), (11, "F2", "torch.nn.functional", "alias"),
    ], key=lambda r: tuple(str(x) for x in r))


def test_classify_rule():
    assert classify("torch.empty") == ("torch", "torch", "empty", None)
    assert classify("torch._foo") == ("torch", "torch", "_foo", None)
    assert classify("torch.Tensor") is None
    assert classify("torch.no_grad") is None
    assert classify("torch.__version__") is None
    assert classify("torch.nn.functional.relu") is None
    assert classify("torch._has_torch_function") is None
    assert classify("torch._C._fft.fft_fft") == ("c_namespace", "_fft", "fft_fft", None)
    assert classify("torch._C._functions.x") is None
    assert classify("torch._ops.ops.aten.mm.out") == ("torch_ops", "aten", "mm", "out")


def test_module_state():
    src = '''
    class Linear(Module):
        def __init__(self, in_features: int, out_features, *, bias=True, **kw):
            super().__init__()
            self.weight = Parameter(torch.empty(3))
            self.scale = nn.Parameter(x)
            self.lazy = UninitializedParameter()
            self.other = Thing()
            self.register_parameter('bias', None)
            self.register_buffer("running_mean", torch.zeros(1))
            self.register_buffer(name, None)

        def reset(self):
            self.extra = torch.nn.parameter.Parameter(y)

    def free(self):
        self.w = Parameter(z)
    '''
    got = rows(src, "module_state", cols=("line", "class_name", "name", "kind"))
    c = f"{M}.Linear"
    assert got == sorted([
        (2, c, "in_features", "init_param"), (2, c, "out_features", "init_param"), (2, c, "bias", "init_param"),
        (2, c, "kw", "init_param"), (4, c, "weight", "parameter"), (5, c, "scale", "parameter"),
        (6, c, "lazy", "parameter"), (8, c, "bias", "parameter"), (9, c, "running_mean", "buffer"),
        (13, c, "extra", "parameter"),
    ], key=lambda r: tuple(str(x) for x in r))


def test_decompositions_forms():
    src = '''
    import torch
    from torch._decomp import register_decomposition
    aten = torch._ops.ops.aten

    @register_decomposition(aten.threshold_backward)
    def tb(g, s, t): ...

    @register_decomposition([aten.addmm.default, aten.addmm.out])
    @out_wrapper()
    def addmm(a, b, c): ...

    @decomp.register_decomposition(torch.ops.aten.silu)
    def silu(a): ...

    @register_meta(aten.mm.default)
    def meta_mm(a, b): ...

    @register_decomposition(some_list)
    def dynamic(a): ...
    '''
    got = rows(src, "decompositions", path="torch/_decomp/decompositions.py", module="torch._decomp.decompositions",
               cols=("line", "op", "overload", "kind", "function"))
    d = "torch._decomp.decompositions"
    assert got == sorted([
        (6, "threshold_backward", None, "decomposition", f"{d}.tb"),
        (10, "addmm", "default", "decomposition", f"{d}.addmm"),
        (10, "addmm", "out", "decomposition", f"{d}.addmm"),
        (13, "silu", None, "decomposition", f"{d}.silu"),
        (16, "mm", "default", "meta", f"{d}.meta_mm"),
    ], key=lambda r: tuple(str(x) for x in r))


def test_refs_rule_registered_or_exported():
    src = '''
    __all__ = ["abs", "add", "sub"]

    @register_decomposition(aten.add)
    def add(a, b): ...

    @_make_elementwise_unary_reference(KIND)
    def abs(a): ...

    def _private(a): ...

    def exported_later(a): ...

    class sub:
        pass
    '''
    got = rows(src, "decompositions", path="torch/_refs/__init__.py", module="torch._refs",
               cols=("line", "op", "overload", "kind", "function"))
    assert got == [(4, "add", None, "reference", "torch._refs.add"), (7, "abs", None, "reference", "torch._refs.abs")]


def test_module_level_helpers_that_register_an_op():
    src = '''
    import torch
    aten = torch._ops.ops.aten

    def abs(a): ...

    abs_ = _make_inplace(abs)
    register_inplace(aten.addbmm_, aten.addbmm)
    _create_binary_float_meta_func(aten.special_zeta)
    diagonal_copy = _make_copy_from_view(aten.diagonal)
    other_helper(aten.mm)
    register_inplace(some_list[0], aten.mm)

    def inside():
        register_inplace(aten.mul_, aten.mul)
    '''
    got = rows(src, "decompositions", path="torch/_refs/__init__.py", module="torch._refs",
               cols=("line", "op", "overload", "kind", "function"))
    # the op the first argument names, or the one named like the variable bound; none inside a def or for an
    # argument that names no op
    assert got == [(6, "abs_", None, "reference", "torch._refs.abs"),
                   (7, "addbmm_", None, "reference", "torch._refs.register_inplace"),
                   (8, "special_zeta", None, "meta", "torch._refs._create_binary_float_meta_func"),
                   (9, "diagonal_copy", None, "reference", "torch._refs._make_copy_from_view")]


def test_pyi_stubs_are_symbols():
    src = '''
    from typing import overload
    @overload
    def add(input: Tensor, other: Tensor, *, alpha=1) -> Tensor: ...
    @overload
    def add(input: Tensor, other: Number) -> Tensor: ...
    '''
    got = rows(src, "symbols", path="torch/_C/_VariableFunctions.pyi", module="torch._C._VariableFunctions",
               cols=("line", "qualified_name", "signature"))
    assert got == [(3, "torch._C._VariableFunctions.add", "(input: Tensor, other: Tensor, *, alpha=1)"),
                   (5, "torch._C._VariableFunctions.add", "(input: Tensor, other: Number)")]


def test_broken_source_counts_errors_and_keeps_the_rest():
    src = '''
    def good(x):
        return torch.relu(x)

    def bad(:
        )))

    class After(Module):
        def forward(self, input):
            return torch.tanh(input)
    '''
    facts = run(src)
    assert facts.parse_errors >= 1 and facts.message
    names = {r[6] for r in facts.rows["symbols"]}
    assert {f"{M}.good", f"{M}.After", f"{M}.After.forward"} <= names
    ops = {r[5] for r in facts.rows["python_bridges"]}
    assert {"relu", "tanh"} <= ops


@pytest.mark.parametrize("data", [b"", b"\x00\xff\xfe garbage \x80", b"def f(:\n" * 50, "é = 1\n".encode("latin-1")])
def test_never_raises(data):
    facts = extract(F, data, M)
    assert isinstance(facts.parse_errors, int)


def test_deep_nesting_is_iterative():
    depth = 400
    src = "".join("    " * i + f"def f{i}(x):\n" for i in range(depth)) + "    " * depth + "return torch.relu(x)\n"
    facts = extract(F, src.encode(), M)
    assert len(facts.rows["symbols"]) == depth
    deepest = ".".join(f"f{i}" for i in range(depth))
    assert facts.rows["python_bridges"][0][2] == f"{M}.{deepest}"
    nested = b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n"
    assert extract(F, nested, M).rows["symbols"] == []


def test_a_call_through_a_local_name_calls_what_the_name_holds():
    """torch.optim.adamw.adamw(): `func = _fused_adamw` / `_multi_tensor_adamw` by flags, then `func(...)`."""
    src = """
        import torch
        def _fused(p): pass
        def _foreach(p): pass
        def adamw(p, fused):
            if fused:
                func = _fused
            else:
                func = torch._foreach_add_
            func(p)
            x = None
            x(p)
        """
    assert sorted(rows(src, "calls", cols=("line", "caller", "callee", "qualifier", "is_method"))) == [
        (9, "torch.nn.modules.rnn.adamw", "_foreach_add_", "torch", 0),
        (9, "torch.nn.modules.rnn.adamw", "_fused", "", 0),
        (9, "torch.nn.modules.rnn.adamw", "func", "", 0),
        (11, "torch.nn.modules.rnn.adamw", "x", "", 0)]
    assert rows(src, "python_bridges", cols=("line", "op", "text")) == [(9, "_foreach_add_", "torch._foreach_add_")]


def test_boolean_dispatch_objects_name_both_branch_defs():
    # torch/nn/functional.py: max_pool2d calls one of two defs by the value of return_indices
    src = """
        from torch._jit_internal import boolean_dispatch
        def max_pool2d_with_indices(input, kernel_size, return_indices=False): ...
        def _max_pool2d(input, kernel_size, return_indices=False): ...
        max_pool2d = boolean_dispatch(
            arg_name="return_indices",
            arg_index=6,
            default=False,
            if_true=max_pool2d_with_indices,
            if_false=_max_pool2d,
            module_name=__name__,
            func_name="max_pool2d",
        )
        def inner():
            local = boolean_dispatch(if_true=_max_pool2d, if_false=_max_pool2d)
        """
    got = rows(src, "python_imports", path="torch/nn/functional.py", module="torch.nn.functional",
               cols=("line", "name", "target", "kind"))
    assert sorted(r for r in got if r[3] == "dispatch") == [
        (4, "max_pool2d", "torch.nn.functional._max_pool2d", "dispatch"),
        (4, "max_pool2d", "torch.nn.functional.max_pool2d_with_indices", "dispatch")]  # not the one inside a def


def test_the_vf_module_of_pytorch_1_4_is_torch_vf():
    # 1.4's torch/nn/functional.py: `from . import _VF` (torch/nn/_VF.py forwards to torch._C._VariableFunctions)
    assert classify("torch.nn._VF.dropout") == classify("torch._VF.dropout") == ("VF", "_VF", "dropout", None)
    facts = extract("torch/nn/functional.py", textwrap.dedent("""
        from . import _VF
        def dropout(input, p=0.5, training=True, inplace=False):
            return (_VF.dropout_(input, p, training)
                    if inplace
                    else _VF.dropout(input, p, training))
        """).encode(), "torch.nn.functional")
    assert [(r[1], r[3], r[5]) for r in facts.rows["python_bridges"]] == [(4, "VF", "dropout_"), (6, "VF", "dropout")]
