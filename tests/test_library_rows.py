"""The library hands back data (issue 29, item 5): a trace as rows and a DataFrame, typed result rows with
to_dict(), a DataFrame for every listing, pandas optional with a clear error."""
from __future__ import annotations

import sys

import pytest

from opindex.model import Listing, OpindexError


def test_a_trace_as_rows_and_a_dataframe(ix):
    t = ix.trace("relu")
    rows = t.rows()
    assert len(rows) == len(t.hops)
    assert rows[:3] == [
        {"id": 0, "parent": None, "depth": 0, "layer": "native", "kind": "entry", "name": "aten::relu",
         "file": "aten/src/ATen/native/native_functions.yaml", "line": 4, "main": True, "absent": False,
         "detail": "relu(Tensor self) -> Tensor"},
        {"id": 1, "parent": 0, "depth": 1, "layer": "dispatch", "kind": "CUDA", "name": "CUDA: relu",
         "file": "aten/src/ATen/native/native_functions.yaml", "line": 8, "main": True, "absent": False,
         "detail": "dispatch CUDA: relu"},
        {"id": 2, "parent": 1, "depth": 2, "layer": "cpp", "kind": "function", "name": "at::native::relu",
         "file": "aten/src/ATen/native/Activation.cpp", "line": 8, "main": True, "absent": False,
         "detail": "function relu(const Tensor& self)"}]
    assert [r["id"] for r in rows if r["main"]] == [h.id for h in t.main_chain()]
    df = t.to_dataframe()
    assert list(df.columns) == ["id", "parent", "depth", "layer", "kind", "name", "file", "line", "main", "absent",
                                "detail"]
    assert len(df) == len(t.hops) and df["main"].sum() == len(t.main_chain())


def test_listings_are_typed_rows_with_to_dict_and_a_dataframe(ix):
    found = ix.find("at::native::relu")
    assert isinstance(found, Listing)
    assert found[0].to_dict() == {"name": "relu", "qualified_name": "at::native::relu", "kind": "function",
                                  "language": "cpp", "file": "aten/src/ATen/native/Activation.cpp", "line": 8,
                                  "signature": "(const Tensor& self)"}
    assert found.to_dataframe().to_dict("records") == [found[0].to_dict()]
    entries = ix.op("relu")  # one DataFrame row per dispatch row: CPU, CUDA; MPS
    assert [r["dispatch_key"] for r in entries.to_dataframe().to_dict("records")] == ["CPU", "CUDA", "MPS"]
    for listing in (ix.callers("relu"), ix.callees("at::native::relu"), ix.kernels(), ix.stats()):
        assert isinstance(listing, Listing) and len(listing.to_dataframe()) == len(listing) > 0
    assert ix.stats()[0] == {"what": "index", "value": str(ix.path)}
    cov = ix.coverage("cuda", ops=["relu"])  # coverage too: one DataFrame row per op overload and key
    assert cov.to_dataframe().to_dict("records") == cov.rows and len(cov.rows) == 1
    stub = ix.stub("LayerNormKernel")
    assert stub.to_dataframe()[["what", "name", "file", "line"]].to_dict("records") == [
        {k: r[k] for k in ("what", "name", "file", "line")} for r in stub.rows()]


def test_without_pandas_the_error_says_how_to_get_it(ix, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    for call in (ix.trace("relu").to_dataframe, ix.find("relu").to_dataframe):
        with pytest.raises(OpindexError, match=r"^pandas is not installed: `pip install pandas` \(or "
                                               r"opindex\[pandas\]\) for DataFrames; to_dicts\(\) / rows\(\) give "
                                               r"the same rows as dicts$"):
            call()
    assert ix.find("at::native::relu").to_dicts()[0]["line"] == 8
