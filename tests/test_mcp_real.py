"""`opindex mcp`'s answers on the PyTorch 2.4 tree (opindex.mcp.call: what the server runs for a tool call), each
location read in the source: aten/src/ATen/native/cudnn/RNN.cpp:1596 is `AT_CUDNN_CHECK(cudnnRNNForward(`, :2763
`REGISTER_CUDA_DISPATCH(lstm_cudnn_stub, &lstm_cudnn);`, aten/src/ATen/native/RNN.h:13
`DECLARE_DISPATCH(lstm_fn, lstm_cudnn_stub);`, aten/src/ATen/native/cuda/RNN.cu:100 `__global__ void
lstm_cell_forward(`."""
from __future__ import annotations

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
