"""Porting questions answered through `opindex mcp`, against the grep workflow of the seed document.

    python benchmarks/mcp_questions.py --db INDEX [--tree CHECKOUT] [--starts N] [--json OUT]

Each question is one of the seed document's greps (shared/seed/4_language_layers.md, "Search Patterns for Each
Layer", and its patterns: _VF, torch.ops, stubs, TORCH_IMPL_FUNC, launches, cuDNN, cuBLAS, derivatives.yaml) asked as
a porting question about a real op of the PyTorch 2.4 tree. The script starts `python -m opindex mcp --db INDEX`
through the MCP SDK's own stdio client, as an agent's client does, and asks each question with the tool call an
agent makes (default arguments but those written). An answer is right when it names every expected `file:line`
(in its text, or as an `at` of its structured content: `op` writes a dispatch row's line as `:4111` under its
entry's file) and the checkout's line there holds the expected text (each read in the 2.4 source when the question was
written; the script reads it again). It then runs the question's greps in the checkout (`bash -c`, as the seed
writes them) and counts the characters they print: what an agent reads to answer the same question the grep way
(before opening any file). Reported: each question's answer characters (text; and the structured content's compact
JSON), the grep output's, the medians, and the number answered right.

Server start to first answer: --starts rounds (default 5), each starting fresh servers side by side: the baseline
(the same SDK's low-level server with one echo tool and no index), then opindex's answering an `op` lookup, then
opindex's answering a `trace`; each timed from spawning the process to the first tool call's answer (the handshake
in between), wall-clock, and the CPU seconds the server process used from its start to its exit. The medians, and
each as a ratio to the baseline's. Wall-clock depends on the machine's load: the load average is printed with it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# (question, the seed's greps, (tool, arguments), [(file:line, text on that line)])
QUESTIONS = [
    ("Where is nn.LSTM defined?",
     ['grep -rn "class LSTM" torch/nn/modules/'],
     ("find", {"name": "LSTM", "kind": "class", "layer": "python"}),
     [("torch/nn/modules/rnn.py:636", "class LSTM(RNNBase):")]),
    ("Where is F.cross_entropy defined?",
     ['grep -rn "def cross_entropy" torch/nn/functional.py'],
     ("find", {"name": "torch.nn.functional.cross_entropy"}),
     [("torch/nn/functional.py:3014", "def cross_entropy(")]),
    ("What does LSTM.forward call to reach C++?",
     ['grep -n "forward" torch/nn/modules/rnn.py'],
     ("trace", {"name": "nn.LSTM"}),
     [("torch/nn/modules/rnn.py:856", "def forward(self, input, hx=None)"),
      ("torch/nn/modules/rnn.py:917", "result = _VF.lstm(input, hx")]),
    ("What is lstm's native_functions.yaml entry?",
     ['grep -n "func:.*lstm" aten/src/ATen/native/native_functions.yaml'],
     ("op", {"name": "lstm"}),
     [("aten/src/ATen/native/native_functions.yaml:7783", "- func: lstm.input(Tensor input")]),
    ("Where is the C++ implementation of lstm?",
     [r'grep -rn "lstm\b" aten/src/ATen/native/RNN.cpp'],
     ("find", {"name": "at::native::lstm"}),
     [("aten/src/ATen/native/RNN.cpp:1424", "std::tuple<Tensor, Tensor, Tensor> lstm(")]),
    ("Which kernel does each device register for lstm's dispatch stub?",
     ['grep -rn "REGISTER_DISPATCH.*lstm" aten/src/ATen/native/'],
     ("stub", {"name": "lstm_cudnn_stub"}),
     [("aten/src/ATen/native/cudnn/RNN.cpp:2763", "REGISTER_CUDA_DISPATCH(lstm_cudnn_stub, &lstm_cudnn);"),
      ("aten/src/ATen/native/RNN.h:13", "DECLARE_DISPATCH(lstm_fn, lstm_cudnn_stub);")]),
    ("Which CUDA kernels implement the fused LSTM cell?",
     ['grep -rn "__global__.*lstm" aten/src/ATen/native/cuda/'],
     ("find", {"name": "*lstm*", "kind": "global_kernel"}),
     [("aten/src/ATen/native/cuda/RNN.cu:100", "__global__ void lstm_cell_forward("),
      ("aten/src/ATen/native/cuda/RNN.cu:187", "__global__ void lstm_cell_backward(")]),
    ("Where does nn.LSTM call cuDNN on CUDA?",
     [r'grep -rn "cudnn.*lstm\|lstm.*cudnn" aten/src/ATen/native/cudnn/'],
     ("trace", {"name": "nn.LSTM"}),
     [("aten/src/ATen/native/cudnn/RNN.cpp:1596", "AT_CUDNN_CHECK(cudnnRNNForward(")]),
    ("Where does torch.mm call cuBLAS?",
     [r'grep -rn "cublas\|blas::gemm" aten/src/ATen/native/cuda/'],
     ("trace", {"name": "torch.mm"}),
     # (the fork's getDisableAddmmCudaLt() is true with ENABLE_ADDMM_CUDA_LT unset: not the Lt path of
     # Blas.cpp:361, but gemm<float> -> gemm_internal_cublas -> cublasSgemm)
     [("aten/src/ATen/native/cuda/Blas.cpp:393", "at::cuda::blas::gemm<scalar_t>("),
      ("aten/src/ATen/cuda/CUDABlas.cpp:816", "TORCH_CUDABLAS_CHECK(cublasSgemm(")]),
    ("What is the backward formula nn.LSTM uses on CUDA?",
     ['grep -n "name:.*lstm" tools/autograd/derivatives.yaml'],
     ("trace", {"name": "nn.LSTM"}),
     [("tools/autograd/derivatives.yaml:2707", "- name: _cudnn_rnn(Tensor input, Tensor[] weight")]),
    ("Where is torch.autograd.Function defined?",
     ['grep -rn "class.*Function.*autograd" torch/autograd/'],
     ("find", {"name": "Function", "kind": "class", "layer": "python"}),
     [("torch/autograd/function.py:463", "class Function(_SingleLevelFunction):")]),
    ("What is layer_norm's backward formula?",
     ['grep -n "name:.*layer_norm" tools/autograd/derivatives.yaml'],
     ("trace", {"name": "F.layer_norm"}),
     [("tools/autograd/derivatives.yaml:1224", "- name: native_layer_norm(Tensor input")]),
    ("Where is the LayerNormKernel stub declared, and what does CUDA register for it?",
     ['grep -rn "DECLARE_DISPATCH.*LayerNormKernel" aten/src/ATen/native/',
      'grep -rn "REGISTER_DISPATCH(LayerNormKernel" aten/src/ATen/native/'],
     ("stub", {"name": "LayerNormKernel"}),
     [("aten/src/ATen/native/layer_norm.h:103", "DECLARE_DISPATCH(forward_fn, LayerNormKernel);"),
      ("aten/src/ATen/native/cuda/layer_norm_kernel.cu:1703",
       "REGISTER_DISPATCH(LayerNormKernel, &LayerNormKernelImpl);")]),
    ("Which kernels can F.layer_norm launch on CUDA?",
     ['grep -n "<<<" aten/src/ATen/native/cuda/layer_norm_kernel.cu',
      'grep -n "__global__" aten/src/ATen/native/cuda/layer_norm_kernel.cu'],
     ("kernels", {"op": "F.layer_norm"}),
     [("aten/src/ATen/native/cuda/layer_norm_kernel.cu:782", "vectorized_layer_norm_kernel<<<blocks, threads"),
      ("aten/src/ATen/native/cuda/layer_norm_kernel.cu:895", "LayerNormForwardCUDAKernel<T, T_ACC><<<M"),
      ("aten/src/ATen/native/cuda/layer_norm_kernel.cu:807", "vectorized_layer_norm_kernel_opt_wave1<vec_maca><<<")]),
    ("Where is mm's structured CUDA kernel (TORCH_IMPL_FUNC)?",
     ['grep -rn "TORCH_IMPL_FUNC(mm" aten/src/ATen/native/'],
     ("trace", {"name": "torch.mm"}),
     [("aten/src/ATen/native/cuda/Blas.cpp:527", "TORCH_IMPL_FUNC(mm_out_cuda)")]),
    ("Which CPU and CUDA kernels does cumsum_stub register?",
     ['grep -rn "cumsum_stub" aten/src/ATen/native/'],
     ("stub", {"name": "cumsum_stub"}),
     [("aten/src/ATen/native/cpu/ReduceOpsKernel.cpp:453", "REGISTER_DISPATCH(cumsum_stub, &cumsum_cpu_kernel);"),
      ("aten/src/ATen/native/cuda/ScanKernels.cpp:112", "REGISTER_CUDA_DISPATCH(cumsum_stub, &cumsum_cuda_kernel);")]),
    # a 64x1024 float32 input over its last dim: inner_size == 1 and dim_size <= 1024 (SoftMax.cu:711, :719), so
    # host_softmax's persistent dispatch (:725), whose kernel is the fork's softmax_warp_forward_opt2_nd
    ("Which __global__ kernel does F.softmax launch on CUDA for a 64x1024 float32 input over its last dim?",
     ['grep -n "<<<" aten/src/ATen/native/cuda/SoftMax.cu',
      'grep -n "__global__" aten/src/ATen/native/cuda/SoftMax.cu'],
     ("trace", {"name": "F.softmax(torch.randn(64, 1024), dim=-1)"}),
     [("aten/src/ATen/native/cuda/SoftMax.cu:725", "dispatch_softmax_forward<scalar_t, scalar_t, accscalar_t,"),
      ("aten/src/ATen/native/cuda/maca_kernels/PersistentSoftmax_maca.cuh:74",
       "__global__ void softmax_warp_forward_opt2_nd")]),
    ("What does torch.ops.aten.mm.out dispatch to on CUDA?",
     ['grep -n "func: mm" aten/src/ATen/native/native_functions.yaml'],
     ("op", {"name": "mm.out"}),
     [("aten/src/ATen/native/native_functions.yaml:4107", "- func: mm.out(Tensor self, Tensor mat2"),
      ("aten/src/ATen/native/native_functions.yaml:4111", "CUDA: mm_out_cuda")]),
    ("Where is F.relu, and which op does it call?",
     ['grep -n "def relu" torch/nn/functional.py'],
     ("trace", {"name": "F.relu"}),
     [("torch/nn/functional.py:1489", "def relu(input: Tensor, inplace: bool = False) -> Tensor:"),
      ("torch/nn/functional.py:1500", "result = torch.relu(input)")]),
    ("Which dispatch rows does relu have?",
     ['grep -n "func:.*relu" aten/src/ATen/native/native_functions.yaml'],
     ("op", {"name": "relu"}),
     [("aten/src/ATen/native/native_functions.yaml:4979", "- func: relu(Tensor self) -> Tensor"),
      ("aten/src/ATen/native/native_functions.yaml:4983", "CPU, CUDA: relu")]),
    ("Which _VF functions does torch/nn/modules/rnn.py call?",
     [r'grep -n "_VF\." torch/nn/modules/rnn.py'],
     ("sql", {"query": "SELECT callee, file || ':' || line AS at FROM calls WHERE file = :f AND qualifier = '_VF' "
                       "ORDER BY line", "params": {"f": "torch/nn/modules/rnn.py"}}),
     [("torch/nn/modules/rnn.py:917", "_VF.lstm("), ("torch/nn/modules/rnn.py:1139", "_VF.gru(")]),
    ("Where is layer_norm's RowwiseMoments CUDA kernel?",
     ['grep -rn "RowwiseMomentsCUDAKernel" aten/src/ATen/native/cuda/'],
     ("find", {"name": "RowwiseMomentsCUDAKernel"}),
     [("aten/src/ATen/native/cuda/layer_norm_kernel.cu:62", "__global__ void RowwiseMomentsCUDAKernel(")]),
    ("Which op and Python surface launch the kernel lstm_cell_forward (bottom-up)?",
     ['grep -rn "lstm_cell_forward" aten/src/ATen/native/cuda/',
      'grep -n "func: _thnn_fused_lstm_cell" aten/src/ATen/native/native_functions.yaml'],
     ("trace", {"name": "lstm_cell_forward"}),
     [("aten/src/ATen/native/cuda/RNN.cu:394", "kernel::lstm_cell_forward<scalar_t, accscalar_t, index_type, 1>"),
      ("aten/src/ATen/native/native_functions.yaml:7753", "- func: _thnn_fused_lstm_cell(")]),
    ("Where in the source is the training step's largest GPU kernel (RNN_blockPersist_fp_LSTM) called?",
     ['grep -rn "cudnnRNNForward" aten/src/ATen/native/cudnn/'],
     ("profile", {"path": str(REPO / "tests" / "data" / "train_step_h200_torch2.11.json.gz"), "limit": 5}),
     [("aten/src/ATen/native/cudnn/RNN.cpp:1596", "AT_CUDNN_CHECK(cudnnRNNForward(")]),
]


def server(db: str):
    from mcp import StdioServerParameters
    return StdioServerParameters(command=sys.executable, args=["-m", "opindex", "mcp", "--db", db], cwd=str(REPO))


async def ask_all(db: str) -> list[dict]:
    from mcp import Client
    out = []
    async with Client(server(db)) as client:
        for question, greps, (tool, arguments), expected in QUESTIONS:
            r = await client.call_tool(tool, arguments)
            text = "".join(c.text for c in r.content if c.type == "text")
            data = json.dumps(r.structured_content, separators=(",", ":"), ensure_ascii=False)
            out.append({"question": question, "tool": tool, "arguments": arguments, "error": r.is_error,
                        "text": text, "json": data, "answer_chars": len(text), "json_chars": len(data)})
    return out


def source_holds(tree: Path, where: str, text: str) -> bool:
    file, _, line = where.rpartition(":")
    lines = (tree / file).read_text(encoding="utf-8", errors="replace").splitlines()
    return int(line) <= len(lines) and text in lines[int(line) - 1]


def grep_chars(tree: Path, greps: list[str]) -> int:
    return sum(len(subprocess.run(["bash", "-c", g], cwd=tree, capture_output=True, text=True).stdout)
               for g in greps)


# the baseline started side by side: the same SDK's low-level server over stdio with one tool that echoes, and no
# index: what any server on this SDK costs to start and answer (the SDK's import is most of it)
BASELINE = """
import anyio, mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
async def tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])
async def call(ctx, params):
    return types.CallToolResult(content=[types.TextContent(text=str(params.arguments))])
