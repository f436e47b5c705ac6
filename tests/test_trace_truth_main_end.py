"""The main-chain scorer of benchmarks/trace_truth.py (issue 28), on hand-made traces: no tree or index needed."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "trace_truth", Path(__file__).resolve().parent.parent / "benchmarks" / "trace_truth.py")
tt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tt)

LOOPS = "aten/src/ATen/native/cuda/CUDALoops.cuh"
END = {"name": "vectorized_elementwise_kernel", "file": LOOPS, "line": 63, "why": ""}


def trace(*hops):
    return {"hops": [dict(id=i, **h) for i, h in enumerate(hops)], "main_chain": list(range(len(hops)))}


def test_last_hop_at_the_line_or_by_name_hits():
    root = {"name": "torch.add", "file": "native_functions.yaml", "line": 547}
    at_line = trace(root, {"name": "__global__ at::native::vectorized_elementwise_kernel", "file": LOOPS, "line": 64})
    by_name = trace(root, {"name": "vectorized_elementwise_kernel<4, func_t, array_t><<<grid, 128>>>", "file": LOOPS,
                           "line": 223, "kernel": "vectorized_elementwise_kernel"})
    assert tt.score_main_end(at_line, [END])["hit"]
    r = tt.score_main_end(by_name, [END])
    assert r["hit"] and r["matched"] is END and r["end"]["line"] == 223


def test_only_the_last_hop_counts_and_other_files_miss():
    mid = {"name": "vectorized_elementwise_kernel", "file": LOOPS, "line": 63}
    last = {"name": "launch_jitted_vectorized_kernel", "file": "aten/src/ATen/native/cuda/CUDAJitLoops.cuh", "line": 209}
    r = tt.score_main_end(trace(mid, last), [END])
    assert not r["hit"] and r["end"]["name"] == "launch_jitted_vectorized_kernel"
    other = {"name": "vectorized_elementwise_kernel", "file": "aten/src/ATen/native/cuda/maca_kernels/x.cuh", "line": 63}
    assert not tt.score_main_end(trace(other), [END])["hit"]
    absent = dict(mid, absent=True)
    assert not tt.score_main_end(trace(absent), [END])["hit"]


def test_no_main_chain_is_a_miss_and_any_option_of_an_open_end_hits():
    assert tt.score_main_end({"hops": [], "main_chain": []}, [END]) == {"hit": False, "end": None, "matched": None}
    other = {"name": "cunn_SoftMaxForward", "file": "aten/src/ATen/native/cuda/SoftMax.cu", "line": 608, "why": ""}
    t = trace({"name": "__global__ cunn_SoftMaxForward", "file": other["file"], "line": 607})
    assert tt.score_main_end(t, [END, other])["matched"] is other


def test_config_picks_main_end_default_only_where_given():
    t = {"main_end": [END], "main_end_default": [{"name": "k", "file": "f.cu", "line": 1, "why": ""}]}
    assert tt.expected_ends(t, "stock") == [END]
    assert tt.expected_ends(t, "default")[0]["name"] == "k"
    assert tt.expected_ends({"main_end": [END]}, "default") == [END]
    assert tt.expected_ends({}, "stock") is None


def test_every_expert_trace_has_a_main_end():
    for p in (Path(__file__).resolve().parent.parent / "benchmarks").glob("expert_traces_*.json"):
        import json
        for t in json.loads(p.read_text())["traces"]:
            assert "main_end" in t, (p.name, t["query"])
            for e in t["main_end"] or []:
                assert {"name", "file", "line", "why"} <= set(e), (p.name, t["query"])
            assert len(t["main_end"] or []) <= 1 or t.get("open"), (p.name, t["query"])  # several: say why
