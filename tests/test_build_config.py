"""The build a trace is for (pytorch/build_config.py, trace/conditions.py BuildContext): #if tests read with three
values under the user's settings, what the checkout requires, upstream defaults and the checkout's own #defines."""
from __future__ import annotations

import sqlite3

import pytest

from opindex.pytorch.build_config import DEFINED, UNDEFINED, Setting, evaluate, settings_from
from opindex.trace.conditions import BuildContext, holds, Constant


def _values(**kw):
    return lambda name: kw.get(name.replace("()", "_fn"))


@pytest.mark.parametrize("test, expected", [
    ("defined(CUDNN_VERSION) && CUDNN_VERSION >= 8907", True),
    ("defined(CUDNN_VERSION) && CUDNN_VERSION >= 91000", False),
    ("not (defined(USE_MACA))", True),
    ("defined(USE_ROCM) || defined(USE_MACA)", False),
    ("defined(USE_ROCM) || UNKNOWN_FLAG", None),  # an unknown side and a false one: unknown
    ("UNKNOWN_FLAG && 0", False),  # false whatever the unknown side is
    ("UNKNOWN_FLAG || 1", True),
    ("!AT_CUDNN_ENABLED()", False),
    ("USE_ROCM", False),  # an undefined name reads as 0
    ("V8_API", None),  # defined, but not a number: its value is unknown
    ("defined(V8_API)", True),
    ("(CUDA_VERSION >= 11000) && (CUDA_VERSION < 12000)", False),
    ("__CUDA_ARCH__ >= 800", None),
    ("a b", None),  # unreadable: unknown, never an error
])
def test_a_preprocessor_test_is_read_with_three_values(test, expected):
    value_of = _values(CUDNN_VERSION=90100, USE_MACA=UNDEFINED, USE_ROCM=UNDEFINED, AT_CUDNN_ENABLED_fn=1,
                       V8_API=DEFINED, CUDA_VERSION=12040)
    assert evaluate(test, value_of) is expected


def test_settings_are_read_as_a_compiler_reads_flags():
    s = settings_from(["CUDNN_VERSION=8600", "USE_ROCM", "AT_CUDNN_ENABLED()=0"], ["USE_MACA"],
                      {"CUDA_VERSION": 11080, "USE_MACA": True, "USE_MPS": None}, "config build.yaml")
    assert {k: (v.value if v.value is not UNDEFINED else None, v.source) for k, v in s.items()} == {
        "CUDNN_VERSION": ("8600", "-D"), "USE_ROCM": ("1", "-D"), "AT_CUDNN_ENABLED()": ("0", "-D"),
        "USE_MACA": (None, "-U"),  # -U after the config's value: the later wins
        "CUDA_VERSION": ("11080", "config build.yaml"), "USE_MPS": (None, "config build.yaml")}
    with pytest.raises(ValueError, match="not a macro name"):
        settings_from(["3X=1"])


def _index(conditions: list[tuple], macros: list[tuple]) -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.row_factory = sqlite3.Row
    con.execute("CREATE TABLE conditions (file TEXT, line INT, end_line INT, kind TEXT, condition TEXT)")
    con.execute("CREATE TABLE macros (file TEXT, line INT, name TEXT, parameters TEXT, body TEXT)")
    con.executemany("INSERT INTO conditions VALUES (?, ?, ?, ?, ?)", conditions)
    con.executemany("INSERT INTO macros VALUES (?, ?, ?, ?, ?)", macros)
    return con


def _fork() -> sqlite3.Connection:
    """A fork whose DeviceUtils.cuh static_asserts without USE_MACA, whose Descriptors.h defines the v8 RNN API for
    new cuDNN, and a test file that requires the opposite of a build flag (not a requirement of the build)."""
    return _index(
        [("DeviceUtils.cuh", 10, 13, "#if", "not (defined(USE_MACA))"),
         ("DeviceUtils.cuh", 13, 13, "#error", 'static_assert(0, "Must use -DUSE_MACA")'),
         ("Descriptors.h", 22, 22, "#if", "defined(CUDNN_VERSION) && CUDNN_VERSION >= 8907"),
         ("aten/src/ATen/test/verify.cpp", 4, 4, "#if", "defined(USE_ROCM)"),
         ("aten/src/ATen/test/verify.cpp", 4, 4, "#error", "#error no ROCm here")],
        [("Descriptors.h", 22, "USE_CUDNN_RNN_V8_API", None, ""),
         ("jit_macros.h", 7, "AT_USE_JITERATOR", "()", "false"), ("jit_macros.h", 9, "AT_USE_JITERATOR", "()", "true")]
)


def test_the_build_is_what_the_checkout_requires_then_upstream_then_its_own_defines():
    con = _fork()
    con.executemany("INSERT INTO conditions VALUES (?, ?, ?, ?, ?)", [
        ("jit_macros.h", 7, 7, "#if", "defined(USE_ROCM)"), ("jit_macros.h", 9, 9, "#if", "not (defined(USE_ROCM))")])
    b = BuildContext(con, "cuda")
    assert b.holds("defined(USE_MACA)") is True  # required: the other side cannot compile
    assert b.holds("!defined(USE_CUDNN_RNN_V8_API)") is False  # Descriptors.h:22 under CUDNN_VERSION >= 8907
    assert b.holds("AT_USE_JITERATOR()") is True  # jit_macros.h:9, the #else of USE_ROCM
    assert b.holds("!AT_CUDNN_ENABLED()") is False and b.holds("defined(USE_ROCM)") is False
    assert b.holds("AT_PER_OPERATOR_HEADERS") is None  # nothing says: both sides shown
    used = {name: s.source for name, s in b.used.items()}
    assert used["USE_MACA"] == 'required by DeviceUtils.cuh:13 (static_assert(0, "Must use -DUSE_MACA"))'
    assert used["USE_CUDNN_RNN_V8_API"] == "#define at Descriptors.h:22"
    assert used["CUDNN_VERSION"] == used["USE_ROCM"] == "upstream default (a current CUDA build)"
    assert b.conflicts() == []


