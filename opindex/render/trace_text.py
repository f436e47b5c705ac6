"""A trace as text. The default answers on one screen: the main chain (the default path, one line per hop with
file:line), the branches folded to one line each with a count, the backward, and the flags that expand it.
`tree=True` prints every hop as a tree, `snippets=True` the source lines under each hop shown."""
from __future__ import annotations

from ..trace.model import TAIL_LAYERS, Found, Hop, Trace, bare_name
from .printable import printable
from .screen import cut as _cut, cut_name as _cut_name, height, plain as _plain, wrap
from .source import snippet

SCREEN = 60  # the default text of a trace aims to fit this many lines; what does not fit is counted, never dropped
_LAYER_WIDTH = 12
_MIN_NAME = 40  # a name is never cut shorter than this to fit a terminal
_MIN_BRANCH_NAME = 24  # nor a folded branch's (its line wraps instead)

# ANSI styles per layer (only on a terminal: see render/terminal.py)
_STYLE = {"python": "33", "bridge": "33", "native": "34", "dispatch": "34", "cpp": "36", "stub": "35",
          "registration": "35", "cuda": "32", "library": "32;1", "backward": "31", "decomposition": "33",
          "codegen": "2"}


class _Paint:
    def __init__(self, on: bool, links: bool = False, root: str | None = None):
        self.on, self.links, self.root = on, links, root

    def __call__(self, text: str, style: str) -> str:
        return f"\x1b[{style}m{text}\x1b[0m" if self.on and text else text

    def layer(self, layer: str, text: str | None = None) -> str:
        return self(text if text is not None else layer, _STYLE.get(layer, "0"))

    def where(self, text: str, h: Hop | None) -> str:
        """A hop's `file:line`, dim, and with `links` an OSC 8 hyperlink to the file (a click opens it)."""
        shown = self(text, "2")
        if not (self.links and text and h is not None and h.file):
            return shown
        from .links import osc8, terminal_link
        return osc8(shown, terminal_link(self.root, h.file, h.line))


def render(t: Trace, context: int = 2, full: bool = False, tree: bool = False, snippets: bool = False,
           color: bool = False, width: int | None = None, links: bool = False, legend: bool = False,
           branches: bool = True, hint: bool = True) -> str:
    """The text trace. The TensorIterator machinery under each launcher call (gpu_kernel -> gpu_kernel_impl ->
    launch_vectorized_kernel -> <<<vectorized_elementwise_kernel>>>) is the same for every op: folded to one line
    unless `full`; the JSON always has every hop. `full` implies `tree`. `width` (a terminal's) cuts long names,
    never a file path or a launch configuration: a line still wider wraps at its column gaps; None cuts and wraps
    nothing. `links`: each file:line an OSC 8 hyperlink (a terminal that supports them makes it clickable).
    `legend`: the line that explains "◆ default of N" (the CLI shows it once per terminal session).
    `branches=False` leaves the folded branches out (the MCP server's smallest grade says so and how to ask for
    them), `hint=False` the line of CLI flags that expand the text."""
    paint = _Paint(color, links, t.root)
    if not t.hops:
        lines = [t.message or f"nothing found for {t.query!r}"]
        lines += [f"  {c}" for c in t.candidates]
        return "\n".join(lines) + "\n"
    tree = tree or full
    hidden = {} if full else machinery(t)
    direction = "bottom-up" if t.direction == "up" else "top-down"
    facts = f"({direction}, device {t.device}, dtype {t.dtype}, depth {t.depth}; {len(t.hops)} hops)"
    query = t.call["text"] if t.call else t.query  # a traced call: as it was written
    if width and len(f"opindex trace {query}   {facts}") > width:  # the same facts in fewer words
        facts = f"({direction}, {t.device}, {t.dtype}, depth {t.depth}, {len(t.hops)} hops)"
    out = [paint(f"opindex trace {query}", "1") + f"   {facts}"]
    if t.index:  # which index answered: a trace of the wrong checkout shows at once
        out.append(paint(t.which_index().removeprefix("the "), "2"))
    if t.call is not None:  # a traced call: the values its tests read, one line (what could not be read after it)
        out.append(f"Call: {t.call['callee']}({t.call_summary})")
        out += [f"  note: {n}" for n in t.call.get("notes", [])]
    if t.given is not None:  # a name's arguments read as given: their defaults rule out every way on
        g = t.given
        out.append(f"Given: {', '.join(g['arguments'])} (values unknown): {g['why']}, {g['file']}:{g['line']}")
    out.append("")
    if t.build or t.build_conflicts:
        out += _build_lines(t, paint, width) + [""]
    if t.message and t.message != t.truncated.get("reason"):  # how a kernel name was read, which definition
        out += [f"note: {t.message}", ""]
    chain = main_chain(t, hidden)
    head = list(out)
    out += _chain_section(t, chain, hidden, paint, width, snippets and not tree, context, legend)
    if tree:
        out += ["", paint("Tree", "1"), ""] + tree_lines(t, hidden, paint, width, snippets, context)
        missing = [h for h in t.hops if h.absent and h.id not in hidden and h.kind != "capped"]
        if missing:
            out += ["", paint("Not found by opindex", "1"), ""] + [f"  - {h.name}" for h in missing]
        if hidden:
            out += ["", f"{len(hidden)} hops of shared TensorIterator launch machinery folded (--full shows them)"]
    end = ["", paint(f"TRUNCATED: {t.truncated['reason']}", "31;1")] if t.truncated else []
    if not tree and hint:
        marked = not legend and any("◆" in _plain(line) for line in out)
        end += ["", _expand_hint(t, width, marked)]
    if not tree:
        tails = _tails(t, chain, hidden, paint, width)
        compact = bool(width) and height(out + tails + end, width) + 6 > SCREEN  # 6: the least branch section
        if compact:  # first without the lines naming work done in sequence beside the chain's (the marks stay)
            out = head + _chain_section(t, chain, hidden, paint, width, snippets and not tree, context, legend,
                                        sequence=False)
            compact = height(out + tails + end, width) + 6 > SCREEN
        if compact:  # a chain whose lines wrap: no blank line under a title, one backward entry
            out = head + _chain_section(t, chain, hidden, paint, width, snippets, context, legend, gap=[])
            tails = _tails(t, chain, hidden, paint, width, compact=True)
        budget = SCREEN - height(out + tails + end, width)  # what the screen holds once wrapped
        out += _branch_section(t, chain, hidden, paint, width, budget, gap=[] if compact else [""]) \
            if branches else []
        out += tails
    out += end
    if width:
        out = [part for line in out for part in wrap(line, width)]
    return "\n".join(out) + "\n"


