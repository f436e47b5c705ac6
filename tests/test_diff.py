"""`opindex diff` and Index.diff / Index.fork_report on the sample: the sample against a copy changed in known ways
(an op added, one renamed, a dispatch key gained, a schema argument added, a backward formula changed, a __global__
kernel renamed, and a fork platform added), each change named exactly."""
from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from conftest import SAMPLE

NATIVE = "aten/src/ATen/native/native_functions.yaml"
KERNEL_FILE = "aten/src/ATen/native/cuda/layer_norm_kernel.cu"
FORK_GUARD = "aten/src/ATen/native/cuda/FillKernel.cu"


def _edit(root, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text()
    assert old in text, (path, old)
    file.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def changed_db(tmp_path_factory):
    """The sample changed: gelu added, zero_ renamed zeros_, relu gains QuantizedCPU, mm gains a kwarg-only
    argument, relu's backward formula changes, LayerNormForwardCUDAKernel is renamed LayerNormFwdKernel (definition
    and launch), and a fork platform USE_FORKX: required (static_assert in its #else), a registration under its
    #if, a folder forkx_kernels/ with a __global__ kernel."""
    from opindex.api import build
    root = tmp_path_factory.mktemp("changed") / "checkout"
    shutil.copytree(SAMPLE, root)
    _edit(root, NATIVE, "    MPS: relu_mps\n", "    MPS: relu_mps\n    QuantizedCPU: relu_quantized_cpu\n")
    _edit(root, NATIVE, "- func: mm(Tensor self, Tensor mat2) -> Tensor",
          "- func: mm(Tensor self, Tensor mat2, *, bool fast=False) -> Tensor")
    _edit(root, NATIVE, "- func: zero_(Tensor(a!) self)", "- func: zeros_(Tensor(a!) self)")
    (root / NATIVE).write_text((root / NATIVE).read_text() + "\n- func: gelu(Tensor self) -> Tensor\n"
                               "  dispatch:\n    CPU, CUDA: gelu\n")
    _edit(root, "tools/autograd/derivatives.yaml", "  self: threshold_backward(grad, result, 0)\n",
          "  self: threshold_backward(grad, result, 0.0)\n")
    for _ in range(2):
        _edit(root, KERNEL_FILE, "LayerNormForwardCUDAKernel", "LayerNormFwdKernel")
    _edit(root, FORK_GUARD, "REGISTER_DISPATCH(fill_stub, &fill_kernel_cuda);",
          "REGISTER_DISPATCH(fill_stub, &fill_kernel_cuda);\n#ifdef USE_FORKX\n"
          "REGISTER_DISPATCH(forkx_fill_stub, &forkx_fill_kernel);\n#else\n"
          "static_assert(0, \"build with -DUSE_FORKX\");\n#endif\n")
    folder = root / "aten/src/ATen/native/cuda/forkx_kernels"
    folder.mkdir()
    (folder / "Fill.cuh").write_text("namespace at::native {\n__global__ void forkx_fill(float* out) {\n"
                                     "  out[threadIdx.x] = 0;\n}\n}\n")
    db = root.parent / "changed.sqlite"
    build(str(root), db, jobs=1)
    return db


@pytest.fixture(scope="module")
def diff(sample_db, changed_db):
    from opindex.api import Index
    with Index(sample_db) as a:
        return a.diff(changed_db)


def test_registry_diff_names_the_added_renamed_and_changed_ops(diff):
    assert diff.ops["added"] == ["gelu"]
    assert diff.ops["removed"] == []
    assert [(r["from"], r["to"]) for r in diff.ops["renamed"]] == [("zero_", "zeros_")]
    assert sorted(diff.ops["changed"]) == ["mm", "relu"]
    assert diff.ops["changed"]["relu"]["dispatch"] == {"gained": ["QuantizedCPU"], "lost": [], "kernels": {}}
    assert diff.ops["changed"]["mm"]["schema"]["arguments"] == {"added": ["* bool fast=False"], "removed": [],
                                                                "changed": []}
    # relu's added row shifted mm one line down: shown, no change in itself
    assert diff.ops["changed"]["mm"]["a"] == f"{NATIVE}:70" and diff.ops["changed"]["mm"]["b"] == f"{NATIVE}:71"


def test_derivative_formula_change_is_named_by_its_inputs(diff):
    assert diff.derivatives["added"] == [] and diff.derivatives["removed"] == []
    assert diff.derivatives["changed"] == {"relu": {
        "a": "tools/autograd/derivatives.yaml:3", "b": "tools/autograd/derivatives.yaml:3",
        "formulas": {"added": {}, "removed": {},
                     "changed": {"self": {"a": "threshold_backward(grad, result, 0)",
                                          "b": "threshold_backward(grad, result, 0.0)"}}}}}


def test_a_renamed_kernel_is_matched_by_content_and_launching_function(diff):
    kernels = diff.code["kernels"]
    assert kernels["renamed"] == [{
        "from": "at::native::LayerNormForwardCUDAKernel", "to": "at::native::LayerNormFwdKernel",
        "a": f"{KERNEL_FILE}:21", "b": f"{KERNEL_FILE}:21", "content": 1.0,
        "launched_by": ["at::native::LayerNormKernelImplInternal"]}]
    assert kernels["added"] == [{"kernel": "at::native::forkx_fill",
                                 "b": "aten/src/ATen/native/cuda/forkx_kernels/Fill.cuh:2"}]
    assert kernels["removed"] == [] and kernels["moved"] == []
    assert diff.code["stubs"] == {"added": [], "removed": []}
    # registered under the fork's #ifdef, declared nowhere: a device gained, with its site
    assert diff.code["registrations"]["changed"] == {
        "forkx_fill_stub": {"gained": {"CUDA": f"{FORK_GUARD}:23"}, "lost": {}, "kernels": {}}}
    assert diff.code["library_calls"] == {"added": [], "removed": []}


def test_one_op_chain_side_by_side_marks_the_renamed_kernel_and_keeps_the_rest(sample_db, changed_db):
    from opindex.api import Index
    with Index(sample_db) as a:
        d = a.diff(changed_db, ["layer_norm"])
    [chain] = d.op_chains
    changed = [(s["role"], s["a"]["name"], s["b"]["name"], s["b"]["line"]) for s in chain["steps"]
               if s["status"] != "same"]
    assert changed == [
        ("launch", "LayerNormForwardCUDAKernel<T, T_ACC><<<M, kThreads, 0, stream>>>",
         "LayerNormFwdKernel<T, T_ACC><<<M, kThreads, 0, stream>>>", 38),
        ("device code", "__global__ at::native::LayerNormForwardCUDAKernel",
         "__global__ at::native::LayerNormFwdKernel", 21)]
    assert [s["role"] for s in chain["steps"]][:3] == ["entry", "dispatch row", "C++"]
    assert chain["device_code"]["only_a"] == ["LayerNormForwardCUDAKernel"]
    assert chain["device_code"]["only_b"] == ["LayerNormFwdKernel"]
    assert d.code is None and d.names == ["layer_norm"]


def test_identical_indexes_show_no_differences_and_exit_1(sample_db):
    from opindex.cli import main
    result = CliRunner().invoke(main, ["diff", str(sample_db), str(sample_db), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["differences"] is False
    assert data["ops"] == {"added": [], "removed": [], "renamed": [], "changed": {}}


def test_cli_diff_exits_0_and_its_json_has_the_documented_ops_object(sample_db, changed_db):
    from opindex.cli import main
    result = CliRunner().invoke(main, ["diff", str(sample_db), str(changed_db), "relu", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data["ops"]) == {"added", "removed", "renamed", "changed"}
    assert list(data["ops"]["changed"]) == ["relu"]
    assert data["derivatives"]["changed"]["relu"]["formulas"]["changed"]["self"]["b"] == \
        "threshold_backward(grad, result, 0.0)"
    assert data["op_chains"][0]["query"] == "relu"


def test_cli_text_states_the_cap_and_how_to_lift_it(sample_db, changed_db):
    from opindex.cli import main
    result = CliRunner().invoke(main, ["diff", str(sample_db), str(changed_db), "--limit", "1"])
    assert result.exit_code == 0
    assert "native_functions.yaml: 1 added, 0 removed, 1 renamed, 2 changed" in result.output
    assert "… 1 more (--limit N shows N, --limit 0 all)" in result.output


def test_an_unknown_name_exits_1_and_a_missing_index_exits_3(sample_db, tmp_path):
    from opindex.cli import main
    runner = CliRunner()
    assert runner.invoke(main, ["diff", str(sample_db), str(sample_db), "no_such_op_anywhere"]).exit_code == 1
    missing = runner.invoke(main, ["diff", str(sample_db), str(tmp_path / "none.sqlite")])
    assert missing.exit_code == 3
    assert runner.invoke(main, ["diff", str(sample_db)]).exit_code == 2


def test_fork_report_finds_the_platform_macro_its_branches_folder_and_code(changed_db):
    from opindex.api import Index
    with Index(changed_db) as ix:
        r = ix.fork_report()
    assert [m["name"] for m in r.macros] == ["USE_FORKX"]
    assert r.macros[0]["source"].startswith(f"required by {FORK_GUARD}:25")
    assert [(b["file"], b["line"], b["condition"]) for b in r.branches["fork"]] == \
        [(FORK_GUARD, 23, "defined(USE_FORKX)")]  # (a branch's first line)
    assert [(b["file"], b["line"]) for b in r.branches["upstream"]] == [(FORK_GUARD, 25)]
    assert r.folders == [{"folder": "aten/src/ATen/native/cuda/forkx_kernels", "files": 1}]
    assert [(s["name"], s["line"]) for s in r.sites["fork"]["registration"]] == \
        [("forkx_fill_stub -> forkx_fill_kernel (CUDA)", 23)]
    assert [(s["name"], s["file"]) for s in r.sites["fork"]["kernel"]] == \
        [("at::native::forkx_fill", "aten/src/ATen/native/cuda/forkx_kernels/Fill.cuh")]


def test_fork_report_of_a_tree_without_a_platform_exits_1(sample_db):
    from opindex.cli import main
    result = CliRunner().invoke(main, ["diff", "--fork", str(sample_db)])
    assert result.exit_code == 1
    assert "its build requires no macro upstream leaves undefined" in result.output


def test_markdown_shows_each_step_as_a_table_row_with_names_as_code(sample_db, changed_db):
    from opindex.api import Index
    with Index(sample_db) as a:
        md = a.diff(changed_db, ["layer_norm"]).to_markdown()
    assert (f"| ~ | device code | `__global__ at::native::LayerNormForwardCUDAKernel` {KERNEL_FILE}:21 | "
            f"`__global__ at::native::LayerNormFwdKernel` {KERNEL_FILE}:21 |") in md
    assert "| = | entry | `aten::layer_norm` " in md


def test_schema_change_names_defaults_kwarg_only_moves_and_returns():
    from opindex.diff.registry import schema_change
    change = schema_change("f(Tensor self, int dim=0, bool keep=False) -> Tensor",
                           "f(Tensor self, *, int dim=-1, bool keep=False) -> (Tensor, Tensor)")
    assert change["arguments"] == {"added": [], "removed": [],
                                   "changed": [{"name": "dim", "a": "int dim=0", "b": "* int dim=-1"},
                                               {"name": "keep", "a": "bool keep=False", "b": "* bool keep=False"}]}
    assert change["returns"] == {"a": "Tensor", "b": "(Tensor, Tensor)"}
    assert schema_change("f(Tensor  self) -> Tensor", "f(Tensor self)  ->  Tensor") is None  # whitespace only


def test_1_8_composite_key_names_are_no_dispatch_change():
    from opindex.diff.registry import entry_change
    old = {"schema": "f(Tensor self) -> Tensor", "dispatch": [("Math", "f", False)], "structured": False,
           "structured_delegate": None, "ufunc_inner_loop": None, "variants": "function"}
    new = {**old, "dispatch": [("CompositeImplicitAutograd", "f", False)]}
    assert entry_change(old, new) == {}
    assert entry_change(old, {**new, "dispatch": [("CompositeExplicitAutograd", "f", False)]}) == {
        "dispatch": {"gained": ["CompositeExplicitAutograd"], "lost": ["CompositeImplicitAutograd"], "kernels": {}},
        "composite": {"a": "CompositeImplicitAutograd", "b": "CompositeExplicitAutograd"}}


def test_a_checkout_folder_stands_for_its_own_index(sample_db, tmp_path, monkeypatch):
    from opindex.api import Index, build
    from opindex.cli import main
    monkeypatch.delenv("OPINDEX_DB", raising=False)  # (.ci/run sets it: the build would write that index instead)
    build(str(SAMPLE), None, jobs=1)  # the sample's own index, in the test session's cache folder
    with Index(sample_db) as a:
        assert a.diff(str(SAMPLE)).differences is False
    empty = tmp_path / "not_built"
    empty.mkdir()
    result = CliRunner().invoke(main, ["diff", str(sample_db), str(empty)])
    assert result.exit_code == 3
    assert f"{empty}: a folder without an index of its own: run `opindex build {empty}`" in result.output
