#!/usr/bin/env python3
"""List the GPU kernels an installed torch build contains (issue 28: which runtime calls a tree can be scored on).

Runs on a machine with a CUDA build of torch and the CUDA toolkit's cuobjdump (no GPU or opindex needed):
    python benchmarks/kernel_names.py OUT.json

Every entry function (a `__global__`'s STO_ENTRY symbol) of the fat binaries in torch/lib/*.so is demangled and
reduced to its bare name (the last `::` part, template arguments and parameters dropped, as
opindex.trace.model.bare_name reduces a hop). OUT.json holds the torch/CUDA versions, the libraries read, and the
sorted set of bare names.  benchmarks/runtime_calls.py reads it: a trace that ends at a kernel of the tree which
the profiled build does not contain is a version difference, stated and not scored.
"""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys

_ENTRY = re.compile(r"STO_ENTRY\s+(\S+)")


def entries(library: str) -> set[str]:
    """The mangled names of the kernels in one library's fat binaries (empty where it has none)."""
    run = subprocess.run(["cuobjdump", "-symbols", library], capture_output=True, text=True)
    return {m.group(1) for m in _ENTRY.finditer(run.stdout)}


def demangle(names: list[str]) -> list[str]:
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    run = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, check=True)
    return run.stdout.splitlines()


def strip_brackets(text: str, open_: str, close: str) -> str:
    """`text` without any `open_ ... close` group, nested ones included."""
    out, depth = [], 0
    for ch in text:
        if ch == open_:
            depth += 1
        elif ch == close and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def bare(demangled: str) -> str:
    """`void at::native::(anonymous namespace)::f<float, 4>(int, float*)` -> `f`."""
    text = demangled.replace("(anonymous namespace)", "anon")
    text = strip_brackets(strip_brackets(text, "(", ")"), "<", ">")
    return text.split()[-1].rpartition("::")[2] if text.split() else demangled


def main() -> None:
    import torch

    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    mangled: dict[str, set[str]] = {}
    for path in sorted(glob.glob(os.path.join(lib, "*.so*"))):
        names = entries(path)
        if names:
            mangled[os.path.basename(path)] = names
            print(f"{os.path.basename(path)}: {len(names)} kernels", file=sys.stderr)
    everything = sorted(set().union(*mangled.values())) if mangled else []
    names = sorted({bare(d) for d in demangle(everything)}) if everything else []
    json.dump({"torch": torch.__version__, "cuda": torch.version.cuda,
               "libraries": {k: len(v) for k, v in mangled.items()},
               "kernels": len(everything), "bare_names": names}, open(sys.argv[1], "w"), indent=0)
    print(f"{len(everything)} kernels, {len(names)} bare names", file=sys.stderr)


if __name__ == "__main__":
    main()
