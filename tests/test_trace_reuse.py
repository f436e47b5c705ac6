"""What a process keeps between traces of one index gives the same traces: a body's Guards read once per walk
context and build (conditions.BodyGuards._kept), rank_end's counts made once per trace from each hop's
parent's (rank._aggregate)."""
from __future__ import annotations

from opindex.trace import conditions, facts, rank


def _shape(t) -> dict:
    d = t.to_dict()
    return {k: d.get(k) for k in ("hops", "main_chain", "build", "open", "call")}


def test_a_second_trace_reads_no_body_again_and_is_the_same(ix, monkeypatch):
    first = _shape(ix.trace("nn.LSTM"))
    assert facts.resident(ix.con).guards  # the bodies it read, kept
    built = []  # C++ bodies read (a Python def's few tests are read each time)
    original = conditions.BodyGuards._read
    monkeypatch.setattr(conditions.BodyGuards, "_read", lambda self, d, *a: (built.append(d["qualified_name"]),
                                                                             original(self, d, *a))[1])
    ix.trace("nn.Linear")  # another op between: what it keeps changes nothing of nn.LSTM's
    built.clear()
    again = _shape(ix.trace("nn.LSTM"))
    assert built == []
    assert again == first


def test_each_end_ranks_alike_counted_from_its_parent_or_along_its_path(ix):
    for name in ("nn.LSTM", "nn.Linear", "F.softmax", "torch.add"):
        t = ix.trace(name)
        tokens = rank.query_tokens(t.query)
        ends = t.ends()
        assert ends
        for end in ends:
            assert rank.rank_end(t, end, tokens) == rank._rank_end(t, end, tokens, t.path(end))


def test_a_kept_reading_states_the_build_settings_it_read(real_index):
    """torch.sort's in-place sort reads `HAS_WARP_MERGE_SORT()`, `(CUDA_VERSION >= 110600)` (SortUtils.cuh:13), in
    sortKeyValueInplace's #if (Sort.cu:403): the second trace, which takes that body's reading from the first,
    states CUDA_VERSION in its header as the first did, and its hops are the same."""
    call = "torch.sort(torch.randn(64, 100), dim=1)"
    first = _shape(real_index.trace(call, undefines=["USE_MACA"]))
    assert "CUDA_VERSION" in {s["name"] for s in first["build"]}
    real_index.trace("torch.argsort(torch.randn(64, 20), dim=1)", undefines=["USE_MACA"])
    assert _shape(real_index.trace(call, undefines=["USE_MACA"])) == first
