"""Hops as typed data (trace/model.py): layers and kinds are enums, a kind outside them is refused where a walk
makes it, and what a program needs of a hop is a field, never a phrase of its detail."""
from __future__ import annotations

import json
import sqlite3

import pytest

from opindex.trace.model import Condition, Found, Hop, Kind, Layer, Trace, typed
from opindex.trace.rank import switch


def test_layers_and_kinds_are_enums_that_compare_and_serialise_as_their_words():
    hop = Hop(0, None, "cuda", "global_kernel", "__global__ k", "k.cu", 3, kernel="k")
    assert hop.layer is Layer.CUDA and hop.kind is Kind.GLOBAL_KERNEL
    assert hop.layer == "cuda" and hop.kind == "global_kernel"
    t = Trace(query="k", direction="down", device="cuda", depth=1, hops=[hop])
    t.finish()
    d = json.loads(t.to_json())
    assert d["version"] == 4 and d["main_chain"] == [0]
    assert {k: d["hops"][0][k] for k in ("layer", "kind", "found", "main", "kernel")} == {
        "layer": "cuda", "kind": "global_kernel", "found": "call", "main": True, "kernel": "k"}


def test_a_kind_no_walk_knows_is_refused_but_pytorch_values_name_three_layers():
    with pytest.raises(ValueError, match="unknown hop kind 'global_kernal' in layer 'cuda'"):
        typed("cuda", "global_kernal")
    with pytest.raises(ValueError):
        typed("kernels", "launch")  # no such layer
    assert typed("dispatch", "CPU, CUDA") == (Layer.DISPATCH, "CPU, CUDA")  # the row's dispatch keys
    assert typed("registration", "REGISTER_CUDA_DISPATCH") == (Layer.REGISTRATION, "REGISTER_CUDA_DISPATCH")
    assert typed("library", "cudnn") == (Layer.LIBRARY, "cudnn")
    assert typed("dispatch", "note") == (Layer.DISPATCH, Kind.NOTE)


def test_every_definition_kind_of_the_index_is_a_hop_kind(sample_db):
    """A C++ hop takes its definition's kind from the symbols table: each one the extractors write is a Kind."""
    con = sqlite3.connect(sample_db)
    kinds = {k for (k,) in con.execute("SELECT DISTINCT kind FROM symbols")}
    assert kinds >= {"function", "method", "class", "struct", "global_kernel", "impl_func", "meta_func"}
    assert all(typed("cpp", k)[1] is Kind(k) for k in kinds)
    bridges = {k for (k,) in con.execute("SELECT DISTINCT kind FROM python_bridges")}
    assert bridges and all(typed("bridge", k)[1] is Kind(k) for k in bridges)


def test_the_ranking_reads_fields_not_prose():
    """A path under a condition the defaults make false ranks after the default one, and a same-file guess after
    a call the walk read, whatever the details say."""
    def launcher(found=Found.CALL, conditions=()):
        return [Hop(0, None, "native", "entry", "aten::x", "n.yaml", 1, schema="x(Tensor self) -> Tensor"),
                Hop(1, 0, "cpp", "function", "at::native::x", "x.cu", 5),
                Hop(2, 1, "cuda", "launch", "x_special<<<g, b>>>", "x.cu", 9, "a phrase", kernel="x_special",
                    found=found, conditions=list(conditions)),
                Hop(3, 1, "cuda", "launch", "x_kernel<<<g, b>>>", "x.cu", 12, kernel="x_kernel")]
    for hops in (launcher(Found.SAME_FILE), launcher(conditions=[Condition("if", "p > 0", "x.cu", 8, False)])):
        t = Trace(query="x", direction="down", device="cuda", depth=1, hops=hops)
        assert t.main_chain()[-1].kernel == "x_kernel"
    t = Trace(query="x", direction="down", device="cuda", depth=1, hops=launcher(
        conditions=[Condition("#if", "defined(USE_ROCM)", "x.cu", 8)]))  # unknown: not ranked down
    assert t.main_chain()[-1].kernel == "x_special"
    t.hops[2].detail = "not with the default arguments; same file: reached through a lambda"  # prose alone
    assert t.main_chain()[-1].kernel == "x_special"


def test_a_repeat_points_at_the_hop_it_repeats():
    hops = [Hop(0, None, "native", "entry", "aten::a", "n.yaml", 1),
            Hop(1, 0, "cpp", "function", "at::native::f", "f.cpp", 3),
            Hop(2, None, "native", "entry", "aten::b", "n.yaml", 9),
            Hop(3, 2, "cpp", "function", "at::native::f", "f.cpp", 3, "(shown above)", shown_above=True),
            Hop(4, 2, "cpp", "function", "at::native::g", "g.cpp", 3, "(shown above)", shown_above=True)]
    t = Trace(query="a", direction="down", device="cuda", depth=1, hops=hops)
    t.finish()
    assert [h.repeats for h in t.hops] == [None, None, None, 1, None]  # g: not in this trace


