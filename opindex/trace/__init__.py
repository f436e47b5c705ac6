"""trace: the query side, in walking order.

    targets.py   what a typed name refers to (names.py resolves Python names through imports and aliases)
    facts.py     every SELECT the walks make: facts and the derived links of indexer/link.py
    python.py    how a walk follows Python code (imports, self.x(), bridges into C++)
    builder.py   the bookkeeping of a walk: hops, repeats, caps, what was seen
    walk/        the downward walk, one step per layer: Python -> YAML -> C++ -> stubs -> CUDA -> backward
    conditions.py what the #ifs and ifs over a call mean for the device and the default arguments
    writes.py    the fill/copy ops a kernel calls, by their default path (cache.py keeps them between processes)
    up.py        the upward walk: a kernel, function or stub -> what reaches it
    rank.py      which end is the main chain's, among what the walk could not decide
    model.py     Hop and Trace, plain data

`trace()` below looks the name up and picks the walker. The renderers (opindex.render) read the model; nothing
here imports them.
"""
from __future__ import annotations

import re

from ..model import OpindexError
from . import facts as q
from ..pytorch.build_config import DTYPES, UNDEFINED
from ..pytorch.devices import CPP_HEADERS
from .builder import MAX_HOPS
from ..pytorch.call_expr import Call, looks_like_call
from .call import bind as bind_call, call_dtype, factory_dtype, read_call
from .conditions import BuildContext
from .walk import Walker
from .model import LAYERS, Condition, Hop, Trace
from .targets import Target, ambiguous, for_device, lookup, same_kernel_in_files, suggestions
from .up import UpWalker

__all__ = ["trace", "Trace", "Hop", "LAYERS", "Target", "lookup", "suggestions"]


def _jitted_launchers(con, name: str, root: str | None) -> tuple[list, str | None]:
    """([the functions that launch the jitted kernel `name`], what the trace says of it) where `name` is a kernel
    the jiterator compiles at run time (`reduction_prod_kernel`: pytorch/jiterator.py); ([], None) otherwise."""
    from ..pytorch import jiterator  # noqa: PLC0415
    from .sequence import file_lines  # noqa: PLC0415
    read: dict[str, list[str] | None] = {}  # each file once: several launches share one (ReduceSumProdKernel.cu)
    found = jiterator.launches_of(name, q.jitted_launches(con),
                                  lambda f: read[f] if f in read else read.setdefault(f, file_lines(root, f)))
    targets = []
    for launch, _ in found:
        for x in lookup(con, launch["caller"]):  # the definition the launch is written in, not its overloads
            if x.obj.get("file") == launch["file"] and x.obj.get("line", 0) <= launch["line"] <= \
                    x.obj.get("end_line", 0) and x not in targets:
                targets.append(x)
    if not targets:
        return [], None
    where = ", ".join(f"{launch['kernel']} at {launch['file']}:{launch['line']} (name constant at :{line})"
                      for launch, line in found[:3])
    return targets, (f"{name!r} is no __global__ of the source: the jiterator compiles it at run time (NVRTC) "
                     f"for {where}; traced from the function that launches it")


