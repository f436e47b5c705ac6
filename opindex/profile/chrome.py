"""Read a torch.profiler Chrome trace (.json / .json.gz) or a plain list of kernel names, and tie every GPU kernel
to the CPU-side op that launched it.

The trace has no parent links, so the tie is rebuilt the way the profiler's own viewers do it: a kernel event
carries the "correlation" id of its cudaLaunchKernel / cuLaunchKernel event (cat cuda_runtime / cuda_driver); that
launch happened on one CPU thread at one instant, and the cpu_op events of that thread whose [ts, ts+dur] span that
instant are the ops on the stack at launch time (outermost first). "External id" is the fallback when a kernel has
no correlation (older traces): it equals the External id of the innermost op."""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..model import OpindexError
from .reading import MAX_SIZE_MB, args_of, read_bounded, scalar_field, text_field

# GPU activity categories; gpu_user_annotation spans (Optimizer.step#AdamW.step drawn on the GPU row) are not time
# of their own (the kernels under them are counted), so they are left out of the total.
KERNEL_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "runtime", "driver"}  # "runtime"/"driver": older kineto names
CPU_CATS = {"cpu_op", "operator", "user_annotation", "python_function"}
_VERSION_RE = re.compile(r"torch[-_]?v?(\d+\.\d+(?:\.\d+)?)")


@dataclass
class KernelGroup:
    """One kernel name of the profile, all its launches together."""
    name: str
    kind: str = "kernel"                 # kernel, memcpy, memset (the trace's category)
    calls: int = 0
    total_us: float = 0.0
    share: float = 0.0                   # of the profile's total GPU time (kernels + memcpy + memset)
    ops: Counter = field(default_factory=Counter)         # outermost aten:: op at launch -> calls
    inner_ops: Counter = field(default_factory=Counter)   # innermost aten:: op at launch -> calls
    scopes: Counter = field(default_factory=Counter)      # outermost non-aten CPU span (autograd node, Optimizer.step)
    python: Counter = field(default_factory=Counter)      # innermost Python source frame (file.py(line): name)
    modules: Counter = field(default_factory=Counter)     # innermost nn.Module span (with_modules=True)
    # (innermost aten:: op, its recorded inputs as JSON: Input Dims, Input type, Concrete Inputs) -> calls, where
    # the profile was recorded with shapes (record_shapes=True)
    inner_calls: Counter = field(default_factory=Counter)

    @property
    def op(self) -> str | None:
        """The outermost aten op that launched most of this kernel's calls."""
        return self.ops.most_common(1)[0][0] if self.ops else None

    @property
    def inner_op(self) -> str | None:
        return self.inner_ops.most_common(1)[0][0] if self.inner_ops else None


@dataclass
class Profile:
    path: str
    format: str                          # chrome or list
    kernels: list[KernelGroup]           # sorted by GPU time, largest first
    total_us: float
    torch_version: str | None            # from the trace metadata, else from the file name, else None
    version_source: str | None           # where torch_version came from
    unlinked: int = 0                    # kernel launches no CPU op could be tied to
    skipped: int = 0                     # events whose fields have other types than the profiler writes


def read_profile(path: str | Path, max_mb: float | None = MAX_SIZE_MB) -> Profile:
    """A Chrome trace (JSON object with traceEvents, or a bare event list) or a text file of kernel names, at most
    `max_mb` MB after gunzip (None or 0: no limit). Whatever the bytes, an error is one OpindexError line."""
    path = Path(path)
    raw = read_bounded(path, max_mb)
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")  # a BOM: some editors write one
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OpindexError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise OpindexError(f"{path}: JSON nested deeper than Python's JSON reader follows (about 1,000 "
                               f"levels); a profiler trace nests 4") from None
        return _from_chrome(path, data)
    return _from_list(path, text)


def _from_list(path: Path, text: str) -> Profile:
    """One kernel name a line (what Nsight Systems / ncu tables copy out); '#' lines and blanks are skipped. No
    times: every distinct name is one row with its count of lines."""
    groups: dict[str, KernelGroup] = {}
    for line in text.splitlines():
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        g = groups.setdefault(name, KernelGroup(name))
        g.calls += 1
    return Profile(str(path), "list", list(groups.values()), 0.0, *_version_from_name(path))


def _version_from_name(path: Path) -> tuple[str | None, str | None]:
    m = _VERSION_RE.search(path.name)
    return (m.group(1), "file name") if m else (None, None)


def _trace_version(data: dict) -> str | None:
    """Newer kineto writes the PyTorch version into the trace's top level or its distributed/trace metadata."""
    for key in ("pytorch_version", "torch_version", "pytorchVersion"):
        v = data.get(key)
        if isinstance(v, str):
            return v
    for meta_key in ("metadata", "traceMetadata", "distributedInfo"):
        meta = data.get(meta_key)
        if isinstance(meta, dict):
            for key in ("pytorch_version", "torch_version"):
                if isinstance(meta.get(key), str):
                    return meta[key]
    return None