# -- the build traced -------------------------------------------------------------------------------------------------
def _build_lines(t: Trace, paint, width: int | None) -> list[str]:
    """One line: each setting an #if of the walk read, grouped by where its value came from (what the user said
    and what the checkout requires first, upstream defaults last); a line per setting the checkout cannot build
    with."""
    groups: dict[str, list[str]] = {}
    for s in t.build:
        value = "undefined" if s["value"] is None else "defined" if s["value"] == "" else f"={s['value']}"
        text = f"{s['name']} {value}" if not value.startswith("=") else f"{s['name']}{value}"
        key = "upstream default" if s["source"].startswith("upstream default") else s["source"]
        groups.setdefault(key, []).append(text)
    order = sorted(groups, key=lambda k: (k == "upstream default", k.startswith("#define"), k))
    parts = [f"{', '.join(groups[k])} ({k})" for k in order]
    line = "Build: " + "; ".join(parts)
    if width and len(line) > width:
        line = _cut(line, width - 14) + " (--json: all)"
    return [line] + [paint(f"WARNING: {c}", "31;1") for c in t.build_conflicts] + _stand_in_lines(t)


def _stand_in_lines(t: Trace) -> list[str]:
    """A line per definition the main chain walks in place of one this build leaves out (walk/bodies.stand_in)."""
    out = []
    for h in t.main_chain():
        if h.found is Found.STAND_IN:
            gone = next((c for c in h.conditions if c.assumed is True and c.kind == "#if"), None)
            where = f" (#if {gone.text.removeprefix('!(').removesuffix(')')} at {gone.file}:{gone.line} is false)" \
                if gone else ""
            left = next((k for k in _kids(t).get(h.parent, ()) if k.called_at == h.called_at and k is not h
                         and k.found is not Found.STAND_IN), None)
            what = f"{left.name} ({_where(left)})" if left else "the callee"
            out.append(f"Stand-in: {h.name} ({_where(h)}) for {what}, which this build leaves out{where}: the same "
                       f"parameters, named by its stem")
    return out


# -- the main chain ---------------------------------------------------------------------------------------------------
def main_chain(t: Trace, hidden: dict[int, int] | None = None) -> list[Hop]:
    """The trace's default path (Trace.main_chain), cut where it enters folded TensorIterator machinery (the
    launcher call stands for it)."""
    chain = t.main_chain()
    hidden = hidden or {}
    for i, h in enumerate(chain):
        if h.id in hidden:
            return chain[:i]
    return chain


