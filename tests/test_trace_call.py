"""Tracing a call, not only a name (issue 28, point 3): the call string read with ast, its values bound to the def
or schema, and the main chain they choose on the sample checkout with tests/data/call_sample laid over it (a loss
whose CUDA kernel `reduction` chooses, a def whose op `mode` and the input's rank choose; kept apart so the
sample's own counts and golden traces stay as they are)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from opindex.cli import main
from opindex.model import OpindexError
from opindex.pytorch.call_expr import CallError, Tensor, Unknown, looks_like_call, parse_call

LOSS = "aten/src/ATen/native/cuda/Loss.cu"
RUNTIME_CALLS = Path(__file__).resolve().parent.parent / "benchmarks" / "runtime_calls.txt"


OVERLAY = Path(__file__).resolve().parent / "data" / "call_sample"


@pytest.fixture(scope="module")
def call_db(tmp_path_factory) -> Path:
    """The sample checkout, the overlay's files added and its `appended/` files appended, built once."""
    from opindex.api import build
    from conftest import SAMPLE
    root = tmp_path_factory.mktemp("call-sample") / "checkout"
    shutil.copytree(SAMPLE, root)
    for f in OVERLAY.rglob("*"):
        rel = f.relative_to(OVERLAY)
        if f.is_file() and rel.parts[0] != "appended":
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, root / rel)
    for f in (OVERLAY / "appended").rglob("*"):
        if f.is_file():
            target = root / f.relative_to(OVERLAY / "appended")
            target.write_text(target.read_text() + f.read_text())
    db = root.parent / "call.sqlite"
    build(str(root), db, jobs=1)
    return db


@pytest.fixture(scope="module")
def ix(call_db):
    from opindex.api import Index
    with Index(call_db) as index:
        yield index


def _end(t):
    h = t.main_chain()[-1]
    return h.name, h.file, h.line


# -- reading the call string ------------------------------------------------------------------------------------
def test_a_call_is_read_into_its_callee_values_and_tensors():
    c = parse_call("F.interpolate(torch.randn(8, 16, 32, 32), scale_factor=2, mode='bilinear')")
    assert c.callee == "F.interpolate"
    assert c.args == [Tensor("float32", (8, 16, 32, 32), "torch.randn(8, 16, 32, 32)")]
    assert c.kwargs == {"scale_factor": 2, "mode": "bilinear"}
    assert c.args[0].dim() == 4 and c.args[0].numel() == 131072 and c.args[0].size(-1) == 32


def test_tensor_factories_give_dtype_and_sizes_as_torch_does():
    c = parse_call("f(torch.randint(0, 10, (4, 3)), torch.arange(0, 256, 8), torch.empty((2, 5), "
                   "dtype=torch.bfloat16), torch.randn(3, 3) > 0, torch.tensor([[1.0, 2.0]]), torch.full((2,), 7),"
                   " torch.arange(0.0, 1.0, 0.25), x, [torch.zeros(2), None])")
    a = c.args
    assert (a[0].dtype, a[0].sizes) == ("int64", (4, 3))
    assert (a[1].dtype, a[1].sizes) == ("int64", (32,))
    assert (a[2].dtype, a[2].sizes) == ("bfloat16", (2, 5))
    assert (a[3].dtype, a[3].sizes) == ("bool", (3, 3))
    assert (a[4].dtype, a[4].sizes) == ("float32", (1, 2))
    assert (a[5].dtype, a[5].sizes) == ("float32", (2,))
    assert (a[6].dtype, a[6].sizes) == ("float32", (4,))
    assert a[7] == Unknown("x")  # a name: unknown, kept as written
    assert [w for w, _ in c.tensors()] == ["#0", "#1", "#2", "#3", "#4", "#5", "#6", "#8[0]"]


def test_a_module_call_and_a_tensor_method_name_their_callee():
    m = parse_call("nn.LSTM(64, 128, batch_first=True)(torch.randn(32, 8, 64))")
    assert (m.callee, m.module_args, m.module_kwargs) == ("nn.LSTM", [64, 128], {"batch_first": True})
    assert m.args[0].sizes == (32, 8, 64)
    t = parse_call("torch.randn(4, 4, dtype=torch.float16).add_(1, alpha=2)")
    assert (t.callee, t.args[0].dtype, t.args[1:], t.kwargs) == ("Tensor.add_", "float16", [1], {"alpha": 2})