def trace(con, name: str, device: str = "cuda", depth: int = 1, up: bool | None = None, backward: bool = False,
          root: str | None = None, max_hops: int = MAX_HOPS, limit: int = 6, build: dict | None = None,
          dtype: str | None = None, index: str | None = None) -> Trace:
    """The trace of `name` (`index`: the index file's path, named in the trace and its "not found" message); a walk larger than `max_hops` hops (0: no limit) stops there and says so in
    Trace.truncated. `build`: the user's settings (pytorch.build_config.settings_from: -D, -U, a config file);
    Trace.build then lists every setting a test of the walk read, with where its value came from. `dtype`: the
    input's (float32 unless stated, or a factory's own default: torch.randperm's int64), which decides the C++
    tests of a dtype (`at::isComplexType(common_dtype)`).
    A `name` written as a call (`F.interpolate(torch.randn(8, 16, 32, 32), mode='bilinear')`) is traced with its
    arguments (trace/call.py): its tensors' dtype is the input's (a `dtype` that contradicts it is an error)."""
    call = read_call(name) if looks_like_call(name) else None
    if call is not None:
        dtype = call_dtype(call, dtype) if dtype or call.tensors() or "dtype" in call.kwargs else None
    if dtype is not None and dtype not in DTYPES:
        raise OpindexError(f"unknown dtype {dtype!r}: choose from {', '.join(DTYPES)}")
    with q.memoized(con):  # about half of a large trace's lookups repeat
        t = _trace(con, name, device, depth, up, backward, root, max_hops, limit, build, dtype, index, call)
    if "write_paths" in vars(q.resident(con)):  # fill/copy paths walked: kept for the next process
        q.resident(con).write_paths.save()
    return t


def _trace(con, name: str, device: str, depth: int, up: bool | None, backward: bool, root: str | None,
           max_hops: int, limit: int, build: dict | None = None, dtype: str | None = None,
           index: str | None = None, call=None) -> Trace:
    if device not in q.DEVICES:
        raise OpindexError(f"unknown device {device!r}: choose from {', '.join(q.DEVICES)}")
    targets = lookup(con, call.callee if call is not None else name)
    # unless stated: a factory's own default (torch.randperm's `ScalarType? dtype=long`: int64), else float32
    dtype = dtype or factory_dtype(targets) or "float32"
    jitted = None
    if not targets and call is None:  # a kernel the jiterator compiles at run time: from the code that launches it
        targets, jitted = _jitted_launchers(con, name, root)
    if call is not None and up:
        raise OpindexError(f"{name!r} is a call: a call is traced top-down (trace {call.callee} --up for what "
                           f"reaches it)")
    bottom_up = up if up is not None else bool(jitted) or bool(targets) and all(t.kind in ("stub", "global_kernel") or (
        t.kind == "cpp" and _is_registered_kernel(con, t.obj)) for t in targets)
    t = Trace(query=call.callee if call is not None else name, direction="up" if bottom_up else "down", device=device, depth=depth, root=root,
              max_hops=max_hops, limit=limit, dtype=dtype, index=index)
    if not targets:
        t.unknown = True
        t.unknown_call = call is not None
        name = call.callee if call is not None else name
        t.candidates = suggestions(con, name)
        t.message = f"{name!r} is not a Python name, op, C++ function, stub or kernel in {t.which_index()}" + (
            "; did you mean one of these?" if t.candidates else "")  # listed once, in t.candidates
        return t
    targets, note, unsure = for_device(targets, device)
    if same_kernel_in_files(targets):  # each walked up from its own launches (UpWalker.global_kernel)
        note = (f"{name!r} names __global__ kernels of {len({x.obj['file'] for x in targets})} files, each shown with "
                f"its own launches; NAME@FILE traces one: " + ", ".join(f"{x.label}@{x.obj['file']}"
                                                                         for x in targets))
    if unsure or _ambiguous(targets):
        t.candidates = [f"{x.label} ({x.kind}, {x.obj.get('file')}:{x.obj.get('line')})" for x in targets]
        t.message = note or f"{name!r} is ambiguous; name one of the candidates"
        return t
    python = [x.kind for x in targets if x.kind in ("python_class", "python_function")]
    if bottom_up and python:  # Python code is the top: there is nothing above it to walk to
        t.message = (f"{name!r} is a {python[0].replace('python_', 'Python ')}: --up walks from an op, a C++ "
                     f"function, a stub or a kernel to what reaches it; trace {name} without --up")
        return t
    if bottom_up:
        UpWalker(con, t, backward=backward).start(targets)
        _state_build(t, BuildContext(con, device, build, dtype))
    else:
        context = BuildContext(con, device, build, dtype)
        if call is not None:
            context.call = bind_call(con, call, targets, root, dtype)
            t.call = context.call.to_dict()
            t.call_summary = context.call.summary()
        elif any(x.kind == "python_function" for x in targets):
            # a Python function traced by name is a call with its defaults (its required arguments unknown): what
            # its body passes on for them reaches C++ (F.batch_norm's weight=None: `weight.defined()` is false)
            try:
                context.call = bind_call(con, Call(callee=name, text=name), targets, root, dtype)
            except (OpindexError, ValueError, SyntaxError):
                context.call = None  # a body this reading cannot follow: the schemas' defaults, as before
        # (the walk runs here, not in _walk_down: its recursion is deep, and on CPython 3.11 one frame more above
        # it measured 10-20% slower for mm, the frame stack's chunks being allocated again and again)
        walker = Walker(con, t, backward=backward, build=context)
        walker.start(targets, call.callee if call is not None else name)
        _after_walk(t, walker, context)
        given = _given_not_default(t) if call is None else None
        if given:  # read again with those arguments given, their values unknown
            names, stop = given
            again = BuildContext(con, device, build, dtype)
            again.call, again.unknown_arguments = context.call, frozenset(names)
            t = Trace(query=t.query, direction="down", device=device, depth=depth, root=root, max_hops=max_hops,
                      limit=limit, dtype=dtype, index=index, call=t.call, call_summary=t.call_summary)
            t.given = {"arguments": names, "file": stop.file, "line": stop.line,
                       "why": f"with their defaults every way on is ruled out ({stop.name} needs "
                              f"{'; '.join(c.text for c in stop.conditions if c.assumed is False)})"}
            _walk_down(con, t, targets, name, again, backward)
    if max_hops and len(t.hops) > max_hops:  # the walk checks its size between steps: cut to the cap exactly
        del t.hops[max_hops:]  # ids grow depth-first, so what stays is a whole tree
        t.cut("hops", max_hops, f"the walk stopped at {max_hops} hops; raise max_hops (--max-hops N, 0 for no "
                                f"limit) to see the rest")
    if note:  # which device's definition of the name was traced (a cap says itself, in t.truncated)
        t.message = note
    if jitted:
        t.message = jitted + (f"; {t.message}" if t.message else "")
    elif t.truncated:
        t.message = t.truncated["reason"]
    t.finish()
    return t


