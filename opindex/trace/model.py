"""trace: the cross-layer chain of one operation, as a tree of hops with file and line.

A Trace is plain data (to_dict / to_json are the stable, documented shape). The walks that build it live beside
this module (down.py, up.py); opindex.render turns it into text, Markdown, Graphviz dot and Mermaid
(render.TraceView adds those methods for notebooks). Nothing here imports a renderer.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

# The layers of the seed document, in reading order; every hop belongs to one.
LAYERS = ("python", "bridge", "native", "dispatch", "cpp", "stub", "registration", "cuda", "library", "backward",
          "decomposition", "codegen")


@dataclass
class Hop:
    id: int
    parent: int | None  # the hop this one was reached from (None for a root)
    layer: str  # one of LAYERS
    kind: str  # what it is within the layer (module, forward, VF, entry, CUDA, impl_func, stub_call, chevron ...)
    name: str  # display name (aten::add.out, at::native::relu, lstm_cudnn_stub)
    file: str | None = None  # relative to the checkout root
    line: int | None = None  # 1-based
    detail: str = ""  # one line of context (schema, dispatch row, launch configuration, formula)
    absent: bool = False  # a statement that something is missing in this checkout


@dataclass
class Trace:
    query: str
    direction: str  # down | up
    device: str
    depth: int
    hops: list[Hop] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)  # set when the name is ambiguous or unknown
    message: str = ""  # why there are no hops (unknown / ambiguous)
    root: str | None = None  # checkout root, for reading source snippets
    max_hops: int = 5000  # the walk stops here (0: no limit); `truncated` then says so
    truncated: dict = field(default_factory=dict)  # {"hops": N, "reason": ...} when a cap cut the walk

    # -- shape ------------------------------------------------------------------------------------------------
    def children(self, hop_id: int | None) -> list[Hop]:
        return [h for h in self.hops if h.parent == hop_id]

    def roots(self) -> list[Hop]:
        return self.children(None)

    def layers(self) -> list[str]:
        seen = {h.layer for h in self.hops if not h.absent}
        return [layer for layer in LAYERS if layer in seen]

    def ends(self) -> list[Hop]:
        """Where the chain reaches device code: launches, __global__ kernels, library calls, ufunc inner loops."""
        return [h for h in self.hops if (h.layer in ("cuda", "library") or h.kind == "ufunc_inner_loop")
                and not h.absent]

    # -- exports ----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON shape (stable): query, direction, device, depth, hops[{id, parent, layer, kind, name, file,
        line, detail, absent}], candidates, message, truncated ({} or {"hops": N, "reason": ...})."""
        return {"query": self.query, "direction": self.direction, "device": self.device, "depth": self.depth,
                "hops": [asdict(h) for h in self.hops], "candidates": self.candidates, "message": self.message,
                "truncated": self.truncated}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

