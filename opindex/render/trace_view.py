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
        # the main chain chosen when the walk ended (main_chain keeps it), where it stopped short, and what the
        # ranking reads of the walk (the build's false #if spans, the tests read as true: rank.choices asks again)
        for kept in ("_main", "_ruled_out", "_switch", "unbuilt", "held"):
            if kept in t.__dict__:
                view.__dict__[kept] = t.__dict__[kept]
        return view

    def to_text(self, context: int = 2, full: bool = False, tree: bool = False, snippets: bool = False,
                color: bool = False, width: int | None = None, links: bool = False, legend: bool = False) -> str:
        """The text trace: the main chain, folded branches, the backward and a hint of the flags that expand it;
        `tree` every hop (`full` with the TensorIterator machinery unfolded), `snippets` `context` source lines
        under each hop shown; `links` each file:line an OSC 8 hyperlink to the file; `legend` the line that
        explains "◆ default of N"."""
        from .trace_text import render
        return render(self, context=context, full=full, tree=tree, snippets=snippets, color=color, width=width,
                      links=links, legend=legend)

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
        """Notebooks: the main chain, each branch one line (render/notebook.py)."""
        from .notebook import notebook_markdown
        return notebook_markdown(self)

    def _repr_html_(self) -> str:
        """Notebooks: the main chain, each branch a <details> whose hops load when it opens (render/notebook.py)."""
        from .notebook import notebook_html
        return notebook_html(self)

    def __str__(self) -> str:
        return self.to_text(context=0)

    def __repr__(self) -> str:
        """The text view (what a terminal IPython session shows), not a dump of the fields."""
        return self.to_text(context=0)

    def branch(self, hop_id: int) -> "TraceView":
        """The hops below `hop_id` (and it), as a trace of their own: a notebook shows one branch on demand."""
        keep, todo = set(), [hop_id]
        from .notebook import _kids
        kids = _kids(self)
        while todo:
            h = todo.pop()
            keep.add(h)
            todo += [k.id for k in kids.get(h, [])]
        if hop_id not in keep or not any(h.id == hop_id for h in self.hops):
            raise KeyError(f"no hop {hop_id} in this trace ({len(self.hops)} hops)")
        from dataclasses import replace
        ids = {old: new for new, old in enumerate(sorted(keep))}
        view = TraceView.of(self)
        view.hops = [replace(h, id=ids[h.id], parent=ids.get(h.parent) if h.id != hop_id else None,
                             repeats=ids.get(h.repeats)) for h in self.hops if h.id in keep]
        view.__dict__.pop("_main", None)
        view.query = f"{self.query}, below hop {hop_id}"
        view.finish()
        return view