def test_the_user_s_settings_win_and_a_build_the_checkout_cannot_make_is_said():
    b = BuildContext(_fork(), "cuda", settings_from(["CUDNN_VERSION=8600"], ["USE_MACA"]))
    assert b.holds("defined(USE_CUDNN_RNN_V8_API)") is None  # old cuDNN: Descriptors.h:22 not compiled, and
    # the build system may define it itself: unknown, not false
    assert b.holds("defined(USE_MACA)") is False
    assert b.conflicts() == ['USE_MACA undefined (-U): this checkout cannot build so, required by '
                             'DeviceUtils.cuh:13 (static_assert(0, "Must use -DUSE_MACA"))']
    assert b.key() == "CUDNN_VERSION=8600; USE_MACA undefined"


def test_a_default_argument_decides_a_c_plus_plus_test_of_several_parts():
    mean = {"reduction": Constant("Mean")}
    assert holds("reduction == Reduction::None && n_dims == 2", mean) is False  # whatever n_dims is
    assert holds("not (reduction == Reduction::None && n_dims == 2)", mean) is True
    assert holds("reduction == Reduction::Mean || n_dims == 2", mean) is True
    assert holds("reduction == Reduction::Sum || n_dims == 2", mean) is None


def test_a_setting_states_itself():
    assert [Setting("A", UNDEFINED, "-U").text(), Setting("B", "", "x").text(), Setting("C", "3", "x").text()] == [
        "A undefined", "B defined", "C=3"]


def test_the_cli_takes_the_build_and_refuses_a_bad_one_clearly(sample_db, tmp_path):
    import json

    from click.testing import CliRunner

    from opindex.cli import main

    def run(*args):
        return CliRunner().invoke(main, ["trace", "nn.LSTM", *args, "--db", str(sample_db)])

    config = tmp_path / "build.yaml"
    config.write_text("defines:\n  CUDNN_VERSION: 8600\n  USE_ROCM: null\n")
    ok = run("-D", "USE_FOO=2", "-U", "USE_BAR", "--config", str(config), "--json")
    assert ok.exit_code == 0 and json.loads(ok.output)["build_conflicts"] == []
    bad_name = run("-D", "3X=1")
    assert (bad_name.exit_code, bad_name.output.strip()) == (2, "Error: not a macro name: '3X' (give NAME, "
                                                                "NAME=VALUE or NAME()=VALUE)")
    broken = tmp_path / "broken.yaml"
    broken.write_text("defines:\n  A: 1\n  B: [unclosed\n")
    refused = run("--config", str(broken))
    assert refused.exit_code == 2 and refused.output.startswith(f"Error: {broken}:")
    assert "not YAML" in refused.output
    listed = tmp_path / "list.yaml"
    listed.write_text("- A\n")
    assert run("--config", str(listed)).output.strip() == (
        f"Error: {listed}: a build config is a mapping of NAME: value (null for undefined)")


@pytest.mark.parametrize("test, float32, bfloat16, complex64", [
    ("at::isComplexType(common_dtype)", False, False, True),
    ("not (at::isComplexType(common_dtype))", True, True, False),
    ("dtype == ScalarType::Half", False, False, False),
    ("arg_t == at::ScalarType::BFloat16", False, True, False),
    ("!isFloatingType(iter.common_dtype())", False, False, True),
    ("self.is_complex()", False, False, True),
    ("at::isReducedFloatingType(dtype)", False, True, False),
    ("isIntegralType(dtype, /*includeBool*/ false)", False, False, False),
    ("weight.defined()", None, None, None),  # no dtype test: the dtype says nothing
])
def test_the_input_dtype_decides_a_dtype_test(test, float32, bfloat16, complex64):
    from opindex.trace.conditions import DTYPE
    assert [holds(test, {DTYPE: d}) for d in ("float32", "bfloat16", "complex64")] == [float32, bfloat16, complex64]


