#!/usr/bin/env python3
"""Record which GPU kernels each call of benchmarks/runtime_calls.txt really runs (issue 28's runtime truth).

Runs on a machine with a GPU and torch (no opindex needed):
    python benchmarks/runtime_record.py benchmarks/runtime_calls.txt OUT.json

For every call, the callee and each argument are evaluated first (tensors made on the GPU outside the
measurement), the call runs twice to warm up, then once under torch.profiler: OUT.json lists, per call, the
kernels launched in order (demangled names, GPU microseconds) and the outermost aten ops.  cuDNN benchmark mode is
off, so an algorithm is what the heuristics pick, not a timing race.  The header records torch, CUDA, cuDNN and
the GPU.  benchmarks/runtime_calls.py scores opindex's main chains against the file.
"""
from __future__ import annotations

import ast
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile


def read_calls(path: str) -> list[dict]:
    calls = []
    for n, line in enumerate(open(path), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        call, _, note = text.partition("  # chooses:")
        calls.append({"line": n, "call": call.strip(), "chooses": note.strip() or None})
    return calls


def split_call(text: str):
    """The callee and the argument expressions of `text`, evaluated outside the measurement."""
    node = ast.parse(text, mode="eval").body
    scope = {"torch": torch, "F": F, "nn": nn}
    if not isinstance(node, ast.Call):
        raise SystemExit(f"not a call: {text}")
    fn = eval(compile(ast.Expression(node.func), "<call>", "eval"), scope)
    args = [eval(compile(ast.Expression(a), "<arg>", "eval"), scope) for a in node.args]
    kwargs = {k.arg: eval(compile(ast.Expression(k.value), "<arg>", "eval"), scope) for k in node.keywords}
    return fn, args, kwargs


def record(call: str) -> dict:
    fn, args, kwargs = split_call(call)
    for _ in range(2):
        fn(*args, **kwargs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn(*args, **kwargs)
        torch.cuda.synchronize()
    kernels, ops = [], []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels.append({"name": e.name, "us": round(getattr(e, "device_time_total", 0.0), 2)})
        elif e.name.startswith("aten::") and e.cpu_parent is None:
            ops.append(e.name)
    return {"kernels": kernels, "ops": ops}


def main(argv: list[str]) -> int:
    src, out = argv[1], argv[2]
    torch.set_default_device("cuda")
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    rows = []
    for c in read_calls(src):
        try:
            c.update(record(c["call"]))
        except Exception as exc:                     # a call this torch rejects is recorded, not fatal
            c["error"] = f"{type(exc).__name__}: {exc}"
        rows.append(c)
        print(f"{len(c.get('kernels', [])):3} kernels  {c['call'][:90]}", flush=True)
    meta = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "device": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability())}
    json.dump({"meta": meta, "calls": rows}, open(out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
