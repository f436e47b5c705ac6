"""Which end of a trace is its main chain: what the walk left undecided, ordered (rank_end) and the best taken.

The walk shows every path the facts allow; the main chain is the one the text shows first (Trace.main_chain). This
module ranks the ends of a downward trace (__global__ kernels, launches, library calls, ufunc inner loops) by what
they are and what lies on the path to them: typed hop fields (model.Hop: found, conditions, schema, kernel), never
a phrase of a hop's detail; ends ranked alike are told apart by the source text of the body where their paths
part (trace/sequence.py). It imports nothing else of opindex but PyTorch's list of ops that only write
(pytorch/plumbing.py) and the bracket helpers of pytorch/syntax.py: model.Trace calls it, and the hops it reads are
model.Hop objects (their StrEnum fields compare equal to the words used here).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..pytorch.fix_ups import data_test_line
from ..pytorch.plumbing import WRITING_PLUMBING
from ..pytorch.syntax import closes_at_end, split_top_level
from .sequence import C_FAMILY, alternatives, built_lines, file_lines, in_sequence, may_follow, runs_after, runs_before

TAIL_LAYERS = ("backward", "decomposition", "codegen")  # side branches of an op, never its main chain
# ops whose forward is another op's backward: a transposed convolution computes a convolution's gradient of its
# input (cudnn_convolution_transpose -> cudnn_convolution_backward_input; slow_conv_transpose2d): for a traced name
# with this word a backward function on the path is its work
FORWARD_BY_BACKWARD = frozenset({"transpose", "transposed"})


def main_chain(t) -> list:
    """The default path: top-down, from the root to the device code the op really ends in; bottom-up, from the
    start to the first nn.Module surface reached, else the first Python surface. Of the ends (Trace.ends), the best
    by `rank_end`; without one, the deepest hop of the forward path (backward, decomposition and codegen hops are side branches). A hop that
    repeats one shown above (its machinery walked once, there) reaches what that one reaches: the path through it
    and on below the hop it repeats is a candidate too (_through_repeats), and then one step of the chain is no
    parent-child link but a repeat and what it repeats. When every end lies under a branch the call's inputs rule
    out (torch.clamp by name: min and max both None; a sparse constructor's checks under a setting off by default)
    the chain stops above the first such branch of the best path, and Trace.ruled_out names that hop."""
    t.__dict__.pop("_switch", None)
    if not t.hops:
        return []
    if t.direction == "down":
        every = _all_paths(t)
        paths = {h.id: every[h.id] or t.path(h) for h in t.ends()}  # each end's path, walked once here
        ends = [h for h in t.ends() if not _in_tail(t, h, paths[h.id])]
        # the deepest: a __global__, not its <<<>>> launch, the vendor call, not PyTorch's wrapper of it (unless
        # what lies below is a test's)
        inner = {a.id for h in ends if not is_test(h.file) for a in paths[h.id][:-1]}
        ends = [h for h in ends if h.id not in inner]
        if ends:
            tokens = query_tokens(t.query)
            ranked = {h.id: rank_end(t, h, tokens, paths[h.id], natural=True) for h in ends}
            through = _through_repeats(t, ends, ranked, tokens, paths)
            on_the_way = {h.id for path, _ in through for h in path[:-1]}
            candidates = [(ranked[h.id], paths[h.id]) for h in ends if h.id not in on_the_way] + [
                (key, path) for path, key in through]
            # a path through no branch the inputs rule out, and no backward function; with none, the chain stops
            # before the ruled-out branch the best path takes (Trace.ruled_out says where)
            open_ = [c for c in candidates if not c[0][2] and not c[0][1]]
            # with none open, a way only the build lacks (the inputs take it: a launcher defined under a false
            # #if) is where the chain stops, before one the inputs rule out (a complex-only branch for float32)
            pool = open_ or [c for c in candidates if not c[0][1] and _only_the_build(c[1])] or candidates
            key = min(c[0] for c in pool)
            best = _last_in_sequence(t, [path for k, path in pool if k == key],
                                     [path for k, path in pool if _computes_alike(k, key)])
            if open_:
                return _stop_at_switch(t, _on_below_repeats(t, best, ends, tokens, paths))
            i = next((i for i, h in enumerate(best) if h.not_default), None)
            if i:
                t.__dict__["_ruled_out"] = best[i]
                return best[:i]
            return best
    else:
        ends = [h for h in t.hops if h.layer in ("python", "bridge") and not h.absent]
        # a surface reached only through code this build does not compile (a launch under a false #if) comes last
        built = [h for h in ends if not any(a.not_default for a in t.path(h))]
        ends = built + [h for h in ends if h not in built]
        # an nn.Module (its forward calls the functional) is the surface most code reaches the op through
        modules = [h for h in built if h.layer == "python" and h.kind == "module"]
        if modules or ends:
            return t.path((modules or ends)[0])
    pool = [h for h in t.hops if not h.absent and h.layer not in TAIL_LAYERS and not _in_tail(t, h)
            and h.kind != "helper"] or t.hops  # (a helper leaf leads nowhere: never the path's end)
    # the deepest on the default path: not below a branch the inputs rule out (mT's `if (... is_complex())`
    # conj); a chain that must pass one stops above it, and says so
    clean = [h for h in pool if not any(a.not_default for a in t.path(h))]
    deepest = lambda hops: t.path(max(hops, key=lambda h: (len(t.path(h)), -h.id)))  # noqa: E731
    best = deepest(clean or pool)
    i = next((i for i, h in enumerate(best) if h.not_default), None) if not clean else None
    if i:
        t.__dict__["_ruled_out"] = best[i]
        return best[:i]
    # a clean end whose every way on is ruled out (torch.clamp by name on CPU: structured_clamp_out's stubs all
    # under `if (min && max)`, `else if (max)`, `else if (min)`) stops there, as a chain to device code does
    below = [h for h in pool if h.parent == best[-1].id]
    if clean and below and all(h.not_default for h in below):
        under = [h for h in pool if best[-1] in t.path(h)[:-1]]
        work = [h for h in under if not any(a.kind == "writes" for a in t.path(h))]  # (not a fill it makes)
        t.__dict__["_ruled_out"] = deepest(work or under)[len(best)]
    return best


SWITCH_CASES = 3  # a value tested against this many numbers, by ways to as many kernels, is a switch
# the values such a switch tests: a number of dimensions (`ndim`, `iter.ndim()`, `nDims`, `self.dim()`), which the
# call's shape sets and a name trace does not know. Not a vector width (`vec_size == 4`, `vec == 2`), which the
# launcher picks from alignment: the ranking's first (the widest, for aligned tensors) stays the chain's way
SHAPE_VALUE = re.compile(r"(?i)(?:^|[.>:_\s])(?:n_?dims?|ndims?|num_?dims|dims|dimensions?)\b|\b(?:n?dim|ndimension)\(\)")


def _stop_at_switch(t, chain: list) -> list:
    """The chain, ended at the first hop whose ways the inputs leave open in a switch: SWITCH_CASES or more ways not
    ruled out test one value against as many numbers and their cases end at different kernels (the fork's launcher
    `if (ndim == 1) ... else if (ndim == 2) ...` over 40 strided kernels; a call's sizes settle it). No ranking
    picks a case of a switch: the chain stops at the hop whose body holds it, and choices() names the value, where
    it is tested and each way's device code (issue 28 point 4). A switch over ways to one kernel (`switch
    (vec_size)`: vectorized_elementwise_kernel<4>, <2>, <1>) is no choice of kernel."""
    kids = _kids_and_ends(t)[0]
    computing = {h.id for h in t.ends() if computes(h)}
    for i, above in enumerate(chain[:-1]):
        ways = [w for w in kids.get(above.id, ()) if w.layer not in TAIL_LAYERS and not w.not_default
                and _leads_to(w, kids, computing)]
        test = _switch_test(t, ways, kids, computing) if len(ways) >= SWITCH_CASES else None
        if test is not None:
            t.__dict__["_switch"] = (above.id, test, [w.id for w in ways])
            return chain[:i + 1]
    return chain


def _switch_test(t, ways: list, kids: dict, computing: set) -> dict | None:
    """The first condition of the value `ways` switch on (see _stop_at_switch), else None."""
    cases: dict[str, dict] = {}  # value -> number -> (the kernels its ways end at, the first test)
    for w in ways:
        end = _first_end(w, kids, computing, skip_ruled_out=True)
        kernel = t.hops[end].kernel or t.hops[end].name if end is not None else None
        for c in w.conditions:
            if c.assumed is not None:
                continue
            pins = _pins(c.text)  # (a test that pins several values at once is a special shape, rank_end's 7)
            for value, number in pins if len(pins) == 1 else ():
                ends, _ = cases.setdefault(value, {}).setdefault(number, (set(), c))
                ends.add(kernel)
    for value, numbers in cases.items():
        # each case its own kernels (maca_parallel_cat's `switch (nDims)` launches one kernel templated on it)
        kernels = {frozenset(k for k in ends if k) for ends, _ in numbers.values()}
        if len(numbers) >= SWITCH_CASES and len(kernels) >= SWITCH_CASES and SHAPE_VALUE.search(value):
            first = min((c for _, c in numbers.values()), key=lambda c: (c.file or "", c.line or 0))
            return {"value": value, "text": first.text, "file": first.file, "line": first.line,
                    "cases": len(numbers)}
    return None


def switch(t) -> dict | None:
    """Where a top-down main chain stops at a switch the inputs leave open (_stop_at_switch): {hop (the chain's
    last), value, text, file, line (the value's first test), cases, ways (hop ids)}, else None."""
    chain = t.main_chain()  # (chosen, or kept, first: it sets _switch)
    found = t.__dict__.get("_switch")
    if found is None or not chain or chain[-1].id != found[0]:
        return None
    return {"hop": found[0], **found[1], "ways": found[2]}


def _only_the_build(path: list) -> bool:
    """Every condition that rules out a hop of this path is the build's (#if, #include), none the inputs'."""
    return all(c.kind in ("#if", "#include") for h in path for c in h.conditions if c.assumed is False)


def _all_paths(t) -> list:
    """Each hop's path from its root (Trace.path), made once per trace from its parent's, in id order (a parent
    comes before its children); None for a hop whose parent comes after it. Shared lists: not to be changed."""
    key = (len(t.hops), id(t.hops[-1]) if t.hops else None)
    kept = t.__dict__.get("_paths")
    if kept is None or kept[0] != key:
        out: list = [None] * len(t.hops)
        for h in t.hops:
            if h.parent is None:
                out[h.id] = [h]
            elif h.parent < h.id and out[h.parent] is not None:
                out[h.id] = out[h.parent] + [h]
        kept = t.__dict__["_paths"] = (key, out)
    return kept[1]


def _through_repeats(t, ends: list, ranked: dict, tokens: set[str], paths: dict) -> list[tuple[list, tuple]]:
    """(path, rank) through each hop that repeats one with ends below it (a float32 `gpu_kernel(...)` call after
    the complex-only branch's, whose launcher hop repeats the first one; a stub call shown above): the path to the
    repeat, then on from the hop it repeats to its best end there, ranked as one path (this path's op, not the op
    the machinery was first walked for, decides by its arity)."""
    repeats_of: dict[int, list] = {}
    for r in t.hops:
        if r.shown_above and r.repeats is not None:
            repeats_of.setdefault(r.repeats, []).append(r)
    under: dict[int, list] = {}  # hop id -> the ends below it (of the hops repeated: the only ones asked)
    for h in ends:
        for a in paths[h.id][:-1]:
            if a.id in repeats_of:
                under.setdefault(a.id, []).append(h)
    out = []
    heads: dict[int, list | None] = {}
    for r in t.hops:
        if not r.shown_above or r.repeats not in under:
            continue
        head = _default_head(t, r, repeats_of, heads)
        if head is None:
            continue  # under a branch the defaults do not take, however reached
        head = head[:-1]
        if _in_tail(t, r, head):
            continue
        on_head = {h.id for h in head}
        below = [h for h in under[r.repeats] if h.id not in on_head]  # (a repeat inside what it repeats: the
        if not below:  # ends on its own way there are no new ones)
            continue
        # each ranked as this path (its op's arity, its conditions), the best of them kept; the first
        # THROUGH_REPEAT by their own rank only (a copy_ shown above has hundreds; docs/trace.md says so)
        options, base = [], _along(head, tokens)  # (the head's counts once, each way's tail from them)
        for e in _best_per_way(below, ranked, paths, r.repeats):
            tail = _from_repeat(r, paths[e.id])
            options.append((_rank(t, e, tokens, head + tail, _along(tail, tokens, base)), len(options), head + tail))
        key = min(o[0] for o in options)
        out.append((_last_in_sequence(t, [p for k, _, p in options if k == key]), key))
        # and the best way only the build rules out, where the best is ruled out by the inputs: where every way is
        # ruled out, the chain stops at that one (F.relu stock: clamp_min's stub reaches the fork launcher the
        # build lacks; its NaN fill_, ranked better, the inputs rule out)
        if key[2] and not _only_the_build(out[-1][0]):
            built = [o for o in options if _only_the_build(o[2])]
            if built:
                best = min(built, key=lambda o: o[:2])
                out.append((best[2], best[0]))
    return out


def _computes_alike(k: tuple, key: tuple) -> bool:
    """A way ranked apart from the best only by what its end is, both device code that computes (a <<<>>> launch
    and a TensorIterator launch: group_norm's RowwiseMomentsCUDAKernel, then its elementwise gpu_kernel), with the
    same guesses: if it runs after the best in the same body, it makes the op's result (_last_in_sequence)."""
    return k != key and k[:4] == key[:4] and k[4] in (0, 1) and key[4] in (0, 1) and k[5] == key[5]


def _last_in_sequence(t, tied: list[list], later: list[list] = ()) -> list:
    """Of paths ranked alike, in walk order (source order), the first, unless another parts from it at a later
    call of the same body that runs after it (trace/sequence.py): batch_norm_cuda_out's statistics kernel, then
    its elementwise output kernel; the later one makes the op's result. Alternatives (an else, another case,
    after an early return) keep walk order, which is source order except that a body's <<<>>> launches are walked
    before its calls: of a launch and a call that are alternatives, the one written first wins."""
    best = tied[0]
    for path in [*tied[1:], *later]:
        i = next((i for i, (a, b) in enumerate(zip(best, path)) if a.id != b.id), None)
        if not i:
            continue
        (fa, la), (fb, lb) = _site(best[i]), _site(path[i])
        if not (fa and fa == fb and la != lb and fa.endswith(C_FAMILY)):
            continue
        lines = file_lines(t.root, fa)
        if not lines:
            continue
        if path not in tied:  # device work of the same body, after the best's as the build compiles it
            if {best[i].kind, path[i].kind} <= DEVICE_WORK_KINDS and la < lb and may_follow(
                    _built(t, fa, lines, la, lb), la, lb):
                best = path
            continue
        if {best[i].kind, path[i].kind} <= SEQUENCE_KINDS and la < lb and in_sequence(lines, la, lb):
            best = path  # the later of two in sequence
        elif {best[i].kind, path[i].kind} <= DEVICE_WORK_KINDS and la < lb and not _one_kernel(
                best[i], path[i]) and not _open_between(t, path[i], la, lb) and runs_after(
                _built(t, fa, lines, la, lb), la, lb):
            # two launches of one body ranked alike, the later one after the first (in a loop of its own, too):
            # mbtopk::launch's `fill<<<>>>` of its counters, its radix passes, then gatherTopK, which writes the
            # result
            best = path
        elif lb < la and {best[i].kind, path[i].kind} == {"launch", "calls"} and alternatives(lines, lb, la):
            # a direct launch and a helper call that are alternatives (a body walks its <<<>>> launches before its
            # calls): the one the source writes first (host_softmax's persistent dispatch call at :725 before the
            # launches of its else)
            best = path
    return best


def _open_between(t, hop, first: int, later: int) -> bool:
    """Whether the body launches device work between lines `first` and `later` under a test the inputs leave open
    (the backward of ctc_loss: its collect kernels under `if (is_large)`, LossCTC.cu:683, between the log_beta
    kernel and the zeroing of padded gradients): the later launch is then no surer the op's result than the first."""
    kids, _ = _kids_and_ends(t)
    return any(k.kind in DEVICE_WORK_KINDS and first < _site(k)[1] < later and
               any(c.assumed is None for c in k.conditions) for k in kids.get(hop.parent, ()))


def _one_kernel(a, b) -> bool:
    """Two <<<>>> launches of one kernel (1.8's `LAUNCH_SOFTMAX_WARP_FORWARD(0)` ... `(10)`, each a `case` of a
    switch the macro writes): variants of its template the inputs pick, read as alternatives, never in sequence."""
    return a.kind == b.kind == "launch" and a.name.split("<")[0].strip() == b.name.split("<")[0].strip()


def _built(t, file: str, lines: list[str], first: int, last: int) -> list[str]:
    """`file`'s lines first..last as the trace's build compiles them (Trace.unbuilt, set after the walk: the
    build's false #if spans), else as written."""
    off = t.__dict__.get("unbuilt")
    if not off:
        return lines
    kept = t.__dict__.setdefault("_built_lines", {})  # (one list per first line, file and trace: sequence._read
    held = kept.get((file, first))  # reads one launch against each later one of its body in one pass)
    if held is None or held[0] < last:
        hi = max(last, first + BUILT_AHEAD)
        held = kept[(file, first)] = (hi, built_lines(lines, lambda n: off(file, n) is not None, first, hi))
    return held[1]


BUILT_AHEAD = 512  # lines past the first one made as the build compiles them (one list for the later lines asked)


SEQUENCE_KINDS = frozenset({"calls", "calls_op"})  # a C++ body's helper calls and op calls
DEVICE_WORK_KINDS = frozenset({"launch", "tensor_iterator"})  # a body's <<<>>> launches and TensorIterator launches


def _site(hop) -> tuple[str | None, int]:
    """Where a hop's code is called from in its parent's body: its call site, else its own place."""
    if hop.called_at:
        file, _, line = hop.called_at.rpartition(":")
        return file, int(line) if line.isdigit() else 0
    return hop.file, hop.line or 0


def _on_below_repeats(t, path: list, ends: list, tokens: set[str], paths: dict) -> list:
    """The chosen path, carried on while its last hop leads only to repeats: relu's clamp_min reaches the
    TensorIterator machinery that relu_'s branch walked first, and the launch_vectorized_kernel call at its end
    has as children two repeats (the USE_MACA and the #else definitions). The path goes on from the hop each
    repeat repeats to its best end below it (ranked as this path); a repeat under a condition read as false is no
    way on. At most THROUGH_REPEAT steps: a repeat inside what it repeats leads back to itself."""
    under: dict[int, list] = {}
    for h in ends:
        for a in paths[h.id][:-1]:
            under.setdefault(a.id, []).append(h)
    for _ in range(THROUGH_REPEAT):
        on = {h.id for h in path}
        options = []
        for r in _kids_and_ends(t)[0].get(path[-1].id, ()):
            if not r.shown_above or r.not_default or r.repeats in on:
                continue
            for e in under.get(r.repeats, ()):
                way = path + _from_repeat(r, paths[e.id])
                if not any(h.id in on for h in way[len(path):]):
                    options.append((rank_end(t, e, tokens, way), len(options), way))
        if not options:
            return path
        key = min(o[0] for o in options)
        path = _last_in_sequence(t, [p for k, _, p in options if k == key])
    return path


def _from_repeat(r, tail: list) -> list:
    """The way on from repeat `r`: `r` itself (its call site and the conditions it runs under: std_var_kernel_cuda
    calls std_var_kernel_impl first under `if (input_dtype == kHalf && ...)`, then again on the default path; the
    walk follows the first, the second repeats it), then what lies below the hop it repeats on `tail`."""
    return [r, *tail[[h.id for h in tail].index(r.repeats) + 1:]]


def _default_head(t, hop, repeats_of: dict, heads: dict, depth: int = 0) -> list | None:
    """The path to `hop` on the default way: its own path where that passes no branch the inputs rule out, else
    that path with each such hop (or one below it) replaced by a repeat of it on the default way and the path to it
    (abs_out's `unary_op_impl_out(...)` call of the stub lies below unary_op_impl_with_complex_to_float_out, which
    the walk shows first under the in-place op's branch and repeats on abs's default way); None without one."""
    if hop.id in heads:
        return heads[hop.id]
    heads[hop.id] = None  # (a cycle of repeats: none)
    path = _all_paths(t)[hop.id] or t.path(hop)
    while depth < THROUGH_REPEAT:
        i = next((i for i, h in enumerate(path) if h.not_default), None)
        if i is None:
            heads[hop.id] = path
            return path
        # the ruled-out hop or one below it on the path, repeated on a default way: that way, then on from it
        for j in range(i, len(path) - 1):
            ways = [w for w in (_default_head(t, r, repeats_of, heads, depth + 1)
                                for r in repeats_of.get(path[j].id, ()) if not r.not_default) if w is not None]
            if ways:
                path = min(ways, key=len) + path[j + 1:]
                break
        else:
            return None
        depth += 1
    return None


def _best_per_way(below: list, ranked: dict, paths: dict, top: int) -> list:
    """The ends below repeated hop `top` to rank as paths through a repeat: by their own rank, the best
    THROUGH_REPEAT of each way out of `top` (its children: logsumexp_out_impl's amax, sum_out and add_ each
    compete), at most 4 * THROUGH_REPEAT in all."""
    taken: dict[int, int] = {}
    out = []
    for e in sorted(below, key=lambda h: ranked[h.id]):
        ids = [h.id for h in paths[e.id]]
        way = ids[ids.index(top) + 1] if ids.index(top) + 1 < len(ids) else e.id
        if taken.get(way, 0) < THROUGH_REPEAT:
            taken[way] = taken.get(way, 0) + 1
            out.append(e)
            if len(out) == 4 * THROUGH_REPEAT:
                break
    return out


THROUGH_REPEAT = 6  # ends below a repeated hop ranked as the path through the repeat (the best by their own rank)


def _in_tail(t, hop, path: list | None = None) -> bool:
    """Whether `hop` lies in a side branch (backward, decomposition, codegen). The kernel torchgen writes for a
    ufunc op's dispatch key (CUDA: ufunc_add_CUDA, written by compute_ufunc_cuda) is the op's forward path: the
    generated code's launcher call is where its device code starts."""
    for h in path if path is not None else t.path(hop):
        if h.layer == "codegen" and h.kind == "ufunc":
            return False
        if h.layer in TAIL_LAYERS:
            return True
    return False


# Libraries of parallel building blocks (sort, scan, select), not of the op's math: PyTorch's own kernels are the
# fast path next to them (1.4's THCTensor_(sort) runs its bitonic kernel, Thrust only for slices over 2048)
BUILDING_BLOCKS = ("cub", "thrust")
# A launch of one block of one thread: bookkeeping beside the work, not the work
_ONE_THREAD = re.compile(r"<<<\s*1\s*,\s*1\s*[,>]")
# Library calls that set up (handles, descriptors, workspace sizes, plans) rather than run the work.
_SETUP_CALL = re.compile(r"(Get|Set|Create|Destroy)[A-Z]|Descriptor|WorkspaceSize|TempSpace|ReserveSize|Handle|"
                         r"Stream$|Builder$|_plans?$")
_TEST = re.compile(r"(^|/)(test|tests|benchmarks?)/|(^|/)test_[^/]*$")


def query_tokens(query: str) -> frozenset[str]:
    """The words of a traced name (nn.MultiheadAttention -> multihead, attention; F.layer_norm -> layer, norm)."""
    last = re.split(r"[.:]", query.strip())[-1]
    return frozenset({w for w in words(last) if len(w) >= 3} or {last.lower()})  # (frozen: _named's cache key)


@lru_cache(maxsize=65536)
def words(name: str) -> tuple[str, ...]:
    """Lower-case words of a C++ or Python name, split at separators and camel case (LayerNormForward ->
    layer, norm, forward)."""
    return tuple(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name))


def _named(name: str, tokens: set[str] | frozenset[str]) -> bool:
    return _named_cached(name, frozenset(tokens))


@lru_cache(maxsize=65536)
def _named_cached(name: str, tokens: frozenset[str]) -> bool:
    """A word of `name` is a word of the traced name, or starts with one (conv2d: convolution)."""
    return any(w.startswith(t) or t.startswith(w) and len(w) >= 3 for w in words(name) for t in tokens)


@lru_cache(maxsize=65536)
def _says_backward(name: str) -> bool:
    return "backward" in words(name.split("::")[-1])


@lru_cache(maxsize=16384)
def is_test(file: str | None) -> bool:
    """A test's or benchmark's file (its code is no op's path; its #errors no requirement of the build)."""
    return bool(file) and bool(_TEST.search(file))


_SCHEMA_TENSOR = re.compile(r"Tensor(\([a-z]!?\))?\??(\[\])?\s")  # `Tensor`, `Tensor(a!)`, `Tensor?`, `Tensor[]`


def _tensor_arguments(schema: str) -> list[tuple[str, str]]:
    """(alias annotation, "[]" for a list) of each Tensor argument of a schema, in order."""
    return _SCHEMA_TENSOR.findall(schema.split("->")[0].partition("(")[2])


@lru_cache(maxsize=16384)
def _initializer(schema: str) -> bool:
    """A schema whose only Tensor argument is the one it writes (fill_.Scalar(Tensor(a!) self, Scalar value)); not
    a sampler, which takes a Generator (exponential_, multinomial's fast path: its draw is the work)."""
    tensors = _tensor_arguments(schema)
    return bool(tensors) and all(t[0].endswith("!)") for t in tensors) and "Generator" not in schema


# Kernels named for the arity of the functor they run (this MACA fork's vectorized_elementwise_kernel_nullary_opt,
# _unary_opt): launched only for functors of that many inputs (`if (narity == 0 && ...)`, CUDALoops.cuh)
_ARITY_WORDS = {"nullary": 0, "unary": 1, "binary": 2, "ternary": 3}


@lru_cache(maxsize=16384)
def _inputs(schema: str) -> int | None:
    """The Tensor inputs of a schema (not the ones it only writes: an out= `Tensor(a!)` after `*`, the `self` of an
    op that only writes it, fill_, zero_, copy_, or of a sampler, which takes a Generator); an in-place op reads
    the `self` it writes (gt_.Scalar's comparison runs a one-input functor); None with a Tensor list."""
    tensors = _tensor_arguments(schema)
    if any(t[1] for t in tensors):
        return None
    op = schema.partition("(")[0].partition(".")[0]
    reads_self = op.endswith("_") and op not in WRITING_PLUMBING and "Generator" not in schema
    positional = len(_tensor_arguments(schema.partition("*")[0] + ")")) if reads_self else 0
    return sum(1 for i, t in enumerate(tensors) if not t[0].endswith("!)") or i < positional)


def _other_arity(end, entries: list) -> bool:
    """Whether `end` is a kernel named for another arity than the Tensor inputs of the last op on its path (add's
    two inputs never reach the nullary kernel; fill_, which only writes, does)."""
    arities = {_ARITY_WORDS[w] for w in words(end.name) if w in _ARITY_WORDS}
    if not arities or not entries:
        return False
    inputs = _inputs(entries[-1].schema or "")
    return inputs is not None and inputs not in arities


def _writes_are_its_work(t, path: list) -> bool:
    """Whether the fills and copies on `path` are the work of the op they belong to: every device end below that
    op's entry runs through one (constant_pad_nd's kernel is a fill_ then a copy_ into the padded view: no other
    work competes), so they rank as its work, not as what it makes besides."""
    at = next((i for i, h in enumerate(path) if h.kind == "writes"), None)
    entry = next((h for h in reversed(path[:at]) if h.layer == "native" and h.kind == "entry"), None) \
        if at else None
    if entry is None or entry.name.removeprefix("aten::").split(".")[0] in WRITING_PLUMBING:
        return False  # (zero_, fill_, copy_ themselves: their writes rank as before, among their own ways)
    kept = t.__dict__.setdefault("_writes_work", {})
    if entry.id not in kept:
        kids, ends = _kids_and_ends(t)
        only, stack = True, [(entry, False)]
        while stack and only:
            h, through = stack.pop()
            through = through or h.kind == "writes"
            if h.id in ends and not through and h.layer in ("cuda", "library"):
                only = False
            stack.extend((k, through) for k in kids.get(h.id, ()))
        kept[entry.id] = only
    return kept[entry.id]


def _fed(t, path: list) -> bool:
    """Whether the path goes through an op call whose result another op call on the same body takes as an
    argument (`at::nll_loss_nd_symint(at::log_softmax(self, ...), target, ...)`): that op runs first, and the
    caller's result is the outer op's, so its work ranks after the outer one's (when the walk followed it too)."""
    fed = [h for h in path if h.feeds]
    if not fed:
        return False
    kids = _kids_and_ends(t)[0]
    return any(k.kind == "calls_op" and k.name.rpartition("::")[2].rpartition(".")[2] == h.feeds
               for h in fed for k in kids.get(h.parent, ()))


def _kids_and_ends(t) -> tuple[dict, set]:
    """Each hop's children and the ids of the ends, made once while the hops stay the same."""
    key = (len(t.hops), id(t.hops[-1]) if t.hops else None)
    cached = t.__dict__.get("_kids_ends")
    if cached is None or cached[0] != key:
        kids: dict = {}
        for h in t.hops:
            kids.setdefault(h.parent, []).append(h)
        cached = t.__dict__["_kids_ends"] = (key, kids, {h.id for h in t.ends()})
    return cached[1], cached[2]


def computes(end) -> bool:
    """An end where work runs: not a library call that only sets up (a descriptor, a handle, a workspace size)."""
    return not (end.layer == "library" and _SETUP_CALL.search(end.name.split("::")[-1]))


def rank_end(t, end, tokens: set[str], path: list | None = None, natural: bool | None = None) -> tuple:
    """How likely `end` is where the op's work runs on the device, smaller first:
    1. what the end is: a __global__ kernel, a <<<>>> launch or a library call that computes, then the shared
       elementwise machinery a TensorIterator launcher leads to (F.interpolate's upsample kernels before the floor
       of its size computation), then a library call that only sets up (descriptors, handles), a launch of one
       thread (`<<<1, 1>>>`) or a fix-up kernel, whose threads return on a test of the data before they write
       (pytorch/fix_ups.py);
    2. whether the path to it holds a guess of the walk (a launch found in the same file, a test's kernel) or an op
       that only initialises its output (fill_, zero_);
    3. the share of the path's ops named like the traced name (the op's own work before helpers such as pad, zeros
       or matmul: _scaled_dot_product_flash_attention for scaled_dot_product_attention);
    4. a vendor library call before PyTorch's own kernels (cuDNN, cuBLAS are the fast paths; own kernels the
       fallbacks), not CUB or Thrust (building blocks, BUILDING_BLOCKS);
    5. of ways the inputs leave open, the general one before a special shape (a path whose undecided test pins
       two or more values to numbers, pinned_values; before 6 since the fork's
       gpu_index_kernel names its `num_indices == 2 && iter.ndim() == 1` launch launch_kernel_index_2_1, one more
       name like index_put_'s than the general launch_kernel's, IndexKernel.cu:139);
    6. how many of the kernels and helpers below the last op are named like it (vectorized_layer_norm_kernel);
       then how many times the path goes back into the dispatcher (a fast path calls fewer ops than a fallback);
    then the walk's order, which is source order: PyTorch tries its fast paths first. Before 1, a path through an
    op call whose result another op call takes as an argument ranks after that one's (_fed). Before all: a path
    through a fill/copy the kernel makes besides its own work (grad_input.zero_()) comes last, then one through a
    backward function (a forward trace whose name does not say backward), then one through a branch the op's
    default arguments do not take (`if (label_smoothing > 0.0)`, label_smoothing=0.0)."""
    natural = path is None if natural is None else natural  # (`path` is end's own from the root)
    path = path or t.path(end)  # (a path through a repeat: given)
    along = _aggregate(t, tokens, end) if natural else None
    return _rank(t, end, tokens, path, along if along is not None else _along(path, tokens))


def _rank_end(t, end, tokens: set[str], path: list) -> tuple:
    """rank_end of a path given whole (one through a repeat), counted along it."""
    return _rank(t, end, tokens, path, _along(path, tokens))


def _rank(t, end, tokens, path: list, agg: "_Along") -> tuple:
    kind = _end_kind(end, path, agg.tensor_iterator) if not _fix_up(t, end) else 2
    guesses = agg.guesses + _other_arity(end, [agg.last_entry] if agg.last_entry is not None else [])
    share = agg.named_entries / (agg.entries or 1)
    # a fill/copy a kernel makes besides its own work (down.write_call) is never the op's work while there is other
    writes = agg.writes and not _writes_are_its_work(t, path)
    # a forward trace's work is no backward function's: F.conv2d's switch over the convolution backend has a
    # transposed case whose cuDNN path runs cudnn_convolution_backward_input; ranked after every forward way
    backward = agg.backward and "backward" not in tokens and not tokens & FORWARD_BY_BACKWARD
    vendor = end.layer == "library" and end.kind not in BUILDING_BLOCKS
    return (writes, backward, agg.special, agg.feeds and _fed(t, path), kind, guesses, -round(share, 3), not vendor,
            agg.special_shape, -agg.below, agg.ops)


def _along(path: list, tokens, start: "_Along | None" = None) -> "_Along":
    """rank_end's counts along a whole path, each hop's from the one before it (_step); from `start`, the counts of
    the hops before `path`, where given."""
    agg = _ROOT if start is None else start
    for h in path:
        agg = _step(agg, h, tokens)
    return agg


@dataclass(frozen=True, slots=True)
class _Along:
    """What rank_end counts along the path from a root to a hop, made from its parent's (_aggregate)."""
    guesses: int = 0  # hops placed by a guess of the walk (a launch found in the same file) or in a test's code,
    # and ops that only write their own output (fill_, zero_: no Tensor read), which set up, not the op's work
    entries: int = 0  # native entries
    named_entries: int = 0  # ... named like the query
    last_entry: object = None
    below: int = 0  # code hops named like the query since the last entry
    ops: int = 0  # calls_op hops
    writes: bool = False
    special: int = 0  # hops under a branch the default arguments do not take (`if (label_smoothing > 0.0)`)
    backward: bool = False  # a native or C++ hop that says backward
    tensor_iterator: bool = False
    special_shape: int = 0  # undecided tests pinning several values (`dimension == 0 && batchCounter == 3`)
    feeds: bool = False


def _aggregate(t, tokens, end) -> _Along | None:
    """rank_end's counts along `end`'s path from the root, made once per trace for every hop (each from its
    parent's: ~300 ends of ~30 hops each were counted one by one); None where a hop's parent comes after it."""
    key = (len(t.hops), id(t.hops[-1]) if t.hops else None, tokens)
    kept = t.__dict__.get("_along")
    if kept is None or kept[0] != key:
        along: list = [None] * len(t.hops)
        for h in t.hops:
            up = _ROOT if h.parent is None else along[h.parent] if h.parent < h.id else None
            along[h.id] = None if up is None else _step(up, h, tokens)
        kept = t.__dict__["_along"] = (key, along)
    return kept[1][end.id] if end.id < len(kept[1]) and t.hops[end.id] is end else None


def _step(up: _Along, h, tokens) -> _Along:
    entry = h.layer == "native" and h.kind == "entry"
    guess = (h.found == "same_file" or is_test(h.file)) + (entry and _initializer(h.schema or ""))
    named = entry and _named(h.name.removeprefix("aten::").split(".")[0], tokens)
    code_named = h.layer in ("cpp", "cuda", "stub", "registration") and _named(
        h.name.split("::")[-1].split("<")[0], tokens)
    shape = sum(1 for c in h.conditions if c.assumed is None and pinned_values(c.text) >= 2) if h.conditions else 0
    return _Along(
        up.guesses + guess, up.entries + entry, up.named_entries + named, h if entry else up.last_entry,
        0 if entry else up.below + code_named, up.ops + (h.kind == "calls_op"), up.writes or h.kind == "writes",
        up.special + h.not_default, up.backward or (h.layer in ("native", "cpp") and _says_backward(h.name)),
        up.tensor_iterator or h.kind == "tensor_iterator", up.special_shape + shape, up.feeds or bool(h.feeds))


_ROOT = _Along()


def _fix_up(t, end) -> bool:
    """A __global__ kernel (or its <<<>>> launch) whose threads return on a test of the data before they write
    (pytorch/fix_ups.py: randperm_handle_duplicate_keys_kernel, Randperm.cuh:18): where it writes, the data
    decides; the work before it makes the result, so it ranks as a one-thread launch does."""
    return fix_up_test(t, end) is not None


def fix_up_test(t, end) -> str | None:
    """"file:line" of the data test that makes `end` a fix-up kernel (_fix_up), else None."""
    if end.kind == "launch":
        end = next((k for k in _kids_and_ends(t)[0].get(end.id, ()) if k.kind == "global_kernel"), None)
    if end is None or end.kind != "global_kernel" or not end.file or not end.line:
        return None
    line = _fix_up_at(t.root, end.file, end.line)
    return f"{end.file}:{line}" if line else None


@lru_cache(maxsize=4096)
def _fix_up_at(root: str | None, file: str, line: int) -> int | None:
    lines = file_lines(root, file)
    return data_test_line(lines, line) if lines else None


def _end_kind(end, path: list, tensor_iterator: bool) -> float:
    if end.layer == "library":
        return 2 if _SETUP_CALL.search(end.name.split("::")[-1]) else 0
    if any(_ONE_THREAD.search(h.name) for h in path[-2:]):
        return 2  # `transform_vals<<<1, 1, 0, stream>>>` in cub.cuh's inclusive_scan: one thread carries a value
        # between chunks; the work is the library call beside it
    if tensor_iterator:
        return 1  # the shared elementwise machinery (gpu_kernel -> vectorized_elementwise_kernel)
    if end.kind == "ufunc_inner_loop":
        return 1.5  # a ufunc op's math, which the kernel generated for the device (kind 1 above) runs
    return 0


_PIN = re.compile(r"^\(?\s*([\w.:\[\]()>-]+?)\s*==\s*(-?\d+)\s*\)?$")


def pinned_values(test: str) -> int:
    """How many of a test's top-level `&&` parts pin a value to a number (`batchCounter == 3`; not `n % 8 == 0`, a
    divisibility), 0 for a negated test (it excludes a case) or one joined by `||`."""
    return len(_pins(test))


@lru_cache(maxsize=16384)
def _pins(test: str) -> tuple[tuple[str, str], ...]:
    """(value, number) of each part pinned_values counts (`ndim == 2`: ("ndim", "2"))."""
    text = test.strip()
    if text.startswith("not (") or (text.startswith("!(") and closes_at_end(text[1:])):
        return ()
    while text.startswith("(") and text.endswith(")") and closes_at_end(text):
        text = text[1:-1].strip()
    if len(split_top_level(text, "||", "([")) > 1 or len(split_top_level(text, " or ", "([")) > 1:
        return ()
    # C++'s `&&`, or Python's `and` (F.interpolate's `input.dim() == 4 and mode == "nearest"`, functional.py:4049)
    parts = [p for part in split_top_level(text, "&&", "([") for p in split_top_level(part, " and ", "([")]
    return tuple((m.group(1), m.group(2)) for part in parts
                 if (m := _PIN.match(part.strip())) and "%" not in m.group(1))


# -- where the main chain chose ---------------------------------------------------------------------------------------
def choices(t) -> list[dict]:
    """Each place where the top-down main chain goes one way of several: a main-chain hop whose parent has other
    children leading to device code that computes. `ways` counts them (the main chain's included); `settled` is
    True when every other way runs under a condition the walk read as false for this call and build (an `if` the
    default arguments do not take, an `#if` the build does not compile, another dtype or device), False when the
    choice is the ranking's (what the inputs cannot settle: a runtime size, a switch, a heuristic, source order);
    `others` are the other ways' hop ids; `file`/`line` where the ways part (the hop above them); `options` each
    way (the main chain's first) with the device code it ends at and the conditions it runs under."""
    if t.direction != "down":
        return []
    chain = t.main_chain()
    kids: dict = {}
    for h in t.hops:
        kids.setdefault(h.parent, []).append(h)
    ends = {h.id for h in t.ends() if computes(h)}
    for h in t.hops:  # a repeat the call rules out leads where the hop it repeats leads: it is a way not taken
        # (softmax's Half-branch at::_softmax call, walked after the default one)
        if h.shown_above and h.repeats is not None and h.id not in kids and h.not_default:
            kids[h.id] = [t.hops[h.repeats]]
    out = []
    for above, hop in zip(chain, chain[1:]):
        # (a fill or copy the body makes besides its work, `input_.contiguous()`, is no way instead of it)
        others = [k for k in kids.get(above.id, ()) if k.id != hop.id and k.layer not in TAIL_LAYERS
                  and (k.kind != "writes" or hop.kind == "writes") and _leads_to(k, kids, ends)]
        # device work done beside the way taken, no way instead of it; a repeat too, which does what the hop it
        # repeats does (randperm(100000)'s randperm_handle_duplicate_keys at Randperm.cu:122, walked at :106)
        repeats = [k for k in kids.get(above.id, ()) if k.id != hop.id and k.shown_above and k.repeats is not None
                   and k.id not in kids and _leads_to(t.hops[k.repeats], kids, ends)]
        order = {k.id: o for k in [*others, *repeats] if (o := _runs_with(t, above, hop, k))}
        others = [k for k in others if k.id not in order]
        if others or order:
            out.append({"hop": hop.id, "ways": len(others) + 1, "others": [k.id for k in others],
                        "settled": all(_ruled_out(k, kids, ends) for k in others),
                        "file": above.file, "line": above.line,
                        "options": [_option(k, kids, ends, chain[-1].id if k is hop else None)
                                    for k in [hop, *others]],
                        "sequence": [_beside(t, k, o, under, kids, ends) for k, (o, under) in sorted(
                            order.items(), key=lambda kv: _site(t.hops[kv[0]])[1])]})
    stop = switch(t)
    if stop is not None:  # the chain ends where its ways part: every way is an option, none taken
        last = chain[-1]
        out.append({"hop": last.id, "ways": len(stop["ways"]), "others": stop["ways"], "settled": False,
                    "switch": {k: stop[k] for k in ("value", "text", "file", "line", "cases")},
                    "file": last.file, "line": last.line,
                    "options": [_option(t.hops[w], kids, ends, None) for w in stop["ways"]]})
    return out


def _beside(t, way: int, order: str, under: list, kids: dict, ends: set[int]) -> dict:
    """A `sequence` entry of choices: device work done before or after the chain's, with the device code it ends
    at, the tests of its own it runs under, and where that code is a fix-up kernel, its data test ("file:line")."""
    hop = t.hops[way]
    end = _option(t.hops[hop.repeats] if hop.id not in kids and hop.repeats is not None else hop, kids, ends,
                  None)["end"]
    return {"hop": way, "order": order, "end": end,
            "conditions": [{"text": c.text, "file": c.file, "line": c.line} for c in under],
            "fix_up": fix_up_test(t, t.hops[end]) if end is not None else None}


def _runs_with(t, above, hop, way) -> tuple[str, list] | None:
    """("before" or "after", the tests of its own it runs under) where `way`, another call of the body `above` that
    calls `hop`, runs beside it (trace/sequence.py, as the build compiles the body; no condition of it read as
    false): each time `hop` does, where its conditions are among `hop`'s (randperm_out_cuda's `random_` keys and
    radix sort before randperm_handle_duplicate_keys, mbtopk::launch's radix passes, in a loop, before gatherTopK),
    else when its own tests the inputs leave open hold (structured_topk_out_cuda sorts what launch_gather_topk_kernel
    gathered `if (sorted && values.numel() > 1)`). Device work done beside the main chain's, not another way it may
    run; None for an alternative (an else, another case, past an early return, the other side of an #if, or both
    under tests of their own)."""
    if not (way.kind in SEQUENCE_KINDS | DEVICE_WORK_KINDS | {"writes"} or way.layer in ("stub", "library")) or \
            way.found == "passed_in":  # (kernels handed to a callback are candidates it picks from: cutlassF.h)
        return None
    (fw, lw), (fh, lh) = _site(way), _site(hop)
    if not (fw and fw == fh and lw != lh and fw.endswith(C_FAMILY)) or any(c.assumed is False for c in
                                                                          way.conditions) or _one_kernel(hop, way):
        return None
    mine, its = {(c.text, c.line) for c in hop.conditions}, {(c.text, c.line) for c in way.conditions}
    extra = [c for c in way.conditions if (c.text, c.line) not in mine]  # (none read as false)
    own = [c for c in extra if c.assumed is None]
    if own and not mine <= its:
        return None  # each under tests of its own
    lines = file_lines(t.root, fw)
    first, later = min(lw, lh), max(lw, lh)
    if not lines or later > len(lines):
        return None
    start = above.line if above.file == fw and above.line and above.line <= first else first
    built = _built(t, fw, lines, start, later)
    order = "before" if lw < lh else "after"
    held = t.__dict__.get("held", {}).get(fw, frozenset())  # (the body's tests read as true: their blocks run)
    if extra:  # in a block of its own, under tests that hold or that the inputs leave open (those said)
        return (order, own) if not alternatives(built, first, later) else None
    if order == "before":  # (`hop` may sit in a block under a test of its own since: `way` has run before it)
        return (order, []) if runs_before(built, start, lw, lh, held) else None
    return (order, []) if runs_after(built, lh, lw, held) else None


def open_decisions(t, found: list[dict] | None = None) -> list[dict]:
    """The choices (above) the call's inputs and build could not settle, each with the condition that parts its
    ways where the source states one (the first of its options' conditions the walk left undecided: `input.dim()
    == 4`, `switch (vec_size)`; None for source order alone): what the main chain went on through by ranking."""
    out = []
    for c in choices(t) if found is None else found:
        if c["settled"]:
            continue
        tests = [k for o in c["options"] for k in o["conditions"] if k["assumed"] is None]
        if c.get("switch"):  # (the value the ways switch on, not a test they share: `not (N == 0)`)
            tests = [c["switch"]]
        out.append({"hop": c["hop"], "condition": tests[0]["text"] if tests else None,
                    "condition_file": tests[0]["file"] if tests else None,
                    "condition_line": tests[0]["line"] if tests else None,
                    "file": c["file"], "line": c["line"], "options": c["options"]})
    return out


def _option(way, kids: dict, ends: set[int], end: int | None) -> dict:
    """One way of a choice: its first hop, the device code it leads to (the main chain's end for the way taken,
    else the first computing end below it in walk order not through a branch the inputs rule out, and under that
    the first deepest: a launch's kernel), and the conditions it runs under as the walk read them (`assumed`
    false: ruled out for this call and build; null: not decided)."""
    if end is None:  # below the way, not through a branch the inputs rule out, where there is such an end
        end = _first_end(way, kids, ends, skip_ruled_out=True)
        if end is None:
            end = _first_end(way, kids, ends, skip_ruled_out=False)
    return {"hop": way.id, "end": end,
            "conditions": [{"text": c.text, "file": c.file, "line": c.line, "assumed": c.assumed}
                           for c in way.conditions]}


def _first_end(way, kids: dict, ends: set[int], skip_ruled_out: bool) -> int | None:
    """The first computing end below `way` in walk order, and under that the first deepest (the __global__ its
    launch names); with `skip_ruled_out`, not below a hop under a condition read as false (nll_loss2d's way ends
    at its reduction's kernel, not at the no-reduce one walked first)."""
    end, stack, seen = None, [way], set()
    while stack:
        h = stack.pop()
        if h.id in seen or (skip_ruled_out and h is not way and h.not_default):
            continue
        seen.add(h.id)
        if h.id in ends:
            end, stack = h.id, []  # then the deepest below it
        stack.extend(reversed(kids.get(h.id, ())))
    return end


def _leads_to(hop, kids: dict, ids: set[int]) -> bool:
    stack, seen = [hop], set()  # (seen: a repeat inside what it repeats leads back to it)
    while stack:
        h = stack.pop()
        if h.id in ids:
            return True
        if h.id not in seen:
            seen.add(h.id)
            stack.extend(kids.get(h.id, ()))
    return False


def _ruled_out(hop, kids: dict, ends: set[int]) -> bool:
    """Whether every path from `hop` down to computing device code passes a condition assumed false."""
    def false_here(h) -> bool:
        return any(c.assumed is False for c in h.conditions)
    stack, seen = [hop], set()
    while stack:
        h = stack.pop()
        if false_here(h) or h.id in seen:
            continue  # this path is ruled out (or walked)
        if h.id in ends:
            return False
        seen.add(h.id)
        stack.extend(kids.get(h.id, ()))
    return True
