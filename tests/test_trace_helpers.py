"""Helpers without device code (trace/walk/bodies.py helper_leaves): what a walked body calls that reaches no launch,
library call, stub or op (expand_size, make_reduction, getSliceSize on a real tree) is shown as a leaf under the
body, each once per trace, at most MAX_HELPERS per body with the rest stated; never the main chain's end."""
from __future__ import annotations

from opindex.api import Index, build
from opindex.render.trace_text import render
from opindex.trace.walk.bodies import MAX_HELPERS

BLAS = "aten/src/ATen/native/cuda/Blas.cpp"


def _index(sample_copy, tmp_path, helpers: int):
    """The sample, with mm_out_cuda_impl calling `helpers` helpers (defined above it, in its file) that compute
    shapes only; the first is called twice."""
    blas = sample_copy / BLAS
    text = blas.read_text()
    defs = "".join(f"int64_t shape_helper_{i}(int64_t n) {{ return n + {i}; }}\n" for i in range(helpers))
    calls = "".join(f"  (void)shape_helper_{i}(m);\n" for i in range(helpers))
    text = text.replace("namespace {\n", "namespace {\n" + defs, 1)
    dispatch = "  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), \"mm_cuda\""
    text = text.replace(dispatch, calls + "  (void)shape_helper_0(k);\n" + dispatch, 1)
    blas.write_text(text)
    db = tmp_path / "h.sqlite"
    build(str(sample_copy), db, jobs=1)
    return Index(db), text.splitlines()


def _line(lines: list[str], needle: str) -> int:
    return next(i for i, text in enumerate(lines, 1) if needle in text)


def test_helpers_without_device_code_are_leaves_of_the_body(sample_copy, tmp_path):
    ix, lines = _index(sample_copy, tmp_path, 2)
    with ix:
        t = ix.trace("torch.mm", device="cuda")
        body = next(h for h in t.hops if h.name == "at::native::mm_out_cuda_impl")
        helpers = [h for h in t.hops if h.kind == "helper"]
        # each once (shape_helper_0 is called twice), in source order, at its definition, with where it is called
        assert [(h.name, h.file, h.line, h.called_at, h.parent) for h in helpers] == [
            ("at::native::shape_helper_0", BLAS, _line(lines, "int64_t shape_helper_0("),
             f"{BLAS}:{_line(lines, '(void)shape_helper_0(m)')}", body.id),
            ("at::native::shape_helper_1", BLAS, _line(lines, "int64_t shape_helper_1("),
             f"{BLAS}:{_line(lines, '(void)shape_helper_1(m)')}", body.id)]
        assert all(h.layer == "cpp" and "no device code below it" in h.detail for h in helpers)
        # the main chain still ends in the cuBLAS call; the helpers are not ends
        assert t.main_chain()[-1].layer == "library" and not {h.id for h in helpers} & {h.id for h in t.ends()}
        text = render(t)
        assert "helpers, no device code below: at::native::shape_helper_0, at::native::shape_helper_1" in text


def test_helpers_past_the_cap_are_stated_and_limit_0_shows_them(sample_copy, tmp_path):
    ix, _ = _index(sample_copy, tmp_path, MAX_HELPERS + 2)
    with ix:
        t = ix.trace("torch.mm", device="cuda")
        assert [h.name for h in t.hops if h.kind == "helper"] == [
            f"at::native::shape_helper_{i}" for i in range(MAX_HELPERS)]
        capped = [h.name for h in t.hops if h.kind == "capped" and "helpers" in h.name]
        assert capped == [f"2 more helpers without device code not followed (the first {MAX_HELPERS} are; "
                          f"--limit 0 follows all)"]
        assert t.truncated["fan_out"] == 1
        every = ix.trace("torch.mm", device="cuda", limit=0)
        assert [h.name for h in every.hops if h.kind == "helper"] == [
            f"at::native::shape_helper_{i}" for i in range(MAX_HELPERS + 2)]


def test_a_meta_function_shows_its_helpers_and_overloads_are_one_leaf_marked(sample_copy, tmp_path):
    """The meta function is a leaf of the trace (not walked): the helpers it calls are listed below it all the same
    (2.4's common_checks_baddbmm_bmm, meta_func_cum_ops). Two overloads of one helper in one file, which the call
    cannot tell apart (2.4's meta::make_reduction), are one leaf at the first, marked."""
    path = "aten/src/ATen/native/LinearAlgebra.cpp"
    algebra = sample_copy / path
    text = algebra.read_text().replace(
        "namespace at::meta {\n",
        "namespace at::meta {\nstatic void check_shapes(const Tensor& a, const Tensor& b) {}\n"
        "static void check_shapes(const Tensor& a) {}\n", 1).replace(
        "  TORCH_CHECK(self.dim() == 2, \"self must be a matrix\");\n",
        "  check_shapes(self, mat2);\n  TORCH_CHECK(self.dim() == 2, \"self must be a matrix\");\n", 1)
    algebra.write_text(text)
    lines = text.splitlines()
    build(str(sample_copy), tmp_path / "m.sqlite", jobs=1)
    with Index(tmp_path / "m.sqlite") as ix:
        t = ix.trace("torch.mm", device="cuda")
        meta = next(h for h in t.hops if h.name == "at::meta::structured_mm")
        helpers = [h for h in t.hops if h.kind == "helper"]
        assert [(h.name, h.file, h.line, h.called_at, h.parent) for h in helpers] == [
            ("at::meta::check_shapes", path, _line(lines, "static void check_shapes(const Tensor& a, const"),
             f"{path}:{_line(lines, 'check_shapes(self, mat2);')}", meta.id)]
        assert helpers[0].detail.endswith("[the first of 2 overloads the call may reach]")


def test_a_leaf_under_a_dropped_body_is_shown_again(sample_copy, tmp_path):
    """Each helper is one leaf per trace; when the walk drops the body it sat under (a helper that led nowhere:
    TraceBuilder.truncate), the next body that calls it shows it again."""
    from opindex.trace.walk import Walker
    from opindex.trace.model import Trace
    ix, lines = _index(sample_copy, tmp_path, 1)
    with ix:
        import sqlite3
        con = sqlite3.connect(tmp_path / "h.sqlite")
        con.row_factory = sqlite3.Row
        try:
            sid = con.execute("SELECT id FROM symbols WHERE name = 'shape_helper_0'").fetchone()[0]
            walker = Walker(con, Trace("torch.mm", "down", "cuda", 1))
            root = walker.b.add(None, "cpp", "function", "body")
            call = {"file": BLAS, "line": _line(lines, "(void)shape_helper_0(m)"), "callee": "shape_helper_0",
                    "qualifier": ""}
            link = {"id": sid, "def_file": BLAS, "reach": None, "device_function": False}
            walker.bodies.keep_leaf(call, [link], root)
            walker.bodies.helper_leaves(root)
            assert [h.kind for h in walker.trace.hops] == ["function", "helper"] and walker.bodies.leaf_shown(sid)
            walker.b.truncate(0)  # the body led nowhere: dropped, its leaf with it
            assert not walker.bodies.leaf_shown(sid)
            again = walker.b.add(None, "cpp", "function", "another body")
            walker.bodies.keep_leaf(call, [link], again)
            walker.bodies.helper_leaves(again)
            assert [(h.kind, h.parent) for h in walker.trace.hops] == [("function", None), ("helper", again.id)]
        finally:
            con.close()
