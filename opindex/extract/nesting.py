"""A bound on bracket nesting, so that extraction time stays linear in a file's size (issue 33, item 11).

60,000 nested calls in a 180 KB .py took 49 s, 40,000 in a .cpp 28 s: tree-sitter's queries on a tree past its
depth limit, and every per-call scan of an argument list (once per enclosing call), grow with depth x size. The
deepest file of the 2.4, 1.8 and 1.4 trees nests 26 brackets (common_methods_invocations.py); past MAX_NESTING
the text inside a bracket is blanked (spaces, line breaks kept: every line number stays) and the file is said to
be partly indexed. The check is a few C-speed passes over the file's brackets (the pairs `()` removed once per level):
0.7 s for the 20,673 files of the three trees together."""
from __future__ import annotations

import re

MAX_NESTING = 64  # brackets ((, [, {) open at once: the deepest file of three PyTorch releases has 26

_ONLY_BRACKETS = bytes(c for c in range(256) if c not in b"()[]{}")
_AS_PARENS = bytes.maketrans(b"[]{}", b"()()")
_BRACKET = re.compile(rb"[()\[\]{}]")
_NOT_NEWLINE = re.compile(rb"[^\n]")


def too_deep(data: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether some matched brackets nest more than `limit` deep. Brackets inside strings and comments count too
    (a string of 300 matched parentheses is blanked as well; an unmatched one changes nothing)."""
    s = data.translate(_AS_PARENS, _ONLY_BRACKETS)
    for _ in range(limit):
        t = s.replace(b"()", b"")
        if len(t) == len(s):
            return False
        s = t
    return b"()" in s


def flatten(data: bytes, limit: int = MAX_NESTING) -> tuple[bytes, list[int]]:
    """`data` with the text inside every bracket opened past `limit` levels blanked, and the 1-based lines where
    such a bracket opens. Linear: one pass over the brackets."""
    out, lines, depth, start = bytearray(data), [], 0, None
    line, counted = 1, 0  # the line at byte `counted`: counted on from the last deep bracket
    for m in _BRACKET.finditer(data):
        if m.group() in b"([{":
            depth += 1
            if depth == limit + 1 and start is None:
                start = m.end()
                line, counted = line + data.count(b"\n", counted, m.start()), m.start()
                lines.append(line)
        else:
            if depth == limit + 1 and start is not None:
                out[start:m.start()] = _NOT_NEWLINE.sub(b" ", data[start:m.start()])
                start = None
            depth = max(depth - 1, 0)
    if start is not None:  # never closed: blank to the end
        out[start:] = _NOT_NEWLINE.sub(b" ", data[start:])
    return bytes(out), lines