def _chain_section(t: Trace, chain: list[Hop], hidden, paint, width, snippets: bool, context: int,
                   legend: bool = False, gap=("",), sequence: bool = True) -> list[str]:
    if t.direction == "up":
        title = "Main chain: from the start up to an nn.Module, else the first Python surface"
    else:
        end = chain[-1] if chain else None
        device = end is not None and (end.layer in ("cuda", "library") or end.kind == "ufunc_inner_loop")
        what = "where the inputs leave open which kernel runs" if _switch(t) is not None else \
            "the device code it ends in" if device else "where the inputs rule out every way on" \
            if t.ruled_out() is not None else "its deepest hop (no device code found)"
        title = f"Main chain: the default path on {t.device.upper()}, to {what}"
    out = [paint(title, "1")]
    summary = ranked_summary(t, chain) if gap else None  # (compact: each hop's `◆N ranked` says it)
    if summary:  # the end rests on a ranking there: said up front, not only at each hop (issue 28, point 4)
        out.append(paint(f"  {summary}", "2"))
    out += [*gap]
    # compact (a chain whose lines wrap): a hop in the file of the hop above shows its line alone, `:14703`, as
    # `opindex diff` does (the hyperlink keeps the whole path)
    shown = {h.id: f":{h.line}" if not gap and i and h.file and h.line and h.file == chain[i - 1].file
             else _where(h) for i, h in enumerate(chain)}
    pad = min(max((len(h.name) for h in chain), default=0), 64)
    if width and chain:  # one name column for the hops whose line fits the width (a line that wraps has none)
        fixed = lambda h: 5 + _LAYER_WIDTH + 1 + len(shown[h.id]) + 2  # noqa: E731
        pad = min(pad, max((len(h.name) for h in chain if fixed(h) + len(h.name) <= width), default=0))
    forks = 0
    for i, h in enumerate(chain, 1):
        name = _folded(t, h, hidden) if _folds(h, hidden) else h.name
        choice = _choice(t, h)
        forks += bool(choice)
        suffix = f"  {_mark(choice)}" if choice else ""
        if choice and choice.get("switch"):  # the chain stops here: no way taken (the line under the chain says)
            suffix, choice = f"  ◆ one of {choice['ways']}, open", None
        line = _hop_line(f"{i:>3}  ", h, name, paint, width, paint(suffix, "1"), pad, where=shown[h.id])
        if suffix and width:  # the short form where the long one would not fit the line in the name column
            short = f"  {_mark(choice, short=True)}"  # (unless it wraps more)
            aligned = 5 + _LAYER_WIDTH + 1 + max(pad, len(name)) + 2 + len(shown[h.id])
            other = _hop_line(f"{i:>3}  ", h, name, paint, width, paint(short, "1"), pad, where=shown[h.id])
            if aligned + len(suffix) > width and height([other], width) <= height([line], width):
                line = other
        out.append(line)
        why = _why(choice, t, compact=not gap) if choice else None
        along = _sequence_note(choice, t) if choice and gap and sequence else None  # (compact: the mark alone)
        for note in (why, along):  # one short line each: the test that settled the choice, or the one the inputs
            if note:  # left open; the device work the body does beside the chain's, in sequence
                out.append(paint("       " + (note if not width or len(note) <= width - 7
                                              else note[:width - 8] + "…"), "2"))
        if snippets:
            out += [f"         {s}" for s in snippet(t.root, h.file, h.line, 0, context)]
    sw = _switch(t) if t.direction == "down" else None
    if sw is not None:
        out.append(paint("     " + switch_note(t, sw), "2"))
    stop = t.ruled_out() if t.direction == "down" else None
    if stop is not None:
        out.append(paint(f"     stops here: every way on to device code runs under a condition these inputs or "
                         f"this build rule out; the first, {stop.name} at {_where(stop)}, {_needs(stop)}", "2"))
    if forks and legend:
        legend = ("◆ default of N (◆N where the line is narrow): N-1 other branches of the hop above also reach "
                  "device code (↳ below); without "
                  "', ranked' the call's arguments, dtype and build rule the others out; with it they do not, and the "
                  "default is ranked: device code that computes, the op's own ops before helpers, a vendor library "
                  "before own kernels, then source order (fast paths come first); ◆ last of N in sequence: the "
                  "hop's body makes N-1 other calls that reach device code beside it, before or after (the line "
                  "below names them), not instead of it")
        if width:
            import textwrap
            out += [paint(line, "2") for line in textwrap.wrap(legend, width - 5, initial_indent="     ",
                                                               subsequent_indent="       ")]
        else:
            out.append(paint("     " + legend, "2"))
    return out


def _switch(t: Trace) -> dict | None:
    from ..trace.rank import switch
    return switch(t)


def switch_note(t: Trace, sw: dict) -> str:
    """`stops at gpu_kernel_impl_maca_arity2 (CUDALoops_maca_arity2.cuh:5945): one of 40 ways runs, by ndim (ndim
    == 1 at :6008), which these inputs do not settle -> A; or B, C (+37 more)`: where a main chain stops at a
    switch (trace/rank.py _stop_at_switch), the value it tests and the kernels its ways end at."""
    hop = t.hops[sw["hop"]]
    choice = _choice(t, hop)
    ways = _open_ways(choice, t) if choice else ""
    where = f" at {sw['file'].rpartition('/')[2]}:{sw['line']}" if sw.get("file") else ""
    return (f"stops at {hop.name.split('::')[-1]} ({_where(hop)}): one of {len(sw['ways'])} ways runs, by "
            f"{sw['value']} ({sw['text']}{where}; {sw['cases']} values tested), which these inputs do not "
            f"settle{ways}")


def ranked_summary(t: Trace, chain: list[Hop]) -> str | None:
    """`ranked at hops 14, 21 (2 choices the inputs do not settle)`, or None where every choice on the chain is
    settled (the text's and the notebook's line under the chain's title)."""
    ranked = [str(i) for i, h in enumerate(chain, 1) if (c := _choice(t, h)) is not None and not c["settled"]
              and not c.get("switch")]
    sw = _switch(t) if t.direction == "down" else None
    stop = f"stops where the inputs leave open which kernel runs (by {sw['value']})" if sw else ""
    if not ranked:
        return stop or None
    if len(ranked) == 1:
        said = f"ranked at hop {ranked[0]} (a choice the inputs do not settle)"
    else:
        said = f"ranked at hops {', '.join(ranked)} ({len(ranked)} choices the inputs do not settle)"
    return f"{said}; {stop}" if stop else said


def choice_note(t: Trace, hop: Hop) -> tuple[str, str | None] | None:
    """(`◆ default of N[, ranked]`, the line under it: what decided the choice or what it leaves open) for a main
    chain hop where the chain went one way of several; None elsewhere (the notebook's marks, as the text's)."""
    choice = _choice(t, hop)
    if choice is None:
        return None
    if choice.get("switch"):  # the chain stops here (rank._stop_at_switch)
        sw = _switch(t)
        return f"◆ one of {choice['ways']}, open", switch_note(t, sw) if sw else None
    notes = [n for n in (_why(choice, t), _sequence_note(choice, t)) if n]
    return _mark(choice), " — ".join(notes) or None


