"""The Meta key's rules of `opindex coverage` on tests/data/coverage_meta (a miniature checkout; its README says what
each entry is for; line numbers as written there): torchgen's in-place Meta kernels, activate_meta's own list of op
overloads it leaves alone, its CompositeImplicitAutograd and view tests, a torch/_refs factory's inferred op, and a
meta function of another namespace."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from opindex.coverage import inplace_meta

CHECKOUT = Path(__file__).resolve().parent / "data" / "coverage_meta"
YAML = "aten/src/ATen/native/native_functions.yaml"
META = "torch/_meta_registrations.py"


def _build(root: Path, db: Path):
    from opindex.api import Index, build
    build(str(root), db, jobs=1)
    return Index(db)


@pytest.fixture(scope="module")
def meta_index(tmp_path_factory):
    with _build(CHECKOUT, tmp_path_factory.mktemp("coverage-meta") / "meta.sqlite") as ix:
        yield ix


def _meta(ix) -> dict[str, tuple]:
    return {r["op"]: (r["status"], r["file"], r["line"], r["kernel"], r["via"]) for r in ix.coverage(["Meta"]).rows}


def test_torchgen_writes_a_meta_kernel_for_an_inplace_op(meta_index):
    rows = _meta(meta_index)
    # put_ (:3) and __ilshift__.Scalar (:13, a dunder's in-place name) have CPU/CUDA rows only: RegisterMeta.cpp
    # holds the kernel torchgen writes for them (it checks self is meta and returns it)
    assert rows["aten::put_"] == ("kernel", YAML, 3, "meta", "inplace meta")
    assert rows["aten::__ilshift__.Scalar"] == ("kernel", YAML, 13, "meta", "inplace meta")
    # _foreach_add_.Scalar (:18) returns nothing (`-> ()`): no kernel, and this checkout has no Meta fallback
    assert rows["aten::_foreach_add_.Scalar"] == ("missing", None, None, None, None)
    # fill_.Scalar (:23) has a composite kernel, which torchgen defers to; put (:8) is no in-place op
    assert rows["aten::fill_.Scalar"][:3] == ("composite_explicit", YAML, 26)
    assert rows["aten::put"][:3] == ("composite_explicit", YAML, 11)


def test_activate_meta_leaves_its_own_list_alone(meta_index):
    rows = _meta(meta_index)
    # _meta_registrations.py:30 `"aten::clone",` in activate_meta's `elif op_overload.name() in {...}: pass`: the
    # default overload keeps its CompositeExplicitAutograd kernel (:31); clone.out is not named there, so
    # torch/_refs/__init__.py:11's reference (registered for the packet aten.clone at :10) is its Meta kernel
    assert rows["aten::clone"][:4] == ("composite_explicit", YAML, 31, "clone")
    assert rows["aten::clone.out"] == ("kernel", "torch/_refs/__init__.py", 11, "torch._refs.clone", "python")
    # :31 `"aten::fill_.Scalar",`: an overload named with its dot (the ref at torch/_refs/__init__.py:21 is skipped)
    assert rows["aten::fill_.Scalar"][3:] == ("fill_", "CompositeExplicitAutograd")
    con = sqlite3.connect(meta_index.path)
    assert con.execute("SELECT file, line, op, overload, function FROM decompositions WHERE kind = 'skipped' "
                       "ORDER BY line").fetchall() == [
        (META, 30, "clone", "default", "torch._meta_registrations.activate_meta"),
        (META, 31, "fill_", "Scalar", "torch._meta_registrations.activate_meta")]
    # a skipped row names no Python function of the op: a trace does not show it
    from opindex.trace.facts import decompositions_of
    con.row_factory = sqlite3.Row
    assert [(d["kind"], d["function"]) for d in decompositions_of(con, "clone")] == [
        ("reference", "torch._refs.clone")]


def test_python_meta_kernels_activate_meta_registers(meta_index):
    rows = _meta(meta_index)
    # zeros_like (:34) has CompositeImplicitAutogradNestedTensor, not CompositeImplicitAutograd: activate_meta
    # registers _meta_registrations.py:16
    assert rows["aten::zeros_like"] == ("kernel", META, 16, "torch._meta_registrations.zeros_like", "python")
    # unsqueeze (:39, `Tensor(a) self`) is a view: the reference at torch/_refs/__init__.py:16 is not registered
    assert rows["aten::unsqueeze"][:3] == ("composite_explicit", YAML, 42)
    # torch/_refs/special/__init__.py:10 `def zeta` under @_make_elementwise_binary_reference(...) (:7): the
    # factory registers it for aten.special_zeta (utils.get_aten_op: the module's path as a prefix)
    assert rows["aten::special_zeta.other_scalar"] == (
        "kernel", "torch/_refs/special/__init__.py", 10, "torch._refs.special.zeta", "python")
    # _meta_registrations.py:20 @register_meta(torch.ops.mkldnn._linear_pointwise.default) on :21; the op is
    # defined by aten/src/ATen/native/mkldnn/Linear.cpp:5's m.def
    assert rows["mkldnn::_linear_pointwise"] == (
        "kernel", META, 21, "torch._meta_registrations.meta_linear_pointwise", "python")


def test_the_inplace_rule_follows_the_checkout_version(tmp_path):
    # PyTorch 1.8's torchgen (tools/codegen/dest/register_dispatch_key.py) writes no in-place Meta kernel
    older = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, older)
    (older / "version.txt").write_text("1.8.0\n")
    with _build(older, tmp_path / "older.sqlite") as ix:
        assert _meta(ix)["aten::put_"] == ("missing", None, None, None, None)
    assert [inplace_meta.applies(v) for v in ("1.8.1", "1.9.0", "2.4.0", None)] == [False, True, True, True]


def test_schema_shapes_the_rule_reads():
    assert [inplace_meta.returns(s) for s in (
        "put_(Tensor(a!) self) -> Tensor(a!)", "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
        "f(Tensor(a -> *) self) -> (Tensor(a!), Tensor(b!))", "split(Tensor(a -> *) self) -> Tensor(a)[]")] == [
        1, 0, 2, 1]
    assert [inplace_meta.is_inplace(n) for n in ("put_", "__iand__", "__and__", "put", "__ilshift__")] == [
        True, True, False, False, True]


def test_the_skip_list_in_parentheses_is_read_too():
    # later releases wrap the test: `elif (\n op_overload.name()\n in {...}\n ):` (torch 2.13's activate_meta)
    from opindex.extract.python import extract
    source = (b"def activate_meta():\n    for op_overload, fn in table.items():\n        if op_overload.is_view:\n"
              b"            pass\n        elif (\n            op_overload.name()\n            in {\n"
              b'                "aten::clone",\n                "aten::rot90.out",\n            }\n        ):\n'
              b"            pass\n")
    rows = extract(META, source, "torch._meta_registrations").rows["decompositions"]
    assert [(r.line, r.op, r.overload, r.kind) for r in rows] == [(8, "clone", "default", "skipped"),
                                                                   (9, "rot90", "out", "skipped")]
