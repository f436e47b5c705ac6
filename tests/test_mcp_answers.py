"""The MCP server's answers without the SDK (opindex.mcp.call, what each tool call runs): budgets, cursors, the build
a trace is for, and the served index reopened after a rebuild (docs/mcp.md)."""
from __future__ import annotations

from opindex.mcp import call


def test_a_trace_takes_the_cli_build_dtype_and_config(ix, tmp_path):
    default = call(ix, "trace", {"name": "nn.LSTM"})
    config = tmp_path / "build.yaml"
    config.write_text("CUDNN_VERSION: 8600\n")
    for args in ({"config": {"CUDNN_VERSION": 8600}}, {"config": str(config)}, {"defines": ["CUDNN_VERSION=8600"]}):
        t = call(ix, "trace", {"name": "nn.LSTM", **args})
        assert not t.error and t.data["main_chain"] == default.data["main_chain"], args
    bf16 = call(ix, "trace", {"name": "relu", "dtype": "bfloat16"})
    assert bf16.data["dtype"] == "bfloat16" and "dtype bfloat16" in bf16.text.splitlines()[0]
    broken = tmp_path / "broken.yaml"
    broken.write_text("USE_ROCM: [1\n")
    assert call(ix, "trace", {"name": "nn.LSTM", "config": str(broken)}).text.startswith(f"{broken}:2: not YAML")
    bad = call(ix, "trace", {"name": "nn.LSTM", "config": str(tmp_path / "none.yaml")})
    assert bad.error and bad.text.startswith(f"cannot read the build config {tmp_path / 'none.yaml'}")
    assert call(ix, "trace", {"name": "relu", "config": 3}).text == \
        "trace: config must be an object or string, got int 3\n"


def test_the_grades_of_a_trace_nest_and_name_what_they_leave_out(ix):
    main, branches, full = (call(ix, "trace", {"name": "nn.LSTM", "detail": d, "max_chars": 10**6})
                            for d in ("main", "branches", "full"))
    ids = [{h["id"] for h in a.data["hops"]} for a in (main, branches, full)]
    assert ids[0] < ids[1] < ids[2] and len(ids[2]) == full.data["hops_total"] == 29
    assert set(main.data["main_chain"]) <= ids[0]
    heads = [h for h in branches.data["hops"] if h["id"] in ids[1] - ids[0]]
    assert all(h["parent"] in main.data["main_chain"] for h in heads)
    assert "Branches: each folded" in branches.text and "Branches" not in main.text and "Tree" in full.text
    assert main.text.rstrip().endswith("detail='full' (all 29 hops as a tree); depth=2 (follow more op calls); "
                                       "backward=true (trace the ops the backward calls)")


def test_an_op_over_budget_names_its_overloads_with_their_sizes(ix):
    whole = call(ix, "op", {"name": "add", "max_chars": 10**6})
    refused = call(ix, "op", {"name": "add", "max_chars": 700})
    assert whole.size() > 700 and refused.error and refused.data["chars"] == whole.size()
    sizes = {n["call"]: n["chars"] for n in refused.data["narrower"]}
    assert sizes == {f"name={e['function']!r}": call(ix, "op", {"name": e["function"]}).size()
                     for e in whole.data["entries"]}


def test_listings_page_with_cursors_and_refuse_a_damaged_one(ix):
    everything = call(ix, "kernels", {"limit": 1000}).data["rows"]
    first = call(ix, "kernels", {"limit": 3})
    second = call(ix, "kernels", {"limit": 3, "cursor": first.data["next_cursor"]})
    assert first.data["rows"] + second.data["rows"] == everything[:6] and second.data["offset"] == 3
    assert call(ix, "kernels", {"cursor": "%%%"}).data["error"] == "bad_cursor"
    assert call(ix, "find", {"name": "*", "cursor": first.data["next_cursor"]}).data["error"] == "bad_cursor"


def test_the_server_reopens_its_index_after_a_rebuild(sample_copy, tmp_path):
    from opindex.api import build
    from opindex.mcp.server import Served
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    served = Served(db)
    before = served.index()
    assert served.index() is before  # the same file: the same connection
    relu = sample_copy / "aten/src/ATen/native/Activation.cpp"
    relu.write_text("\n\n" + relu.read_text())  # every definition two lines down
    build(str(sample_copy), db, jobs=1)
    after = served.index()
    assert after is not before
    assert call(after, "find", {"name": "at::native::relu"}).data["rows"][0][3] == \
        "aten/src/ATen/native/Activation.cpp:10"


