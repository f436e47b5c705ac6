"""The query layer and its CLI twin on the sample: trace outputs, listing commands, the notebook API."""
from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import SAMPLE, SAMPLE_ENTRIES

from opindex.cli import main
from opindex.model import Location


def cli(db, *args):
    return CliRunner().invoke(main, [*args, "--db", str(db)])


def test_trace_json_shape(sample_db):
    result = cli(sample_db, "trace", "nn.LSTM", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert set(data) == {"version", "query", "direction", "device", "depth", "dtype", "build", "build_conflicts",
                         "call", "given", "main_chain", "choices", "open", "ruled_out", "hops", "candidates", "message", "truncated", "index"}
    assert data["index"] == {"file": str(sample_db), "checkout": str(SAMPLE)}
    assert (data["dtype"], data["build"], data["build_conflicts"]) == ("float32", [], [])  # no #if read
    assert data["version"] == 4 and data["call"] is None and data["given"] is None  # a name, not a call
    assert data["truncated"] == {}
    assert (data["query"], data["direction"], data["device"], data["depth"]) == ("nn.LSTM", "down", "cuda", 1)
    hops = data["hops"]
    assert set(hops[0]) == {"id", "parent", "layer", "kind", "name", "file", "line", "detail", "absent",
                            "called_at", "found", "conditions", "shown_above", "repeats", "main", "kernel", "schema",
                            "op", "feeds"}
    # the main chain: its ids in order, each hop flagged, a path from a root
    main = data["main_chain"]
    assert [h["id"] for h in hops if h["main"]] == sorted(main) and hops[main[0]]["parent"] is None
    assert all(hops[b]["parent"] == a for a, b in zip(main, main[1:]))
    assert hops[main[-1]]["name"] == "cudnnRNNForward"
    # typed fields: an entry's schema and op, a kernel's bare name, a repeat pointing at what it repeats
    entry = next(h for h in hops if h["kind"] == "entry")
    assert entry["schema"] == entry["detail"] and entry["op"] == entry["name"].removeprefix("aten::")
    assert all(h["kernel"] is None for h in hops if h["layer"] != "cuda")
    layer_norm = json.loads(cli(sample_db, "trace", "F.layer_norm", "--json").output)["hops"]
    assert [(h["kind"], h["kernel"]) for h in layer_norm if h["kernel"]][:2] == [
        ("launch", "RowwiseMomentsCUDAKernel"), ("global_kernel", "RowwiseMomentsCUDAKernel")]
    assert all(hops[h["repeats"]]["name"] == h["name"] and not hops[h["repeats"]]["shown_above"]
               for h in hops if h["shown_above"] and h["repeats"] is not None)
    assert {h["found"] for h in hops} <= {"call", "same_file", "overloads", "helper_leaf", "composite_callee"}
    assert [h["id"] for h in hops] == list(range(len(hops)))
    assert all(h["parent"] is None or h["parent"] < h["id"] for h in hops)
    assert all(h["file"] and h["line"] for h in hops if not h["absent"] and h["layer"] not in ("codegen",))
    cudnn = [h for h in hops if h["layer"] == "library"]
    assert [h["name"] for h in cudnn] == ["cudnnCreateTensorDescriptor", "cudnnSetTensorNdDescriptor",
                                         "cudnnGetRNNWorkspaceSize", "cudnnRNNForward"]
    assert {h["file"] for h in cudnn} == {"aten/src/ATen/native/cudnn/RNN.cpp"}


def test_trace_text_is_the_main_chain_with_folded_branches(sample_db):
    out = cli(sample_db, "trace", "relu").output
    lines = out.splitlines()
    assert lines[0] == "opindex trace relu   (top-down, device cuda, dtype float32, depth 1; 31 hops)"
    chain = lines[lines.index("Main chain: the default path on CUDA, to the device code it ends in") + 2:]
    assert [line.split()[:3] for line in chain[:12]] == [
        ["1", "native", "aten::relu"], ["2", "dispatch", "CUDA:"], ["3", "cpp", "at::native::relu"],
        ["4", "native", "at::clamp_min"], ["5", "native", "aten::clamp_min"], ["6", "native", "aten::clamp_min.out"],
        ["7", "dispatch", "CUDA:"], ["8", "cpp", "at::native::structured_clamp_min_out"],
        ["9", "stub", "clamp_min_scalar_stub"], ["10", "registration", "CUDA:"],
        ["11", "cpp", "at::native::clamp_min_scalar_kernel_impl"], ["12", "cuda", "gpu_kernel"]]
    assert chain[0].endswith("aten/src/ATen/native/native_functions.yaml:4")  # one line per hop, with file:line
    assert chain[11].endswith("aten/src/ATen/native/cuda/TensorCompare.cu:10")
    # the branches: one line each, under the chain hop they leave from; the backward; the flags that expand it
    assert "  1 ↳ python       Python surfaces of relu  (3 hops)" in lines
    assert "  6 ↳ cpp          at::meta::structured_clamp_min  aten/src/ATen/native/TensorCompare.cpp:6" in lines
    assert "     backward     derivatives.yaml: relu  tools/autograd/derivatives.yaml:3  (2 formulas)" in lines
    assert lines[-1].startswith("Expand: --tree (all 31 hops)  --snippets (source lines)")
    assert "\x1b[" not in out  # no colour when not a terminal
    # --tree: every hop; --snippets: a few lines of source under each hop shown, read from the checkout
    tree = cli(sample_db, "trace", "relu", "--tree").output
    assert "  [native] aten::relu  aten/src/ATen/native/native_functions.yaml:4" in tree.splitlines()
    assert len([line for line in tree.splitlines() if "[" in line and "]" in line]) >= 31
    snippets = cli(sample_db, "trace", "relu", "--snippets").output
    assert "    8 | Tensor relu(const Tensor& self) {" in snippets
    assert "gpu_kernel(iter, [=] GPU_LAMBDA" in snippets
    assert "    8 | Tensor relu" not in cli(sample_db, "trace", "relu").output


def test_trace_colour_follows_the_flags_and_no_color(sample_db, monkeypatch):
    coloured = cli(sample_db, "trace", "relu", "--color").output
    assert "\x1b[34mnative      \x1b[0m aten::relu" in coloured
    assert "\x1b[" not in cli(sample_db, "trace", "relu", "--no-color").output
    from opindex.render import terminal
    monkeypatch.setenv("NO_COLOR", "1")
    assert terminal.use_color(None) is False
    assert terminal.use_color(True) is True  # the flag wins over the environment
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(terminal, "is_terminal", lambda stream=None: True)
    assert terminal.use_color(None) is True


def test_trace_pager_only_on_a_terminal(monkeypatch, tmp_path):
    from opindex.render import terminal
    import io
    calls = []
    monkeypatch.setattr(terminal.subprocess, "Popen", lambda *a, **k: calls.append(a) or (_ for _ in ()).throw(
        OSError("no pager")))
    out = io.StringIO()
    long = "x\n" * 500
    terminal.page(long, stream=out)  # not a terminal: never a pager
    assert out.getvalue() == long and calls == []
    monkeypatch.setattr(terminal, "is_terminal", lambda stream=None: True)
    monkeypatch.setenv("PAGER", "less")
    out = io.StringIO()
    terminal.page(long, stream=out)  # a terminal: the pager is asked for (here it fails, so the text is printed)
    assert calls and calls[0][0] == ["less"] and out.getvalue() == long
    calls.clear()
    terminal.page(long, enabled=False, stream=io.StringIO())  # --no-pager
    assert calls == []


def test_trace_pictures(ix):
    t = ix.trace("mm")
    dot = t.to_dot()
    assert dot.startswith("digraph trace {") and dot.rstrip().endswith("}")
    import re
    assert len(re.findall(r"^  n\d+ -> n\d+;$", dot, re.M)) == len([h for h in t.hops if h.parent is not None])
    mermaid = t.to_mermaid()
    assert mermaid.startswith("flowchart TD")
    assert "at::cuda::blas::gemm" in mermaid
    md = t.to_markdown()
    assert md.startswith("### opindex trace `mm`")
    assert "| library | `aten/src/ATen/cuda/CUDABlas.cpp:10` | `cublasSgemm` |" in md
    # a notebook shows the main chain and folds the branches (tests/test_notebook_view.py)
    assert t._repr_markdown_().startswith("### opindex trace `mm` (top-down, device cuda, dtype float32, depth 1)\n")
    assert t._repr_html_().startswith(f'<div class="opindex-trace" data-r="{SAMPLE}" data-u="file://{{path}}">')


def test_trace_names_people_type(ix):
    roots = {}
    for name in ("nn.LSTM", "torch.nn.LSTM", "torch.nn.modules.rnn.LSTM", "F.relu", "torch.nn.functional.relu",
                 "torch.relu", "relu", "Tensor.add_", "aten::add.Tensor", "add.out", "at::native::relu",
                 "add_kernel_cuda", "clamp_min_scalar_stub", "cunn_SoftMaxForward"):
        t = ix.trace(name)
        assert t.hops, (name, t.message)
        roots[name] = (t.direction, t.hops[0].layer, t.hops[0].name)
    assert roots["nn.LSTM"] == roots["torch.nn.LSTM"] == roots["torch.nn.modules.rnn.LSTM"] == (
        "down", "python", roots["nn.LSTM"][2])
    assert roots["F.relu"][1:] == ("python", "F.relu") or roots["F.relu"][2].endswith("functional.relu")
    assert roots["relu"] == ("down", "native", "aten::relu")
    assert roots["torch.relu"][:2] == ("down", "python")
    assert roots["aten::add.Tensor"] == ("down", "native", "aten::add.Tensor")
    assert roots["add.out"] == ("down", "native", "aten::add.out")
    assert roots["at::native::relu"] == ("down", "cpp", "at::native::relu")
    assert roots["add_kernel_cuda"][:2] == ("up", "cpp")
    assert roots["clamp_min_scalar_stub"] == ("up", "stub", "clamp_min_scalar_stub")
    assert roots["cunn_SoftMaxForward"][:2] == ("up", "cuda")


def test_trace_says_what_is_absent(ix):
    t = ix.trace("relu", device="mps")
    assert [h.name for h in t.hops if h.absent] == [
        "no C++ definition of relu_mps found by opindex (none in its index: it may be written by a macro opindex does "
        "not expand, e.g. one defined in another file, or generated at build time)"]
    t = ix.trace("torch.add")
    assert t.hops[0].detail.startswith("no Python wrapper: bound from variants: function, method of add.Tensor")


def test_unknown_name_suggests(sample_db):
    result = cli(sample_db, "trace", "rellu")
    assert result.exit_code == 1  # nothing found
    assert result.output.startswith("'rellu' is not a Python name, op, C++ function, stub or kernel in the index "
                                    f"{sample_db} (checkout {SAMPLE}); did you mean one of these?\n  relu\n")


def test_ambiguous_name_lists_candidates(ix):
    t = ix.trace("add")  # add.Tensor and add.Scalar are overloads of one op: walked together, not ambiguous
    assert [h.name for h in t.roots()] == ["aten::add.Tensor", "aten::add.Scalar"]


def test_device_all_and_depth_zero(ix):
    # relu's kernel has no device code of its own: it forwards to clamp_min, which --depth 0 does not stop
    t = ix.trace("relu", device="all", depth=0)
    rows = [h.name for h in t.hops if h.layer == "dispatch"]
    assert rows == ["CPU, CUDA: relu", "CPU, CUDA: clamp_min_out", "MPS: relu_mps"]
    assert [h.detail for h in t.hops if h.kind == "calls_op"] == [
        "calls the op clamp_min: back into the YAML layer"]
    deeper = ix.trace("relu", device="all", depth=1)
    assert {(h.name, h.file, h.line) for h in t.hops} <= {(h.name, h.file, h.line) for h in deeper.hops}


def test_backward_flag_traces_backward_ops(ix):
    t = ix.trace("relu", backward=True)
    formula = next(h for h in t.hops if h.kind == "formula" and h.name.startswith("self:"))
    assert [h.name for h in t.children(formula.id)] == ["aten::threshold_backward"]


def test_listing_commands(sample_db):
    assert json.loads(cli(sample_db, "find", "relu", "--layer", "cpp", "--json").output) == [
        {"name": "relu", "qualified_name": "at::native::relu", "kind": "function", "language": "cpp",
         "file": "aten/src/ATen/native/Activation.cpp", "line": 8,
         "signature": "(const Tensor& self)", "index": {"file": str(sample_db), "checkout": str(SAMPLE)}}]
    op = json.loads(cli(sample_db, "op", "relu", "--json").output)
    assert [(r["dispatch_key"], r["kernel"]) for r in op] == [("CPU", "relu"), ("CUDA", "relu"), ("MPS", "relu_mps")]
    stub = cli(sample_db, "stub", "add_stub", "--csv").output.splitlines()
    assert stub[0] == "what,device,name,file,line"
    assert "registered (REGISTER_DISPATCH),CUDA,add_kernel_cuda,aten/src/ATen/native/cuda/BinaryAddKernel.cu,23" \
        in stub
    callers = json.loads(cli(sample_db, "callers", "at::clamp_min", "--json").output)
    assert ("at::native::relu", "aten/src/ATen/native/Activation.cpp", 10) in {
        (c["caller"], c["file"], c["line"]) for c in callers}
    callees = json.loads(cli(sample_db, "callees", "at::native::relu", "--json").output)
    assert ("clamp_min", "at") in {(c["callee"], c["qualifier"]) for c in callees}
    kernels = json.loads(cli(sample_db, "kernels", "--op", "F.layer_norm", "--json").output)
    assert [k["kernel"] for k in kernels if k["kind"] == "global_kernel"] == [
        "__global__ at::native::RowwiseMomentsCUDAKernel", "__global__ at::native::LayerNormForwardCUDAKernel"]
    stats = json.loads(cli(sample_db, "stats", "--json").output)
    assert {"what": "rows[native_functions]", "value": SAMPLE_ENTRIES,
            "index": {"file": str(sample_db), "checkout": str(SAMPLE)}} in stats


def test_unknown_stub_and_op_are_errors(sample_db):
    assert cli(sample_db, "stub", "nope_stub").exit_code == 1
    assert cli(sample_db, "op", "nope_op").output == (
        f"Error: no native_functions.yaml entry named nope_op in index {sample_db} (checkout {SAMPLE})\n")


def test_views(ix):
    assert ix.rows("SELECT function, dispatch_key, definition FROM op_kernels WHERE function = 'clamp_min.out' "
                   "ORDER BY dispatch_key") == [
        {"function": "clamp_min.out", "dispatch_key": "CPU", "definition": "at::native::structured_clamp_min_out"},
        {"function": "clamp_min.out", "dispatch_key": "CUDA", "definition": "at::native::structured_clamp_min_out"}]
    assert ix.rows("SELECT stub, device, kernel FROM stub_kernels WHERE stub = 'lstm_cudnn_stub' ORDER BY device") \
        == [{"stub": "lstm_cudnn_stub", "device": "CPU", "kernel": None},
            {"stub": "lstm_cudnn_stub", "device": "CUDA", "kernel": "lstm_cudnn"}]
    assert ix.rows("SELECT function, stub FROM op_stubs WHERE function = 'add.out' AND dispatch_key = 'CUDA'") == [
        {"function": "add.out", "stub": "add_stub"}]
    launches = ix.rows("SELECT kernel, caller, line FROM kernel_launch_sites ORDER BY line")
    assert {"kernel": "RowwiseMomentsCUDAKernel", "caller": "at::native::LayerNormKernelImplInternal",
            "line": 35} in launches
    assert ix.rows("SELECT inputs FROM op_backward WHERE function = 'relu' ORDER BY line") == [
        {"inputs": "self"}, {"inputs": "result"}]


def test_typed_records(ix):
    [relu] = ix.op("relu")
    assert relu.location == Location("aten/src/ATen/native/native_functions.yaml", 4)
    assert [(d.dispatch_key, d.kernel, d.implicit) for d in relu.dispatch] == [
        ("CPU", "relu", False), ("CUDA", "relu", False), ("MPS", "relu_mps", False)]
    stub = ix.stub("lstm_cudnn_stub")
    assert sorted((r.device, r.kernel, r.macro) for r in stub.registrations) == [
        ("CPU", None, "REGISTER_NO_CPU_DISPATCH"), ("CUDA", "lstm_cudnn", "REGISTER_CUDA_DISPATCH")]
    assert [str(c.location) for c in stub.callers] == ["aten/src/ATen/native/RNN.cpp:25"]


def test_sql_returns_dataframe_with_pandas(ix):
    import pandas as pd
    df = ix.sql("SELECT kernel FROM native_dispatch WHERE function = :f ORDER BY kernel", f="relu")
    assert isinstance(df, pd.DataFrame)
    assert list(df["kernel"]) == ["relu", "relu", "relu_mps"]


def test_python_compositions(ix):
    [row] = ix.rows("SELECT function, ops, op_names FROM python_compositions")
    assert (row["function"], row["ops"]) == ("torch.nn.functional.gelu_tanh", 3)
    assert sorted(row["op_names"].split(",")) == ["add", "mul", "tanh"]  # group_concat has no set order
    t = ix.trace("F.gelu_tanh")
    assert t.hops[0].detail.endswith(f"; composed in Python of 3 ops: {row['op_names']}")
    # relu and relu_ are one op in two spellings; softmax is one op called twice: neither is composed
    assert ix.rows("SELECT count(*) AS n FROM python_compositions WHERE function IN "
                   "('torch.nn.functional.relu', 'torch.nn.functional.softmax')") == [{"n": 0}]


def test_unresolvable_python_name_falls_back_to_the_op(ix):
    # torch.nn.functional has no `mm` (as F.max_pool2d is an object, not a def, in real PyTorch)
    t = ix.trace("F.mm")
    assert (t.hops[0].layer, t.hops[0].kind, t.hops[0].name) == ("python", "by_name", "F.mm")
    assert t.hops[0].detail == "no Python definition or binding of F.mm found; traced as the op mm by name"
    assert [h.name for h in t.children(t.hops[0].id) if h.layer == "native"] == ["aten::mm"]
    assert {"cublasSgemm", "cublasDgemm"} <= {h.name for h in t.ends()}  # through at::cuda::blas::gemm<T>


def test_up_from_an_op_walks_to_its_python_surfaces(ix):
    # an op, or the binding that names it: up goes to the bindings and the Python code that calls it
    for name in ("relu", "torch.relu"):
        t = ix.trace(name, up=True)
        assert t.direction == "up"
        assert [(h.layer, h.kind, h.name, h.parent) for h in t.hops] == [
            ("native", "entry", "aten::relu", None),
            ("python", "binding", "torch.relu", 0),
            ("python", "binding", "Tensor.relu", 0),
            ("bridge", "torch", "torch.nn.functional.relu: torch.relu", 0),
            ("python", "module", "torch.nn.modules.activation.ReLU", 3),  # its forward calls F.relu
            ("bridge", "tensor_method", "torch._tensor.Tensor.double_relu: self.relu", 0)]
        assert t.main_chain()[-1].name == "torch.nn.modules.activation.ReLU"


def test_up_from_a_python_class_says_why_not(sample_db):
    result = cli(sample_db, "trace", "nn.ReLU", "--up")
    assert result.exit_code == 2
    assert ("'nn.ReLU' is a Python class: --up walks from an op, a C++ function, a stub or a kernel to what "
            "reaches it; trace nn.ReLU without --up") in result.output


def test_a_trace_answers_repeated_lookups_once(ix):
    from opindex.trace import facts as q
    sql = "SELECT name FROM native_functions WHERE name = ? ORDER BY line"
    calls = []
    ix.con.set_trace_callback(calls.append)
    try:
        with q.memoized(ix.con):
            first, second = q.rows(ix.con, sql, ("relu",)), q.rows(ix.con, sql, ("relu",))
            first.append({"name": "changed by a caller"})
            third = q.rows(ix.con, sql, ("relu",))
        after = q.rows(ix.con, sql, ("relu",))
    finally:
        ix.con.set_trace_callback(None)
    assert second == third == after == [{"name": "relu"}]  # a caller's change to its list does not leak
    assert [c for c in calls if c.startswith("SELECT name")] == [sql.replace("?", "'relu'")] * 2  # memo, then not
    assert q._memos == {}


def test_the_next_trace_of_an_open_index_asks_only_name_lookups_again(sample_db, monkeypatch):
    from opindex.api import Index
    from opindex.trace import facts as q
    with Index(sample_db) as index:
        statements = []
        index.con.set_trace_callback(statements.append)
        first = index.trace("nn.LSTM").to_dict()
        asked = len(statements)
        statements.clear()
        second = index.trace("nn.LSTM").to_dict()
        assert second == first
        # what name resolution asks (q.tuples, its own memo) comes back; every lookup of the walk is kept
        assert statements and all(" FROM symbols WHERE qualified_name = " in s or " FROM python_imports WHERE " in s
                                  for s in statements)
        assert len(statements) < asked
        assert q.resident(index.con).answers
        monkeypatch.setattr(q, "KEEP_ROWS", 0)  # past the bound: dropped after the trace, asked again next time
        statements.clear()
        assert index.trace("nn.LSTM").to_dict() == first
        assert q.resident(index.con).answers == {}
        statements.clear()
        index.trace("nn.LSTM")
        assert any(" FROM calls WHERE caller = " in s for s in statements)
        index.con.set_trace_callback(None)
        con = index.con
    assert id(con) not in q._residents  # closed: what was kept for it is dropped


def test_a_cut_trace_says_so_and_the_cap_lifts(ix):
    cut = ix.trace("nn.LSTM", max_hops=5)
    assert len(cut.hops) == 5
    assert cut.truncated == {"hops": 5, "reason": "the walk stopped at 5 hops; raise max_hops (--max-hops N, 0 for "
                                                  "no limit) to see the rest"}
    assert cut.to_dict()["truncated"]["hops"] == 5
    assert "TRUNCATED: the walk stopped at 5 hops" in cut.to_text(context=0)
    whole = ix.trace("nn.LSTM", max_hops=0)
    assert whole.truncated == {} and len(whole.hops) > 5
    out = CliRunner().invoke(main, ["trace", "nn.LSTM", "--max-hops", "5", "--json", "--db", str(ix.path)])
    assert out.exit_code == 0
    assert "opindex: the walk stopped at 5 hops" in out.stderr


def test_op_and_stub_rows_are_the_same_from_the_library_and_the_cli(ix):
    index = {"index": ix.answered_by()}  # the CLI's JSON rows also name the index that answered
    op_rows = [row for e in ix.op("argmax") for row in e.rows()]
    assert json.loads(CliRunner().invoke(main, ["op", "argmax", "--json", "--db", str(ix.path)]).output) == [
        {**r, **index} for r in op_rows]
    stub_rows = ix.stub("add_stub").rows()
    assert json.loads(CliRunner().invoke(main, ["stub", "add_stub", "--json", "--db", str(ix.path)]).output) == [
        {**r, **index} for r in stub_rows]
    assert {r["what"] for r in stub_rows} >= {"declared/defined", "called", "registered (REGISTER_DISPATCH)"}


def test_a_functor_built_for_a_launcher_is_the_op_body(ix):
    # BinaryAddKernel.cu:19 hands AddFunctor<opmath_t>(...) to opmath_gpu_kernel_with_scalars: the struct (line 7,
    # its __device__ operator() at :9) is a hop under add_kernel_cuda, not the end of the main chain
    t = ix.trace("add")
    functors = [(h.layer, h.name, h.file, h.line, h.called_at) for h in t.hops if h.kind == "op_body"]
    assert functors == [("cuda", "at::native::AddFunctor", "aten/src/ATen/native/cuda/BinaryAddKernel.cu", 7,
                         "aten/src/ATen/native/cuda/BinaryAddKernel.cu:19")]
    assert t.main_chain()[-1].name == "opmath_gpu_kernel_with_scalars"
    # the same link in SQL: the call builds the class, and the class is device code
    assert ix.rows("SELECT caller, definition, def_line FROM call_targets WHERE callee = 'AddFunctor' "
                   "ORDER BY def_line") == [
        {"caller": "at::native::add_kernel_cuda", "definition": "at::native::AddFunctor", "def_line": 7},
        {"caller": "at::native::add_kernel_cuda", "definition": "at::native::AddFunctor::AddFunctor", "def_line": 8}]
    assert ix.rows("SELECT s.qualified_name, r.distance, r.reaches FROM device_reach r JOIN symbols s "
                  "ON s.id = r.symbol_id WHERE r.reaches = 'functor' ORDER BY 1") == [
        {"qualified_name": "at::native::AddFunctor", "distance": 0, "reaches": "functor"},
        {"qualified_name": "at::native::FillFunctor", "distance": 0, "reaches": "functor"}]
