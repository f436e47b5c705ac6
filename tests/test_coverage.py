"""`opindex coverage` and Index.coverage on the sample checkout: each status read from the sample's
native_functions.yaml (line numbers as written there), the composites' effective coverage, the gap list, an
out-of-tree backend (tests/data/coverage_backend), the outputs and the refusals."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from opindex.cli import main
from conftest import SAMPLE

BACKEND = Path(__file__).resolve().parent / "data" / "coverage_backend"
YAML = "aten/src/ATen/native/native_functions.yaml"


def _rows(ix, *devices, **kw):
    return {(r["op"], r["key"]): r for r in ix.coverage(devices, **kw).rows}


def _where(row):
    return row["status"], row["file"], row["line"], row["kernel"]


def test_each_status_comes_from_the_entry_that_gives_it(ix):
    rows = _rows(ix, "cpu", "cuda", "mps", "SparseCPU", "Meta", "CompositeImplicitAutograd")
    # relu: `CPU, CUDA: relu` (line 8) and `MPS: relu_mps` (line 9)
    assert _where(rows[("aten::relu", "CPU")]) == ("kernel", YAML, 8, "relu")
    assert _where(rows[("aten::relu", "MPS")]) == ("kernel", YAML, 9, "relu_mps")
    # clamp_min has structured_delegate: clamp_min.out, whose `CPU, CUDA: clamp_min_out` is on line 26
    assert _where(rows[("aten::clamp_min", "CUDA")]) == ("inherited", YAML, 26, "clamp_min_out")
    assert rows[("aten::clamp_min", "CUDA")]["via"] == "structured_delegate aten::clamp_min.out"
    # ... and MPS, which add.out lacks, gets the CompositeExplicitAutogradNonFunctional kernel torchgen writes
    assert _where(rows[("aten::add.Tensor", "MPS")])[:3] == ("composite_explicit", YAML, 33)
    # a structured delegate inherits only the structured keys: SparseCPU of add.out is add.out's own
    assert rows[("aten::add.out", "SparseCPU")]["kernel"] == "add_out_sparse_cpu"
    assert rows[("aten::add.Tensor", "SparseCPU")]["status"] == "missing"
    # autogen: add.Scalar_out (line 51) is generated as CompositeExplicitAutograd
    assert _where(rows[("aten::add.Scalar_out", "CUDA")]) == ("composite_explicit", YAML, 51, "autogen of add.Scalar")
    # layer_norm: `CompositeImplicitAutograd: layer_norm_symint` on line 92 serves every backend key
    assert _where(rows[("aten::layer_norm", "MPS")]) == ("composite_implicit", YAML, 92, "layer_norm_symint")
    assert rows[("aten::layer_norm", "CompositeImplicitAutograd")]["status"] == "composite_implicit"
    assert rows[("aten::relu", "CompositeImplicitAutograd")]["status"] == "missing"
    # relu_ has CPU and CUDA rows only
    assert _where(rows[("aten::relu_", "MPS")]) == ("missing", None, None, None)
    # Meta: the Python reference torch._refs.relu (sample torch/_refs/__init__.py:11) is registered by activate_meta;
    # mul.out is structured: torchgen writes its Meta kernel from the meta function
    assert _where(rows[("aten::relu", "Meta")]) == ("kernel", "torch/_refs/__init__.py", 11, "torch._refs.relu")
    assert _where(rows[("aten::mul.out", "Meta")]) == ("kernel", YAML, 61, "meta")


def test_one_row_per_overload_and_key(ix):
    cov = ix.coverage(["cuda"])
    ops = [r["op"] for r in cov.rows]
    assert len(ops) == len(set(ops)) == cov.ops == 29  # 26 entries and 3 autogen variants
    assert {r["key"] for r in cov.rows} == {"CUDA"}


def test_the_dtypes_are_those_of_the_kernels_dispatch_macro(ix):
    rows = _rows(ix, "cpu", "cuda")
    # add.out's kernel calls add_stub; CPU registers add_kernel (cpu/BinaryOpsKernel.cpp:9), CUDA add_kernel_cuda
    assert rows[("aten::add.out", "CPU")]["dtypes"] == "ALL_TYPES_AND_COMPLEX_AND2"
    assert rows[("aten::add.Tensor", "CUDA")]["dtypes"] == "ALL_TYPES_AND_COMPLEX_AND2"
    # layer_norm_cpu reaches LayerNormKernelImpl (AT_DISPATCH_FLOATING_TYPES_AND2); nothing says so for mm.out
    assert rows[("aten::native_layer_norm", "CPU")]["dtypes"] == "FLOATING_TYPES_AND2"
    assert rows[("aten::mm.out", "CPU")]["dtypes"] is None


def test_a_composite_lists_what_the_backend_lacks_through_its_calls(ix):
    rows = _rows(ix, "SparseCPU", "cpu")
    # linear's kernel calls ops SparseCPU has no kernel for; on CPU nothing is lacking
    assert rows[("aten::linear", "SparseCPU")]["lacks"] == ["add_", "mm"]
    assert rows[("aten::linear", "CPU")]["lacks"] == []
    # softmax.int calls _softmax, which SparseCPU lacks
    assert rows[("aten::softmax.int", "SparseCPU")]["lacks"] == ["_softmax"]
    assert rows[("aten::relu", "CPU")]["lacks"] is None  # not a composite


def test_missing_lists_what_the_backend_lacks_that_cuda_has(ix):
    cov = ix.coverage("mps", missing=True)
    # most Python APIs first (add: 2 bridges in the sample's Python), then by name; _softmax.out has `MPS:`
    assert [(r["op"], r["python_apis"]) for r in cov.rows] == [
        ("aten::add.out", 2), ("aten::mm.out", 1), ("aten::mul.out", 1), ("aten::relu_", 1), ("aten::_cudnn_rnn", 0),
        ("aten::argmax.out", 0), ("aten::clamp_min.out", 0), ("aten::native_layer_norm_backward", 0),
        ("aten::zero_", 0)]
    assert {(r["key"], r["status"]) for r in cov.rows} == {("MPS", "missing")}


def test_an_out_of_tree_backend_is_read_on_top(ix):
    rows = _rows(ix, "PrivateUse1", with_dir=BACKEND)
    yaml_file, cpp = "coverage_backend/backend_functions.yaml", "coverage_backend/csrc/ops.cpp"
    assert _where(rows[("aten::relu", "PrivateUse1")]) == ("kernel", yaml_file, 5, "at::pu1::relu")
    assert _where(rows[("aten::mm.out", "PrivateUse1")]) == ("kernel", cpp, 18, "mm_out_pu1")
    assert rows[("aten::mm.out", "PrivateUse1")]["registered_line"] == 17  # its TORCH_LIBRARY_IMPL block
    assert _where(rows[("pu1::scale", "PrivateUse1")]) == ("kernel", cpp, 26, "scale_pu1")
    assert _where(rows[("aten::zero_", "PrivateUse1")]) == ("fallback", cpp, 30, "pu1_fallback")
    assert rows[("aten::mm", "PrivateUse1")]["status"] == "composite_explicit"
    without = _rows(ix, "PrivateUse1")
    assert without[("aten::relu", "PrivateUse1")]["status"] == "missing"
    assert ("pu1::scale", "PrivateUse1") not in without


def test_for_a_profile_lists_its_ops_and_what_their_composites_lack(ix, tmp_path):
    trace = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "ts": 1, "dur": 5},
                             {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 7, "dur": 1},
                             {"ph": "X", "cat": "kernel", "name": "void k<float>()", "ts": 8, "dur": 1}]}
    path = tmp_path / "step.json.gz"
    path.write_bytes(gzip.compress(json.dumps(trace).encode()))
    cov = ix.coverage("SparseCPU", for_=str(path))
    assert [(r["op"], r["status"]) for r in cov.rows] == [
        ("aten::add_.Tensor", "missing"), ("aten::linear", "composite_implicit"), ("aten::mm", "missing"),
        ("aten::mm.out", "missing"), ("aten::relu", "missing")]
    # with --missing: those SparseCPU lacks that CUDA has, most Python APIs first
    assert [r["op"] for r in ix.coverage("SparseCPU", for_=str(path), missing=True).rows] == [
        "aten::relu", "aten::mm", "aten::mm.out", "aten::add_.Tensor"]


def test_the_json_rows_have_the_documented_shape(sample_db):
    result = CliRunner().invoke(main, ["coverage", "--db", str(sample_db), "--device", "CUDA", "--op", "relu",
                                       "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{
        "op": "aten::relu", "key": "CUDA", "status": "kernel", "file": YAML, "line": 8, "kernel": "relu",
        "via": "yaml", "registered_line": None, "dtypes": None, "lacks": None, "python_apis": 2,
        "index": {"file": str(sample_db), "checkout": str(SAMPLE)}}]


def test_csv_and_the_html_matrix(sample_db):
    run = CliRunner().invoke
    csv_out = run(main, ["coverage", "--db", str(sample_db), "--device", "SparseCPU", "--op", "linear", "--csv"])
    assert csv_out.stdout.splitlines() == [
        "op,key,status,file,line,kernel,via,registered_line,dtypes,lacks,python_apis",
        f"aten::linear,SparseCPU,composite_implicit,{YAML},80,linear,CompositeImplicitAutograd,,,add_ mm,1"]
    page = run(main, ["coverage", "--db", str(sample_db), "--html"]).stdout
    assert page.startswith("<!doctype html>") and "http" not in page and "<script src" not in page
    assert page.count("<tr data-op=") == 29 and "<input id=q" in page  # one row per op, a filter
    assert "title=\"kernel\nrelu_mps " + YAML + ":9\"" in page


def test_refusals_name_the_problem(sample_db, tmp_path):
    run = lambda *a: CliRunner().invoke(main, ["coverage", "--db", str(sample_db), *a])
    bad_key = run("--device", "gpu")
    assert bad_key.exit_code == 2 and "unknown dispatch key 'gpu'" in bad_key.output
    assert "--missing needs one backend" in run("--missing").output
    assert run("--with", str(tmp_path / "nowhere")).exit_code == 2
    broken = tmp_path / "be"
    broken.mkdir()
    (broken / "b.yaml").write_text("backend: PrivateUse1\nsupported:\n  - relu\n  - [\n")
    result = run("--with", str(broken))
    assert result.exit_code == 2 and "be/b.yaml:5: not YAML" in result.output
    assert run("--op", "no_such_op").exit_code == 1  # no row


@pytest.mark.parametrize("text, key", [("cuda", "CUDA"), ("MPS", "MPS"), ("sparsecsrcuda", "SparseCsrCUDA"),
                                       ("compositeimplicitautograd", "CompositeImplicitAutograd")])
def test_a_device_is_named_as_a_person_writes_it(text, key):
    from opindex.coverage.request import key_of
    assert key_of(text) == key


def test_alias_keys_serve_the_runtime_keys_the_dispatcher_says():
    from opindex.pytorch.dispatch_keys import alias_serves
    assert alias_serves("CompositeExplicitAutograd", "SparseCPU")
    assert not alias_serves("CompositeExplicitAutograd", "NestedTensorCUDA")
    assert not alias_serves("CompositeExplicitAutogradNonFunctional", "SparseCUDA")
    assert alias_serves("CompositeExplicitAutogradNonFunctional", "QuantizedCPU")
    assert alias_serves("CompositeImplicitAutograd", "NestedTensorCUDA")
    assert not alias_serves("CompositeImplicitAutogradNestedTensor", "CPU")


def test_for_a_name_takes_the_overloads_its_trace_reaches(ix):
    # nn.Linear -> aten::linear (CIA, line 80), whose kernel (Linear.cpp:4) calls at::mm (:5) and output.add_ (:7):
    # SparseCPU has neither
    rows = ix.coverage("SparseCPU", for_="nn.Linear").rows
    assert [(r["op"], r["status"], r["lacks"]) for r in rows] == [
        ("aten::add_.Tensor", "missing", None), ("aten::linear", "composite_implicit", ["add_", "mm"]),
        ("aten::mm", "missing", None)]
    with pytest.raises(Exception, match="--for no_such_thing: no such file, and nothing to trace"):
        ix.coverage("mps", for_="no_such_thing")


def test_a_vendors_own_key_is_reported_by_default(ix, tmp_path):
    (tmp_path / "chip.cpp").write_text('TORCH_LIBRARY_IMPL(aten, MyChip, m) {\n'
                                       '  m.impl("relu", TORCH_FN(relu_chip));\n}\n')
    cov = ix.coverage(with_dir=tmp_path)
    assert cov.keys[-1] == "MyChip"  # no key PyTorch names: added to the default keys
    rows = _rows(ix, "mychip", with_dir=tmp_path)
    assert _where(rows[("aten::relu", "MyChip")]) == ("kernel", f"{tmp_path.name}/chip.cpp", 2, "relu_chip")
    # a key PyTorch does not name is read as a fork's dense backend: the composite keys serve it
    assert rows[("aten::layer_norm", "MyChip")]["status"] == "composite_implicit"
    assert rows[("aten::relu_", "MyChip")]["status"] == "missing"


def test_a_profile_that_is_no_chrome_trace_is_refused_by_name(sample_db, tmp_path):
    bad = tmp_path / "step.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(main, ["coverage", "--db", str(sample_db), "--device", "mps", "--for", str(bad)])
    assert result.exit_code == 2 and f"{bad}: not a Chrome trace (JSON)" in result.output


def test_the_html_page_shows_kernel_text_as_text(sample_db, tmp_path):
    (tmp_path / "q.cpp").write_text('TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n'
                                    '  m.impl("relu", TORCH_FN(relu_pu1<false>));\n}\n')
    page = CliRunner().invoke(main, ["coverage", "--db", str(sample_db), "--with", str(tmp_path), "--device",
                                     "PrivateUse1", "--op", "relu", "--html"]).stdout
    assert "relu_pu1&lt;false&gt;" in page and "relu_pu1<false>" not in page
