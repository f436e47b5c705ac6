"""Readable traces and limits that speak (issue 15), on the sample and on hand-made traces: the main chain and its
ranking, folded branches, the backward, Mermaid escaping, tables that fit a width, and every cap stated."""
from __future__ import annotations

import json
import re

from click.testing import CliRunner

from opindex.cli import main
from opindex.render.rows import table
from opindex.render.trace_graph import MERMAID_ESCAPES, mermaid, mermaid_text
from opindex.render.trace_view import TraceView
from opindex.trace.model import Condition, Hop, Trace


def cli(db, *args):
    return CliRunner().invoke(main, [*args, "--db", str(db)])


# -- the main chain is ranked, not the first depth-first path ---------------------------------------------------------
def _rnn_like() -> Trace:
    """A kernel whose first depth-first end is a setup call (a handle), then a fallback path, then the vendor call."""
    hops = [
        Hop(0, None, "native", "entry", "aten::lstm.input", "n.yaml", 1),
        Hop(1, 0, "dispatch", "CompositeImplicitAutograd", "CompositeImplicitAutograd: lstm", "n.yaml", 1),
        Hop(2, 1, "cpp", "function", "at::native::lstm", "RNN.cpp", 10),
        Hop(3, 2, "cpp", "calls", "at::native::getCudnnHandle", "Handle.cpp", 3),
        Hop(4, 3, "library", "cudnn", "cudnnSetStream", "Handle.cpp", 5),
        Hop(5, 2, "native", "calls_op", "at::matmul", "RNN.cpp", 20),
        Hop(6, 5, "native", "entry", "aten::matmul", "n.yaml", 9),
        Hop(7, 6, "cpp", "function", "at::native::matmul", "Linear.cpp", 4),
        Hop(8, 7, "cuda", "launch", "gemv_kernel<<<g, b>>>", "Blas.cu", 7),
        Hop(9, 2, "stub", "stub_call", "lstm_cudnn_stub", "RNN.cpp", 30),
        Hop(10, 9, "registration", "REGISTER_CUDA_DISPATCH", "CUDA: lstm_cudnn", "cudnn/RNN.cpp", 90),
        Hop(11, 10, "cpp", "registered_kernel", "at::native::lstm_cudnn", "cudnn/RNN.cpp", 40),
        Hop(12, 11, "library", "cudnn", "cudnnGetRNNWorkspaceSize", "cudnn/RNN.cpp", 44),
        Hop(13, 11, "library", "cudnn", "cudnnRNNForward", "cudnn/RNN.cpp", 50),
        Hop(14, 0, "backward", "note", "no derivatives.yaml entry for lstm.input", absent=True),
    ]
    return TraceView(query="nn.LSTM", direction="down", device="cuda", depth=1, hops=hops)


def test_main_chain_ends_in_the_call_that_computes_on_the_op_s_own_path():
    t = _rnn_like()
    assert [h.id for h in t.main_chain()] == [0, 1, 2, 9, 10, 11, 13]  # not cudnnSetStream (the first end)
    text = t.to_text()
    assert "  7  library      cudnnRNNForward                  cudnn/RNN.cpp:50" in text
    # the fork is said, and that the inputs did not settle it (the matmul way runs under no condition)
    assert "  4  stub         lstm_cudnn_stub                  RNN.cpp:30  ◆ default of 2, ranked" in text
    assert "  3 ↳ native       at::matmul  RNN.cpp:20  (4 hops; device code: gemv_kernel)" in text
    assert "  3 ↳ cpp          at::native::getCudnnHandle  Handle.cpp:3  (2 hops; device code: cudnnSetStream)" in text
    assert "  6 ↳ library      cudnnGetRNNWorkspaceSize  cudnn/RNN.cpp:44" in text


