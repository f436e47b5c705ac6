"""C++ and schema text read without a parser, one reader per thing: the top-level parts of a list (parameters,
arguments, template arguments, schema arguments, `||` terms) and the #define directives of a file. Shared by the
extractors, the link step, the profile and the pytorch/ rules (receivers.py): the bottom of the import graph."""
from __future__ import annotations

import functools
import re

_CLOSING = {"(": ")", "[": "]", "{": "}", "<": ">"}


def split_top_level(text: str, sep: str = ",", brackets: str = "([{<") -> list[str]:
    """`text` split at each `sep` outside the `brackets` (opening ones; each closes with its pair): `a<b, c>, f(d,
    e)` -> [`a<b, c>`, ` f(d, e)`]. Parts as written (not stripped), empty ones kept; a separator of several
    characters (`||`) is not matched again inside one just found. Which brackets count is the caller's: a `>` of
    `->` closes `<` when `<` is one of them."""
    closing = "".join(_CLOSING[b] for b in brackets)
    first, parts, depth, start = sep[0], [], 0, 0
    for i, ch in enumerate(text):
        if ch in brackets:
            depth += 1
        elif ch in closing:
            depth -= 1
        elif ch == first and depth == 0 and i >= start and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
    parts.append(text[start:])
    return parts


# `#define NAME(params) body`, continuation lines included (the body ends at the first line without a backslash)
# (the parameter list may be continued too: 1.4's `#define LARGE_INDEX(TENSOR_TYPE, TYPE, \` + `DST_DIM, ...)`)
FUNCTION_DEFINE = re.compile(rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)\(((?:[^)\n\\]|\\\r?\n|\\)*)\)"
                             rb"((?:[^\n]*\\\r?\n)*[^\n]*)")
_DEFINE_NAME = re.compile(rb"[ \t]*#[ \t]*define[ \t]+(\w+)")


def function_defines(data: bytes):
    """The function-like #defines of a file, as FUNCTION_DEFINE matches (name, parameters, body; start at the `#`)
    that start their line (only blanks before the `#`): searched from the literal `#`, as a pattern led by `^` under
    re.M is tried at every byte (7x slower)."""
    m = FUNCTION_DEFINE.search(data)
    while m is not None:
        start = m.start()
        if data[data.rfind(b"\n", 0, start) + 1:start].strip(b" \t"):
            m = FUNCTION_DEFINE.search(data, start + 1)  # inside a line (a comment's text): not a directive
            continue
        yield m
        m = FUNCTION_DEFINE.search(data, m.end())


def define_at(data: bytes, pos: int) -> str | None:
    """The name of the #define (object- or function-like) whose line starts at data[pos], else None."""
    m = _DEFINE_NAME.match(data, pos)
    return m.group(1).decode() if m else None


def define_body(raw: str) -> str:
    """A #define's body as one line: continuation backslash-newlines become spaces."""
    return raw.replace("\\\r\n", " ").replace("\\\n", " ")


def parenthesized(text: str, start: int) -> str:
    """The text from `start` (just after an open parenthesis) to the parenthesis that closes it (to the end when
    none does)."""
    depth = 1
    for i in range(start, len(text)):
        depth += (text[i] == "(") - (text[i] == ")")
        if depth == 0:
            return text[start:i]
    return text[start:]


def closing_bracket(text: str, at: int) -> int | None:
    """The offset of the bracket that closes the one at text[at] (`(`, `[`, `{` or `<`), None where none does or
    no bracket is there."""
    opening = text[at] if 0 <= at < len(text) else ""
    if opening not in _CLOSING:
        return None
    closing, depth = _CLOSING[opening], 0
    for i in range(at, len(text)):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return i
    return None


def closes_at_end(text: str) -> bool:
    """Whether the `(` that starts `text` is closed by its last character (`(a && b)` is, `(a) && (b)` is not)."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return i == len(text) - 1
    return False


@functools.lru_cache(maxsize=8192)  # (a trace reads the same few hundred schemas for many bodies)
def schema_arguments(schema: str) -> str:
    """The text inside a native schema's argument parentheses (`add.Tensor(Tensor self, ...) -> Tensor`), found by
    matching the first `(` (alias annotations hold arrows: `Tensor(a -> *) self`)."""
    start = schema.find("(")
    if start < 0:
        return ""
    depth = 0
    for i in range(start, len(schema)):
        depth += (schema[i] == "(") - (schema[i] == ")")
        if depth == 0:
            return schema[start + 1:i]
    return schema[start + 1:]
