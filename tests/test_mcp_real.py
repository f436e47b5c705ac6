"""`opindex mcp`'s answers on the PyTorch 2.4 tree (opindex.mcp.call: what the server runs for a tool call), each
location read in the source: aten/src/ATen/native/cudnn/RNN.cpp:1596 is `AT_CUDNN_CHECK(cudnnRNNForward(`, :2763
`REGISTER_CUDA_DISPATCH(lstm_cudnn_stub, &lstm_cudnn);`, aten/src/ATen/native/RNN.h:13
`DECLARE_DISPATCH(lstm_fn, lstm_cudnn_stub);`, aten/src/ATen/native/cuda/RNN.cu:100 `__global__ void
lstm_cell_forward(`."""
from __future__ import annotations

from pathlib import Path

from opindex.mcp import call


def test_the_main_chain_of_nn_lstm_fits_the_default_budget_and_its_branches_are_refused_with_a_hint(real_index):
    main = call(real_index, "trace", {"name": "nn.LSTM"})
    assert not main.error and main.size() <= 8000
    last = [h for h in main.data["hops"] if h["id"] == main.data["main_chain"][-1]][0]
    assert (last["layer"], last["name"], last["at"]) == ("library", "cudnnRNNForward",
                                                         "aten/src/ATen/native/cudnn/RNN.cpp:1596")
    assert "cudnnRNNForward                    aten/src/ATen/native/cudnn/RNN.cpp:1596" in main.text
    branches = call(real_index, "trace", {"name": "nn.LSTM", "detail": "branches"})
    whole = call(real_index, "trace", {"name": "nn.LSTM", "detail": "branches", "max_chars": 10**6})
    assert whole.size() > 8000 and branches.error and branches.data["chars"] == whole.size()
    # (the size of the main grade of the refused trace itself: a repeated trace in one open index may list fewer
    # build settings, those whose #if facts it read from the cache, so `main` may differ by that line)
    [narrower] = branches.data["narrower"]
    assert narrower["call"] == "detail='main'" and narrower["chars"] <= 8000
    assert "Narrower calls that fit: detail='main'" in branches.text


def test_stub_and_find_name_the_registration_and_the_kernel(real_index):
    stub = call(real_index, "stub", {"name": "lstm_cudnn_stub"})
    assert "aten/src/ATen/native/RNN.h:13" in stub.data["declared"]
    assert {"device": "CUDA", "kernel": "lstm_cudnn", "macro": "REGISTER_CUDA_DISPATCH",
            "at": "aten/src/ATen/native/cudnn/RNN.cpp:2763"} in stub.data["registered"]
    find = call(real_index, "find", {"name": "*lstm*", "kind": "global_kernel"})
    assert ["at::native::kernel::lstm_cell_forward", "global_kernel", "cuda",
            "aten/src/ATen/native/cuda/RNN.cu:100"] in find.data["rows"]


def test_a_profile_with_shapes_in_full_detail_says_where_each_call_s_trace_ends(real_index):
    """The full detail of `profile` adds each kernel's op call traced with its recorded inputs (tests/data's
    sort_index profile: topk's call ends at mbtopk::gatherTopK, TensorTopK.cu:496, the kernel that ran)."""
    path = str(Path(__file__).resolve().parent / "data" / "profiles" / "sort_index_h200_torch2.11.0.json.gz")
    full = call(real_index, "profile", {"path": path, "detail": "full", "limit": 60, "max_chars": 10**6})
    columns = full.data["columns"]
    rows = [dict(zip(columns, r)) for r in full.data["rows"]]
    gather = next(r for r in rows if r["kernel"] == "gatherTopK")
    assert gather["traced"] == ("torch.ops.aten.topk(torch.empty(65536), 100, -1, True, True) ends at __global__ "
                                "at::native::mbtopk::gatherTopK aten/src/ATen/native/cuda/TensorTopK.cu:496; the kernel "
                                "is in that trace")
    main = call(real_index, "profile", {"path": path})
    assert "traced" not in main.data["columns"]
