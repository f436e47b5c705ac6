"""`opindex mcp`: the index served to coding agents over the Model Context Protocol (stdio).

The parts, in the order a call goes through them: tools.py is the tool table (one ToolSpec per tool: its name, its
input schema and the opindex.api call it makes), listing.py and trace_answer.py turn what the library returns into
an Answer (text for the model, the same facts as structured content), budget.py holds every answer to its
`max_chars` (refusing with a hint, never cutting), server.py is the only module that imports the MCP SDK.

`serve(db)` is the library twin of the command; `call(ix, name, arguments)` answers one tool call without a server
(what the server runs, for a notebook or a test)."""
from __future__ import annotations


def serve(db=None) -> None:
    """Serve the index `db` (None: the CLI's default rules) over stdio until the client closes the connection."""
    from .server import serve as _serve
    _serve(db)


def call(ix, name: str, arguments: dict | None = None):
    """One tool call on an open opindex.Index: an Answer (text, data, error) as the server would send it."""
    from .tools import call as _call
    return _call(ix, name, arguments or {})
