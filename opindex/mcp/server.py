"""The MCP SDK's side of `opindex mcp`: the low-level server of the official SDK over stdio, with handlers for the
tool table (tools.py) and two resources (the schema, the build facts). The only module that imports `mcp`.

While serving, the SDK points file descriptor 1 at stderr and writes the protocol to a private copy of it: nothing
but protocol messages reaches the client's stdout, whatever a library prints."""
from __future__ import annotations

import json
import os
import sys

from .. import __version__
from ..api import Index
from .budget import DEFAULT_MAX_CHARS
from .tools import TOOLS, call

SCHEMA_URI = "opindex://schema"
BUILD_URI = "opindex://build"


class Served:
    """The one index a server serves, reopened at the next call when a rebuild has replaced its file (a build
    writes a new file and renames it over the old one: the open connection would go on reading the old)."""

    def __init__(self, db=None):
        self.db = db
        self.ix = Index(db)
        self._file = _identity(self.ix.path)

    def index(self) -> Index:
        now = _identity(self.ix.path)
        if now is not None and now != self._file:
            self.ix.close()
            self.ix, self._file = Index(self.db), now
        return self.ix

    def says_which(self) -> str:
        meta = self.ix.meta
        return (f"opindex serves the index {self.ix.path} ({self.ix.chosen_by}) of the PyTorch "
                f"{meta.get('pytorch_version') or '(version unknown)'} checkout at {meta.get('checkout_root')}, "
                f"built {meta.get('built_at', '?')}.")


def _identity(path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:  # removed: the open connection still reads the old file
        return None
    return st.st_dev, st.st_ino


def instructions(served: Served) -> str:
    return (served.says_which() + " Every file:line in an answer is relative to that checkout root. To port an op: "
            "trace NAME (the main chain from the Python surface to the kernel or library call, with the "
            "backward), then op, stub, kernels or callers on a hop it names; sql for anything else (resource "
            f"{SCHEMA_URI}). Each answer fits max_chars (default {DEFAULT_MAX_CHARS}) or is refused with the "
            "narrower calls that fit; listings page with next_cursor.")


def build_facts(served: Served) -> dict:
    ix = served.index()
    facts = {"index": str(ix.path), "chosen_by": ix.chosen_by, "meta": dict(ix.meta), "files": {}, "rows": {}}
    for row in ix.stats():
        what = row["what"]
        if what.startswith(("files[", "rows[")):
            group, _, name = what.partition("[")
            facts[group][name.rstrip("]")] = row["value"]
    return facts


def make_server(served: Served):
    import mcp.types as types
    from mcp.server.lowlevel import Server

    read_only = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                      open_world_hint=False)
    tools = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema(),
                        annotations=read_only) for t in TOOLS]
    resources = [
        types.Resource(uri=SCHEMA_URI, name="schema", mime_type="text/markdown",
                       description="Every table, column and view of the index, with what it means (for the sql "
                                   "tool; about 39,000 characters)."),
        types.Resource(uri=BUILD_URI, name="build", mime_type="application/json",
                       description="Which index is served and why, its checkout root, PyTorch version and build "
                                   "facts, files per layer, rows per table."),
    ]

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        answer = call(served.index(), params.name, params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(text=answer.text)],
                                    structured_content=answer.data, is_error=answer.error)

    async def list_resources(ctx, params):
        return types.ListResourcesResult(resources=resources)

    async def read_resource(ctx, params):
        from mcp.shared.exceptions import MCPError
        if str(params.uri) == SCHEMA_URI:
            from ..schema.doc import markdown
            text, mime = markdown(), "text/markdown"
        elif str(params.uri) == BUILD_URI:
            text, mime = json.dumps(build_facts(served), indent=1, default=str), "application/json"
        else:
            raise MCPError(types.INVALID_PARAMS, f"no resource {params.uri}; the resources are {SCHEMA_URI} and "
                                                 f"{BUILD_URI}")
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), mime_type=mime,
                                                                             text=text)])

    return Server("opindex", version=__version__, instructions=instructions(served), on_list_tools=list_tools,
                  on_call_tool=call_tool, on_list_resources=list_resources, on_read_resource=read_resource)


def serve(db=None) -> None:
    """Open the index (an error before the protocol starts: the CLI says it, exit 3), say on stderr which one is
    served, and serve over stdio until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server
    served = Served(db)
    server = make_server(served)
    print(f"opindex mcp: {served.says_which()}", file=sys.stderr, flush=True)

    async def run():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    anyio.run(run)