def test_choices_say_whether_the_inputs_settled_the_main_chain():
    t = _rnn_like()
    # the matmul way (hop 5) reaches computing device code too, and nothing rules it out: the ranking chose
    # each way with the device code it leads to (the main chain's end for the way taken) and its conditions,
    # where the ways part (at::native::lstm, RNN.cpp:10)
    assert t.to_dict()["choices"] == [{
        "hop": 9, "ways": 2, "others": [5], "settled": False, "file": "RNN.cpp", "line": 10,
        "options": [{"hop": 9, "end": 13, "conditions": []}, {"hop": 5, "end": 8, "conditions": []}],
        "sequence": []}]
    # a condition read as false over the matmul call (an `if` the default arguments do not take) settles it
    t = _rnn_like()
    t.hops[5].conditions.append(Condition("if", "batch_first", "RNN.cpp", 19, assumed=False))
    assert t.to_dict()["choices"] == [{
        "hop": 9, "ways": 2, "others": [5], "settled": True, "file": "RNN.cpp", "line": 10,
        "options": [{"hop": 9, "end": 13, "conditions": []},
                    {"hop": 5, "end": 8, "conditions": [
                        {"text": "batch_first", "file": "RNN.cpp", "line": 19, "assumed": False}]}],
        "sequence": []}]
    assert "  4  stub         lstm_cudnn_stub                  RNN.cpp:30  ◆ default of 2\n" in t.to_text()
    # an undecided condition (None: the build does not say) does not
    t = _rnn_like()
    t.hops[7].conditions.append(Condition("#if", "defined(USE_ROCM)", "Linear.cpp", 3, assumed=None))
    assert t.to_dict()["choices"][0]["settled"] is False


def _launcher(entry: str, schema: str) -> Trace:
    """A TensorIterator launcher whose first launch (in source order) is a kernel for functors of no inputs, as this
    MACA fork's launch_vectorized_kernel writes it (`if (narity == 0 && ...) nullary_opt<<<>>> else ...`)."""
    hops = [
        Hop(0, None, "native", "entry", entry, "n.yaml", 1, schema, schema=schema),
        Hop(1, 0, "cpp", "function", "at::native::kernel", "K.cu", 3),
        Hop(2, 1, "cuda", "tensor_iterator", "gpu_kernel", "K.cu", 5),
        Hop(3, 2, "cpp", "launcher", "at::native::launch_vectorized_kernel", "CUDALoops.cuh", 174),
        Hop(4, 3, "cuda", "global_kernel", "__global__ at::native::vectorized_elementwise_kernel_nullary_opt",
            "CUDALoops.cuh", 85),
        Hop(5, 3, "cuda", "global_kernel", "__global__ at::native::vectorized_elementwise_kernel", "CUDALoops.cuh", 63),
    ]
    return TraceView(query=entry, direction="down", device="cuda", depth=1, hops=hops)


def test_a_kernel_named_for_another_arity_than_the_op_s_inputs_is_not_the_default():
    add = _launcher("aten::add.out", "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
                                     "Tensor(a!)")
    assert add.main_chain()[-1].name == "__global__ at::native::vectorized_elementwise_kernel"  # two inputs
    fill = _launcher("aten::fill_.Scalar", "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)")
    assert fill.main_chain()[-1].name == "__global__ at::native::vectorized_elementwise_kernel_nullary_opt"
    cat = _launcher("aten::cat", "cat(Tensor[] tensors, int dim=0) -> Tensor")  # a list: its count is unknown
    assert cat.main_chain()[-1].line == 85  # source order decides
    # an in-place op reads the self it writes (its functor takes it); fill_ and a sampler only write theirs
    relu_ = _launcher("aten::relu_", "relu_(Tensor(a!) self) -> Tensor(a!)")
    assert relu_.main_chain()[-1].name == "__global__ at::native::vectorized_elementwise_kernel"
    zero_ = _launcher("aten::zero_", "zero_(Tensor(a!) self) -> Tensor(a!)")
    assert zero_.main_chain()[-1].name == "__global__ at::native::vectorized_elementwise_kernel_nullary_opt"
    normal_ = _launcher("aten::normal_", "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? "
                                         "generator=None) -> Tensor(a!)")
    assert normal_.main_chain()[-1].name == "__global__ at::native::vectorized_elementwise_kernel_nullary_opt"


