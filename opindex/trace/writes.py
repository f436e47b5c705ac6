"""writes: the fill and copy ops a kernel calls besides (or as) its work, each shown by the default path of that op
down to its kernel, and one hop naming the other device code the op can run (walk/sites.py CallSiteWalk.write_call).

A path is walked once per open index (facts.Resident) and kept between processes (cache.py): nll_loss_backward's
grad_input.zero_() and every `.contiguous()` of a trace share aten::zero_'s and aten::copy_'s (copy_ alone is
~1,100 hops)."""
from __future__ import annotations

from . import facts as q
from .model import DEVICE_LAYERS, Hop, Trace
from .rank import switch

MAX_OTHER_KERNELS = 20  # kernels named on a fill/copy path's "other device code" hop (the count is always said)


def write_path(con, entries: list[dict], device: str, walk, build_key: str = "") -> list[tuple[int, Hop]]:
    """The default path of a fill/copy op on `device` (aten::zero_ -> fill_kernel_cuda -> vectorized_elementwise_
    kernel), below its entry hop: walked once per open index, as the Resident facts are (the index does not change
    under a connection) and kept between processes (cache.py), since many kernels zero or copy a tensor. `walk(con,
    trace, entries)` walks the op down into a trace (walk.Walker.walk_entries). A build the user stated
    (`build_key`, its settings) keeps its paths in this process only: the cache file holds the default build's."""
    cache, walking = q.resident(con).write_paths, q.resident(con).write_walking
    key = (tuple(e["id"] for e in entries), device) + ((build_key,) if build_key else ())
    if key in cache.paths:
        return cache.paths[key]
    if key in walking:  # a write inside its own path (copy_ -> ... -> copy_): nothing more to show there; what
        for k in list(walking)[list(walking).index(key) + 1:]:  # is walked inside it now lacks it: not kept
            walking[k] = False
        return []
    walking[key] = True
    try:
        path, others = _write_path(con, entries, device, walk)
    finally:
        keep = walking.pop(key)
    if keep and build_key:
        cache.paths[key] = path
    elif keep:
        cache.put(key, path, (entries[0]["name"], device), others)
    return path


def _write_path(con, entries: list[dict], device: str, walk) -> tuple[list[tuple[int, Hop]], list[str]]:
    """write_path's walk: (hops, each with the index of its parent in the list or -1), and the other kernels."""
    t = Trace(query=f"aten::{entries[0]['name']}", direction="down", device=device, depth=1)
    walk(con, t, entries)
    chain = t.main_chain()
    stop = switch(t)
    if stop is not None:  # a copy of views: its launcher's ways by ndim, none taken (rank._stop_at_switch); each
        # way down to its first kernel only (the fork's copy launcher has 27 ways, ~280 hops below them)
        ends = {h.id for h in t.ends()}
        below = {a.id for w in stop["ways"] for e in [_first_end(t, t.hops[w], ends)] if e is not None
                 for a in t.path(t.hops[e])[len(chain):]}
        chain = chain + [h for h in t.hops if h.id in below]
    else:
        devices = [i for i, h in enumerate(chain) if h.layer in DEVICE_LAYERS and not h.absent]
        chain = chain[:devices[-1] + 1] if devices else []
        # from a TensorIterator launch on, its whole subtree: the launcher picks the kernel at run time
        # (vectorized_elementwise_kernel, or the nullary one for large outputs), as in the op's own trace
        machinery = next((i for i, h in enumerate(chain) if h.kind == "tensor_iterator"), None)
        if machinery is not None:
            chain = chain[:machinery] + _subtree(t, chain[machinery])
    # the "other device code" of a fill/copy on the path (clone's copy_) stays under that op's entry
    on = {h.id for h in chain}
    chain += [h for h in t.hops if h.kind == "other_kernels" and h.parent in on]
    at = {h.id: i for i, h in enumerate(chain)}
    path = [(at.get(h.parent, i - 1) if i else -1, h) for i, h in enumerate(chain)]
    others = _other_kernels(t, chain, q.resident(con).write_paths.others)
    if chain and others:
        shown = others[:MAX_OTHER_KERNELS]
        more = f" and {len(others) - len(shown)} more" if len(others) > len(shown) else ""
        path.append((0, Hop(-1, None, "cuda", "other_kernels", f"other device code of aten::{entries[0]['name']}"
                             f": {', '.join(shown)}{more}", detail=f"the {len(others)} __global__ kernels and "
                             f"library calls its full trace reaches besides the path above (other dtypes, "
                             f"layouts, sizes): `opindex trace aten::{entries[0]['name']}` shows where",
                             op=entries[0]["name"])))
    return path, others


def _other_kernels(t: Trace, chain: list[Hop], known: dict) -> list[str]:
    """Names of the __global__ kernels and library calls of `t` that `chain` does not show, in walk order, but those
    a fill/copy on the chain lists itself (clone's copy_; `known`: op name, device -> its list)."""
    on_path = {_kernel_name(h) for h in chain}
    for h in chain:
        if h.kind == "other_kernels":
            on_path.update(known.get((h.op, t.device), []))
    out: list[str] = []
    for h in t.hops:
        if not h.absent and (h.kind == "global_kernel" or h.layer == "library"):
            name = _kernel_name(h)
            if name not in on_path and name not in out:
                out.append(name)
    return out


def _kernel_name(h: Hop) -> str:
    return h.name.removeprefix("__global__ ").rsplit("::", 1)[-1] if h.kind == "global_kernel" else h.name


def _first_end(t: Trace, way: Hop, ends: set[int]) -> int | None:
    """The first end below `way` in walk order (hop ids grow depth first)."""
    return next((h.id for h in _subtree(t, way) if h.id in ends), None)


def _subtree(t: Trace, top: Hop) -> list[Hop]:
    """`top` and the hops below it, depth first (hop ids grow depth first)."""
    out, inside = [top], {top.id}
    for h in t.hops[top.id + 1:]:
        if h.parent not in inside:
            break
        out.append(h)
        inside.add(h.id)
    return out