server = Server("baseline", on_list_tools=tools, on_call_tool=call)
async def run():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
anyio.run(run)
"""


async def first_answer(params, tool: str, arguments: dict) -> tuple[float, float]:
    """Seconds from spawning the server to the first tool call's answer (the handshake in between), and the CPU
    seconds the server process used from its start to its exit after that answer (what a machine with a free core
    needs: the wall time here depends on the load)."""
    import resource
    from mcp import Client
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    async with Client(params) as client:
        r = await client.call_tool(tool, arguments)
        dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert not r.is_error, r.content
    return dt, (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)


def starts(db: str, n: int) -> dict:
    """n rounds, each starting the baseline and opindex's server (a lookup, then a trace) side by side."""
    import anyio
    from mcp import StdioServerParameters
    baseline = StdioServerParameters(command=sys.executable, args=["-c", BASELINE], cwd=str(REPO))
    runs = {"baseline echo": [], "opindex op lstm": [], "opindex trace nn.LSTM": []}
    for _ in range(n):
        runs["baseline echo"].append(anyio.run(first_answer, baseline, "echo", {"x": 1}))
        runs["opindex op lstm"].append(anyio.run(first_answer, server(db), "op", {"name": "lstm"}))
        runs["opindex trace nn.LSTM"].append(anyio.run(first_answer, server(db), "trace", {"name": "nn.LSTM"}))
    return runs


