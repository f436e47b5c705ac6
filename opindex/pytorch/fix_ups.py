"""A fix-up kernel: a __global__ kernel that changes in place only the elements the data singles out. Its threads
return, before they write anything, on a test of the values they read (not of their index or a size), and every
buffer it writes it also reads: it has no output of its own, it corrects one that earlier work wrote. Where it
writes depends on the data, which no stated call settles: randperm's `randperm_handle_duplicate_keys_kernel`
(Randperm.cuh:13, PyTorch 2.4) returns at :18 unless a thread's key equals the next one, and shuffles in place only
those islands of duplicate keys of the permutation the radix sort made. The main chain (trace/rank.py) ends at the
device work before such a kernel, which writes each time, and names the kernel as run after it. A kernel with a
buffer it only writes is the op's work however many threads return early: segment_reduce_backward_kernel skips
empty segments (`if (segment_length == 0) return;`, SegmentReduce.cu:186) and writes grad_input_data.

Read from the source text: the kernel's parameters, its body's leading statements (declarations and
`if (...) return;`) up to the first other statement, and the elements its body writes (`p[i] = ...`) and reads.
"""
from __future__ import annotations

import re

from .syntax import closing_bracket, split_top_level

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_POINTER = re.compile(r"\*\s*(?:const\s+)?(?:__restrict__\s+|__restrict\s+|RESTRICT\s+)?(\w+)\s*$")
_EARLY_RETURN = re.compile(r"if\s*\(")
_DECLARATION = re.compile(r"(?:const\s+)?(?:auto|int|unsigned|int64_t|int32_t|index_t|size_t|\w+_t|bool)\b[^;{}]*;")
_ASSIGNED = re.compile(r"\s*((?:[-+*/%|&^]|<<|>>)?)=(?!=)")
MAX_LINES = 160  # lines of a kernel read from its first line, header and body (a longer kernel is not read: None)


def data_test_line(lines: list[str], line: int) -> int | None:
    """The line of the test that makes the kernel defined at `line` (1-based, its `__global__` line) a fix-up: an
    `if (...) return;` among the body's leading statements whose test reads data (an element of a pointer
    parameter, `keys[tid]`, or a local read from one), in a body that updates in place only (_in_place_only);
    None for any other kernel, or where the text is not read so."""
    text = "\n".join(lines[line - 1:line - 1 + MAX_LINES])
    text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)  # (offsets and lines kept)
    params = _parameters(text)
    if params is None or not params[0]:
        return None
    pointers, body_at = params
    close = closing_bracket(text, body_at)
    if close is None or not _in_place_only(text[body_at:close], pointers):
        return None
    return _leading_data_test(text, body_at, pointers, line)


def _parameters(text: str) -> tuple[set[str], int] | None:
    """The names of a kernel's pointer parameters and the offset of its body's `{`."""
    m = re.search(r"\b__global__\b", text)
    if m is None or re.search(r"[;{}]", text[:m.start()]):
        return None  # (no kernel starts at this line: one below belongs to another definition)
    open_at = text.find("(", _name_end(text, m.end()))
    close_at = closing_bracket(text, open_at)
    if open_at < 0 or close_at is None:
        return None
    body_at = text.find("{", close_at)
    if body_at < 0 or ";" in text[close_at:body_at]:
        return None  # (a declaration, not a definition)
    names = {p.group(1) for part in split_top_level(text[open_at + 1:close_at], ",", "(<[")
             if (p := _POINTER.search(part.split("=")[0].strip()))}
    return names, body_at


def _name_end(text: str, at: int) -> int:
    """Where the kernel's name ends after `__global__` (past a C10_LAUNCH_BOUNDS_*(...) and the return type)."""
    m = re.compile(r"\s*(?:C10_LAUNCH_BOUNDS_\w*\s*\([^)]*\)\s*)?(?:[\w:<>,\s*&]+?)\b(\w+)\s*(?=\()").match(text, at)
    return m.end() if m else at


def _in_place_only(body: str, pointers: set[str]) -> bool:
    """Whether the body writes an element of a pointer parameter (`data[i] = ...`, `data[i] += ...`) and reads each
    one it writes before it first writes it (`tmp = data[i]; data[i] = data[r];`): an in-place update of what the
    buffer held, no buffer it fills itself (segment_reduce_backward_kernel's first use of grad_input_data is a
    write, SegmentReduce.cu:205)."""
    read_first: dict[str, bool] = {}  # each pointer used: whether its first use (in source order) reads it
    written: set[str] = set()
    for m in re.finditer(r"\b(\w+)\s*\[", body):
        name = m.group(1)
        if name not in pointers:
            continue
        close = closing_bracket(body, m.end() - 1)
        op = _ASSIGNED.match(body, close + 1) if close is not None else None
        read_first.setdefault(name, op is None or bool(op.group(1)))  # (`data[i] += x` reads it too)
        if op is not None:
            written.add(name)
    return bool(written) and all(read_first[n] for n in written)


def _leading_data_test(text: str, body_at: int, pointers: set[str], line: int) -> int | None:
    """The first `if (test) return;` of the body's leading statements whose test reads data: `pointer[...]`, or a
    local a leading declaration read from one (`auto key = keys[tid];`)."""
    data = set(pointers)
    at = body_at + 1
    while True:
        rest = text[at:]
        stripped = rest.lstrip()
        at += len(rest) - len(stripped)
        if _EARLY_RETURN.match(stripped):
            close = closing_bracket(text, text.find("(", at))
            if close is None:
                return None
            after = re.match(r"\s*(?:\{\s*)?return\s*;\s*(?:\}\s*)?", text[close + 1:])
            if after is None:
                return None  # (an `if` with a body of its own: the leading statements end here)
            if _reads(text[at:close], data, pointers):
                return line + text.count("\n", 0, at)
            at = close + 1 + after.end()
        elif m := _DECLARATION.match(stripped):
            name, eq, value = m.group().rstrip(";").partition("=")
            if eq and _reads(value, pointers, pointers) and (local := re.search(r"(\w+)\s*$", name)):
                data.add(local.group(1))
            at += m.end()
        else:
            return None


def _reads(text: str, data: set[str], pointers: set[str]) -> bool:
    """Whether `text` reads an element of a pointer parameter or names a local read from one."""
    return any(re.search(r"\b%s\s*\[" % re.escape(p), text) for p in pointers) or \
        any(re.search(r"\b%s\b" % re.escape(d), text) for d in data - pointers)
