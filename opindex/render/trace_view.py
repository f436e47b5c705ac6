"""TraceView: a Trace that knows its renderings (text, Markdown, dot, Mermaid, HTML for notebooks).

The model (opindex.trace.model) stays plain data; the library hands this subclass to users so that
`ix.trace("nn.LSTM")` displays itself in a notebook and `str(t)` is the text rendering."""
from __future__ import annotations

from dataclasses import fields

from ..trace.model import Trace


class TraceView(Trace):
    @classmethod
    def of(cls, t: Trace) -> "TraceView":
        return cls(**{f.name: getattr(t, f.name) for f in fields(t)})

    def to_text(self, context: int = 2, full: bool = False, tree: bool = False, snippets: bool = False,
                color: bool = False, width: int | None = None) -> str:
        """The text trace: the main chain, folded branches, the backward and a hint of the flags that expand it;
        `tree` every hop (`full` with the TensorIterator machinery unfolded), `snippets` `context` source lines
        under each hop shown."""
        from .trace_text import render
        return render(self, context=context, full=full, tree=tree, snippets=snippets, color=color, width=width)

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
        return self.to_markdown()

    def _repr_html_(self) -> str:
        from .trace_graph import html
        return html(self)

    def __str__(self) -> str:
        return self.to_text(context=0)
