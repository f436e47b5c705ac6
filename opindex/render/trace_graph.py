"""A trace as a picture (Graphviz dot, Mermaid) or as Markdown/HTML for notebooks."""
from __future__ import annotations

import html as _html

from ..trace.model import Trace

_COLORS = {"python": "#fde68a", "bridge": "#fcd34d", "native": "#bfdbfe", "dispatch": "#93c5fd", "cpp": "#c7d2fe",
           "stub": "#ddd6fe", "registration": "#e9d5ff", "cuda": "#bbf7d0", "library": "#86efac",
           "backward": "#fecaca", "decomposition": "#fed7aa", "codegen": "#e5e7eb"}


def _label(h) -> str:
    where = f"\n{h.file}:{h.line}" if h.file and h.line else ""
    return f"[{h.layer}] {h.name}{where}"


def answered_by(t: Trace) -> str:
    """"index FILE (checkout ROOT)": the index that answered, said by every rendering ("" when unknown)."""
    return t.which_index().removeprefix("the ") if t.index else ""


def dot(t: Trace) -> str:
    out = ["digraph trace {"] + ([f"  // {answered_by(t)}"] if t.index else []) + [
        "  rankdir=TB;", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for h in t.hops:
        label = _label(h).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        style = ', style="rounded,dashed"' if h.absent else ""
        out.append(f'  n{h.id} [label="{label}", fillcolor="{_COLORS.get(h.layer, "#ffffff")}"{style}];')
    out += [f"  n{h.parent} -> n{h.id};" for h in t.hops if h.parent is not None]
    out.append("}")
    return "\n".join(out) + "\n"


def mermaid(t: Trace) -> str:
    out = ["flowchart TD"] + ([f"  %% {answered_by(t)}"] if t.index else [])  # a comment: the index that answered
    for h in t.hops:
        label = mermaid_text(_label(h))
        # absent hops are hexagons: a statement of what is missing, not a place in the code
        out.append(f'  n{h.id}{{{{"{label}"}}}}' if h.absent else f'  n{h.id}["{label}"]')
    out += [f"  n{h.parent} --> n{h.id}" for h in t.hops if h.parent is not None]
    for layer, color in _COLORS.items():
        ids = [f"n{h.id}" for h in t.hops if h.layer == layer]
        if ids:
            out.append(f"  classDef {layer} fill:{color}")
            out.append(f"  class {','.join(ids)} {layer}")
    return "\n".join(out) + "\n"


# Characters Mermaid reads as syntax inside a node's quoted label, written as its entity codes (#code;): quotes
# end the label, < > & make HTML (`<T, T_ACC>` vanished as a tag), # starts an entity, ` a Markdown string, ; ends
# a statement, | { } [ ] ( ) delimit shapes and edge text.
MERMAID_ESCAPES = {"#": "#35;", '"': "#quot;", "&": "#amp;", "<": "#lt;", ">": "#gt;", "`": "#96;", ";": "#59;",
                   "|": "#124;", "{": "#123;", "}": "#125;", "[": "#91;", "]": "#93;", "(": "#40;", ")": "#41;"}


def mermaid_text(text: str) -> str:
    """`text` as the inside of a Mermaid node label: reserved characters as entity codes, newlines as <br/>."""
    return "<br/>".join("".join(MERMAID_ESCAPES.get(c, c) for c in line) for line in text.split("\n"))


def markdown(t: Trace) -> str:
    if not t.hops:
        return f"**{_md(t.message)}**\n\n" + "".join(f"- `{c}`\n" for c in t.candidates)
    out = [f"### opindex trace `{t.query}` ({t.direction}, device {t.device})", ""]
    out += [_md(answered_by(t)), ""] if t.index else []
    depth = {}
    for h in t.hops:
        depth[h.id] = 0 if h.parent is None else depth[h.parent] + 1
        where = f" — `{h.file}:{h.line}`" if h.file and h.line else ""
        mark = "~~" if h.absent else ""
        out.append(f"{'  ' * depth[h.id]}- **{h.layer}** {mark}`{h.name}`{mark}{where}")
    out += ["", "| layer | file | function |", "|---|---|---|"]
    out += [f"| {h.layer} | `{h.file}:{h.line}` | `{_md(h.name)}` |" for h in t.hops if h.file and not h.absent]
    return "\n".join(out) + "\n"


def _md(s: str) -> str:
    return s.replace("|", "\\|")


def html(t: Trace) -> str:
    from .trace_text import render
    return f"<pre>{_html.escape(render(t, context=0))}</pre>"