def main(argv=None) -> int:
    import anyio
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="the index of the PyTorch 2.4 tree")
    ap.add_argument("--tree", default=None, help="the checkout (default: the index's checkout root)")
    ap.add_argument("--starts", type=int, default=5, help="fresh servers timed to their first answer")
    ap.add_argument("--json", default=None, help="write every answer and figure here")
    args = ap.parse_args(argv)
    from opindex.api import Index
    with Index(args.db) as ix:
        tree = Path(args.tree or ix.meta["checkout_root"])
    results = []
    anyio.run(lambda: _collect(args.db, results))
    right = 0
    print(f"{'#':>2} {'ok':<3} {'answer':>7} {'json':>7} {'grep':>8}  question")
    for i, (r, (question, greps, _, expected)) in enumerate(zip(results, QUESTIONS), 1):
        r["expected"] = expected
        r["missing"] = [w for w, _ in expected if w not in r["text"] and f'"{w}"' not in r["json"]]
        r["source_differs"] = [w for w, t in expected if not source_holds(tree, w, t)]
        r["right"] = not (r["error"] or r["missing"] or r["source_differs"])
        r["grep_chars"] = grep_chars(tree, greps)
        r["greps"] = greps
        right += r["right"]
        print(f"{i:>2} {'yes' if r['right'] else 'NO':<3} {r['answer_chars']:>7,} {r['json_chars']:>7,} "
              f"{r['grep_chars']:>8,}  {question} ({r['tool']})"
              + (f"  missing {r['missing']}" if r["missing"] else "")
              + (f"  source differs at {r['source_differs']}" if r["source_differs"] else ""))
    med = {k: statistics.median(r[k] for r in results) for k in ("answer_chars", "json_chars", "grep_chars")}
    print(f"\nanswered right: {right} of {len(results)}")
    print(f"median characters: answer text {med['answer_chars']:,.0f} (target <= 4,000), structured JSON "
          f"{med['json_chars']:,.0f}, grep output {med['grep_chars']:,.0f}")
    print(f"largest answer: {max(r['answer_chars'] for r in results):,} text, "
          f"{max(r['json_chars'] for r in results):,} JSON; grep output total "
          f"{sum(r['grep_chars'] for r in results):,}, answers total {sum(r['answer_chars'] for r in results):,}")
    load = os.getloadavg()[0]
    runs = starts(args.db, args.starts)
    base_wall = statistics.median(w for w, _ in runs["baseline echo"])
    base_cpu = statistics.median(c for _, c in runs["baseline echo"])
    print(f"\nserver start to first answer, {args.starts} rounds side by side (median; min-max wall):")
    for label, times in runs.items():
        wall, cpu = statistics.median(w for w, _ in times), statistics.median(c for _, c in times)
        print(f"  {label:<22} wall {wall:.3f} s ({min(w for w, _ in times):.3f}-{max(w for w, _ in times):.3f}), "
              f"{wall / base_wall:.2f}x the baseline; server CPU {cpu:.3f} s, {cpu / base_cpu:.2f}x the baseline")
    print("  target <= 0.5 s")
    print(f"load average (1 min) before the starts: {load:.2f}, after: {os.getloadavg()[0]:.2f}, on "
          f"{os.cpu_count()} CPUs")
    if args.json:
        Path(args.json).write_text(json.dumps({"questions": results, "medians": med, "right": right,
                                               "starts": runs}, indent=1))
    return 0 if right == len(results) else 1


async def _collect(db: str, out: list) -> None:
    out += await ask_all(db)


if __name__ == "__main__":
    sys.exit(main())