def _mark(choice: dict, short: bool = False) -> str:
    """`◆ default of N[, ranked]` (`◆N[ ranked]` short) at a choice; `◆ last of N in sequence` (`◆N/N in
    sequence`) where the hop's only other ways are device work its body does before or after it."""
    if choice["ways"] == 1 and choice.get("sequence"):
        n = len(choice["sequence"]) + 1
        at = 1 + sum(s["order"] == "before" for s in choice["sequence"])
        if short:
            return f"◆{at}/{n} in sequence"
        return f"◆ {'last' if at == n else 'first' if at == 1 else f'{at}th'} of {n} in sequence"
    if short:
        return f"◆{choice['ways']}" + ("" if choice["settled"] else " ranked")
    return f"◆ default of {choice['ways']}" + ("" if choice["settled"] else ", ranked")


def _sequence_note(choice: dict, t: Trace) -> str | None:
    """`runs after fill, radixFindKthValues (+2 more); then X (if sorted && ...) (in sequence, body at
    TensorTopK.cu:642)`: the device code of the calls the body makes before and after the main chain's, each time
    it makes that one or under a test of their own the inputs leave open (trace/rank.py choices' `sequence`), at
    most MAX_WAYS named each side and the rest counted."""
    parts = []
    for order, said in (("before", "runs after"), ("after", "then")):
        names: list[str] = []
        for s in choice.get("sequence", ()):
            end = s["end"] if s["end"] is not None else s["hop"]
            name = bare_name(t.hops[end]) if 0 <= end < len(t.hops) else None
            if name and s.get("conditions"):  # under a test of its own the inputs leave open
                test = " && ".join(c["text"] for c in s["conditions"])
                name += f" (if {test if len(test) <= MAX_IF else test[:MAX_IF - 1] + '…'})"
            if name and s.get("fix_up"):  # its threads return on a test of the data: the data says where it writes
                name += f" (a fix-up: writes where the data test at {s['fix_up'].rpartition('/')[2]} holds)"
            if s["order"] == order and name and name not in names:
                names.append(name)
        if names:
            more = f" (+{len(names) - MAX_WAYS} more)" if len(names) > MAX_WAYS else ""
            parts.append(f"{said} {', '.join(names[:MAX_WAYS])}{more}")
    if not parts:
        return None
    where = f", body at {choice['file'].rpartition('/')[2]}:{choice['line']}" if choice.get("file") else ""
    return f"{'; '.join(parts)} (in sequence{where})"


def header_lines(t: Trace) -> list[str]:
    """The lines under the title that state what was traced: the call's values, arguments given without values,
    the build (each setting and where it came from), its conflicts and the stand-ins walked (plain text: the
    notebook's header, as the text's)."""
    out = []
    if t.call is not None:
        out.append(f"Call: {t.call['callee']}({t.call_summary})")
        out += [f"  note: {n}" for n in t.call.get("notes", [])]
    if t.given is not None:
        g = t.given
        out.append(f"Given: {', '.join(g['arguments'])} (values unknown): {g['why']}, {g['file']}:{g['line']}")
    if t.build or t.build_conflicts:
        out += _build_lines(t, _Paint(False, False, t.root), None)
    return out


def _why(choice: dict, t: Trace | None = None, compact: bool = False) -> str | None:
    """What decided a choice of the main chain, where the source states it: for a settled one the first test that
    rules another way out (`others need at::isComplexType(common_dtype) at UnarySpecialOpsKernel.cu:126 (false
    here)`), for a ranked one the first test the inputs leave open and the device code each way not ruled out
    ends at, the chain's first (`open: dim_size <= 1024 && ... at SoftMax.cu:719 -> softmax_warp_forward; or
    cunn_SoftMaxForward`)."""
    others = [c for o in choice["options"][1:] for c in o["conditions"]]
    if choice["settled"]:
        test = next((c for c in others if c["assumed"] is False), None)
        label, value = "others need", " (false here)"
    else:
        test = next((c for o in choice["options"] for c in o["conditions"] if c["assumed"] is None), None)
        label, value = "open:", ""
    ways = _open_ways(choice, t) if t is not None and not choice["settled"] else ""
    if test is None and not choice["settled"] and choice.get("file") and not compact:  # ranked, and no test
        # read tells them apart (compact: the hop's `◆N ranked` alone)
        # (THC_pointwiseApply2's 12 launches, chosen by a macro's switch on the dims; multinomial_out's calls in
        # sequence, one of which makes the result)
        return (f"open: no test parts these {choice['ways']} ways, ranked by the work each does (body at "
                f"{choice['file'].rpartition('/')[2]}:{choice['line']}){ways}")
    if test is None:
        return None
    where = f" at {test['file'].rpartition('/')[2]}:{test['line']}" if test["file"] and test["line"] else ""
    text = test["text"] if len(test["text"]) <= MAX_TEST else test["text"][:MAX_TEST - 1] + "…"  # (JSON: whole)
    return f"{label} {text}{where}{value}{ways}"


MAX_TEST = 120  # characters of a test shown under a choice (cut with …: the ways after it stay readable)