def _walk_down(con, t: Trace, targets: list, name: str, context: BuildContext, backward: bool) -> None:
    walker = Walker(con, t, backward=backward, build=context)
    walker.start(targets, name)
    _after_walk(t, walker, context)


def _after_walk(t: Trace, walker: Walker, context: BuildContext) -> None:
    walker.b.state_caps()
    _state_build(t, context)
    t.__dict__["unbuilt"] = context.false_at  # the ranking reads a body's text as this build compiles it


def _state_build(t: Trace, context: BuildContext) -> None:
    """The hops this build does not compile marked (_mark_unbuilt), and the settings that decided it, with where
    each came from, and the ones the checkout cannot build with (Trace.build, Trace.build_conflicts): top-down and
    bottom-up alike (an up walk's launch under the fork's `#ifdef USE_MACA` on -U USE_MACA)."""
    _mark_unbuilt(t, context)
    t.build = [{"name": s.name, "value": None if s.value is UNDEFINED else s.value, "source": s.source}
               for s in sorted(context.used.values(), key=lambda s: s.name)]
    t.build_conflicts = context.conflicts()


def _given_not_default(t: Trace) -> tuple[list[str], Hop] | None:
    """A name says nothing of the arguments a call gives: when the op's defaults rule out every way on (torch.clamp:
    min=None and max=None, and `if (min && max)`, `else if (min)`, `else if (max)`; the call would raise), the
    arguments those tests read are given, values unknown, and the trace is read again so (their choice is then
    an open decision, ranked, and the header says so). Only parameters with a default of None that a C++ `if` of
    the stop hop names; a test of the dtype or the build stays a stop (conj_physical of a real input)."""
    t.finish()
    stop = t.ruled_out()
    if stop is None:
        return None
    tests = [c for c in stop.conditions if c.assumed is False]
    if not tests or any(c.kind != "if" for c in tests):
        return None
    optional = {n for h in t.hops if h.layer == "native" and h.schema
                for n in re.findall(r"\?\s+(\w+)\s*=\s*None\b", h.schema)}
    names = sorted({w for c in tests for w in re.findall(r"[A-Za-z_]\w*", c.text) if w in optional})
    return (names, stop) if names else None


