"""benchmarks/runtime_calls.py's classes of a traced call against what the GPU ran (issue 28's runtime truth): a
chain that ends at a kernel the profiled build does not contain is a version difference, listed apart and not
scored; one whose kernel the build has and did not run stays a miss."""
from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import runtime_calls  # noqa: E402


class _Tracer:
    """Each call's trace: a main chain of one hop, the given end."""

    def __init__(self, ends: dict[str, dict]):
        self.ends = ends

    def trace(self, call: str):
        end = {"id": 0, **self.ends[call]}
        return {"hops": [end], "main_chain": [0], "choices": []}, "call"


def _index(*kernels: str):
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE symbols (kind TEXT, name TEXT)")
    con.executemany("INSERT INTO symbols VALUES ('global_kernel', ?)", [(k,) for k in kernels])
    return con


def _ran(name: str) -> dict:
    return {"call": name, "kernels": [{"name": f"void at::native::{name}<float>(float*)", "us": 1.0}]}


def test_a_chain_ending_at_a_kernel_the_profiled_build_lacks_is_a_version_difference():
    tracer = _Tracer({
        "hit": {"layer": "cuda", "kind": "global_kernel", "name": "__global__ at::native::softmax_warp_forward"},
        "differs": {"layer": "cuda", "kind": "global_kernel",
                    "name": "__global__ at::native::softmax_warp_forward_opt2_nd"},
        "miss": {"layer": "cuda", "kind": "global_kernel", "name": "__global__ at::native::cunn_SoftMaxForward"},
    })
    calls = [{**_ran("softmax_warp_forward"), "call": c} for c in ("hit", "differs", "miss")]
    con = _index("softmax_warp_forward", "softmax_warp_forward_opt2_nd", "cunn_SoftMaxForward")
    built = {"softmax_warp_forward", "cunn_SoftMaxForward"}
    rows = runtime_calls.score(tracer, calls, con, built)
    assert [r["status"] for r in rows] == ["hit", "differs", "miss"]
    assert [r["status"] for r in runtime_calls.score(tracer, calls, con, None)] == ["hit", "miss", "miss"]
    summary = runtime_calls.report(rows, verbose=False)
    assert (summary["hit"], summary["scored"], summary["differs"], summary["percent_with_differs"]) == (
        1, 2, ["differs"], 33.3)


def test_the_kernel_a_chain_ends_at():
    end = runtime_calls.end_kernel
    assert end({"layer": "cuda", "kind": "global_kernel", "name": "__global__ at::native::reduce_kernel"}) == \
        "reduce_kernel"
    assert end({"layer": "cuda", "kind": "launch", "name": "k<<<g, b>>>", "kernel": "fill"}) == "fill"
    assert end({"layer": "library", "kind": "cublas", "name": "cublasSgemm"}) is None
    assert end({"layer": "cpp", "kind": "calls", "name": "at::native::launcher"}) is None
    assert end(None) is None


def test_the_functor_wrapper_a_chains_launch_passes(tmp_path):
    """A hit whose kernel runs a binary op's functor wrapper (BUnaryFunctor: the second operand a CPU scalar) is
    checked against the wrapper the chain's TensorIterator launch passes, read from the checkout: written in the
    call, or a local the lines just above declare (`BUnaryFunctor<...> bf(...); gpu_kernel(iter, bf);`)."""
    src = tmp_path / "Loops.cuh"
    src.write_text("void f(TensorIteratorBase& iter) {\n"
                   "  if (iter.is_cpu_scalar(2)) {\n"
                   "    BUnaryFunctor<arg1_t, arg2_t, return_t, func_t> bf(f, iter.scalar_value<T>(2));\n"
                   "    iter.remove_operand(2);\n"
                   "    gpu_kernel(iter, bf);\n"
                   "  } else {\n"
                   "    gpu_kernel(iter,\n"
                   "               BinaryFunctor<arg1_t, arg2_t, return_t, func_t>(f));\n"
                   "  }\n"
                   "}\n")

    def trace(line: int) -> dict:
        hops = [{"id": 0, "kind": "tensor_iterator", "name": "gpu_kernel", "file": "Loops.cuh", "line": line},
                {"id": 1, "kind": "global_kernel", "layer": "cuda",
                 "name": "__global__ at::native::vectorized_elementwise_kernel"}]
        return {"hops": hops, "main_chain": [0, 1], "index": {"checkout": str(tmp_path)}}

    assert runtime_calls.chain_wrappers(trace(5)) == {"BUnaryFunctor"}
    assert runtime_calls.chain_wrappers(trace(7)) == {"BinaryFunctor"}
    assert runtime_calls.chain_wrappers({**trace(5), "index": {}}) == set()  # (no checkout: nothing read)
    ran = runtime_calls.ran_kernels({"kernels": [{"name": "void at::native::vectorized_elementwise_kernel<4, "
                                                          "at::native::BUnaryFunctor<float, float, float, "
                                                          "at::native::binary_internal::MulFunctor<float> >, "
                                                          "std::array<char*, 2ul> >(int)", "us": 1.0}]})
    assert [(k["target"], k["wrapper"]) for k in ran] == [("vectorized_elementwise_kernel", "BUnaryFunctor")]
