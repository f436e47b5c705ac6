"""Fills and copies a kernel makes besides its own work (trace/walk/sites.py write_call): on the sample, whose
layer_norm_backward_cuda zeroes dgamma with at::zeros_like (layer_norm_kernel.cu:82) before launching its own
kernel (line 88)."""
from __future__ import annotations

N = "aten/src/ATen/native/"


def below(t, hop):
    """`hop` and its descendants, in walk order, as (layer, name, file:line)."""
    inside, out = {hop.id}, []
    for h in t.hops[hop.id:]:
        if h.id == hop.id or h.parent in inside:
            inside.add(h.id)
            out.append((h.layer, h.name, f"{h.file}:{h.line}" if h.file else None))
    return out


def test_a_fill_besides_the_op_own_work_is_shown_down_to_its_kernel(ix):
    t = ix.trace("aten::native_layer_norm_backward")
    writes = [h for h in t.hops if h.kind == "writes"]
    assert [(h.name, h.file, h.line) for h in writes] == [("at::zeros_like", N + "cuda/layer_norm_kernel.cu", 82),
                                                           ("result.zero_", N + "Fill.cpp", 19)]  # inside zeros_like
    assert below(t, writes[0]) == [
        ("native", "at::zeros_like", N + "cuda/layer_norm_kernel.cu:82"),
        ("native", "aten::zeros_like", N + "native_functions.yaml:134"),
        ("dispatch", "CompositeExplicitAutograd: zeros_like", N + "native_functions.yaml:136"),
        ("cpp", "at::native::zeros_like", N + "Fill.cpp:15"),
        ("native", "result.zero_", N + "Fill.cpp:19"),
        ("native", "aten::zero_", N + "native_functions.yaml:129"),
        ("dispatch", "CUDA: zero_", N + "native_functions.yaml:132"),
        ("cpp", "at::native::zero_", N + "Fill.cpp:9"),
        ("stub", "fill_stub", N + "Fill.cpp:11"),
        ("registration", "CUDA: fill_kernel_cuda", N + "cuda/FillKernel.cu:21"),
        ("cpp", "at::native::fill_kernel_cuda", N + "cuda/FillKernel.cu:15"),
        ("cuda", "gpu_kernel", N + "cuda/FillKernel.cu:17")]
    # the op's own kernel stays the main chain: a fill besides the work is ranked after it
    assert [(h.name, h.file, h.line) for h in t.main_chain()][-2:] == [
        ("LayerNormBackwardCUDAKernel<scalar_t, acc_t><<<M, kThreads, 0, stream>>>", N + "cuda/layer_norm_kernel.cu",
         88),
        ("__global__ at::native::LayerNormBackwardCUDAKernel", N + "cuda/layer_norm_kernel.cu", 67)]


def test_a_kernel_that_only_fills_ends_in_the_fill_kernel(ix):
    # zeros_like's own body is an allocation and result.zero_(): that fill is all its device work, so its path is
    # the main chain
    t = ix.trace("aten::zeros_like")
    assert [(h.name, h.file, h.line) for h in t.hops if h.kind == "writes"] == [("result.zero_", N + "Fill.cpp", 19)]
    assert [(h.name, h.file, h.line) for h in t.main_chain()][-3:] == [
        ("CUDA: fill_kernel_cuda", N + "cuda/FillKernel.cu", 21),
        ("at::native::fill_kernel_cuda", N + "cuda/FillKernel.cu", 15),
        ("gpu_kernel", N + "cuda/FillKernel.cu", 17)]


def test_the_fill_path_is_the_same_in_every_trace_of_an_open_index(ix):
    # the path of a fill op is walked once per open index (Resident) and copied into each trace that shows it
    first = ix.trace("aten::native_layer_norm_backward")
    again = ix.trace("aten::native_layer_norm_backward")
    assert [(h.layer, h.name, h.file, h.line, h.parent) for h in first.hops] == \
        [(h.layer, h.name, h.file, h.line, h.parent) for h in again.hops]


def test_fill_paths_are_kept_for_the_next_process(sample_db, tmp_path, monkeypatch):
    import json

    from opindex.api import Index
    monkeypatch.setenv("OPINDEX_CACHE", str(tmp_path))
    with Index(sample_db) as first:
        walked = first.trace("aten::native_layer_norm_backward").to_dict()
    files = list((tmp_path / "paths").glob("*.json"))
    assert len(files) == 1
    data = json.loads(files[0].read_text())
    assert data["key"]["db"] == str(sample_db.resolve())
    assert sorted({tuple(h[1][:2]) for p in data["paths"] for h in p["hops"]} & {("stub", "stub_call")}) == [
        ("stub", "stub_call")]  # fill_stub, on zeros_like's path
    with Index(sample_db) as second:  # a new connection: its paths come from the file, the trace is the same
        assert second.trace("aten::native_layer_norm_backward").to_dict() == walked
    # made from another build of the index: not used, and rewritten
    data["key"]["built_at"] = "1999-01-01T00:00:00+00:00"
    data["paths"] = [{**p, "hops": [[-1, ["cuda", "launch", "stale", None, None, "", False, None]]]}
                     for p in data["paths"]]
    files[0].write_text(json.dumps(data))
    with Index(sample_db) as third:
        assert third.trace("aten::native_layer_norm_backward").to_dict() == walked
    assert json.loads(files[0].read_text())["key"]["built_at"] != "1999-01-01T00:00:00+00:00"


def test_the_path_cache_can_be_turned_off(sample_db, tmp_path, monkeypatch):
    from opindex.api import Index
    monkeypatch.setenv("OPINDEX_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with Index(sample_db) as index:
        assert [h for h in index.trace("aten::native_layer_norm_backward").hops if h.kind == "writes"]
    assert not list(tmp_path.rglob("*.json"))