def test_a_main_chain_goes_on_below_the_machinery_shown_above():
    """exp_kernel_cuda: the complex-only branch's gpu_kernel is walked first (its machinery shown there); the
    float32 branch's gpu_kernel ends in a repeat. The main chain takes the float32 launch and its repeat (the
    repeat, not the complex branch's hop, is what this path calls), then goes on below the hop it repeats, to the
    kernel."""
    from opindex.trace.model import Condition, Hop, Trace
    complex_only = Condition("if", "at::isComplexType(common_dtype)", "U.cu", 40, assumed=False)
    hops = [Hop(0, None, "native", "entry", "aten::exp", "n.yaml", 1, schema="exp(Tensor self) -> Tensor"),
            Hop(1, 0, "cpp", "function", "at::native::exp_kernel_cuda", "U.cu", 38),
            Hop(2, 1, "cuda", "tensor_iterator", "gpu_kernel", "U.cu", 56, conditions=[complex_only]),
            Hop(3, 2, "cpp", "launcher", "at::native::gpu_kernel", "Loops.cuh", 80),
            Hop(4, 3, "cuda", "global_kernel", "__global__ at::native::vectorized_elementwise_kernel", "C.cuh", 63,
                kernel="vectorized_elementwise_kernel"),
            Hop(5, 1, "cuda", "tensor_iterator", "gpu_kernel", "U.cu", 64),
            Hop(6, 5, "cpp", "launcher", "at::native::gpu_kernel", "Loops.cuh", 80, "(shown above)",
                shown_above=True)]
    t = Trace(query="torch.exp", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert [h.id for h in t.main_chain()] == [0, 1, 5, 6, 4]
    assert not any(h.not_default for h in t.main_chain())


def test_a_main_chain_goes_on_below_repeats_at_its_end():
    """relu's clamp_min reaches the launch_vectorized_kernel call that relu_'s branch walked first: the call's two
    definitions below it are repeats (the USE_MACA one read false). The chain goes on through the one not ruled
    out, to its kernel, not ending at the call."""
    from opindex.trace.model import Condition, Hop, Trace
    maca = Condition("#if", "defined(USE_MACA)", "C.cuh", None, assumed=False)
    hops = [Hop(0, None, "native", "entry", "aten::relu", "n.yaml", 1, schema="relu(Tensor self) -> Tensor"),
            Hop(1, 0, "native", "entry", "aten::relu_", "n.yaml", 2, conditions=[
                Condition("if", "inplace", "f.py", 3, assumed=False)]),
            Hop(2, 1, "cuda", "tensor_iterator", "launch_vectorized_kernel", "C.cuh", 404),
            Hop(3, 2, "cpp", "launcher", "at::native::launch_vectorized_kernel", "C.cuh", 174, conditions=[maca]),
            Hop(4, 3, "cuda", "global_kernel", "__global__ at::native::vectorized_elementwise_kernel_opt", "C.cuh",
                90),
            Hop(5, 2, "cpp", "launcher", "at::native::launch_vectorized_kernel", "C.cuh", 247),
            Hop(6, 5, "cuda", "global_kernel", "__global__ at::native::vectorized_elementwise_kernel", "C.cuh", 63),
            Hop(7, 0, "cuda", "tensor_iterator", "launch_vectorized_kernel", "C.cuh", 404),
            Hop(8, 7, "cpp", "launcher", "at::native::launch_vectorized_kernel", "C.cuh", 174, conditions=[maca],
                shown_above=True, repeats=3),
            Hop(9, 7, "cpp", "launcher", "at::native::launch_vectorized_kernel", "C.cuh", 247, shown_above=True,
                repeats=5)]
    t = Trace(query="relu", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert [h.id for h in t.main_chain()] == [0, 7, 9, 6]


def test_an_op_whose_result_another_op_takes_ranks_after_that_one():
    """cross_entropy_loss: `at::nll_loss_nd_symint(at::log_softmax(self, ...), target, ...)`. log_softmax runs
    first; the loss is nll_loss's result, so its kernel is the main chain's end though its path names fewer of
    the query's words."""
    from opindex.trace.model import Hop, Trace
    hops = [Hop(0, None, "native", "entry", "aten::cross_entropy_loss", "n.yaml", 1, schema="cross_entropy_loss("
                "Tensor self, Tensor target) -> Tensor"),
            Hop(1, 0, "cpp", "function", "at::native::cross_entropy_loss", "L.cpp", 10),
            Hop(2, 1, "native", "calls_op", "at::log_softmax", "L.cpp", 12, feeds="nll_loss_nd_symint"),
            Hop(3, 2, "native", "entry", "aten::log_softmax", "n.yaml", 5, schema="log_softmax(Tensor self) -> Tensor"),
            Hop(4, 3, "cuda", "global_kernel", "__global__ cross_entropy_softmax_kernel", "S.cu", 20),
            Hop(5, 1, "native", "calls_op", "at::nll_loss_nd_symint", "L.cpp", 12),
            Hop(6, 5, "native", "entry", "aten::nll_loss_nd", "n.yaml", 7, schema="nll_loss_nd(Tensor self, "
                "Tensor target) -> Tensor"),
            Hop(7, 6, "native", "entry", "aten::nll_loss_forward", "n.yaml", 8, schema="nll_loss_forward(Tensor "
                "self, Tensor target) -> Tensor"),
            Hop(8, 7, "cuda", "global_kernel", "__global__ nll_loss_forward_kernel", "L.cu", 30)]
    t = Trace(query="F.cross_entropy", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert t.main_chain()[-1].id == 8
    hops[2].feeds = None  # without the rule, the path naming more of the query's words (cross_entropy_softmax)
    t = Trace(query="F.cross_entropy", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert t.main_chain()[-1].id == 4


def test_the_traced_device_and_a_setting_decide_index_put_s_sort_path():
    """index_put_'s `if (self.device().type() == DeviceType::CUDA && (accumulate ||
    globalContext().deterministicAlgorithms()))`: with accumulate=False and deterministic algorithms off by
    default, the sorting (backward) kernel is not the default path on CUDA, nor on the CPU."""
    from opindex.extract.cpp_conditions import _GUARD
    from opindex.trace.conditions import DEVICE, DTYPE
    test = "self.device().type() == DeviceType::CUDA && (accumulate || globalContext().deterministicAlgorithms())"
    assert _GUARD.fullmatch(f"if ({test})".encode())
    assert holds(test, {DEVICE: "cuda", DTYPE: "float32", "accumulate": False}) is False
    assert holds(test, {DEVICE: "cuda", DTYPE: "float32", "accumulate": True}) is True
    assert holds(f"not ({test})", {DEVICE: "cpu", DTYPE: "float32"}) is True  # not on CUDA: whatever accumulate is
    assert holds("result.is_cuda() && x > 1", {DEVICE: "cpu"}) is False
    assert holds("((accumulate))", {"accumulate": True}) is True
    assert holds("accumulate && self.type().device_type() == kCUDA", {DEVICE: "cuda", "accumulate": False}) is False


def test_a_header_included_only_under_a_false_if_is_not_in_the_build():
    """A fork's vendor header (maca_kernels/x.cuh) included by CUDALoops.cuh only under `#ifdef USE_MACA`, itself
    included by a .cu file (a translation unit: compiled): not in a build without USE_MACA; a header included
    unconditionally is; one nothing includes is not said."""
    con = _index([("aten/cuda/CUDALoops.cuh", 444, 444, "#if", "defined(USE_MACA)")], [])
    con.execute("CREATE TABLE includes (file TEXT, line INT, path TEXT)")
    con.executemany("INSERT INTO includes VALUES (?, ?, ?)", [
        ("aten/cuda/CUDALoops.cuh", 444, "maca_kernels/x.cuh"),  # relative to the including file
        ("aten/cuda/Add.cu", 3, "aten/cuda/CUDALoops.cuh"),
        ("aten/cuda/Add.cu", 4, "aten/cuda/maca_kernels/y.cuh")])
    stock = BuildContext(con, "cuda", settings_from([], ["USE_MACA"]))
    assert stock.file_built("aten/cuda/maca_kernels/x.cuh") == (
        False, "included at aten/cuda/CUDALoops.cuh:444 under #if defined(USE_MACA)")
    assert stock.file_built("aten/cuda/maca_kernels/y.cuh") == (True, "")
    assert stock.file_built("aten/cuda/orphan.cuh") == (None, "")
    fork = BuildContext(con, "cuda", settings_from(["USE_MACA"]))
    assert fork.file_built("aten/cuda/maca_kernels/x.cuh")[0] is True


def test_calls_in_sequence_and_alternatives_read_from_the_source():
    """The later of two calls that run one after the other makes the op's result; an else, another case, an early
    return, a block under a test of its own, or an #else make them alternatives (source order then)."""
    from opindex.trace.sequence import in_sequence
    src = """\
void batch_norm_cuda_out(bool train) {
  if (train) {
    batch_norm_mean_var(self);
  } else {
    batch_norm_calc_invstd(var);
  }
  batch_norm_elementwise(output);
  if (fast) {
    return fast_kernel();
  }
  switch (x) {
    case 1: a(); break;
    case 2: b(); break;
  }
  c();
  if (y) {
    d();
  }
#if X
  e();
#else
  g();
#endif
}""".splitlines()
    assert in_sequence(src, 3, 7) is True  # after the whole if/else
    assert in_sequence(src, 3, 5) is False  # its else
    assert in_sequence(src, 9, 15) is False  # after an early return
    assert in_sequence(src, 12, 13) is False  # another case
    assert in_sequence(src, 12, 15) is True  # after the switch
    assert in_sequence(src, 15, 17) is False  # under a test of its own
    from opindex.trace.sequence import alternatives  # ... which is not another way: it may run after c()
    assert [alternatives(src, a, b) for a, b in ((3, 5), (9, 15), (12, 13), (15, 17), (3, 7), (20, 22))] == \
        [True, True, True, False, False, True]
    assert in_sequence(src, 20, 22) is False  # the other side of an #if
    from opindex.trace.sequence import built_lines, may_follow  # device work: a block of its own may run after
    assert [may_follow(src, a, b) for a, b in ((15, 17), (3, 7), (3, 5), (9, 15))] == [True, True, False, False]


def test_a_launch_in_a_loop_runs_after_the_one_before_it():
    """mbtopk::launch (TensorTopK.cu:642, PyTorch 2.4): `fill<<<...>>>(...)`, then `for (...; ...; ...) {
    radixFindKthValues<<<...>>>(...); }`, then gatherTopK: a loop's body runs each time; a block under a test
    of its own, an else or an early return does not."""
    from opindex.trace.sequence import runs_after
    src = """\
void launch() {
  fill<<<1, 512>>>(ks);
  for (int bit = 24; bit >= 0; bit -= 8) {
    radixFindKthValues<<<grid, block>>>(input, bit);  // { not a block
  }
  gatherTopK<<<grid, block>>>(input);
  if (k == 0) {
    fixup<<<1, 1>>>(input);
  } else {
    other<<<1, 1>>>(input);
  }
  while (more) { do {
    again<<<1, 1>>>(input);
  } while (x); }
  return;
  after<<<1, 1>>>(input);
}""".splitlines()
    assert [runs_after(src, 2, n) for n in (4, 6, 8, 10, 13, 16)] == [True, True, False, False, True, False]
    assert runs_after(src, 8, 10) is False  # the else of the test that holds the first
    from opindex.trace.sequence import runs_before  # ... and what has run each time a later call runs
    assert [runs_before(src, 1, n, 6) for n in (2, 4)] == [True, True]  # (a loop's body)
    assert [runs_before(src, 1, n, 13) for n in (2, 6, 8, 10)] == [True, True, False, False]  # (under a test)
    assert runs_before(src, 1, 2, 16) is False  # past the early return


def test_the_else_of_a_later_if_is_no_way_instead_of_the_first_call():
    """multinomial_out (Distributions.cpp:625-637, PyTorch 2.4): the sampler, then `if (n_sample == 1) { argmax }
    else { topk }`. The else there is that later test's, not one of a test around the sampler (the else-if chain
    around a call is); and a block whose test the trace read as true (`held`, its `if` or `else` line) runs each
    time the body does."""
    from opindex.trace.sequence import alternatives, blocks_between, runs_after, runs_before
    src = """\
Tensor& multinomial_out(int64_t n_sample) {
  if (self.dim() == 1) {
    zero = self.sum();
  } else if (self.dim() == 2) {
    zero = self.sum(1);
  } else {
    zero = other();
  }
  q.exponential_();
  if (n_sample == 1) {
    at::argmax_out(result, q);
  } else {
    at::topk_out(vals, result, q, n_sample);
  }
  switch (mode) {
    case 0: a(); break;
    default: b();
  }
}""".splitlines()
    assert [alternatives(src, 9, n) for n in (11, 13, 16, 17)] == [False, False, False, False]
    assert [alternatives(src, 3, n) for n in (5, 7, 9)] == [True, True, False]  # (the chain around sum())
    assert [runs_after(src, 9, n) for n in (11, 13)] == [False, False]  # (each under a test of its own) ...
    assert [runs_after(src, 9, n, held={10}) for n in (11, 13)] == [True, False]  # ... but n_sample == 1 held
    assert [runs_after(src, 9, n, held={12}) for n in (11, 13)] == [False, True]  # (the else's line)
    assert blocks_between(src, 1, 5, 9) == (["else if (self.dim() == 2)"], [])
    assert runs_before(src, 1, 5, 9) is False
    assert runs_before(src, 1, 5, 9, held={4}) is True


def test_a_call_under_a_test_that_closes_before_a_later_one_may_not_have_run():
    """THC_pointwiseApply2 (1.8, THCApply.cuh:335): `if (aType == ReadWrite && ...) { a = THCTensor_newContiguous(
    ...); }`, later the launches (:447): the copy runs only under its test, so it is no work done before each
    launch; nor is a call in a lambda's body (AT_DISPATCH's `[&] {`), which runs where the lambda is called."""
    from opindex.trace.sequence import blocks_between, runs_after, runs_before
    src = """\
bool apply(T* a) {
  if (aType == ReadWrite &&
      overlapping(a)) {  // {
    a = newContiguous(a);
  }
  AT_DISPATCH_ALL_TYPES(a.scalar_type(), "x", [&] {
    keys(a);
  });
  launch<<<grid, block>>>(a);
}""".splitlines()
    assert blocks_between(src, 1, 4, 9) == (["if (aType == ReadWrite && overlapping(a))"], [])
    two = ["AT_DISPATCH_SPECIAL(t, [&] {", "  a<<<1, 1>>>(x);", "}, [&] {", "  b<<<1, 1>>>(x);", "});"]
    assert runs_after(two, 2, 4) is False  # (the dtype picks one of the two lambdas)
    assert runs_before(src, 1, 4, 9) is False
    assert runs_before(src, 1, 7, 9) is False  # (a lambda's body runs where it is called: not read)
    assert blocks_between(src, 1, 7, 9) == (['AT_DISPATCH_ALL_TYPES(a.scalar_type(), "x", [&]'], [])


def test_device_work_after_an_if_the_build_leaves_out_runs_in_sequence():
    """group_norm_kernel.cu:610-637 (PyTorch 2.4 fork): `#ifdef USE_MACA if (opt) { ... } else { #endif
    RowwiseMoments<<<...>>>; #ifdef USE_MACA } #endif if (HxW == 1) {...} else if (...) { gpu_kernel(iter) }`.
    Read as a -U USE_MACA build compiles it (false #if lines and directives blank, line numbers kept), or as
    written, the TensorIterator launch may follow the launch: the `else` at :13 is the later test's, not one of
    `if (opt)` (read as one before, the launches were alternatives)."""
    from opindex.trace.sequence import built_lines, may_follow
    src = """\
void GroupNormKernelImplInternal() {
#ifdef USE_MACA
  if (opt) {
    fused();
  } else {
#endif
    RowwiseMomentsCUDAKernel<T><<<N * G, threads, 0, stream>>>(x);
#ifdef USE_MACA
  }
#endif
  if (HxW == 1) {
    GroupNorm1dForward<T>(X);
  } else if (!gamma.defined()) {
    gpu_kernel(iter, f);
  }
}""".splitlines()
    assert may_follow(src, 7, 14) is True
    off = lambda n: n in (3, 4, 5, 9)  # noqa: E731
    built = built_lines(src, off)
    assert len(built) == len(src) and built[1] == built[2] == built[8] == built[9] == ""
    assert may_follow(built, 7, 14) is True
    assert may_follow(built, 12, 14) is False  # an else of the test that holds GroupNorm1dForward


def test_a_main_chain_stops_where_the_inputs_rule_out_every_way_on():
    """torch.clamp by name: min and max are both None, so `if (min && max)`, `else if (min)` and `else if (max)`
    are all false. The chain does not end at device code under a ruled-out branch: it stops above the best one
    and says which (Trace.ruled_out, JSON ruled_out); given an open way, it takes it."""
    from opindex.trace.model import Condition, Hop, Trace
    def under(test):
        return [Condition("if", test, "T.cpp", 700, assumed=False)]
    hops = [Hop(0, None, "native", "entry", "aten::clamp", "n.yaml", 1, schema="clamp(Tensor self) -> Tensor"),
            Hop(1, 0, "cpp", "function", "at::native::clamp_out", "T.cpp", 690),
            Hop(2, 1, "stub", "stub_call", "clamp_scalar_stub", "T.cpp", 704, conditions=under("min && max")),
            Hop(3, 2, "cuda", "global_kernel", "__global__ clamp_kernel", "T.cu", 40),
            Hop(4, 1, "stub", "stub_call", "clamp_min_scalar_stub", "T.cpp", 706, conditions=under("min")),
            Hop(5, 4, "cuda", "global_kernel", "__global__ clamp_min_kernel", "T.cu", 60)]
    t = Trace(query="torch.clamp", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert [h.id for h in t.main_chain()] == [0, 1]
    assert t.ruled_out() is hops[2]
    assert t.to_dict()["ruled_out"] == {"hop": 2, "conditions": [
        {"kind": "if", "text": "min && max", "file": "T.cpp", "line": 700, "assumed": False}]}
    hops[4].conditions = []  # an open way (`clamp(x, min=0)`): taken, nothing ruled out
    t = Trace(query="torch.clamp", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert [h.id for h in t.main_chain()] == [0, 1, 4, 5] and t.ruled_out() is None


def test_a_call_to_a_launcher_the_build_does_not_define_stops_the_chain_and_says_so():
    """The fork's sigmoid_kernel_cuda calls gpu_kernel_maca_arity1 (float32) and, for complex, jitted_gpu_kernel;
    on -U USE_MACA the launcher's only definition lies under `#ifdef USE_MACA`: the call cannot compile, so the
    call hop takes that #if (trace/__init__._mark_undefined_calls) and the chain stops above it, at the way the
    inputs take and the build lacks, not at the complex branch the dtype rules out."""
    from opindex.trace import _mark_undefined_calls
    from opindex.trace.model import Condition, Hop
    from opindex.render.trace_text import render
    maca = Condition("#if", "defined(USE_MACA)", "Loops.cuh", 103, assumed=False)
    hops = [Hop(0, None, "native", "entry", "aten::sigmoid", "n.yaml", 1, schema="sigmoid(Tensor self) -> Tensor"),
            Hop(1, 0, "cpp", "registered_kernel", "at::native::sigmoid_kernel_cuda", "U.cu", 124),
            Hop(2, 1, "cuda", "tensor_iterator", "jitted_gpu_kernel", "U.cu", 136,
                conditions=[Condition("if", "at::isComplexType(common_dtype)", "U.cu", 126, assumed=False)]),
            Hop(3, 2, "cuda", "global_kernel", "__global__ jitted", "J.cuh", 10),
            Hop(4, 1, "cuda", "tensor_iterator", "gpu_kernel_maca_arity1", "U.cu", 155),
            Hop(5, 4, "cpp", "launcher", "at::native::gpu_kernel_maca_arity1", "Loops.cuh", 104,
                called_at="U.cu:155", conditions=[maca]),
            Hop(6, 5, "cuda", "global_kernel", "__global__ vectorized_elementwise_kernel", "L.cuh", 63),
            Hop(7, 1, "cpp", "helper", "at::native::helper", "H.cuh", 5, called_at="U.cu:130"),
            Hop(8, 7, "cpp", "helper", "at::native::inner", "I.cuh", 9, conditions=[maca])]
    _mark_undefined_calls(_trace_of(hops), {5: maca, 8: maca})
    assert hops[4].conditions == [maca]  # every definition the call reached is under the false #if
    assert hops[7].conditions == []  # a function is not marked for a call it makes (called_at is not its line)
    del hops[7:]
    t = _trace_of(hops)
    t.finish()
    assert [h.id for h in t.main_chain()] == [0, 1] and t.ruled_out() is hops[4]
    assert t.to_dict()["ruled_out"]["conditions"][0]["kind"] == "#if"
    assert ("the first, gpu_kernel_maca_arity1 at U.cu:155, is defined only under #if defined(USE_MACA) "
            "(Loops.cuh:103), not in this build") in " ".join(render(t).split())


def _trace_of(hops):
    from opindex.trace.model import Trace
    return Trace(query="torch.sigmoid", direction="down", device="cuda", depth=1, hops=hops)


def test_a_repeat_below_a_ruled_out_branch_is_reached_through_its_own_repeat():
    """abs: the walk shows unary_op_impl_with_complex_to_float_out first below the in-place branch (ruled out)
    and repeats it on abs's default way; its default-path stub call (below, in unary_op_impl_out) repeats the
    complex branch's stub call. The main chain reaches the kernel through both repeats, not through either
    ruled-out branch."""
    from opindex.trace.model import Condition, Hop, Trace
    false = [Condition("if", "self.is_complex() && !result.is_complex()", "U.cpp", 433, assumed=False)]
    hops = [Hop(0, None, "native", "entry", "aten::abs", "n.yaml", 1, schema="abs(Tensor self) -> Tensor"),
            Hop(1, 0, "native", "entry", "aten::abs_", "n.yaml", 2, conditions=[
                Condition("if", "inplace", "f.py", 3, assumed=False)]),
            Hop(2, 1, "cpp", "calls", "at::native::to_float_out", "U.cpp", 432),
            Hop(3, 2, "stub", "stub_call", "abs_stub", "U.cpp", 443, conditions=false),
            Hop(4, 3, "cuda", "global_kernel", "__global__ abs_kernel", "A.cu", 45),
            Hop(5, 2, "cpp", "calls", "at::native::unary_op_impl_out", "U.cpp", 405),
            Hop(6, 5, "stub", "stub_call", "abs_stub", "U.cpp", 407, shown_above=True, repeats=3),
            Hop(7, 0, "cpp", "calls", "at::native::to_float_out", "U.cpp", 432, shown_above=True, repeats=2)]
    t = Trace(query="torch.abs", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert [h.id for h in t.main_chain()] == [0, 7, 5, 6, 4] and t.ruled_out() is None


def test_open_decisions_name_the_condition_that_parts_the_ways():
    """softmax's `if (dim_size <= 1024 ...)`: the inputs do not give the size, so the main chain goes on by
    ranking, and JSON `open` names the decision, its condition and both ways' ends; a settled choice is not open."""
    from opindex.trace.model import Condition, Hop, Trace
    size = Condition("if", "dim_size <= 1024", "S.cu", 900, assumed=None)
    hops = [Hop(0, None, "native", "entry", "aten::_softmax", "n.yaml", 1, schema="_softmax(Tensor self) -> Tensor"),
            Hop(1, 0, "cpp", "function", "at::native::host_softmax", "S.cu", 890),
            Hop(2, 1, "cuda", "launch", "softmax_warp_forward<<<...>>>", "S.cu", 905, conditions=[size]),
            Hop(3, 2, "cuda", "global_kernel", "__global__ softmax_warp_forward", "P.cuh", 10),
            Hop(4, 1, "cuda", "launch", "cunn_SoftMaxForward<<<...>>>", "S.cu", 920, conditions=[
                Condition("if", "not (dim_size <= 1024)", "S.cu", 900, assumed=None)]),
            Hop(5, 4, "cuda", "global_kernel", "__global__ cunn_SoftMaxForward", "S.cu", 700)]
    t = Trace(query="torch.softmax", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    d = t.to_dict()
    assert d["main_chain"] == [0, 1, 2, 3]
    assert [(o["hop"], o["condition"], o["condition_line"], o["file"], o["line"],
             [(w["hop"], w["end"]) for w in o["options"]]) for o in d["open"]] == [
        (2, "dim_size <= 1024", 900, "S.cu", 890, [(2, 3), (4, 5)])]
    hops[4].conditions[0].assumed = False  # a size the call gives: settled, nothing open
    t = Trace(query="torch.softmax", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert t.to_dict()["open"] == []


def test_cmake_options_are_settings_read_under_the_build(tmp_path):
    """The checkout's CMakeLists.txt options: `option(NAME "doc" ON)` is its default; a cmake_dependent_option's
    default holds where its condition does under the build (NOT, then AND, then OR; a `;` list is each part; a
    variable nothing sets is false, as CMake reads one; UNIX is a Linux build's), else its other value."""
    from opindex.pytorch.build_config import cmake_condition, cmake_options
    (tmp_path / "CMakeLists.txt").write_text(
        'option(USE_NUMPY "Use NumPy" ON)\noption(BUILD_TEST "Build C++ test binaries")\n'
        'cmake_dependent_option(\n  USE_FLASH_ATTENTION\n  "Whether to build flash.\\\n  More"\n  ON\n'
        '  "USE_CUDA AND NOT ROCM AND NOT USE_MACA"\n  OFF)\n'
        'cmake_dependent_option(USE_C10D_NCCL "NCCL" ON "USE_DISTRIBUTED;USE_NCCL" OFF)\n')
    found = cmake_options(str(tmp_path))
    assert {n: (o.value, o.depends, o.otherwise, o.line) for n, o in found.items()} == {
        "USE_NUMPY": ("ON", None, "OFF", 1), "BUILD_TEST": ("OFF", None, "OFF", 2),
        "USE_FLASH_ATTENTION": ("ON", "USE_CUDA AND NOT ROCM AND NOT USE_MACA", "OFF", 4),
        "USE_C10D_NCCL": ("ON", "(USE_DISTRIBUTED) AND (USE_NCCL)", "OFF", 10)}
    values = {"USE_CUDA": True, "ROCM": False, "USE_MACA": False, "USE_ROCM": False, "X": None}
    assert cmake_condition("USE_CUDA AND NOT ROCM AND NOT USE_MACA", values.get) is True
    assert cmake_condition("USE_CUDA OR USE_ROCM AND NOT USE_MACA", {**values, "USE_MACA": True}.get) is True
    assert cmake_condition("USE_ROCM OR X", values.get) is None
    assert cmake_condition("NOT (USE_CUDA OR X)", values.get) is False


def test_an_option_declared_in_if_blocks_is_read_where_the_build_reaches_it(tmp_path):
    """2.4's CMakeLists.txt:310-314 declares USE_XNNPACK twice, `if(USE_MACA)` OFF, `else()` ON; :296 guards
    USE_VULKAN with `if(NOT DEFINED USE_VULKAN)`, which a fresh configure reaches unless the user gives it. An
    elseif branch holds where the tests before it do not; a test with another CMake operator is unknown."""
    from opindex.pytorch.build_config import cmake_condition, cmake_options
    (tmp_path / "CMakeLists.txt").write_text(
        'if(USE_MACA)\n  option(USE_XNNPACK "Use XNNPACK" OFF)\nelse()\n  option(USE_XNNPACK "Use XNNPACK" ON)\nendif()\n'
        'if(NOT DEFINED USE_VULKAN)\n  cmake_dependent_option(USE_VULKAN "Vulkan" ON "ANDROID" OFF)\nendif()\n'
        'if(APPLE)\n  option(USE_MPS "MPS" ON)\nelseif(CMAKE_SYSTEM_NAME STREQUAL "Linux")\n'
        '  option(USE_KINETO "Kineto" ON)\nelse()\n  option(USE_ITT "ITT" ON)\nendif()\n')
    found = cmake_options(str(tmp_path))
    assert {n: (o.value, o.line, o.guard, o.later and (o.later.value, o.later.line, o.later.guard))
            for n, o in found.items()} == {
        "USE_XNNPACK": ("OFF", 2, "(USE_MACA)", ("ON", 4, "NOT (USE_MACA)")),
        "USE_VULKAN": ("ON", 7, "(NOT DEFINED USE_VULKAN)", None),
        "USE_MPS": ("ON", 10, "(APPLE)", None),
        "USE_KINETO": ("ON", 12, 'NOT (APPLE) AND (CMAKE_SYSTEM_NAME STREQUAL "Linux")', None),
        "USE_ITT": ("ON", 14, 'NOT (APPLE) AND NOT (CMAKE_SYSTEM_NAME STREQUAL "Linux")', None)}
    assert cmake_condition("NOT DEFINED X", {}.get, lambda name: False) is True
    assert cmake_condition('CMAKE_SYSTEM_NAME STREQUAL "Linux"', {}.get) is None
    con = _index([], [])

    def setting(name, undefines=(), defines=()):
        b = BuildContext(con, "cuda", settings_from(defines=defines, undefines=undefines))
        b.root = str(tmp_path)
        s = b.cmake_setting(name)
        return s and (s.text(), s.source)

    assert setting("USE_XNNPACK", undefines=["USE_MACA"]) == (
        "USE_XNNPACK=1", "CMake option at CMakeLists.txt:4 in if(NOT (USE_MACA))")
    assert setting("USE_XNNPACK", defines=["USE_MACA"]) == (
        "USE_XNNPACK undefined", "CMake option at CMakeLists.txt:2 in if(USE_MACA)")
    assert setting("USE_VULKAN") == (
        "USE_VULKAN undefined", "CMake option at CMakeLists.txt:7 in if(NOT DEFINED USE_VULKAN) (ANDROID)")
    assert setting("USE_MPS") == ("USE_MPS undefined", "CMake option at CMakeLists.txt:10, not declared in this build")
    assert setting("USE_KINETO") is None  # STREQUAL: not read


def test_a_trace_reads_the_checkouts_cmake_options(real_index):
    """PyTorch 2.4 (mcPytorch) CMakeLists.txt:882 makes USE_MEM_EFF_ATTENTION a cmake_dependent_option, ON under
    `USE_CUDA OR USE_ROCM AND NOT USE_MACA` (true on either build: USE_CUDA); :867 makes USE_FLASH_ATTENTION ON only
    `USE_CUDA AND NOT ROCM AND NOT USE_MACA`: off on the fork's own build (USE_MACA required), on for -U USE_MACA.
    attention.cu:971's `#if defined(USE_MEM_EFF_ATTENTION)` is then no open question of SDPA's chain."""
    stock = {s["name"]: s for s in real_index.trace("F.scaled_dot_product_attention", undefines=["USE_MACA"]).build}
    assert stock["USE_MEM_EFF_ATTENTION"] == {"name": "USE_MEM_EFF_ATTENTION", "value": "1", "source": (
        "CMake option at CMakeLists.txt:882 (USE_CUDA OR USE_ROCM AND NOT USE_MACA)")}
    assert stock["USE_FLASH_ATTENTION"]["value"] == "1"
    fork = {s["name"]: s for s in real_index.trace("F.scaled_dot_product_attention").build}
    assert fork["USE_FLASH_ATTENTION"] == {"name": "USE_FLASH_ATTENTION", "value": None, "source": (
        "CMake option at CMakeLists.txt:867 (USE_CUDA AND NOT ROCM AND NOT USE_MACA)")}


def test_a_macro_whose_body_is_a_test_and_an_else_after_an_else_if_the_build_leaves_out():
    """`#define HAS_WARP_MERGE_SORT() (CUDA_VERSION >= 110600)` (PyTorch 2.4 SortUtils.cuh:13) is read as #if
    reads it: 0 on the default build (CUDA_VERSION 12040), 1 where the user states 110600. sortKeyValueInplace
    (Sort.cu:397-408) puts `} else if (sort_size <= 128) {` under that #if: on a build without it, the final else
    runs where `!stable && sort_size <= 32` does not hold, and not also where `sort_size <= 128` does not."""
    from opindex.trace.conditions import Guards
    con = _index([], [("SortUtils.cuh", 13, "HAS_WARP_MERGE_SORT", "()", "(CUDA_VERSION >= 110600)")])
    assert BuildContext(con, "cuda").holds("HAS_WARP_MERGE_SORT()") is False
    assert BuildContext(con, "cuda", settings_from(["CUDA_VERSION=110600"])).holds("HAS_WARP_MERGE_SORT()") is True
    assert BuildContext(con, "cuda", settings_from([], ["CUDA_VERSION"])).holds("HAS_WARP_MERGE_SORT()") is False
    rows = [{"line": 397, "end_line": 399, "kind": "if", "condition": "sort_size <= 1"},
            {"line": 399, "end_line": 403, "kind": "if", "condition": "!stable && sort_size <= 32"},
            {"line": 403, "end_line": 408, "kind": "if", "condition": "not (!stable && sort_size <= 32)"},
            {"line": 403, "end_line": 406, "kind": "if", "condition": "sort_size <= 128"},
            {"line": 403, "end_line": 404, "kind": "#if", "condition": "HAS_WARP_MERGE_SORT()"},
            {"line": 406, "end_line": 408, "kind": "if", "condition": "not (sort_size <= 128)"}]
    for size, radix in ((100, True), (20, False)):
        guards = Guards(rows, "cuda", {"sort_size": size, "stable": False}, "Sort.cu", BuildContext(con, "cuda"))
        ruled_out = any(c.assumed is False for c in guards.at(407).conditions)  # MediumRadixSort's call
        assert ruled_out is not radix
        assert any(c.assumed is False for c in guards.at(404).conditions)  # WarpMergeSort's: never built
    built = BuildContext(con, "cuda", settings_from(["CUDA_VERSION=110600"]))
    guards = Guards(rows, "cuda", {"sort_size": 100, "stable": False}, "Sort.cu", built)
    assert [(c.text, c.assumed) for c in guards.at(407).conditions] == [("not (sort_size <= 128)", False)]
    assert not guards.at(404).conditions