MAX_WAYS = 4  # device code named per open decision in the text (JSON `open`: every option)
MAX_IF = 80  # characters of the tests a call in sequence runs under, in the text (JSON: whole)


def _open_ways(choice: dict, t: Trace) -> str:
    """` -> A; or B, C`: the device code the ways of an open choice end at, the main chain's first, those the
    inputs rule out left out; at most MAX_WAYS named, the rest counted."""
    names: list[str] = []
    for i, o in enumerate(choice["options"]):
        if i and any(c["assumed"] is False for c in o["conditions"]):
            continue
        if o["end"] is not None and 0 <= o["end"] < len(t.hops):
            name = bare_name(t.hops[o["end"]])
            if name and name not in names:
                names.append(name)
    if len(names) < 2:
        return ""
    more = f" (+{len(names) - MAX_WAYS} more)" if len(names) > MAX_WAYS else ""
    return f" -> {names[0]}; or {', '.join(names[1:MAX_WAYS])}{more}"


def _choice(t: Trace, hop: Hop) -> dict | None:
    """The main chain's choice at `hop` (trace/rank.py choices): how many ways, and whether the inputs settled it."""
    cached = getattr(t, "_choices_cache", None)
    if cached is None or cached[0] != len(t.hops):
        from ..trace.rank import choices
        cached = (len(t.hops), {c["hop"]: c for c in choices(t)})
        try:
            object.__setattr__(t, "_choices_cache", cached)
        except AttributeError:
            pass
    return cached[1].get(hop.id)


def _subtree(t: Trace, hop: Hop) -> list[Hop]:
    out, stack = [], [hop]
    kids = _kids(t)
    while stack:
        h = stack.pop()
        out.append(h)
        stack.extend(kids.get(h.id, ()))
    return out


def _kids(t: Trace) -> dict:
    cache = getattr(t, "_kids_cache", None)
    if cache is None or cache[0] != len(t.hops):
        index: dict = {}
        for h in t.hops:
            index.setdefault(h.parent, []).append(h)
        cache = (len(t.hops), index)
        try:
            object.__setattr__(t, "_kids_cache", cache)
        except AttributeError:
            pass
    return cache[1]


def _hop_line(prefix: str, h: Hop, name: str, paint, width: int | None, suffix: str = "", pad: int = 0,
              min_name: int = _MIN_NAME, where: str | None = None) -> str:
    """One hop a line: `where` (default its file:line) is what shows of its location (a hyperlink to the file)."""
    where = printable(_where(h) if where is None else where)
    name = printable(name)  # names and paths come from files: no control characters
    mark = "✗ " if h.absent else ""
    fixed = len(prefix) + _LAYER_WIDTH + 1 + len(mark) + (len(where) + 2 if where else 0) + len(_plain(suffix))
    if width and "<<<" not in name:  # a name gives way to the width down to min_name characters; a path and a
        room = width - fixed  # launch configuration never (the line then wraps)
        if room >= min(len(name), min_name):
            name, pad = _cut_name(name, room), min(pad, room)
        else:  # the line wraps whatever the name: the name keeps the first line, the path goes below
            name, pad = _cut_name(name, width - len(prefix) - _LAYER_WIDTH - 1 - len(mark)), 0
    name = name.ljust(pad) if where else name
    layer = paint.layer(h.layer, h.layer.ljust(_LAYER_WIDTH))
    text = paint(mark + name, "31") if h.absent else name
    return f"{prefix}{layer} {text}" + (f"  {paint.where(where, h)}" if where else "") + suffix


def _short(name: str) -> str:
    return name.split("(")[0].split("<")[0]


