"""Real data: the installed torch wheel (scoped build) and OPINDEX_REAL_CHECKOUT, against Python's own ast.
Both skip cleanly when the data is not there."""
from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

from conftest import REPO, real_checkout

_spec = importlib.util.spec_from_file_location("python_accuracy", REPO / "benchmarks" / "python_accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)

WHEEL_SCOPE = ("torch/nn", "torch/_decomp", "torch/_refs", "torch/_meta_registrations.py", "torch/_tensor.py",
               "torch/functional.py", "torch/__init__.py", "torch/_C", "torch/_VF.py", "torch/_VF.pyi")


def _build(root: Path, scope, db: Path, kind: str) -> sqlite3.Connection:
    from opindex.indexer.checkout import Checkout
    from opindex.indexer.pipeline import build
    build(Checkout(root, kind, "test", tuple(scope), ()), db, jobs=1, progress=False)
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    root = Path(list(spec.submodule_search_locations)[0]).parent
    con = _build(root, WHEEL_SCOPE, tmp_path_factory.mktemp("wheel") / "wheel.sqlite", "installed")
    yield con, root
    con.close()


def test_wheel_defs_match_ast(wheel):
    con, root = wheel
    expected, got, skipped = accuracy.compare(con, root)
    assert len(expected) > 3000 and not skipped
    assert sorted(expected - got)[:20] == [] and sorted(got - expected)[:20] == []


def test_wheel_bridges(wheel):
    from opindex.trace import trace
    from opindex.trace.names import resolve
    con, _ = wheel

    def bridges(name):  # what the trace shows a Python name reaching in C++
        return {(h.kind, h.name) for h in trace(con, name).hops if h.layer == "bridge"}

    (lstm,) = [r for r in resolve(con, "nn.LSTM") if r.kind == "python_class"]
    assert lstm.qualified_name == "torch.nn.modules.rnn.LSTM"
    assert ("VF", "_VF.lstm") in bridges("nn.LSTM")
    # F.linear is `linear = _add_docstr(torch._C._nn.linear, ...)`: the trace goes to the binding's .pyi signature
    assert [(h.name, h.file) for h in trace(con, "F.linear").hops][:1] == [("torch._C._nn.linear",
                                                                           "torch/_C/_nn.pyi")]
    relu = bridges("torch.nn.functional.relu")
    assert {("torch", "torch.relu"), ("torch", "torch.relu_")} <= relu
    assert not any("torch_function" in name for _, name in relu)
    # torch.relu has no Python def: the stub in torch/_C/_VariableFunctions.pyi (via the star import) + YAML-less
    stubs = [r for r in resolve(con, "torch.relu") if r.stub]
    assert stubs and stubs[0].qualified_name == "torch._C._VariableFunctions.relu"


def test_wheel_decompositions(wheel):
    con, _ = wheel
    kinds = dict(con.execute("SELECT kind, count(*) FROM decompositions GROUP BY kind"))
    assert kinds.get("decomposition", 0) > 100 and kinds.get("reference", 0) > 100 and kinds.get("meta", 0) > 50
    assert con.execute("SELECT count(*) FROM decompositions WHERE op = 'threshold_backward' "
                       "AND kind = 'decomposition'").fetchone()[0] >= 1


def test_source_checkout_matches_ast(tmp_path):
    root = real_checkout()
    if root is None:
        pytest.skip("OPINDEX_REAL_CHECKOUT is not set")
    con = _build(root.resolve(), ("torch/nn", "torch/_decomp", "torch/_refs", "torch/functional.py"),
                 tmp_path / "real.sqlite", "source")
    expected, got, _skipped = accuracy.compare(con, root.resolve())
    assert expected and sorted(expected - got)[:20] == [] and sorted(got - expected)[:20] == []
    assert con.execute("SELECT count(*) FROM python_bridges WHERE kind = 'VF' AND op = 'lstm'").fetchone()[0] >= 1
