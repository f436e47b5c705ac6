"""The bookkeeping of a walk: one TraceBuilder per trace, shared by the layer walkers (walk/) and the up walk.

It owns the hops and what the walk knows of them: which definitions, ops and stubs it has walked (seen_*), which of
those led to device code (useful_*: a later call of one is kept as a repeat), the hops that repeat one shown
above, the fan-out caps and the hop cap, and a snapshot to undo a walk that led nowhere (truncate). The layer
walkers decide what a hop is; the builder only keeps the trace consistent.
"""
from __future__ import annotations

import contextlib

from .model import Hop, Trace

MAX_HOPS = 5000  # the default cap of a trace's size (Trace.max_hops; the CLI's --max-hops)
_UNNOTED = contextlib.nullcontext()  # (reusable: it keeps nothing)
# Hops that make a followed C++ helper worth showing.
INTERESTING = frozenset({"stub", "registration", "cuda", "library", "native"})


class TraceBuilder:
    def __init__(self, trace: Trace):
        self.trace = trace
        self.seen_native: set[int] = set()
        self.seen_cpp: set = set()  # symbol ids walked down (the up walk keeps (qualified name, file) pairs)
        self.seen_stub: set[str] = set()
        self.stub_hops: dict[str, int] = {}  # stub -> the hop of its first call walked (a later call repeats it)
        # what led to device code when walked: a later call of it is kept as a "(shown above)" hop (live)
        self.useful_cpp: set[int] = set()
        self.useful_native: set[int] = set()
        self.live: set[int] = set()
        self.repeats: set[int] = set()  # hops that stand for something shown above (not walked again)
        self.call_sites: dict[int, tuple[str, int]] = {}  # helper hop -> where its caller called it
        self.call_notes: dict[int, list[Hop]] = {}  # hop id -> the hops a noted call adds below it (noted)
        self.call_under: dict[int, object] = {}  # hop id -> the conditions of the call being walked below it
        self.body_guards: dict[int, object] = {}  # body hop id -> the Guards its calls are read under (the line
        # that passes a functor to a callee: walk/sites.py functor_call)
        self.passed_under: dict[int, list] = {}  # functor hop id -> the conditions of the line that passed it
        # the op being walked, innermost last: its entry (the schema's default arguments, read by the conditions)
        # and whether it runs through CompositeImplicitAutograd on the device
        self.defaults: list[dict] = []
        self.implicit: list[bool] = []
        self.memo: dict = {}  # what a step reads once per trace (bodies.stand_in: a definition's stand-in)
        # helper id -> the body being walked that calls it directly; op API name -> likewise (bodies.calls)
        self.reserved: dict[int, str] = {}
        self.reserved_ops: dict[str, str] = {}
        self.calling_ops: list[str] = []  # the op API names whose calls are being walked (walk/sites.py op_call)

    def add(self, parent: Hop | None, layer: str, kind: str, name: str, file=None, line=None, detail="",
            absent=False, **fields) -> Hop:
        """A hop below `parent`; `fields` are Hop's typed fields (found, conditions, kernel, schema, op)."""
        hop = Hop(len(self.trace.hops), parent.id if parent else None, layer, kind, name, file, line, detail, absent,
                  **fields)
        if parent is not None and parent.id in self.call_notes:  # a hop a noted call adds below the body
            self.call_notes[parent.id].append(hop)
        self.trace.hops.append(hop)
        return hop

    def noted(self, parent: Hop, under):
        """A call under conditions (`#if`, an `if` the defaults do not take): the hops it adds directly below
        `parent` carry them, added when the call is walked (after what the walk adds to them)."""
        if not under.notes and not under.conditions:
            return _UNNOTED  # (most calls: no context manager made for them, ~1,500 a trace)
        return self._noted(parent, under)

    def _noted(self, parent: Hop, under) -> "_Noted":
        return _Noted(self, parent, under)

    def ruled_out(self, parent: Hop | None) -> bool:
        """Whether the call being walked below `parent` sits under a condition read as false (its literal arguments
        then say nothing of the default path: softmax's `at::_softmax(input_, dim_, true)` for half inputs)."""
        under = self.call_under.get(parent.id) if parent is not None else None
        return under is not None and any(c.assumed is False for c in under.conditions)

    def capped(self, items: list, k: int, what: str, parent: Hop | None) -> list:
        """items[:k], the down walk's fan-out cap for `what`, stated where it cuts (a note hop and
        truncated["fan_out"]) and lifted by limit=0 (`--limit 0`)."""
        if self.trace.limit == 0 or len(items) <= k:
            return items
        if parent is not None:
            self.add(parent, parent.layer, "capped", f"{len(items) - k} more {what} not followed (the first {k} "
                     f"are; --limit 0 follows all)", absent=True)
        return items[:k]

    def state_caps(self) -> None:
        """truncated["fan_out"]: the fan-out caps that cut what the trace shows (a capped branch the walk later
        dropped, because it led nowhere, does not count)."""
        cut = [h for h in self.trace.hops if h.kind == "capped"]
        if cut:
            said = f"{len(cut)} hops follow" if len(cut) > 1 else "1 hop follows"
            self.trace.cut("fan_out", len(cut), f"{said} only the first few of what they lead to "
                           "and say so ('more ... not followed'); --limit 0 (Index.trace(..., limit=0)) follows all")

    def repeat(self, hop: Hop) -> Hop:
        """Mark a hop as a repeat of one shown above (Trace.finish finds which)."""
        self.repeats.add(hop.id)
        hop.detail, hop.shown_above = "(shown above)", True
        return hop

    def truncate(self, mark: int) -> None:
        """Drop the hops from `mark` on (a helper that led nowhere)."""
        del self.trace.hops[mark:]
        self.repeats.difference_update([i for i in self.repeats if i >= mark])
        self.live.difference_update([i for i in self.live if i >= mark])
        while self.call_sites and next(reversed(self.call_sites)) >= mark:  # ids only grow: drop from the end
            self.call_sites.popitem()

    def full(self) -> bool:
        limit = self.trace.max_hops
        if limit and len(self.trace.hops) >= limit:
            self.trace.cut("hops", limit, f"the walk stopped at {limit} hops; raise max_hops (--max-hops N, 0 for "
                           "no limit) to see the rest")
            return True
        return False

    def prune(self, mark: int, keep_if=INTERESTING) -> bool:
        """Drop hops added since `mark` unless one of them is interesting; True when kept."""
        if any(h.layer in keep_if or h.id in self.live for h in self.trace.hops[mark:]):
            return True
        self.truncate(mark)
        return False

    def snapshot(self):
        """What the walk has seen, to restore after a walk whose hops are dropped (restore)."""
        return (set(self.seen_native), set(self.seen_cpp), set(self.seen_stub), set(self.useful_cpp),
                set(self.useful_native))

    def restore(self, saved) -> None:
        self.seen_native, self.seen_cpp, self.seen_stub, self.useful_cpp, self.useful_native = \
            (set(s) for s in saved)


class _Noted:
    """Builder.noted's context for a call under conditions (a class, not a generator: ~1,000 a trace, and
    contextlib's generator wrapper cost more than the rest of it)."""
    __slots__ = ("b", "parent", "under", "added")

    def __init__(self, b: TraceBuilder, parent: Hop, under):
        self.b, self.parent, self.under = b, parent, under

    def __enter__(self) -> None:
        self.added: list[Hop] = []
        self.b.call_notes[self.parent.id] = self.added
        self.b.call_under[self.parent.id] = self.under

    def __exit__(self, *exc) -> None:
        b, under = self.b, self.under
        del b.call_notes[self.parent.id]
        b.call_under.pop(self.parent.id, None)
        kept = len(b.trace.hops)
        for h in self.added:
            if h.id < kept and b.trace.hops[h.id] is h:  # not cut since
                h.detail += under.suffix
                h.conditions += under.conditions
