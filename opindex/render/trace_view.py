"""TraceView: a Trace that knows its renderings (text, Markdown, dot, Mermaid, HTML and Markdown for notebooks).

The model (opindex.trace.model) stays plain data; the library hands this subclass to users so that
`ix.trace("nn.LSTM")` displays itself in a notebook and `str(t)` is the text rendering."""
from __future__ import annotations

from dataclasses import fields

from ..trace.model import Trace


class TraceView(Trace):
    @classmethod
    def of(cls, t: Trace) -> "TraceView":
        view = cls(**{f.name: getattr(t, f.name) for f in fields(t)})
        if "_main" in t.__dict__:  # the main chain chosen when the walk ended (Trace.main_chain keeps it)
            view.__dict__["_main"] = t.__dict__["_main"]
        return view

    def to_text(self, context: int = 2, full: bool = False, tree: bool = False, snippets: bool = False,
                color: bool = False, width: int | None = None, links: bool = False) -> str:
        """The text trace: the main chain, folded branches, the backward and a hint of the flags that expand it;
        `tree` every hop (`full` with the TensorIterator machinery unfolded), `snippets` `context` source lines
        under each hop shown; `links` each file:line an OSC 8 hyperlink to the file."""
        from .trace_text import render
        return render(self, context=context, full=full, tree=tree, snippets=snippets, color=color, width=width,
                      links=links)

    def with_absolute_paths(self) -> "TraceView":
        """The same trace with each hop's file an absolute path (the checkout root joined: --absolute)."""
        from dataclasses import replace

        from .links import absolute
        chain = [h.id for h in self.main_chain()]  # chosen on the index's paths (rank.py reads them): kept
        view = TraceView.of(self)
        view.hops = [replace(h, file=absolute(self.root, h.file)) for h in self.hops]
        view.__dict__["_main"] = ((len(view.hops), id(view.hops[-1]) if view.hops else None),
                                  [view.hops[i] for i in chain])
        return view

    def to_markdown(self) -> str:
        from .trace_graph import markdown
        return markdown(self)

    def to_dot(self) -> str:
        from .trace_graph import dot
        return dot(self)

    def to_mermaid(self) -> str:
        from .trace_graph import mermaid
        return mermaid(self)

    def _repr_markdown_(self) -> str:
        """Notebooks: the main chain, the branches folded (notebook_markdown)."""
        return notebook_markdown(self)

    def _repr_html_(self) -> str:
        """Notebooks: the main chain, each branch a <details> that opens on a click (notebook_html)."""
        return notebook_html(self)

    def __str__(self) -> str:
        return self.to_text(context=0)


# -- notebooks ----------------------------------------------------------------------------------------------------
# A notebook shows the main chain (Trace.main_chain: the default path for the device) one hop a line, and under each
# hop the branches that leave it, each folded to one line with the number of hops below it (HTML <details>: a click
# opens it, level by level). Every hop is in the output once; nothing is cut.

_STYLE = ("<style>.opindex-trace ol,.opindex-trace ul{margin:0 0 0 1.2em;padding:0}.opindex-trace summary"
          "{cursor:pointer}.opindex-trace .w,.opindex-trace .d{color:#6b7280}.opindex-trace .x{color:#b91c1c}"
          "</style>")


def _kids(t: Trace) -> dict:
    kids: dict = {}
    for h in t.hops:
        kids.setdefault(h.parent, []).append(h)
    return kids


def _size(kids: dict, hop) -> int:
    n, todo = 0, [hop]
    while todo:
        h = todo.pop()
        n += 1
        todo += kids.get(h.id, [])
    return n


def _heading(t: Trace) -> str:
    way = "top-down" if t.direction == "down" else "bottom-up"
    return f"({way}, device {t.device}, depth {t.depth})"


def _hops(n: int) -> str:
    return f"{n:,} hop" + ("" if n == 1 else "s")


def _parts(t: Trace) -> tuple[list, dict, list]:
    """The main chain, each chain hop's branches (its children off the chain) and the roots off the chain."""
    kids = _kids(t)
    chain = t.main_chain()
    on = {h.id for h in chain}
    branches = {h.id: [k for k in kids.get(h.id, []) if k.id not in on] for h in chain}
    others = [r for r in kids.get(None, []) if r.id not in on]
    return chain, branches, others


