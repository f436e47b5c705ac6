"""A trace as text: the chain as an ASCII flow diagram, the full tree, each hop with source, a summary table."""
from __future__ import annotations

from ..trace.model import Hop, Trace
from .source import snippet


def render(t: Trace, context: int = 2, full: bool = False) -> str:
    """The text trace. The TensorIterator machinery under each launcher call (gpu_kernel -> gpu_kernel_impl ->
    launch_vectorized_kernel -> <<<vectorized_elementwise_kernel>>>) is the same for every op: folded to one line
    unless `full`; the JSON always has every hop."""
    if not t.hops:
        lines = [t.message or f"nothing found for {t.query!r}"]
        lines += [f"  {c}" for c in t.candidates]
        return "\n".join(lines) + "\n"
    out = [f"opindex trace {t.query}   ({'bottom-up' if t.direction == 'up' else 'top-down'}, device "
           f"{t.device}, depth {t.depth})", ""]
    if t.message and not t.truncated:  # e.g. how a kernel name was read
        out += [f"note: {t.message}", ""]
    hidden = {} if full else machinery(t)
    out += ["Chain", ""] + flow(t) + [""]
    out += ["Tree", ""] + tree(t, hidden) + [""]
    absent = [h for h in t.hops if h.absent and h.id not in hidden]
    if absent:
        out += ["Absent in this checkout", ""] + [f"  - {h.name}" for h in absent] + [""]
    if context > 0:
        out += ["Layers", ""] + layers(t, context, hidden) + [""]
    out += ["Summary", ""] + summary(t, hidden)
    if hidden:
        out += ["", f"{len(hidden)} hops of shared TensorIterator launch machinery folded (--full shows them)"]
    if t.truncated:
        out += ["", f"TRUNCATED: {t.truncated['reason']}"]
    return "\n".join(out) + "\n"


def _path(t: Trace, hop: Hop) -> list[Hop]:
    path = [hop]
    while path[-1].parent is not None:
        path.append(t.hops[path[-1].parent])
    return path[::-1]


_TAIL_LAYERS = ("backward", "decomposition", "codegen")


def main_chain(t: Trace) -> list[Hop]:
    """Root to the first device end (launch/library call) top-down, or to the first Python surface bottom-up;
    without one, to the deepest hop on the forward path (backward/decomposition/codegen are side branches)."""
    if t.direction == "down":
        ends = t.ends()
    else:
        ends = [h for h in t.hops if h.layer in ("python", "bridge") and not h.absent]
    if ends:
        return _path(t, ends[0])
    pool = [h for h in t.hops if not h.absent and h.layer not in _TAIL_LAYERS] or t.hops
    return _path(t, max(pool, key=lambda h: (len(_path(t, h)), -h.id)))


def flow(t: Trace) -> list[str]:
    chain = main_chain(t)
    width = max(len(_box(h)) for h in chain)
    out = []
    for i, h in enumerate(chain):
        label = _box(h)
        out.append(f"  +{'-' * (width + 2)}+")
        out.append(f"  | {label.ljust(width)} |  {_where(h)}")
        out.append(f"  +{'-' * (width + 2)}+")
        if i < len(chain) - 1:
            out += [f"  {' ' * (width // 2 + 2)}|", f"  {' ' * (width // 2 + 2)}v"]
    return out


def _box(h: Hop) -> str:
    name = h.name if len(h.name) <= 70 else h.name[:67] + "..."
    return f"[{h.layer}] {name}"


def _where(h: Hop) -> str:
    return f"{h.file}:{h.line}" if h.file and h.line else ""


def machinery(t: Trace) -> dict[int, int]:
    """Hops below a TensorIterator launch hop (its launchers, their launches and __global__ kernels): hop id ->
    the launch hop it folds into."""
    hidden: dict[int, int] = {}
    for h in t.hops:  # parents come before children
        if h.parent is not None and h.parent in hidden:
            hidden[h.id] = hidden[h.parent]
        elif h.parent is not None and t.hops[h.parent].kind == "tensor_iterator" and h.parent not in hidden:
            hidden[h.id] = h.parent
    return hidden


def _folded(t: Trace, launch: Hop, hidden: dict[int, int]) -> str:
    below = [t.hops[i] for i, top in hidden.items() if top == launch.id]
    launchers = [n for n in dict.fromkeys(h.name.split("::")[-1] for h in below if h.kind == "launcher")
                 if n != launch.name]
    kernels = list(dict.fromkeys(h.name.removeprefix("__global__ ").split("::")[-1] for h in below
                                 if h.kind == "global_kernel"))
    text = " -> ".join([launch.name] + launchers[:4] + (["..."] if len(launchers) > 4 else []))
    if kernels:
        text += " -> __global__ " + ", ".join(kernels[:4]) + (", ..." if len(kernels) > 4 else "")
    return f"TensorIterator launch: {text} ({len(below)} hops folded)"


def tree(t: Trace, hidden: dict[int, int] | None = None) -> list[str]:
    out: list[str] = []
    hidden = hidden or {}

    def walk(hop: Hop, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        mark = "✗ " if hop.absent else ""
        where = f"  {_where(hop)}" if _where(hop) and hop.name != hop.file else ""
        folds = any(top_id == hop.id for top_id in hidden.values()) if hidden else False
        name = _folded(t, hop, hidden) if folds else hop.name
        out.append(f"  {prefix}{branch}{mark}[{hop.layer}] {name}{where}")
        kids = [k for k in t.children(hop.id) if k.id not in hidden]
        child_prefix = prefix if top else prefix + ("   " if last else "│  ")
        for i, k in enumerate(kids):
            walk(k, child_prefix, i == len(kids) - 1, False)

    for r in t.roots():
        walk(r, "", True, True)
    return out


def layers(t: Trace, context: int, hidden: dict[int, int] | None = None) -> list[str]:
    out = []
    for h in t.hops:
        if h.absent or not h.file or not h.line or h.id in (hidden or {}):
            continue
        out.append(f"  [{h.layer}] {h.name} — {h.file}:{h.line}")
        if h.detail:
            out.append(f"      {h.detail}")
        out += [f"    {s}" for s in snippet(t.root, h.file, h.line, 0, context)]
        out.append("")
    return out


def summary(t: Trace, hidden: dict[int, int] | None = None) -> list[str]:
    rows = [(h.layer, _where(h), h.name) for h in t.hops if not h.absent and h.file and h.id not in (hidden or {})]
    if not rows:
        return ["  (no located hops)"]
    w0 = max(len("layer"), *(len(r[0]) for r in rows))
    w1 = max(len("file"), *(len(r[1]) for r in rows))
    out = [f"  {'layer'.ljust(w0)}  {'file'.ljust(w1)}  function", f"  {'-' * w0}  {'-' * w1}  {'-' * 8}"]
    out += [f"  {a.ljust(w0)}  {b.ljust(w1)}  {c}" for a, b, c in rows]
    return out