def test_a_long_trace_fits_a_screen_and_says_what_it_folded():
    hops = [Hop(0, None, "cpp", "function", "at::native::big", "big.cpp", 1)]
    for i in range(1, 200):  # 199 helpers under one kernel, each leading to its own launch
        hops.append(Hop(len(hops), 0, "cpp", "calls", f"helper_{i}", "big.cpp", 10 + i))
        hops.append(Hop(len(hops), len(hops) - 1, "cuda", "launch", f"k{i}<<<1, 1>>>", "big.cu", i))
    t = TraceView(query="big", direction="down", device="cuda", depth=1, hops=hops)
    lines = t.to_text().splitlines()
    assert len(lines) <= 60
    assert lines[-3] == "  … and 179 more branches (358 hops): --tree shows them" or any(
        re.fullmatch(r"  … and \d+ more branches \(\d+ hops\): --tree shows them", line) for line in lines)
    more = next(line for line in lines if line.startswith("  … and "))
    shown = sum(1 for line in lines if " ↳ " in line)
    n, folded = map(int, re.findall(r"\d+", more))
    assert shown + n == 198 and folded == 2 * n  # every branch is on a line or counted, none dropped
    assert lines[-1] == "Expand: --tree (all 399 hops)  --snippets (source lines)  --depth 2 (follow more op calls)  " \
                        "--backward (trace the ops the backward calls)  --json  --legend (what ◆ means)"


def test_names_give_way_to_the_width_paths_never():
    t = _rnn_like()
    t.hops[13].name = "cudnnRNNForward" + "_with_a_very_long_name" * 8
    for line in t.to_text(width=80).splitlines():
        if "cudnn/RNN.cpp:50" in line:
            assert line.endswith("cudnn/RNN.cpp:50") and "…" in line and len(line) <= 80


# -- --backward shows the backward ------------------------------------------------------------------------------------
def test_backward_flag_changes_the_text_of_a_composite_op(sample_db):
    plain = cli(sample_db, "trace", "F.layer_norm").output
    backward = cli(sample_db, "trace", "F.layer_norm", "--backward").output
    assert plain != backward
    assert "         → native       aten::native_layer_norm_backward  aten/src/ATen/native/native_functions.yaml:102" \
        in backward.splitlines()
    assert "native_layer_norm_backward  aten" not in plain


# -- Mermaid ----------------------------------------------------------------------------------------------------------
def test_mermaid_labels_escape_template_text():
    hops = [Hop(0, None, "cuda", "launch", 'RowwiseMomentsCUDAKernel<T, T_ACC><<<M, 512>>>(x) "a" & b; #1 `c` |{[]}|',
                "layer_norm_kernel.cu", 891)]
    out = mermaid(Trace(query="q", direction="down", device="cuda", depth=1, hops=hops))
    label = re.search(r'n0\["(.*)"\]', out).group(1)
    inside = re.sub(r"#(\w+|\d+);", "", label.replace("<br/>", ""))  # what is left once entity codes are taken out
    assert not set(inside) & set(MERMAID_ESCAPES), inside
    assert "RowwiseMomentsCUDAKernel#lt;T, T_ACC#gt;#lt;#lt;#lt;M, 512#gt;#gt;#gt;" in label
    assert mermaid_text("a\nb") == "a<br/>b"


def test_mermaid_of_a_sample_trace_has_no_raw_reserved_characters(ix):
    out = ix.trace("F.layer_norm").to_mermaid()
    for label in re.findall(r'n\d+(?:\[|\{\{)"(.*)"(?:\]|\}\})$', out, re.M):
        inside = re.sub(r"#(\w+|\d+);", "", label.replace("<br/>", ""))
        assert not set(inside) & set(MERMAID_ESCAPES), label


# -- tables -----------------------------------------------------------------------------------------------------------
def test_tables_fit_the_width_and_never_cut_a_path():
    rows = [{"name": "n" * 40, "qualified_name": "at::native::" + "q" * 60,
             "file": "aten/src/ATen/native/cuda/a/rather/long/path/Kernel.cu", "line": 12}]
    out = table(rows, list(rows[0]), width=100).splitlines()
    assert all(len(line) <= 100 for line in out)
    assert "aten/src/ATen/native/cuda/a/rather/long/path/Kernel.cu" in out[2]
    assert "…" in out[2]
    assert table(rows, list(rows[0])).splitlines()[2].count("n") >= 40  # no terminal: nothing cut
    narrow = table(rows, list(rows[0]), width=30).splitlines()  # too narrow: the path still whole
    assert "aten/src/ATen/native/cuda/a/rather/long/path/Kernel.cu" in narrow[2]