# -- branches ---------------------------------------------------------------------------------------------------------
def _branch_section(t: Trace, chain: list[Hop], hidden, paint, width, budget: int, gap=("",)) -> list[str]:
    """Every child of a chain hop that is not the next chain hop, folded to one line with the number of hops below
    it; leaves of one layer under one hop share a line, same-named branches one line with ×n."""
    on_chain = {h.id for h in chain}
    lines: list[tuple[str, int]] = []  # (text, hops it stands for)
    ends = {h.id for h in t.ends()}
    for i, h in enumerate(chain, 1):
        kids = [k for k in _kids(t).get(h.id, []) if k.id not in on_chain and k.layer not in TAIL_LAYERS
                and k.id not in hidden]
        if t.direction == "up":
            kids = [k for k in kids]
        leaves: dict[tuple[str, bool], list[Hop]] = {}  # (layer, helpers without device code) -> leaves
        groups: dict[tuple, list[Hop]] = {}
        for k in kids:
            if not _kids(t).get(k.id) and not k.absent and k.kind not in ("chooser", "op_body"):
                leaves.setdefault((k.layer, k.kind == "helper"), []).append(k)
            else:
                groups.setdefault((k.layer, k.name), []).append(k)
        for (layer, name), same in groups.items():
            hops = [x for k in same for x in _subtree(t, k) if x.id not in hidden]
            count = f" ×{len(same)}" if len(same) > 1 else ""
            first = same[0]
            where = _where(first) + (f" +{len(same) - 1}" if len(same) > 1 else "")
            below = [x for x in hops if x.id in ends and x.layer not in TAIL_LAYERS]
            absent = [x for x in hops if x.absent and x.layer not in TAIL_LAYERS]
            if first.kind == "chooser":  # its own line: where the path below is chosen, and what tests it
                test = first.conditions[0] if first.conditions else None
                note = f"chooses the path: {test.text} at :{test.line}" if test else first.detail
            elif first.kind == "op_body":  # its own line: the op's body, and where it is handed to a launcher
                note = "the op's body: a functor built at :" + first.called_at.rpartition(":")[2] \
                    if first.called_at else "the op's body: a functor"
            elif below:
                note = f"{len(hops)} hops; device code: {_short(below[0].name.removeprefix('__global__ '))}"
            elif first.absent:
                note = ""
            elif absent:
                note = f"{len(hops)} hops; ✗ {absent[0].name}"
            else:
                note = f"{len(hops)} hops"
            stand_in = Hop(first.id, first.parent, layer, first.kind, f"{name}{count}", None, None, "",
                           first.absent)
            head = len(f"{i:>3} ↳ ") + _LAYER_WIDTH + 1 + len(name) + len(count) + len(where) + 2
            if width and note and head + len(note) + 4 > width:  # the note gives way before the name: cut,
                room = width - head - 4  # then its count of hops alone, then none
                note = _cut(note, room) if room >= 20 else f"{len(hops)} hops" if room >= len(f"{len(hops)} hops") \
                    else ""
            line = _hop_line(f"{i:>3} ↳ ", stand_in, f"{name}{count}", paint, width,
                             (f"  {paint.where(where, first)}" if where else "") + (f"  ({note})" if note else ""),
                             min_name=_MIN_BRANCH_NAME)
            lines.append((line, len(hops)))
        grouped = [k for key in list(leaves) for k in leaves[key] if k.kind == "grouped"]
        if grouped:
            leaves = {key: rest for key, same in leaves.items()
                      if (rest := [k for k in same if k.kind != "grouped"])}
            n = sum(int(k.name.split()[0]) for k in grouped if k.name.split()[0].isdigit())
            stand_in = Hop(grouped[0].id, grouped[0].parent, grouped[0].layer, "grouped", "")
            lines.append((_hop_line(f"{i:>3} ↳ ", stand_in, f"{n} more callers in {len(grouped)} files, grouped by "
                                    f"file, not walked (--tree names each; --limit 0 walks them)", paint, width),
                          len(grouped)))
        for (layer, helpers), same in leaves.items():
            names = list(dict.fromkeys(_short(k.name) for k in same))
            files = sorted({k.file for k in same if k.file})
            where = files[0] if len(files) == 1 else f"{len(files)} files" if files else ""
            text = f"{len(same)} more: " + ", ".join(names) if len(same) > 1 else names[0]
            if helpers:  # helper_leaves: what the body calls that leads to no device code
                text = "helpers, no device code below: " + ", ".join(names)
            stand_in = Hop(same[0].id, same[0].parent, layer, same[0].kind, text)
            suffix = f"  {paint(where, '2')}" if where and len(same) > 1 else ""
            if len(same) == 1:
                stand_in.file, stand_in.line = same[0].file, same[0].line
                suffix = "  (shown above)" if same[0].shown_above else ""
            lines.append((_hop_line(f"{i:>3} ↳ ", stand_in, text, paint, width, suffix), len(same)))
    if not lines:
        return []
    out = ["", paint("Branches: each folded to one line, with the hops below it (--tree shows them)", "1"), *gap]
    room = max(budget - len(out), 3)
    if height([text for text, _ in lines], width) > room:
        kept, used = 0, 1  # the line that counts the rest
        while kept < len(lines) - 1 and used + height([lines[kept][0]], width) <= room:
            used += height([lines[kept][0]], width)
            kept += 1
        kept = max(kept, 1)
        rest = lines[kept:]
        out += [text for text, _ in lines[:kept]]
        out.append(paint(f"  … and {len(rest)} more branches ({sum(n for _, n in rest)} hops): --tree shows them",
                         "33"))
    else:
        out += [text for text, _ in lines]
    return out


