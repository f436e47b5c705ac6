"""Text on a terminal's screen: how wide a line shows (colours and OSC 8 hyperlinks take no room), wrapping a line
at its column gaps, how many lines a text takes once wrapped, and cutting a name to a width (a path never)."""
from __future__ import annotations

import re

_ZERO_WIDTH = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\")  # ANSI colours and OSC 8 hyperlinks


def height(lines: list[str], width: int | None) -> int:
    """How many lines `lines` take on a screen `width` columns wide (wrap breaks the long ones)."""
    return sum(len(wrap(line, width)) for line in lines) if width else len(lines)


def wrap(line: str, width: int, indent: int = 7) -> list[str]:
    """`line` in lines of at most `width` visible characters: broken at its last column gap (two spaces) in the
    second half of the width, else at a space there, else at the last gap or space; the rest indented by `indent`;
    a word wider than the width stays whole (a path is never cut)."""
    out = []
    while True:
        cols, col, i = [], 0, 0  # cols[k]: the visible column at raw index k
        for m in _ZERO_WIDTH.finditer(line):
            for _ in range(i, m.start()):
                cols.append(col)
                col += 1
            cols += [col] * (m.end() - m.start())
            i = m.end()
        for _ in range(i, len(line)):
            cols.append(col)
            col += 1
        if col <= width:
            return out + [line]
        lead = len(line) - len(line.lstrip(" "))
        fits = [k for k in range(lead + 1, len(line)) if line[k] == " " and cols[k] <= width]
        gaps = [k for k in fits if line[k - 1] == " " and cols[k] > indent + 8]
        spaces = [k for k in fits if cols[k] > indent + 8]
        half = width // 2  # a break in the second half keeps the line full: a column gap there, else a space
        at = ([k for k in gaps if cols[k] >= half] or [k for k in spaces if cols[k] >= half] or gaps or spaces
              or [None])[-1]
        if at is None:
            return out + [line]
        head, rest = line[:at].rstrip(" "), line[at:].lstrip(" ")
        if not rest:
            return out + [head]
        out.append(head)
        line = " " * indent + rest


def plain(text: str) -> str:
    """`text` as it shows: without colours and OSC 8 hyperlinks."""
    return _ZERO_WIDTH.sub("", text)


def cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def cut_name(name: str, n: int) -> str:
    """`name` in `n` characters: a qualified C++ name loses its leading namespaces first (the last part says what
    it is: `…native::_flash_attention_forward`), anything else its end."""
    if len(name) <= n:
        return name
    parts = name.split("::")
    if len(parts) > 1 and " " not in parts[0] and "<" not in parts[0]:
        for k in range(1, len(parts)):
            short = "…" + "::".join(parts[k:])
            if len(short) <= n:
                return short
    return cut(name, n)
