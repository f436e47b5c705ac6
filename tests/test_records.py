"""Typed rows at the seams (issue 12, item 5): one row type per table, generated from the schema; every extractor's
rows are checked against them (a wrong or missing column names the table and the column); the registry parsers
return model records with a Location."""
from __future__ import annotations

import pytest

from conftest import SAMPLE
from opindex import records
from opindex.extract import ColumnError, FileFacts, check_rows, columns, extract
from opindex.records import CallRow, DecompositionRow, FACT_ROWS, REGISTRY_ROWS, SymbolRow
from opindex.sqlite_ddl import PER_FILE_TABLES, REGISTRY_TABLES, TABLES


def test_records_are_generated_from_the_schema():
    from opindex.schema.ddl import RECORDS, render_records
    assert RECORDS.read_text(encoding="utf-8") == render_records(), \
        "opindex/records.py is stale: run `python -m opindex.schema.ddl`"


def test_one_row_type_per_table_with_its_columns_in_order():
    assert list(FACT_ROWS) == PER_FILE_TABLES and list(REGISTRY_ROWS) == REGISTRY_TABLES
    for table, row_type in {**FACT_ROWS, **REGISTRY_ROWS}.items():
        assert row_type._fields == tuple(c for c in TABLES[table][0] if c not in ("id", "checkout_id")), table


def test_rows_are_cheap_tuples_built_by_keyword():
    row = DecompositionRow(file="torch/_refs/__init__.py", line=3, op="add", overload=None, kind="reference",
                           function="torch._refs.add")
    assert row == ("torch/_refs/__init__.py", 3, "add", None, "reference", "torch._refs.add")
    assert isinstance(row, tuple) and row.op == "add"
    with pytest.raises(TypeError, match="function"):  # a missing column, named by Python itself
        DecompositionRow(file="f.py", line=3, op="add", overload=None, kind="reference")
    with pytest.raises(TypeError, match="opname"):
        DecompositionRow(file="f.py", line=3, opname="add", overload=None, kind="reference", function="f")


def test_a_hot_loop_order_that_left_the_schema_fails_naming_table_and_column():
    assert columns(CallRow, *CallRow._fields) == CallRow._fields
    with pytest.raises(ColumnError, match=r"calls: column 4 is 'caller' in the schema, the extractor writes 'callee'"):
        columns(CallRow, "file", "line", "language", "callee", "caller", "qualifier", "is_method", "template_args")
    with pytest.raises(ColumnError, match=r"symbols: the extractor writes no 'template_parameters' column"):
        columns(SymbolRow, *SymbolRow._fields[:-1])
    with pytest.raises(ColumnError, match=r"calls: the extractor writes 'receiver', a column the schema lacks"):
        columns(CallRow, *CallRow._fields, "receiver")


def test_check_rows_names_file_table_and_column():
    good = ("a.cpp", 3, "cpp", "at::native::f", "g", "", 0, "<float>", '["x"]', None)
    check_rows({"calls": [good, good]}, "a.cpp")
    with pytest.raises(ColumnError, match=r"a.cpp: calls: a row of 6 values lacks column 'is_method'"):
        check_rows({"calls": [good, good[:-4]]}, "a.cpp")
    with pytest.raises(ColumnError, match=r"a.cpp: calls: a row of 11 values has one past its last column"):
        check_rows({"calls": [good + (None,)]}, "a.cpp")
    with pytest.raises(ColumnError, match=r"a.cpp: calls: column 'line' holds str '3' \(the schema has int\)"):
        check_rows({"calls": [("a.cpp", "3", "cpp", "f", "g", "", 0, None, None, None)]}, "a.cpp")
    with pytest.raises(ColumnError, match=r"column 'caller' holds NoneType"):  # NOT NULL
        check_rows({"calls": [("a.cpp", 3, "cpp", None, "g", "", 0, None, None, None)]}, "a.cpp")
    with pytest.raises(ColumnError, match=r"callz: no such fact table"):
        check_rows({"callz": [good]}, "a.cpp")


def test_every_extractor_is_checked_and_a_broken_row_is_caught(monkeypatch):
    from opindex.extract import cpp, python
    real_calls = python._FileExtraction._calls

    def drop_is_method(self, matches):  # an extractor bug: a calls row loses its last column
        real_calls(self, matches)
        self.rows["calls"] = [r[:-4] for r in self.rows["calls"]]

    monkeypatch.setattr(python._FileExtraction, "_calls", drop_is_method)
    with pytest.raises(ColumnError, match=r"m.py: calls: a row of 6 values lacks column 'is_method'"):
        extract("m.py", b"import torch\ntorch.relu(x)\n", "python", "m")

    real_launch = cpp._File._launch

    def swap(self, u, caps):  # an extractor bug: line and kernel swapped
        real_launch(self, u, caps)
        row = self.rows["kernel_launches"].pop()
        self.rows["kernel_launches"].append(row._replace(line=row.kernel, kernel=row.line))

    monkeypatch.setattr(cpp._File, "_launch", swap)
    src = b"__global__ void k(int n) {}\nvoid f() { k<<<1, 2>>>(3); }\n"
    with pytest.raises(ColumnError, match=r"k.cu: kernel_launches: column 'line' holds str 'k'"):
        extract("k.cu", src, "cuda", None)