# -- backward, decompositions, codegen, what was not found -------------------------------------------------------------
def _tails(t: Trace, chain: list[Hop], hidden, paint, width, compact: bool = False) -> list[str]:
    """The backward (`compact`: one derivatives.yaml entry, no blank line under the title), then what else the
    tree holds."""
    out: list[str] = []
    chain_ids = {h.id for h in chain}
    kids = _kids(t)
    derivatives = [k for h in chain for k in kids.get(h.id, []) if k.layer == "backward" and not k.absent]
    notes = [k for h in chain for k in kids.get(h.id, []) if k.layer == "backward" and k.absent]
    # a composite on the chain: the formulas of every op its kernel calls, not only of the one the chain follows
    # (F.cross_entropy: _log_softmax's and nll_loss_forward's; embedding_bag: _embedding_bag's), on the default
    # path (not behind a branch the default arguments do not take)
    shown = {d.id for d in derivatives}
    own = any(d.kind == "derivative" and d.found is not Found.COMPOSITE_CALLEE for d in derivatives)
    route = _default_route(t)
    # the ops a composite's kernel calls itself (F.cross_entropy: log_softmax, nll_loss_nd) before those its helpers
    # call (the probability-target helper's mul, sum), each group nearest to the chain first
    callees = [] if own else [  # an op with a formula of its own (index_put_: index_put's) is differentiated by it
        (_off_chain(path, chain_ids).kind != "calls_op", sum(a.id not in chain_ids for a in path), k.id, k)
        for k in t.hops if k.kind == "derivative" and k.found is Found.COMPOSITE_CALLEE and k.id not in shown
        for path in [route(t.path(k))] if path and any(a.id in chain_ids for a in path)]
    derivatives += [k for *_, k in sorted(callees)]
    if t.direction == "down":
        out += ["", paint("Backward", "1")] + ([] if compact else [""])
        shown_entries = 1 if compact else 3
        if not derivatives:
            out += [_hop_line("     ", n, n.name, paint, width) for n in notes[:2]] or [
                "     no derivatives.yaml entry on the main chain"]
        for i, d in enumerate(derivatives[:shown_entries]):
            formulas = [f for f in kids.get(d.id, []) if f.kind == "formula"]
            name = d.name
            if width and len(name) > width // 3:  # on a narrow screen the path says derivatives.yaml
                name = name.removeprefix("derivatives.yaml: ")
            count = f"  ({_n(len(formulas), 'formula')})"
            if width and 5 + _LAYER_WIDTH + 1 + len(name) + 2 + len(_where(d)) + len(count) > width:
                count = ""  # the name before the count of its formulas (the line below shows one)
            out.append(_hop_line("     ", d, name, paint, width, count, min_name=_MIN_BRANCH_NAME))
            traced = [f for f in formulas if kids.get(f.id)]
            grads = [f for f in formulas if "grad" in f.detail and not f.name.endswith("non_differentiable")]
            if width and i and not traced:  # a narrow screen: the first entry's formula, --tree has the others'
                continue
            for f in (traced or grads)[:1]:
                out.append(_hop_line("       ", f, f.name, paint, width))
                if traced:
                    sub = _best_path(t, f)
                    for s in sub[1:]:
                        out.append(_hop_line("         → ", s, s.name, paint, width))
        if len(derivatives) > shown_entries:
            out.append(f"     … and {len(derivatives) - shown_entries} more derivatives.yaml entries (--tree)")
    decomps = [h for h in t.hops if h.layer == "decomposition" and h.id not in hidden]
    codegen = [h for h in t.hops if h.layer == "codegen" and h.kind != "bindings" and h.id not in hidden]
    missing = [h for h in t.hops if h.absent and h.id not in hidden and h.id not in chain_ids]
    capped = [h for h in missing if h.kind == "capped"]  # what a fan-out cap left out: said, not "not found"
    missing = [h for h in missing if h.kind != "capped"]
    also = []
    if decomps:
        first = decomps[0]
        also.append(f"{_n(len(decomps), 'decomposition/reference', 'decompositions/references')} ({_short(first.name)} {_where(first)}"
                    f"{', ...' if len(decomps) > 1 else ''})")
    if codegen:
        also.append(_n(len(codegen), "codegen file"))
    if missing:
        also.append(f"{_n(len(missing), 'statement')} of what opindex did not find")
    if capped and not t.truncated:  # each note once: the TRUNCATED line says it otherwise
        also.append(f"{_n(len(capped), 'hop')} that follow only the first few of what they lead to (--limit 0)")
    if hidden:
        also.append(f"{len(hidden)} hops of shared TensorIterator launch machinery (--full)")
    if also:
        out += ["", "Also in the tree: " + "; ".join(also)]
    return out