def _mark_unbuilt(t: Trace, build: BuildContext) -> None:
    """A C++/CUDA hop this build never compiles is marked as not in this build, as a call under a false #if is
    (never the main chain while another path exists): a definition inside a false #if of its own file (the
    fork's `#ifdef USE_MACA` launch_vectorized_kernel at CUDALoops.cuh:174 on -U USE_MACA), or anything in a header
    every #include of which sits under a false #if (its vendor kernels in maca_kernels/)."""
    unbuilt: dict[int, Condition] = {}  # hop id -> the first reason it is not in this build
    for h in t.hops:
        if not h.file or h.absent or h.layer not in _CODE_LAYERS:
            continue
        false = build.false_at(h.file, h.line) if h.line else None
        if false is not None and false["condition"] not in {c.text for c in h.conditions}:
            h.detail += f" [not in this build: #if {false['condition']}]"
            h.conditions.append(Condition("#if", false["condition"], h.file, false["line"], assumed=False))
            unbuilt.setdefault(h.id, h.conditions[-1])
        if h.file.endswith(CPP_HEADERS):
            built, why = build.file_built(h.file)
            if built is False:
                h.detail += f" [not in this build: {why}]"
                h.conditions.append(Condition("#include", why, h.file, None, assumed=False))
                unbuilt.setdefault(h.id, h.conditions[-1])
    _mark_undefined_calls(t, unbuilt)


def _mark_undefined_calls(t: Trace, unbuilt: dict[int, Condition]) -> None:
    """A call whose every definition the walk reached is not in this build cannot compile in it either: the call
    hop takes its callee's reason (the fork's `gpu_kernel_maca_arity1(iter, ...)` at UnarySpecialOpsKernel.cu:155
    on -U USE_MACA, defined only under `#ifdef USE_MACA` at Loops.cuh:102), so a main chain stops above it and
    says why, instead of ending at a launch this build does not have. Only the definitions a call reached (their
    called_at is the call's own line), one level: a function is not marked for the calls it makes."""
    kids: dict[int, list] = {}
    for h in t.hops:
        if h.parent is not None:
            kids.setdefault(h.parent, []).append(h)
    for h in t.hops:
        below = kids.get(h.id)
        if not below or h.id in unbuilt or h.absent or h.layer not in _CODE_LAYERS or any(
                c.assumed is False and c.kind in ("#if", "#include") for c in h.conditions):
            continue  # (a call the build already leaves out: under the same `#if AT_USE_JITERATOR()` as its callee)
        at = f"{h.file}:{h.line}"
        if all(k.id in unbuilt and k.called_at == at for k in below):
            why = unbuilt[below[0].id]
            h.detail += f" [not in this build: {below[0].name} is defined only under #if {why.text}]" \
                if why.kind == "#if" else f" [not in this build: {below[0].name}: {why.text}]"
            h.conditions.append(Condition(why.kind, why.text, why.file, why.line, assumed=False))


_CODE_LAYERS = frozenset({"cpp", "stub", "registration", "cuda", "library"})




def _ambiguous(targets: list[Target]) -> bool:
    return ambiguous(targets)  # overloads of one op are walked together


def _is_registered_kernel(con, sym: dict) -> bool:
    if sym["kind"] == "global_kernel":
        return True
    return bool(q.kernels_registered_as(con, sym["name"])) and not q.dispatch_rows_with_kernel(con, sym["name"])