def _from_chrome(path: Path, data) -> Profile:
    if isinstance(data, list):
        events, top = data, {}
    elif isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        events, top = data["traceEvents"], data
    else:
        raise OpindexError(f"{path}: a JSON file but not a Chrome trace (no traceEvents list)")
    version = _trace_version(top)
    version_source = "trace metadata" if version else None
    if not version:
        version, version_source = _version_from_name(path)

    gpu, launches_by_corr, launches_by_ext = [], {}, {}
    spans = defaultdict(list)            # (pid, tid) -> [(ts, end, name, cat)]
    skipped = 0
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat, name = text_field(e, "cat"), text_field(e, "name")
        if cat is None or (name is None and "name" in e):  # another type than the profiler writes: not guessed at
            skipped += 1
            continue
        args = args_of(e)
        if cat in KERNEL_CATS:
            gpu.append(e)
        elif cat in LAUNCH_CATS:
            corr = scalar_field(args.get("correlation"))
            if corr is not None:
                launches_by_corr[corr] = e
            ext = scalar_field(args.get("External id"))
            if ext is not None:
                launches_by_ext.setdefault(ext, e)
        elif cat in CPU_CATS:
            ts = _num(e.get("ts"))
            if ts is None:
                continue
            spans[_thread(e)].append((ts, ts + (_num(e.get("dur")) or 0.0), name or "", cat, _inputs(args)))

    # Each kernel's launch, then every launch's CPU stack in one sweep per thread.
    linked = []
    unlinked = 0
    for e in gpu:
        args = args_of(e)
        launch = (launches_by_corr.get(scalar_field(args.get("correlation")))
                  or launches_by_ext.get(scalar_field(args.get("External id"))))
        linked.append(launch)
    stacks = _stacks_at(spans, [(*_thread(l), _num(l.get("ts")) or 0.0) if l else None for l in linked])
    groups: dict[str, KernelGroup] = {}
    total = 0.0
    for e, stack in zip(gpu, stacks):
        name = text_field(e, "name") or ""
        dur = _num(e.get("dur")) or 0.0
        g = groups.get(name)
        if g is None:
            g = groups[name] = KernelGroup(name, KERNEL_CATS[e["cat"]])
        g.calls += 1
        g.total_us += dur
        total += dur
        if not stack:
            unlinked += 1
            continue
        aten = [(n, i) for n, c, i in stack if n.startswith("aten::")]
        if aten:
            g.ops[aten[0][0]] += 1
            g.inner_ops[aten[-1][0]] += 1
            if aten[-1][1] is not None:
                g.inner_calls[aten[-1]] += 1
        stack = [(n, c) for n, c, _ in stack]
        other = [n for n, c in stack if c != "python_function" and not n.startswith("aten::")]
        if other:
            g.scopes[other[0]] += 1
        # with_stack=True records Python frames; the innermost one of a .py file says where the op was called
        # (builtins such as `<built-in function linear>` say less); with_modules=True adds nn.Module spans
        py = [n for n, c in stack if c == "python_function" and ".py(" in n]
        if py:
            g.python[py[-1]] += 1
        mods = [n for n, c in stack if n.startswith("nn.Module:")]
        if mods:
            g.modules[mods[-1].removeprefix("nn.Module: ")] += 1
    kernels = sorted(groups.values(), key=lambda g: (-g.total_us, g.name))
    for g in kernels:
        g.share = g.total_us / total if total else 0.0
    return Profile(str(path), "chrome", kernels, total, version, version_source, unlinked, skipped)


def _inputs(args: dict) -> str | None:
    """An op's recorded inputs (record_shapes=True), as JSON: {"dims", "types", "concrete", "strides"}; None
    without them."""
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list) or len(dims) != len(types):
        return None
    concrete = args.get("Concrete Inputs")
    concrete = concrete if isinstance(concrete, list) and len(concrete) == len(dims) else [""] * len(dims)
    strides = args.get("Input Strides")
    strides = strides if isinstance(strides, list) and len(strides) == len(dims) else [None] * len(dims)
    return json.dumps({"dims": dims, "types": types, "concrete": concrete, "strides": strides},
                      separators=(",", ":"))


def _thread(e: dict) -> tuple:
    return scalar_field(e.get("pid")), scalar_field(e.get("tid"))


def _num(v) -> float | None:
    """A time or duration: a number, or a string of one (older traces); nan and inf are no time."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        f = float(v)
    except (ValueError, OverflowError):
        return None
    return f if f == f and abs(f) != float("inf") else None


def _stacks_at(spans, points) -> list[list[tuple[str, str]]]:
    """For each point (pid, tid, t) or None, the CPU spans open on that thread at t, outermost first.

    Profiler spans nest, so one sweep per thread in time order with a stack answers every point: a span is pushed
    when it starts, and popped once a later start or point lies past its end. Sorting is the only non-linear step,
    so a trace with a million events is still fast (bisecting per point would rescan long spans)."""
    out: list[list[tuple[str, str]]] = [[] for _ in points]
    by_thread = defaultdict(list)
    for i, p in enumerate(points):
        if p is not None:
            by_thread[(p[0], p[1])].append((p[2], i))
    for key, pts in by_thread.items():
        items = sorted(spans.get(key, ()), key=lambda s: (s[0], -s[1]))
        pts.sort()
        stack, j = [], 0
        for t, i in pts:
            while j < len(items) and items[j][0] <= t:
                start = items[j][0]
                while stack and stack[-1][1] < start:
                    stack.pop()
                stack.append(items[j])
                j += 1
            while stack and stack[-1][1] < t:
                stack.pop()
            # a span that ended before t can sit under one still open only if the trace is not properly nested;
            # filter rather than trust the order
            out[i] = [(s[2], s[3], s[4]) for s in stack if s[1] >= t]
    return out