def _n(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _best_path(t: Trace, top: Hop) -> list[Hop]:
    """The ranked default path inside the subtree of `top` (the backward's ops with --backward)."""
    from ..trace.rank import query_tokens, rank_end
    inside = {h.id for h in _subtree(t, top)}
    ends = [h for h in t.ends() if h.id in inside]
    if not ends:
        return [top] + [k for k in _kids(t).get(top.id, [])[:1]]
    tokens = query_tokens(top.name.split(":", 1)[-1].split("(")[0].strip())
    best = min(enumerate(ends), key=lambda ie: (*rank_end(t, ie[1], tokens), ie[0]))[1]
    path = t.path(best)
    return path[[h.id for h in path].index(top.id):]


def _expand_hint(t: Trace, width: int | None = None, legend: bool = False) -> str:
    """The flags that expand the text, each with what it shows; on a screen too narrow for that, the flags alone
    (`--help` says what each shows)."""
    flags = [f"--tree (all {len(t.hops)} hops)", "--snippets (source lines)"]
    if t.direction == "down":
        flags.append(f"--depth {t.depth + 1} (follow more op calls)")
        flags.append("--backward (trace the ops the backward calls)")
    flags += ["--json"] + (["--legend (what ◆ means)"] if legend else [])
    line = "Expand: " + "  ".join(flags)
    if width and len(line) > width:
        line = "Expand: " + "  ".join(f.split(" (")[0] if i else f for i, f in enumerate(flags))
    return line


# -- the tree ---------------------------------------------------------------------------------------------------------
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


def _folds(hop: Hop, hidden: dict[int, int]) -> bool:
    return bool(hidden) and hop.kind == "tensor_iterator" and hop.id in set(hidden.values())


def _folded(t: Trace, launch: Hop, hidden: dict[int, int]) -> str:
    below = [t.hops[i] for i, top in hidden.items() if top == launch.id]
    # named: what this call and build may run; machinery under a false #if or a ruled-out test is not (the fork's
    # USE_MACA launchers on -U USE_MACA), though it stays in the count and in --full
    off: set[int] = set()
    for h in below:  # (parents first)
        if h.not_default or h.parent in off:
            off.add(h.id)
    runs = [h for h in below if h.id not in off]
    launchers = [n for n in dict.fromkeys(h.name.split("::")[-1] + (" (stand-in)" if h.found is Found.STAND_IN else "")
                                          for h in runs if h.kind == "launcher") if n != launch.name]
    kernels = list(dict.fromkeys(h.name.removeprefix("__global__ ").split("::")[-1]
                                 for h in runs + [x for x in _shown_above(t, runs) if not x.not_default]
                                 if h.kind == "global_kernel"))
    text = " -> ".join([launch.name] + launchers[:4] + (["..."] if len(launchers) > 4 else []))
    if kernels:
        text += " -> __global__ " + ", ".join(kernels[:4]) + (", ..." if len(kernels) > 4 else "")
    jitted = list(dict.fromkeys(h.kernel for h in runs if h.kind == "tensor_iterator" and h.kernel))
    if jitted:  # a jiterator launch: the kernel NVRTC compiles at run time (pytorch/jiterator.py)
        text += " -> jitted " + ", ".join(jitted)
    return f"TensorIterator launch: {text} ({len(below)} hops folded)"


def _off_chain(path: list[Hop], chain_ids: set[int]) -> Hop:
    """The first hop of `path` after it leaves the chain (its last hop when it never does)."""
    seen = False
    for h in path:
        if h.id in chain_ids:
            seen = True
        elif seen:
            return h
    return path[-1]


def _default_route(t: Trace):
    """path -> the way to its last hop on the default path: the path itself when no hop of it is under a branch
    the defaults do not take; else through a repeat of one of its hops that is (log_softmax's `_log_softmax` is
    walked first under the half-to-float branch, and repeated in the default else branch); None without one."""
    repeats_of: dict[int, list[Hop]] = {}
    for h in t.hops:
        if h.shown_above and h.repeats is not None:
            repeats_of.setdefault(h.repeats, []).append(h)

    def route(path: list[Hop]) -> list[Hop] | None:
        if not any(a.not_default for a in path):
            return path
        for i in range(len(path) - 1, -1, -1):
            for r in repeats_of.get(path[i].id, ()):
                way = t.path(r)
                if not any(a.not_default for a in way):
                    return way[:-1] + path[i:]
        return None
    return route


def _shown_above(t: Trace, hops: list[Hop]) -> list[Hop]:
    """What the "(shown above)" hops among `hops` stand for: the hops under the first hop of the same layer, name
    and place (the walk shows a definition once; a later launcher that reaches it ends in such a hop)."""
    repeats = [h for h in hops if h.shown_above]
    if not repeats:
        return []
    children: dict[int | None, list[int]] = {}
    for h in t.hops:
        children.setdefault(h.parent, []).append(h.id)
    seen: set[int] = {h.id for h in hops}
    todo = [h.repeats for h in repeats if h.repeats is not None]
    out = []
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        h = t.hops[i]
        out.append(h)
        todo.extend(children.get(i, ()))
        if h.shown_above and h.repeats is not None:
            todo.append(h.repeats)
    return sorted(out, key=lambda h: h.id)  # the tree's order


def tree(t: Trace, hidden: dict[int, int] | None = None) -> list[str]:
    """Every hop as a tree, `[layer] name  file:line` (the golden traces' form)."""
    return tree_lines(t, hidden or {})


def tree_lines(t: Trace, hidden: dict[int, int], paint: _Paint | None = None, width: int | None = None,
               snippets: bool = False, context: int = 2) -> list[str]:
    out: list[str] = []
    paint = paint or _Paint(False)
    folding = set(hidden.values())
    kids_of = _kids(t)

    def walk(hop: Hop, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        mark = "✗ " if hop.absent else ""
        where = f"  {_where(hop)}" if _where(hop) and hop.name != hop.file else ""
        name = _folded(t, hop, hidden) if hop.id in folding else hop.name
        if width:
            name = _cut(name, max(_MIN_NAME, width - len(prefix) - len(branch) - len(mark) - len(hop.layer) - 5 -
                                  len(where)))
        label = paint.layer(hop.layer, f"[{hop.layer}]")
        text = paint(name, "31") if hop.absent else name
        out.append(f"  {prefix}{branch}{paint(mark, '31')}{label} {text}{paint.where(where, hop)}")
        kids = [k for k in kids_of.get(hop.id, []) if k.id not in hidden]
        child_prefix = prefix if top else prefix + ("   " if last else "│  ")
        if snippets:
            bar = child_prefix + ("│  " if kids else "   ")
            out.extend(f"  {bar}  {s}" for s in snippet(t.root, hop.file, hop.line, 0, context))
        for i, k in enumerate(kids):
            walk(k, child_prefix, i == len(kids) - 1, False)

    for r in kids_of.get(None, []):
        walk(r, "", True, True)
    return out


def _needs(stop) -> str:
    """What the stop hop needs: its own tests, or the #if its callee is defined under (the build lacks the
    callee: trace/__init__._mark_undefined_calls)."""
    parts = []
    for c in stop.conditions:
        if c.assumed is not False:
            continue
        where = f" ({c.file}:{c.line})" if c.file and c.line else ""
        if c.kind == "#if" and c.file != stop.file:
            parts.append(f"is defined only under #if {c.text}{where}, not in this build")
        elif c.kind == "#include":
            parts.append(f"is not in this build: {c.text}")
        else:
            parts.append(f"needs {c.text}{where}")
    return "; ".join(parts)