def test_diff_compares_the_served_index_with_another(ix, sample_copy, tmp_path):
    from opindex.api import build
    kernel = sample_copy / "aten/src/ATen/native/cuda/layer_norm_kernel.cu"
    kernel.write_text(kernel.read_text().replace("LayerNormForwardCUDAKernel", "LayerNormFwdKernel"))
    build(str(sample_copy), tmp_path / "b.sqlite", jobs=1)
    other = str(tmp_path / "b.sqlite")
    whole = call(ix, "diff", {"other": other})
    assert not whole.error and whole.data == ix.diff(other).to_dict()
    assert "renamed: at::native::LayerNormForwardCUDAKernel -> at::native::LayerNormFwdKernel" in whole.text
    one = call(ix, "diff", {"other": other, "names": ["layer_norm"]})
    [chain] = one.data["op_chains"]
    assert [(s["role"], s["b"]["name"]) for s in chain["steps"] if s["status"] != "same"] == [
        ("launch", "LayerNormFwdKernel<T, T_ACC><<<M, kThreads, 0, stream>>>"),
        ("device code", "__global__ at::native::LayerNormFwdKernel")]
    refused = call(ix, "diff", {"other": other, "max_chars": 300})
    assert refused.error and refused.data["narrower"] == [
        {"call": "names=['OP'] (one op's two main chains side by side)", "chars": None}]
    assert "\nNarrower: names=['OP'] (one op's two main chains side by side)\n" in refused.text
    assert call(ix, "diff", {}).data == {"error": "bad_arguments", "message": "diff: give other (an index file, or "
                                                                            "a checkout with its own index), or "
                                                                            "fork=true"}


def test_coverage_pages_its_rows_and_names_an_empty_answer(ix):
    # sample_checkout's native_functions.yaml:8 gives relu a CUDA row of its own
    one = call(ix, "coverage", {"device": ["cuda"], "ops": ["relu"]})
    assert not one.error and one.data["rows"] == [
        ["aten::relu", "CUDA", "kernel", "aten/src/ATen/native/native_functions.yaml:8", "relu", ""]]
    first = call(ix, "coverage", {"device": ["cuda"], "limit": 3})
    assert len(first.data["rows"]) == 3 and first.data["next_cursor"]
    second = call(ix, "coverage", {"device": ["cuda"], "limit": 3, "cursor": first.data["next_cursor"]})
    assert second.data["offset"] == 3 and second.data["rows"][0] != first.data["rows"][0]
    every = call(ix, "coverage", {"device": ["cuda"], "limit": 500, "max_chars": 10**6})
    assert every.data["rows"][:6] == first.data["rows"] + second.data["rows"]
    none = call(ix, "coverage", {"ops": ["no_such_op"]})
    assert none.error and none.text.startswith("no coverage row for these arguments")


def test_an_unknown_name_is_answered_with_the_names_that_command_would_find(ix):
    # the sample's native_functions.yaml has layer_norm; its find and callers pools hold relu's definitions and calls
    assert call(ix, "op", {"name": "layer_nrom"}).data["suggestions"] == ["layer_norm"]
    assert call(ix, "find", {"name": "relux"}).data["suggestions"] == ["ReLU", "relu", "relu_"]
    assert call(ix, "callers", {"name": "relux"}).data["suggestions"] == ["relu", "relu_"]


def test_ways_one_test_rules_out_together_are_said_once():
    """A choice's ways that the same tests rule out share one `ruled_out_by`: the first such way carries it, the
    others are listed as `more` ([hop, end] pairs); a way open or ruled out by other tests keeps its own entry."""
    from opindex.mcp.trace_answer import _choice
    false = lambda text: {"text": text, "file": "a.cu", "line": 3, "assumed": False}  # noqa: E731
    choice = {"hop": 1, "ways": 4, "settled": False, "file": "a.cu", "line": 1, "options": [
        {"hop": 1, "end": 2, "conditions": [{"text": "n > 4", "file": "a.cu", "line": 2, "assumed": None}]},
        {"hop": 5, "end": 6, "conditions": [false("not (n <= 1024)")]},
        {"hop": 7, "end": 8, "conditions": [false("not (n <= 1024)")]},
        {"hop": 9, "end": 10, "conditions": [false("half")]}]}
    assert _choice(choice) == {"hop": 1, "ways": 4, "settled": False, "at": "a.cu:1", "options": [
        {"hop": 1, "end": 2}, {"hop": 5, "end": 6, "ruled_out_by": ["not (n <= 1024)"], "more": [[7, 8]]},
        {"hop": 9, "end": 10, "ruled_out_by": ["half"]}], "open": {"test": "n > 4", "at": "a.cu:2"}}