def test_a_test_that_pins_several_values_is_a_special_shape():
    """rank.pinned_values counts the top-level `&&` parts of an undecided test that pin a value to a number: two or
    more (maca_parallel_cat's `dimension == 0 && batchCounter == 3 && nDims == 4`, Shape.cu:1211 in 2.4) make a
    special shape, ranked after the general way; a divisibility, a negated test or an `||` pins nothing."""
    from opindex.trace.rank import pinned_values
    cat = ("!disable_cat_opt && input_output_all_aligned && dimension == 0 && batchCounter == 3 && "
           "memory_format == c10::MemoryFormat::Contiguous && nDims == 4 && out.numel() % (n * vec8) == 0")
    assert pinned_values(cat) == 3
    assert pinned_values("outInfo.dims == 1 && selfInfo.dims == 1 && indContig") == 2
    assert pinned_values("inner_size == 1") == 1
    assert pinned_values(f"not ({cat})") == 0
    assert pinned_values("a == 1 || b == 2") == 0
    assert pinned_values("(!(x || y)) && n % 8 == 0") == 0
    # Python's `and` / `or` as C++'s (F.interpolate's `input.dim() == 4 and mode == "nearest"`, functional.py:4049)
    assert pinned_values('input.dim() == 4 and mode == "nearest"') == 1
    assert pinned_values("input.dim() == 4 and scale == 2") == 2
    assert pinned_values("input.dim() == 3 or input.dim() == 4") == 0


def _launcher_with_ways(cases: dict[int, str], value: str = "ndim") -> list:
    """An op whose launcher (x.cuh:10) tests `value` against each number of `cases` (each way launching its kernel)
    and launches `x_general` otherwise, every test left open."""
    hops = [Hop(0, None, "native", "entry", "aten::x", "n.yaml", 1, schema="x(Tensor self) -> Tensor"),
            Hop(1, 0, "cpp", "function", "at::native::x_launcher", "x.cuh", 10)]
    seen: list[int] = []
    for n, kernel in cases.items():
        tests = [Condition("if", f"not ({value} == {m})", "x.cuh", 20 + m, None) for m in seen]
        hops.append(Hop(len(hops), 1, "cuda", "launch", f"{kernel}<<<g, b>>>", "x.cuh", 21 + n, kernel=kernel,
                        conditions=[*tests, Condition("if", f"{value} == {n}", "x.cuh", 20 + n, None)]))
        seen.append(n)
    hops.append(Hop(len(hops), 1, "cuda", "launch", "x_general<<<g, b>>>", "x.cuh", 40, kernel="x_general",
                    conditions=[Condition("if", f"not ({value} == {m})", "x.cuh", 20 + m, None)
                                for m in seen]))
    return hops


def test_a_switch_on_the_number_of_dimensions_the_inputs_leave_open_ends_the_main_chain():
    """Ways that test a number of dimensions against three or more numbers, each case with its own kernels, are a
    switch no ranking picks a case of (the fork's strided launcher, CUDALoops_maca_arity2.cuh:5945): the main
    chain ends at the launcher and says which value, where and what each way runs. A vector width
    (`vec_size == 4`) or a switch whose cases launch one kernel is no such choice."""
    from opindex.render.trace_text import render
    t = Trace(query="x", direction="down", device="cuda", depth=1,
              hops=_launcher_with_ways({1: "x_1d", 2: "x_2d", 3: "x_3d"}))
    assert [h.name for h in t.main_chain()] == ["aten::x", "at::native::x_launcher"]
    stop = switch(t)
    assert (stop["value"], stop["text"], stop["file"], stop["line"], stop["cases"]) == ("ndim", "ndim == 1", "x.cuh",
                                                                                          21, 3)
    assert stop["ways"] == [2, 3, 4, 5]
    found = [c for c in t.to_dict()["open"] if c["hop"] == 1]
    assert [c["condition"] for c in found] == ["ndim == 1"]
    assert [o["end"] for o in found[0]["options"]] == [2, 3, 4, 5]
    text = render(t)
    assert "Main chain: the default path on CUDA, to where the inputs leave open which kernel runs" in text
    assert "◆ one of 4, open" in text
    assert "stops at x_launcher (x.cuh:10): one of 4 ways runs, by ndim (ndim == 1 at x.cuh:21; 3 values tested)" \
        in text
    # two cases, a vector width, one kernel for every case: the chain goes on to a kernel, as ranked
    for hops in (_launcher_with_ways({1: "x_1d", 2: "x_2d"}),
                 _launcher_with_ways({1: "x_1d", 2: "x_2d", 4: "x_4d"}, value="vec_size"),
                 _launcher_with_ways({1: "x_any", 2: "x_any", 3: "x_any"})):
        t = Trace(query="x", direction="down", device="cuda", depth=1, hops=hops)
        assert t.main_chain()[-1].kind == "launch" and switch(t) is None