# -- every cap stated and liftable ------------------------------------------------------------------------------------
def test_find_states_its_cap_and_lifts_it(sample_db):
    every = json.loads(cli(sample_db, "find", "*", "--json", "--limit", "0").output)
    assert len(every) > 5
    cut = cli(sample_db, "find", "*", "--json", "--limit", "5")
    assert json.loads(cut.stdout) == every[:5]
    assert cut.stderr == "opindex: showing the first 5 rows; there are more (--limit N shows N, --limit 0 all)\n"
    whole = cli(sample_db, "find", "*", "--json", "--limit", str(len(every)))
    assert whole.stderr == "" and len(json.loads(whole.stdout)) == len(every)


def test_callers_and_callees_state_their_cap(sample_db):
    every = json.loads(cli(sample_db, "callees", "at::native::_cudnn_rnn", "--json", "--limit", "0").stdout)
    assert len(every) >= 3
    cut = cli(sample_db, "callees", "at::native::_cudnn_rnn", "--json", "--limit", "2")
    assert json.loads(cut.stdout) == every[:2] and "showing the first 2 rows" in cut.stderr
    assert "--limit" in CliRunner().invoke(main, ["callers", "--help"]).output


def test_bottom_up_fan_in_is_grouped_and_stated(ix):
    # --device all: add_out is the kernel of the CPU row and of the CUDA row, both walked up
    whole = ix.trace("add_kernel_cuda", up=True, limit=0, device="all")
    cut = ix.trace("add_kernel_cuda", up=True, limit=1, device="all")
    assert whole.truncated == {}
    assert cut.truncated == {"callers": 1, "reason": "callers, launches and registrations of one hop past --limit are "
                                                     "grouped by file, named but not walked (--limit N walks N, "
                                                     "--limit 0 every one)"}
    grouped = [h for h in cut.hops if h.kind == "grouped"]
    assert [(h.name, h.detail) for h in grouped] == [
        ("1 more dispatch rows in aten/src/ATen/native/native_functions.yaml",
         "not walked (--limit): CUDA: add_out (aten::add.out)")]
    assert cut.to_dict()["truncated"]["callers"] == 1
    assert "TRUNCATED: callers, launches and registrations" in cut.to_text()
    # no caller listed twice under one hop
    for t in (whole, cut):
        seen = [(h.parent, h.name, h.file, h.line) for h in t.hops]
        assert len(seen) == len(set(seen))


def test_up_from_a_cuda_kernel_goes_through_the_cuda_rows_only(ix):
    """add_out is the kernel of `CPU, CUDA: add_out` (native_functions.yaml): a CUDA kernel's way up is its CUDA
    row; on --device all both are walked (above)."""
    t = ix.trace("add_kernel_cuda", up=True, limit=0)
    assert [h.name for h in t.hops if str(h.layer) == "dispatch"] == ["CUDA: add_out"]
    assert [h.name for h in t.main_chain() if str(h.layer) == "dispatch"] == ["CUDA: add_out"]


def test_json_states_the_caps(sample_db):
    out = cli(sample_db, "trace", "add_kernel_cuda", "--up", "--limit", "1", "--device", "all", "--json")
    assert json.loads(out.stdout)["truncated"]["callers"] == 1
    assert "opindex: callers, launches and registrations" in out.stderr


def test_a_python_module_op_is_bound_in_its_torch_c_submodule(ix):
    """`python_module: nn` (the sample's native_functions.yaml:81): the generated binding is torch._C._nn.linear;
    torch.nn has no attribute `linear`."""
    up = ix.trace("linear", up=True)
    assert [h.name for h in up.hops if str(h.kind) == "binding"] == ["torch._C._nn.linear"]
    down = ix.trace("linear")
    assert [h.detail for h in down.hops if h.kind == "surfaces"] == ["bound as torch._C._nn.linear"]
