#!/usr/bin/env python3
"""More torch.profiler traces for opindex's profile tests, beside train_step_h200_torch2.11.json.gz (which
shared/fixtures/profiles/make_profile.py made). Run on a GPU machine; each trace is written gzipped.

usage: python3 make_profiles.py OUT_DIR

- bf16_step: autocast bf16 training step (embedding, transformer encoder layer, conv net with conv backward) with
  fused AdamW (FusedAdamMathFunctor) and the Python stack and modules recorded (with_stack, with_modules);
- fp16_attention: half-precision scaled_dot_product_attention (flash / memory-efficient), layer norm, softmax, gelu;
- sort_index: sort, topk, argsort, cumsum, nonzero, unique, index_select, scatter_add, gather, embedding backward;
- compiled: a torch.compile'd function (Triton kernels generated at run time) next to eager ops;
- mangled.txt: mangled __global__ names read out of libtorch_cuda.so with cuobjdump (a plain list, one a line).
Every file name carries the torch version. summary.json: torch/CUDA versions and per-trace kernel counts.
"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
dev = "cuda"
torch.manual_seed(0)
ver = torch.__version__.split("+")[0]
summary = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(),
           "traces": {}}


def record(name, fn, warmup=2, **kw):
    try:
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, **kw) as prof:
            fn()
            torch.cuda.synchronize()
        path = os.path.join(out, f"{name}_h200_torch{ver}.json")
        prof.export_chrome_trace(path)
        with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(path)
        names = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
        summary["traces"][name] = {"kernels": len(names), "bytes": os.path.getsize(path + ".gz")}
        print(name, len(names), "kernel names", os.path.getsize(path + ".gz"), "bytes gz", flush=True)
    except Exception:
        summary["traces"][name] = {"error": traceback.format_exc()[-2000:]}
        traceback.print_exc()


# -- bf16 training step with fused AdamW, Python stack and modules ---------------------------------------------
emb = nn.Embedding(5000, 256).to(dev)
enc = nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.1, batch_first=True, activation="gelu").to(dev)
conv = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1),
                     nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).to(dev)
head = nn.Linear(256, 5000).to(dev)
params = list(emb.parameters()) + list(enc.parameters()) + list(conv.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-3, fused=True)
tok = torch.randint(0, 5000, (8, 128), device=dev)
img, lab = torch.randn(16, 3, 32, 32, device=dev), torch.randint(0, 10, (16,), device=dev)


def bf16_step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        h = enc(emb(tok))
        loss = F.cross_entropy(head(h).flatten(0, 1), tok.flatten()) + F.cross_entropy(conv(img), lab)
    opt.zero_grad()
    loss.backward()
    opt.step()


record("bf16_step", bf16_step, with_stack=True, with_modules=True)

# -- half-precision attention and friends -----------------------------------------------------------------------
q, k, v = (torch.randn(4, 8, 256, 64, device=dev, dtype=torch.float16, requires_grad=True) for _ in range(3))
x = torch.randn(64, 1024, device=dev, dtype=torch.float16, requires_grad=True)
ln = nn.LayerNorm(1024).to(dev).half()


def fp16_attention():
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    y = F.gelu(ln(x)).softmax(-1)
    (o.float().sum() + y.float().sum()).backward()


record("fp16_attention", fp16_attention)

# -- sorting, indexing, embedding backward -----------------------------------------------------------------------
a = torch.randn(1 << 16, device=dev)
idx = torch.randint(0, 1 << 16, (1 << 14,), device=dev)
table = nn.Embedding(10000, 64).to(dev)
ids = torch.randint(0, 10000, (4096,), device=dev)


def sort_index():
    s, i = torch.sort(a)
    t = torch.topk(a, 100)
    g = a.index_select(0, idx) + a.gather(0, idx)
    z = torch.zeros_like(a).scatter_add_(0, idx, g)
    c = torch.cumsum(a, 0)
    nz = torch.nonzero(a > 0)
    u = torch.unique(idx)
    am = torch.argsort(idx)
    table(ids).sum().backward()
    return s, i, t, z, c, nz, u, am


record("sort_index", sort_index)

# -- a torch.compile'd function: Triton kernels generated at run time --------------------------------------------
w = torch.randn(1024, 1024, device=dev)


@torch.compile
def fused(x):
    return (torch.sin(x) * torch.cos(x) + x.exp()).sum(-1).softmax(-1)


xc = torch.randn(1024, 1024, device=dev)


def compiled():
    y = fused(xc)
    return torch.relu(xc @ w).sum() + y.sum()


record("compiled", compiled, warmup=3)

# -- mangled names of __global__ functions, as a plain list ------------------------------------------------------
try:
    libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))
    res = subprocess.run(["cuobjdump", "-symbols", libs[0]], capture_output=True, text=True, timeout=240)
    names = []
    for line in res.stdout.splitlines():
        if "STO_ENTRY" in line and "_ZN2at6native" in line:
            n = line.split()[-1]
            if n not in names:
                names.append(n)
    keep = [n for n in names if any(s in n for s in ("vectorized_elementwise_kernel", "reduce_kernel",
                                                      "multi_tensor_apply_kernel", "layer_norm", "softmax",
                                                      "max_pool", "nll_loss", "dropout", "embedding"))]
    keep = keep[:60] + names[:20]
    with open(os.path.join(out, f"mangled_torch{ver}.txt"), "w") as fh:
        fh.write("# mangled __global__ names from libtorch_cuda.so (cuobjdump -symbols), torch " + torch.__version__
                 + "\n" + "\n".join(dict.fromkeys(keep)) + "\n")
    summary["traces"]["mangled"] = {"names": len(dict.fromkeys(keep)), "entries_seen": len(names)}
    print("mangled", len(keep), "of", len(names), flush=True)
except Exception:
    summary["traces"]["mangled"] = {"error": traceback.format_exc()[-2000:]}
    traceback.print_exc()

json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
