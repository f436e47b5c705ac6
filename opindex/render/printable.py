"""One escaping of control characters for everything opindex writes to a terminal or into Markdown: a file or kernel
name holding ESC, BEL or an OSC sequence must not set a window title, recolour, clear the screen or write the
clipboard (OSC 52). Each C0/C1 control character (newline and tab too: a name is one line) is shown as `\\xNN`."""
from __future__ import annotations

_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7f, 0xa0))}


def printable(text: str) -> str:
    """`text` with its control characters written as `\\xNN` (unchanged when it has none: the common case)."""
    return text.translate(_CONTROLS) if not text.isprintable() else text


def markdown_text(text: str) -> str:
    """A value for Markdown: printable, and `<`, `>`, `&` as entities (Markdown renders HTML: `<script>` in a kernel
    or op name stays text)."""
    return printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