@pytest.mark.parametrize("text, says", [
    ("F.relu(torch.randn(4)", "not Python"),
    ("F.relu", "it is not a call"),
    ("F.relu(torch.randn(4, dtype=torch.float17))", "dtype=torch.float17 is not one of"),
    ("F.relu(*xs)", "*args and **kwargs"),
    ("f()[0](x)", "is not a dotted name"),
    ("(x + 1).add_(2)", "the callee x + 1 is not a dotted name"),
    ("foo(1).add_(2)", "foo(1) is not a tensor, so .add_(...) names no Tensor method"),
])
def test_a_bad_call_string_is_refused_naming_what_could_not_be_read(text, says):
    with pytest.raises(CallError, match=None) as e:
        parse_call(text)
    assert says in str(e.value) and repr(text) in str(e.value)


def test_names_are_not_mistaken_for_calls():
    assert looks_like_call("F.relu(torch.randn(4))")
    for name in ("F.relu", "operator()", "at::native::relu", "void at::native::k<float>(float*)", "relu@Foo.cu"):
        assert not looks_like_call(name)


def test_every_runtime_benchmark_call_is_read():
    """benchmarks/runtime_calls.txt: every call (100) parses, with a dotted callee and at least one tensor or a
    factory's own sizes."""
    calls = [line.split("  # chooses:")[0].strip() for line in RUNTIME_CALLS.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(calls) == 100
    parsed = [parse_call(c) for c in calls]
    assert all(looks_like_call(c) for c in calls)
    assert all(p.callee.replace(".", "").replace("_", "").isalnum() for p in parsed)
    no_tensor = [p.callee for p in parsed if not p.tensors()]
    assert no_tensor == ["torch.randn", "torch.rand", "torch.zeros"]
    assert sum(isinstance(v, Unknown) for p in parsed for v in [*p.args, *p.kwargs.values()]) == 0


# -- the main chain a call's values choose (sample checkout) ----------------------------------------------------
def test_reduction_none_runs_the_no_reduce_kernel_and_the_default_the_reducing_one(ix):
    """F.nll_loss passes `_Reduction.get_enum(reduction)` (torch/nn/_reduction.py, read: 'none' -> 0) to
    `int reduction=Mean`; nll_loss_cuda tests `if (reduction == Reduction::None)` (Loss.cu:32)."""
    none = ix.trace("F.nll_loss(torch.randn(4, 10), torch.randint(0, 10, (4,)), reduction='none')")
    mean = ix.trace("F.nll_loss(torch.randn(4, 10), torch.randint(0, 10, (4,)))")
    assert _end(none) == ("__global__ at::native::nll_loss_no_reduce_kernel", LOSS, 10)
    assert _end(mean) == ("__global__ at::native::nll_loss_reduce_kernel", LOSS, 19)
    launch = next(h for h in mean.hops if h.kernel == "nll_loss_no_reduce_kernel" and h.layer == "cuda"
                  and h.line == 33)
    assert [(c.text, c.line, c.assumed) for c in launch.conditions] == [("reduction == Reduction::None", 32, False)]


def test_a_string_argument_and_the_input_rank_choose_the_op(ix):
    """normalize_rows: `if input.dim() == 2 and mode == "argmax": return torch.argmax(input, 1)`, else
    input.softmax(1) (the overlay's lines of the sample's torch/nn/functional.py, 61-63)."""
    argmax = ix.trace("F.normalize_rows(torch.randn(4, 8), mode='argmax')")
    softmax = ix.trace("F.normalize_rows(torch.randn(4, 8))")
    rank3 = ix.trace("F.normalize_rows(torch.randn(2, 4, 8), mode='argmax')")
    assert _end(argmax) == ("gpu_reduce_kernel", "aten/src/ATen/native/cuda/ReduceArgMaxKernel.cu", 10)
    kernel = ("__global__ at::native::cunn_SoftMaxForward", "aten/src/ATen/native/cuda/SoftMax.cu", 9)
    assert _end(softmax) == kernel and _end(rank3) == kernel
    bridges = {(h.name, h.line): [c.assumed for c in h.conditions] for h in softmax.hops if h.layer == "bridge"}
    assert bridges == {("torch.argmax", 62): [False], ("input.softmax", 63): []}


def test_the_call_is_in_the_header_and_the_json(ix):
    t = ix.trace("F.nll_loss(torch.randn(4, 10), torch.randint(0, 10, (4,)), reduction='none')")
    assert t.query == "F.nll_loss" and t.dtype == "float32"
    text = t.to_text(context=0)
    assert text.splitlines()[0].startswith("opindex trace F.nll_loss(torch.randn(4, 10), torch.randint(0, 10, "
                                           "(4,)), reduction='none')   (top-down")
    assert "Call: F.nll_loss(input=float32[4x10], target=int64[4], reduction='none')" in text
    d = t.to_dict()
    assert d["version"] == 4
    assert d["call"] == {"callee": "F.nll_loss", "text": "F.nll_loss(torch.randn(4, 10), torch.randint(0, 10, "
                         "(4,)), reduction='none')",
                         "args": [{"name": "input", "value": "torch.randn(4, 10)", "source": "given"},
                                  {"name": "target", "value": "torch.randint(0, 10, (4,))", "source": "given"},
                                  {"name": "reduction", "value": "none", "source": "given"}],
                         "tensors": [{"name": "input", "dtype": "float32", "sizes": [4, 10]},
                                     {"name": "target", "dtype": "int64", "sizes": [4]}],
                         "notes": []}
    assert ix.trace("F.relu").to_dict()["call"] is None


def test_a_binding_with_no_python_def_binds_the_schema(ix):
    t = ix.trace("torch.add(torch.randn(4, dtype=torch.float16), torch.randn(4, dtype=torch.float16), alpha=2)")
    assert t.dtype == "float16"
    assert [(a["name"], a["value"], a["source"]) for a in t.call["args"]] == [
        ("self", "torch.randn(4, dtype=torch.float16)", "given"),
        ("other", "torch.randn(4, dtype=torch.float16)", "given"), ("alpha", 2, "given")]


def test_the_dtype_comes_from_the_tensors_and_a_contradicting_one_is_an_error(ix):
    assert ix.trace("F.relu(torch.randn(4, dtype=torch.bfloat16))").dtype == "bfloat16"
    assert ix.trace("F.relu(torch.randn(4, dtype=torch.bfloat16))", dtype="bfloat16").dtype == "bfloat16"
    with pytest.raises(OpindexError, match="--dtype float16 contradicts the call: its input is bfloat16"):
        ix.trace("F.relu(torch.randn(4, dtype=torch.bfloat16))", dtype="float16")
    with pytest.raises(OpindexError, match="does not fit torch.nn.functional.relu"):
        ix.trace("F.relu(torch.randn(4), True, 3)")


def test_the_cli_traces_a_call_and_refuses_a_bad_one(call_db):
    ok = CliRunner().invoke(main, ["trace", "F.nll_loss(torch.randn(4, 10), torch.randint(0, 10, (4,)), "
                                   "reduction='none')", "--json", "--db", str(call_db)])
    assert ok.exit_code == 0, ok.output
    d = json.loads(ok.stdout)
    assert d["hops"][d["main_chain"][-1]]["kernel"] == "nll_loss_no_reduce_kernel"
    bad = CliRunner().invoke(main, ["trace", "F.nll_loss(torch.randn(4, 10)", "--db", str(call_db)])
    assert bad.exit_code == 2
    assert "cannot read the call 'F.nll_loss(torch.randn(4, 10)': not Python" in bad.output
    unknown = CliRunner().invoke(main, ["trace", "F.no_such_thing(torch.randn(4))", "--db", str(call_db)])
    assert unknown.exit_code == 1 and "'F.no_such_thing' is not a Python name" in unknown.output


def test_trace_help_shows_a_call():
    out = CliRunner().invoke(main, ["trace", "--help"]).output
    assert "opindex trace \"F.interpolate(torch.randn(8, 16, 32, 32), scale_factor=2, mode='bilinear')\"" in out


def test_an_int_for_a_fixed_size_int_list_is_that_many_of_it():
    """Python's argument parser makes `F.adaptive_avg_pool2d(x, 1)`'s output_size (`SymInt[2]`) [1, 1]; an int[]
    of no fixed size, and a value that is no int, stay as given."""
    from opindex.trace.call import bind_schema
    known, _ = bind_schema("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", [Unknown("x"), 1], {})
    assert known == {"output_size": [1, 1]}
    known, _ = bind_schema("f(Tensor self, int[3] stride=1, int[] dims=0) -> Tensor", [Unknown("x")],
                           {"stride": 2, "dims": 3})
    assert known == {"stride": [2, 2, 2], "dims": 3}
    known, _ = bind_schema("f(Tensor self, int[2] kernel_size, bool flag=False) -> Tensor", [Unknown("x"), (3, 5), True],
                           {})
    assert known == {"kernel_size": (3, 5), "flag": True}


def test_isinstance_against_a_tuple_with_one_known_type_that_fits_is_true():
    """torch/nn/modules/utils.py `_list_with_default`: `isinstance(out_size, (int, torch.SymInt))` with 1 is
    true (torch.SymInt is no type opindex knows, int is), so it returns out_size."""
    import ast
    from opindex.trace import pyflow
    fits = ast.parse("(int, torch.SymInt)", mode="eval").body
    assert pyflow._isinstance(1, fits) is True
    assert pyflow._isinstance("a", fits) is False
    assert pyflow._isinstance([1], ast.parse("(int, float)", mode="eval").body) is False


def _parser_source(root, text: str) -> None:
    """A checkout at `root` whose torch/csrc/utils/python_arg_parser.cpp is `text`."""
    from opindex.pytorch.arg_parser import PARSER
    src = root / PARSER
    src.parent.mkdir(parents=True)
    src.write_text(text)


def test_the_numbers_as_tensors_list_is_read_from_the_checkout(tmp_path):
    from opindex.pytorch.arg_parser import PARSER, number_for_tensor, numbers_as_tensors
    _parser_source(tmp_path, '#include <x>\n\nbool should_allow_numbers_as_tensors(const std::string& name) {\n'
                   '  static std::unordered_set<std::string> allowed = {\n    "add", "add_", "mul"};\n'
                   '  return allowed.find(name) != allowed.end();\n}\n')
    rule = numbers_as_tensors(str(tmp_path))
    assert (rule.ops, rule.file, rule.line) == (frozenset({"add", "add_", "mul"}), PARSER, 3)
    assert number_for_tensor("clamp", "Tensor?", 1.0, rule) is True
    assert number_for_tensor("add", "Tensor", 1, rule) is False
    assert number_for_tensor("clamp", "Scalar?", 1.0, rule) is False
    assert number_for_tensor("clamp", "Tensor?", True, rule) is False  # (a bool is no number here)
    assert number_for_tensor("clamp", "Tensor?", 1.0, None) is False
    assert numbers_as_tensors(str(tmp_path / "none")) is None


def test_a_required_argument_the_call_leaves_out_is_named():
    from opindex.trace.call import missing_required
    dim = "median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
    assert missing_required(dim, [Unknown("x")], {}) == ["int dim"]
    assert missing_required(dim, [Unknown("x"), 0], {}) == []
    assert missing_required(dim, [], {"input": Unknown("x"), "dim": 1}) == []
    assert missing_required("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", [Unknown("x")], {}) == []
    # Python's argument parser makes a parameter optional by its default alone (python_arg_parser.cpp): an
    # optional type without one is asked for, so `torch.sort(x, dim=1)` is sort(Tensor self, int dim=-1, ...), not
    # sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False)
    assert missing_required("f(Tensor self, Tensor? weight) -> Tensor", [Unknown("x")], {}) == ["Tensor? weight"]
    stable = "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"
    assert missing_required(stable, [Unknown("x")], {"dim": 1}) == ["bool? stable"]
    assert missing_required(stable, [Unknown("x")], {"stable": True}) == []
    assert missing_required("clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> "
                            "Tensor(a!)", [Unknown("x")], {"max": 1.0}) == []


def test_several_ints_for_an_int_list_are_packed_as_python_does():
    """`torch.randn(1024, 1024)`: randn's only positional argument is `SymInt[] size`, which Python's argument
    parser lets the call write as several ints: they bind as one list, and the overload is not ruled out."""
    from opindex.trace.call import bind_schema, missing_required
    schema = "randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None) -> Tensor"
    assert bind_schema(schema, [1024, 1024], {})[0] == {"size": [1024, 1024]}
    assert missing_required(schema, [1024, 1024], {}) == []
    assert bind_schema("f(Tensor self, int[] dims) -> Tensor", [Unknown("x"), 1, 2], {}) is None


def test_a_tensor_with_dimensions_does_not_fit_a_number_parameter(tmp_path):
    from opindex.pytorch.arg_parser import PARSER, tensor_for_number, zero_dim_tensors
    _parser_source(tmp_path, "bool check(PyObject* obj) {\n  switch (type_) {\n    case ParameterType::DOUBLE: {\n"
                   "      if (THPVariable_Check(obj)) {\n        const auto& var = THPVariable_Unpack(obj);\n"
                   "        return !var.requires_grad() && var.dim() == 0;\n      }\n    }\n  }\n}\n")
    rule = zero_dim_tensors(str(tmp_path))
    assert rule == (PARSER, 6)
    assert tensor_for_number("Scalar", 2, rule) is True
    assert tensor_for_number("float?", 1, rule) is True
    assert tensor_for_number("Scalar", 0, rule) is False  # a 0-dim tensor is a number to the parser
    assert tensor_for_number("Tensor", 2, rule) is False
    assert tensor_for_number("Scalar", None, rule) is False  # (sizes not stated)
    assert tensor_for_number("Scalar", 2, None) is False


def test_a_call_of_an_op_on_the_default_path_is_walked_before_its_ruled_out_twin():
    """softmax (SoftMax.cpp, 2.4): `at::_softmax(input_, dim_, true)` under its Half test (ruled out for float32),
    then `at::_softmax(converted, dim_, false)` in the else: the default call first; a helper (not an op) and calls
    with no ruled-out twin keep source order."""
    from types import SimpleNamespace
    from opindex.trace.walk.sites import default_path_first
    from opindex.trace.model import Condition
    off = {2, 5}  # lines under a test read as false
    guards = SimpleNamespace(at=lambda line: SimpleNamespace(
        conditions=[Condition("if", "half", None, 1, assumed=False)] if line in off else []))
    calls = [{"line": n, "callee": c} for n, c in
             ((1, "empty"), (2, "_softmax"), (3, "_softmax"), (4, "helper"), (5, "helper"), (6, "helper"))]
    order = [c["line"] for c in default_path_first(calls, guards, lambda name: name != "helper")]
    assert order == [1, 3, 2, 4, 5, 6]


def test_an_enum_member_is_numbered_as_its_header_writes_it(tmp_path):
    """`enum Reduction { None, Mean, Sum, END };` (2.4's aten/src/ATen/core/Reduction.h) and an enum class with
    written values: an aten call that passes reduction as a number (a profiler records `1`) compares with
    `Reduction::Mean` by that number."""
    from opindex.trace.call import enum_members
    core = tmp_path / "aten" / "src" / "ATen" / "core"
    core.mkdir(parents=True)
    (core / "Reduction.h").write_text("namespace at::Reduction {\n// How to reduce\nenum Reduction {\n  None, // no\n"
                                      "  Mean, /* mean */\n  Sum,\n  END\n};\n}\n")
    (core / "Modes.h").write_text("enum class GridSamplerPadding : int64_t {Zeros = 3, Border, Reflection};\n"
                                  "enum Odd { A = FOO, B };\n")
    assert enum_members(str(tmp_path)) == {"Reduction": {"None": 0, "Mean": 1, "Sum": 2, "END": 3},
                                           "GridSamplerPadding": {"Zeros": 3, "Border": 4, "Reflection": 5}}


def test_a_view_written_in_a_call_is_not_contiguous():
    """`x.t()`, `.T`, `.transpose`, `.permute`, `.narrow`, `.expand` and torch.empty_strided with other strides make
    a Tensor that is not contiguous, with the view's sizes; `.contiguous()` makes it contiguous again."""
    from opindex.pytorch.call_expr import parse_call
    cases = {"torch.randn(64, 32).t()": ((32, 64), False), "torch.randn(4, 8).T": ((8, 4), False),
             "torch.randn(2, 3, 4).transpose(0, 2)": ((4, 3, 2), False),
             "torch.randn(2, 3, 4).permute(2, 0, 1)": ((4, 2, 3), False),
             "torch.randn(4, 8).narrow(1, 0, 4)": ((4, 4), False), "torch.randn(1, 8).expand(4, 8)": ((4, 8), False),
             "torch.randn(2, 3, 4).permute(2, 0, 1).contiguous()": ((4, 2, 3), True),
             "torch.empty_strided((256, 1000), (1, 256))": ((256, 1000), False),
             "torch.empty_strided((4, 5), (5, 1))": ((4, 5), True), "torch.randn(4, 8)": ((4, 8), True)}
    for text, expected in cases.items():
        [(_, tensor)] = parse_call(f"torch.exp({text})").tensors()
        assert (tensor.sizes, tensor.contiguous) == expected, text


def test_a_name_trace_takes_the_overloads_its_tensors_alone_call():
    """A name trace calls the op with its tensors and default arguments: of overloads that take the same tensors,
    one that needs a value with no default beyond what a sibling needs is not the call (median.dim's `int dim`;
    2.4's sum.dim_IntList's `int[1]? dim`, which has no default either). Overloads that differ in a tensor
    (max.other) or in a value's type (repeat_interleave's Tensor and SymInt `repeats`) are not told apart."""
    from opindex.trace.call import beyond_the_defaults
    median = ["median(Tensor self) -> Tensor",
              "median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"]
    assert beyond_the_defaults(median) == {median[1]: ["int dim"]}
    total = ["sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
             "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"]
    assert beyond_the_defaults(total) == {total[1]: ["int[1]? dim"]}
    largest = ["max(Tensor self) -> Tensor", "max.other(Tensor self, Tensor other) -> Tensor"]
    assert beyond_the_defaults(largest) == {}
    repeat = ["repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None) -> Tensor",
              "repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None) -> Tensor"]
    assert beyond_the_defaults(repeat) == {}


def test_an_op_call_s_arguments_bind_to_its_schema_as_the_cpp_api_orders_them():
    """What a C++ op call passes, by schema parameter: `at::topk_out(vals, result, q, n_sample)` (multinomial_out,
    Distributions.cpp:636 in 2.4) is the out= API, its keyword outputs first; an in-place op's `Tensor(a!) self`
    stays first (`at::_index_put_impl_(self, indices, values, accumulate, false)`); a name whose tensor the caller
    knows passes that tensor (its sizes go on), a known bool its literal."""
    from opindex.trace.walk.sites import passed_arguments
    topk = ("topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, "
            "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)")
    q = Tensor("float32", (64, 1000), "torch.rand(64, 1000)")
    assert passed_arguments(topk, ["vals", "result", "q", "n_sample"], {"callee": "topk_out"},
                            {"q": q, "n_sample": 4}) == {"values": "vals", "indices": "result", "self": q, "k": "4"}
    assert passed_arguments(topk, ["q", "4", "-1", "true", "true", "vals", "result"], {"callee": "topk_outf"}) == {
        "self": "q", "k": "4", "dim": "-1", "largest": "true", "sorted": "true", "values": "vals", "indices": "result"}
    put = ("_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, "
           "bool unsafe=False) -> Tensor(a!)")
    assert passed_arguments(put, ["self", "indices", "value", "accumulate", "false"], {"callee": "_index_put_impl_"},
                            {"accumulate": False}) == {"self": "self", "indices": "indices", "values": "value",
                                                       "accumulate": "false", "unsafe": "false"}


def test_a_tensor_made_like_another_has_its_sizes():
    """`Tensor q = at::empty_like(self).exponential_(1, std::move(gen));` (Distributions.cpp:625 in 2.4) and `auto
    input = input_.contiguous();` name tensors of the sizes of the one they are made from."""
    from opindex.trace.call import _ALIAS_LOCAL
    text = ("Tensor q = at::empty_like(self).exponential_(1, std::move(gen));\n"
            "auto input = input_.contiguous();\nauto z = at::zeros_like(x, options);\n")
    assert _ALIAS_LOCAL.findall(text) == [("q", "", "self"), ("input", "input_", "")]


def test_a_tensor_s_sizes_pass_on_as_an_int_list_and_its_elements():
    """_convolution's `auto kernel_size = weight.sizes().slice(2);` (Convolution.cpp:1585) is the weight's trailing
    sizes; an op call passes that list on (walk/sites._known_literal), and a helper call one element of it
    (`kernel_size[1]` as conv_depthwise2d_forward_out's `kW`)."""
    from opindex.trace.conditions import _SIZES_LOCAL
    from opindex.trace.walk.bodies import _ITEM
    from opindex.trace.walk.sites import _known_literal, int_list
    body = "auto kernel_size = weight.sizes().slice(2);\n  IntArrayRef all = input.sizes();\n  auto n = x.size(0);"
    assert _SIZES_LOCAL.findall(body) == [("kernel_size", "weight", "2", ""), ("all", "input", "", "")]
    assert _known_literal("kernel_size", {"kernel_size": [3, 3]}) == (3, 3)
    assert _known_literal("kernel_size", {"kernel_size": [3.0, 5.0]}) == (3, 5)
    assert _known_literal("flags", {"flags": [True, False]}) == "flags"  # (bools are no sizes)
    assert [int_list(v) for v in ([1, 2], (), [1.5], "ab", [2.0])] == [True, False, False, False, True]
    assert _ITEM.fullmatch("kernel_size[1]").groups() == ("kernel_size", "1")


def test_a_string_fits_only_a_str_parameter_of_a_schema():
    """Python's argument parser tells conv2d (`SymInt[2] padding=0`) from conv2d.padding (`str padding="valid"`) by
    the value's type: bind_schema refuses a str for a non-str type and a number or list for a str (None fits an
    optional one), and _no_fit says which parameter."""
    from opindex.trace.call import _no_fit, bind_schema
    ints = "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0) -> Tensor"
    text = "conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, str padding=\"valid\")" \
        " -> Tensor"
    assert bind_schema(ints, [], {"padding": 1}) is not None and bind_schema(text, [], {"padding": 1}) is None
    assert bind_schema(ints, [], {"padding": "same"}) is None and bind_schema(text, [], {"padding": "same"})
    assert bind_schema("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", [],
                       {"rounding_mode": None}) is not None
    assert _no_fit(text, [], {"padding": (1, 1)}) == "padding of type str (the call passes padding=(1, 1))"
    randperm = "randperm(SymInt n, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None) -> Tensor"
    assert bind_schema(randperm, [1024], {"device": "cuda"}) is not None  # (a str is a Device too)
    assert bind_schema(randperm, ["1024"], {}) is None
    # `dtype=torch.int32` is read as its name: a dtype's name fits a ScalarType, no other str does
    assert bind_schema(randperm, [50000], {"device": "cuda", "dtype": "int32"}) is not None
    assert bind_schema(randperm, [50000], {"dtype": "cuda"}) is None


def test_the_built_in_number_type_of_an_argument_and_a_parameter():
    """C++ overloads told apart by a number argument (trapezoid's `do_trapezoid(y, dx.toDouble(), dim)`): the
    argument's type where it is written as a number, and whether a parameter takes a built-in number."""
    from opindex.trace.walk.bodies import _builtin_number, _number_type
    assert [_number_type(a) for a in ("dx.toDouble()", "s.toLong()", "0.5", "2", "true", "static_cast<int64_t>(n)",
                                      "static_cast<int64_t>(n) + 1", "dx", "f(x)")] == [
        "double", "int64_t", "double", "int", "bool", "int64_t", None, None, None]
    assert [_builtin_number(p) for p in ("double dx", "const Tensor& dx", "int64_t dim = 0", "const scalar_t x",
                                         "unsigned int n", "at::IntArrayRef sizes")] == [
        True, False, True, None, True, False]