def test_a_broken_extractor_is_reported_on_its_file_not_written(monkeypatch, tmp_path):
    """In a build, the check's error lands in files.message (the build goes on) and no row of that file is kept."""
    import shutil
    from opindex.api import Index, build
    from opindex.extract import python
    checkout = tmp_path / "checkout"
    shutil.copytree(SAMPLE, checkout)
    real_run = python._FileExtraction.run

    def short_imports(self, groups):
        rows = real_run(self, groups)
        if self.path.endswith("nn/modules/rnn.py"):
            rows["python_imports"] = [r[:-1] for r in rows["python_imports"]]
        return rows

    monkeypatch.setattr(python._FileExtraction, "run", short_imports)
    build(str(checkout), tmp_path / "i.sqlite", jobs=1)
    with Index(tmp_path / "i.sqlite") as ix:
        [row] = ix.rows("SELECT message FROM files WHERE path = 'torch/nn/modules/rnn.py'")
        assert row["message"] == ("extractor failed: ColumnError: torch/nn/modules/rnn.py: python_imports: a row of "
                                  "5 values lacks column 'kind'")
        assert ix.rows("SELECT count(*) AS n FROM symbols WHERE file = 'torch/nn/modules/rnn.py'") == [{"n": 0}]


def test_the_sample_checkouts_rows_fit_their_types_in_every_row():
    """Every row of every extracted sample file, not only the first of each table as in a build."""
    from opindex.indexer.checkout import resolve
    from opindex.indexer.discover import discover
    ck = resolve(str(SAMPLE))
    checked: dict[str, int] = {}
    for src in discover(ck.root, ck.scope, ck.excludes):
        if src.language not in ("cpp", "cuda", "python"):
            continue
        facts = extract(src.path, (SAMPLE / src.path).read_bytes(), src.language, src.module)
        check_rows(facts.rows, src.path, every_row=True)
        for table, rows in facts.rows.items():
            checked[table] = checked.get(table, 0) + len(rows)
    assert sum(checked.values()) > 500 and [t for t in PER_FILE_TABLES if not checked.get(t)] == []


def test_file_facts_hand_out_records():
    facts = extract("m.py", b"def f(x):\n    return g(x)\n", "python", "m")
    [call] = facts.records("calls")
    assert (call.caller, call.callee, call.line) == ("m.f", "g", 2)
    assert FileFacts().records("calls") == []


def test_registry_entries_are_model_records_with_locations():
    from opindex.extract import derivatives_yaml, native_yaml
    from opindex.model import Derivative, Location, NativeFunction
    path = "aten/src/ATen/native/native_functions.yaml"
    entries, warnings = native_yaml.parse((SAMPLE / path).read_bytes(), path)
    assert warnings == [] and all(isinstance(e, NativeFunction) for e in entries)
    relu = next(e for e in entries if e.full_name == "relu")
    assert relu.location == Location(path, 4) and (relu.name, relu.overload) == ("relu", "")
    assert [(d.dispatch_key, d.kernel, d.implicit, str(d.location)) for d in relu.dispatch] == [
        ("CPU", "relu", False, f"{path}:8"), ("CUDA", "relu", False, f"{path}:8"),
        ("MPS", "relu_mps", False, f"{path}:9")]
    mul = next(e for e in entries if e.ufunc_loops)
    assert [(u.ufunc_key, u.loop, u.location.line) for u in mul.ufunc_loops] == [("Generic", "mul", 65),
                                                                                   ("ScalarOnly", "mul", 66)]
    path = "tools/autograd/derivatives.yaml"
    ders, warnings = derivatives_yaml.parse((SAMPLE / path).read_bytes(), path)
    assert warnings == [] and all(isinstance(d, Derivative) for d in ders)
    relu_d = next(d for d in ders if d.full_name == "relu")
    assert [(f.inputs, f.is_forward, f.location) for f in relu_d.formulas] == [
        ("self", False, Location(path, 4)), ("result", True, Location(path, 5))]


def test_a_bad_registry_entry_is_named_by_file_and_line():
    from opindex.extract import native_yaml
    text = b"- func: ok(Tensor self) -> Tensor\n- func: broken\n  dispatch:\n    CPU: broken\n"
    entries, warnings = native_yaml.parse(text, "nf.yaml")
    assert [e.full_name for e in entries] == ["ok"] and entries[0].location.line == 1
    assert warnings == ["nf.yaml:2: func: is not an operator schema; entry skipped"]


def test_records_module_needs_no_sqlalchemy():
    import subprocess
    import sys
    code = "import sys, opindex.records, opindex.extract; print([m for m in sys.modules if 'sqlalchemy' in m])"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"
    assert records.FACT_ROWS["symbols"] is SymbolRow