def notebook_html(t: Trace) -> str:
    import html

    def esc(s) -> str:
        return html.escape(str(s), quote=False)

    def hop(h) -> str:
        where = f' <span class="w">{esc(h.file)}:{h.line}</span>' if h.file and h.line else ""
        detail = f' <span class="d">{esc(h.detail)}</span>' if h.detail else ""
        mark = '<span class="x">✗</span> ' if h.absent else ""
        return f"{mark}<b>{h.layer}</b> <code>{esc(h.name)}</code>{where}{detail}"

    def branch(h) -> str:
        below = kids.get(h.id, [])
        if not below:
            return f"<li>{hop(h)}</li>"
        inner = "".join(branch(k) for k in below)
        return (f"<li><details><summary>{hop(h)} <i>({_hops(_size(kids, h) - 1)} below)</i></summary>"
                f"<ul>{inner}</ul></details></li>")

    head = f"<p><b>opindex trace <code>{esc(t.query)}</code></b> {_heading(t)}"
    if not t.hops:
        cands = "".join(f"<li><code>{esc(c)}</code></li>" for c in t.candidates)
        return f'<div class="opindex-trace">{head}</p><p>{esc(t.message)}</p>' + (f"<ul>{cands}</ul>" if cands else "") \
            + "</div>"
    kids = _kids(t)
    chain, branches, others = _parts(t)
    folded = sum(len(b) for b in branches.values()) + len(others)
    out = [f'<div class="opindex-trace">{_STYLE}{head}: {_hops(len(t.hops))}; the main chain ({_hops(len(chain))}), '
           f"then {folded:,} branch{'' if folded == 1 else 'es'} folded (click to open)</p>"]
    if t.message:
        out.append(f"<p>{esc(t.message)}</p>")
    if t.truncated:
        out.append(f"<p><b>TRUNCATED</b>: {esc(t.truncated.get('reason', ''))}</p>")
    out.append("<ol>")
    for h in chain:
        below = "".join(branch(k) for k in branches[h.id])
        out.append(f"<li>{hop(h)}" + (f"<ul>{below}</ul>" if below else "") + "</li>")
    out.append("</ol>")
    if others:
        out.append(f"<p>Other starts:</p><ul>{''.join(branch(r) for r in others)}</ul>")
    out.append("</div>")
    return "".join(out)


def notebook_markdown(t: Trace) -> str:
    """Markdown with the same shape: the chain as a numbered list, then per chain hop its branches in a <details>
    block (a nested Markdown list inside), as GitHub and Jupyter render it."""
    import html

    def md(s) -> str:
        """Prose as Markdown shows it: no emphasis, link or HTML made of C++ text (`<T, T_ACC>` stays)."""
        s = html.escape(str(s), quote=False)
        for c in "\\`*_[]|":  # the backslash first, so the escapes added after it stay single
            s = s.replace(c, "\\" + c)
        return s

    def code(s) -> str:
        fence = "``" if "`" in s else "`"
        return f"{fence}{s}{fence}" if fence == "`" else f"{fence} {s} {fence}"

    def hop(h) -> str:
        where = f" — `{h.file}:{h.line}`" if h.file and h.line else ""
        detail = f" — {md(h.detail)}" if h.detail else ""
        mark = "✗ " if h.absent else ""
        return f"{mark}**{h.layer}** {code(h.name)}{where}{detail}"

    def tree(h, indent: int) -> list[str]:
        lines = [f"{'  ' * indent}- {hop(h)}"]
        for k in kids.get(h.id, []):
            lines += tree(k, indent + 1)
        return lines

    head = f"### opindex trace `{t.query}` {_heading(t)}"
    if not t.hops:
        return f"{head}\n\n**{md(t.message)}**\n\n" + "".join(f"- `{c}`\n" for c in t.candidates)
    kids = _kids(t)
    chain, branches, others = _parts(t)
    folded = sum(len(b) for b in branches.values()) + len(others)
    out = [head, "", f"{_hops(len(t.hops))}: the main chain ({_hops(len(chain))}), then {folded:,} "
                     f"branch{'' if folded == 1 else 'es'} folded below it.", ""]
    if t.message:
        out += [md(t.message), ""]
    if t.truncated:
        out += [f"**TRUNCATED**: {md(t.truncated.get('reason', ''))}", ""]
    for i, h in enumerate(chain, 1):
        n = sum(_size(kids, b) for b in branches[h.id])
        out.append(f"{i}. {hop(h)}" + (f" *(+{len(branches[h.id])} branch{'' if len(branches[h.id]) == 1 else 'es'}, "
                                      f"{_hops(n)}: below)*" if n else ""))
    for i, h in enumerate(chain, 1):
        if branches[h.id]:
            n = sum(_size(kids, b) for b in branches[h.id])
            out += ["", f"<details><summary>branches of {i}. {h.layer} {html.escape(h.name, quote=False)} "
                        f"({_hops(n)})</summary>", ""]
            for b in branches[h.id]:
                out += tree(b, 0)
            out += ["", "</details>"]
    if others:
        out += ["", f"<details><summary>other starts ({_hops(sum(_size(kids, r) for r in others))})</summary>", ""]
        for r in others:
            out += tree(r, 0)
        out += ["", "</details>"]
    return "\n".join(out) + "\n"
