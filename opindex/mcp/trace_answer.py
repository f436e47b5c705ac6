"""A trace as an answer, in three grades of detail, each a superset of the one before:
- main: the main chain (one line a hop, file:line, the decision points marked) with the build it is for, and the
  backward;
- branches: also every branch off the main chain, folded to one line with the hops below it (the CLI's default);
- full: every hop as a tree, the shared TensorIterator launch machinery too.
The text is the CLI's text renderer's; the structured content is Trace.to_dict's shape (docs/json.md) with the hops
of the grade, each hop's file and line as one `at`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .budget import Answer, error

if TYPE_CHECKING:
    from ..trace.model import Trace

DETAILS = ("main", "branches", "full")
MAX_DEPTH = 5  # the deepest trace the tool (and `opindex trace --depth`) takes


def trace_answer(t: Trace, detail: str) -> Answer:
    if not t.hops:
        kind = "unknown_name" if t.unknown else "ambiguous_name" if t.candidates else "usage"
        return error(kind, t.message or f"nothing found for {t.query!r}", t.candidates)
    from ..render.trace_text import render  # the trace machinery, loaded by the first trace (an `op` lookup
    full = detail == "full"                 # answers without it: the server's start is the SDK's and this)
    text = render(t, context=0, tree=full, full=full, branches=detail != "main", hint=False)
    return Answer(text + _more(t, detail), _structured(t, detail))


def narrower(t: Trace, detail: str) -> list[tuple[str, int]]:
    """The smaller grades of a refused trace and their sizes."""
    return [(f"detail={d!r}", trace_answer(t, d).size()) for d in reversed(DETAILS[:DETAILS.index(detail)])]


def _more(t: Trace, detail: str) -> str:
    """The arguments that show more, in the tool's words (the CLI's renderer names its flags)."""
    ways = []
    if detail == "main":
        n = len(_branch_heads(t))
        ways.append(f"detail='branches' (the {n} hop{'s' if n > 1 else ''} branching off the main chain, each "
                    f"folded with what is below it)" if n else "detail='branches'")
    if detail != "full":
        ways.append(f"detail='full' (all {len(t.hops)} hops as a tree)")
    if t.direction == "down":
        ways += [f"depth={t.depth + 1} (follow more op calls)"] if t.depth < MAX_DEPTH else []
        ways += ["backward=true (trace the ops the backward calls)"]
    return "\nMore: " + "; ".join(ways) + "\n" if ways else ""


def _branch_heads(t: Trace) -> list:
    on = {h.id for h in t.main_chain()}
    from ..trace.rank import TAIL_LAYERS
    return [h for h in t.hops if h.parent in on and h.id not in on and h.layer not in TAIL_LAYERS]


def _grade(t: Trace, detail: str) -> set[int]:
    """The ids of the hops a grade shows."""
    if detail == "full":
        return {h.id for h in t.hops}
    on = {h.id for h in t.main_chain()}
    backward = {h.id for h in t.hops if h.parent in on and h.layer == "backward"}
    formulas = {h.id for h in t.hops if h.parent in backward}
    ids = on | backward | formulas
    if detail == "branches":
        ids |= {h.id for h in _branch_heads(t)}
    return ids


def _structured(t: Trace, detail: str) -> dict:
    """The facts of the text: `choices` where the main chain went one way of several (the text's "default of N"),
    a branch head's `parent` and the count of hops `below` it. Prose (detail, schema) is the CLI's `trace --json`'s,
    not repeated here."""
    d = t.to_dict()
    ids = _grade(t, detail)
    on = set(d["main_chain"])
    below = _below(t)
    hops = []
    for h in d["hops"]:
        if h["id"] not in ids:
            continue
        hop = _compact(h)
        if h["id"] in on and detail != "full":
            hop.pop("parent", None)  # the chain is main_chain's order
        elif detail == "branches" and h["parent"] in on and below[h["id"]]:
            hop["below"] = below[h["id"]]
        hops.append(hop)
    out = {k: d[k] for k in ("query", "direction", "device", "dtype", "depth", "build", "build_conflicts",
                             "main_chain", "truncated") if d[k] not in ("", [], {}, None)}
    if d["choices"]:
        out["choices"] = [_choice(c) for c in d["choices"]]
    for k in ("given", "ruled_out"):
        if d.get(k):
            out[k] = d[k]
    if d["message"] and d["message"] != d["truncated"].get("reason"):
        out["message"] = d["message"]
    return {**out, "detail": detail, "hops_total": len(t.hops), "hops": hops}


def _choice(c: dict) -> dict:
    """A choice of the main chain, compact: each way's first hop and end, and only the tests that rule a way out
    (`assumed` false), once for the ways they rule out together (the first way with them, the others as `more`:
    [hop, end] pairs); the test the inputs leave open once, as `open` (the CLI's `trace --json` has every
    condition of every way)."""
    out = {k: c[k] for k in ("hop", "ways", "settled") if k in c}
    if c.get("file"):
        out["at"] = f"{c['file']}:{c['line']}" if c.get("line") else c["file"]
    options, grouped = [], {}
    for o in c.get("options", ()):
        way = {"hop": o["hop"], "end": o["end"]}
        ruled = [k["text"] for k in o.get("conditions", ()) if k.get("assumed") is False]
        if ruled and tuple(ruled) in grouped:  # ways a test rules out together (host_softmax's 50 launches of
            grouped[tuple(ruled)].setdefault("more", []).append([o["hop"], o["end"]])  # its else): one entry
            continue
        if ruled:
            way["ruled_out_by"] = ruled
            grouped[tuple(ruled)] = way
        options.append(way)
    out["options"] = options
    test = next((k for o in c.get("options", ()) for k in o.get("conditions", ()) if k.get("assumed") is None),
                None)
    if not c.get("settled") and test is not None:
        out["open"] = {"test": test["text"], "at": f"{test['file']}:{test['line']}" if test.get("file") else None}
    if c.get("sequence"):  # device work the body does beside the chain's: [hop, end] pairs, before and after it
        for order in ("before", "after"):
            pairs = [[s["hop"], s["end"]] for s in c["sequence"] if s["order"] == order]
            if pairs:
                out[f"runs_{order}"] = pairs
    return out


def _compact(h: dict) -> dict:
    """A hop (or a condition) without its prose and empty fields; file and line as `at` (relative to the
    checkout). Of its conditions only those read as false (`assumed` false: the call's values or the build rule
    the hop out); an undecided one is named once, as its choice's `open`."""
    out = {}
    for k, v in h.items():
        if k == "assumed":
            out[k] = v
        elif k in ("file", "line", "main", "detail", "schema") or v is None or v is False or v in ("", []) or (
                k == "found" and v == "call"):
            continue
        elif k == "conditions":  # the tests that rule it out; an undecided one is its choice's `open`
            kept = [_compact(c) for c in v if c.get("assumed") is False]
            if kept:
                out[k] = kept
        else:
            out[k] = v
    if h.get("file"):
        out["at"] = f"{h['file']}:{h['line']}" if h.get("line") else h["file"]
    return out


def _below(t: Trace) -> dict[int, int]:
    """Each hop's count of hops below it."""
    n = {h.id: 0 for h in t.hops}
    for h in reversed(t.hops):  # parents come before children
        if h.parent is not None:
            n[h.parent] += n[h.id] + 1
    return n
