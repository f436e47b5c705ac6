"""Pick one side of `#if` groups that split braces, so tree-sitter sees balanced code.

tree-sitter parses C++ without a preprocessor. When both branches of `#if A ... #else ... #endif` open a brace
(two function headers for one body), or a lone `#if VENDOR ... } ... #endif` closes a brace another group opened,
the grammar sees unbalanced code and the enclosing namespace becomes one ERROR node. Like ctags, we keep one branch
of a group whose branches all leave the same non-zero brace balance (the first; extract reads the file again with
each other one kept, for that branch's facts), and blank a branch-less group that is unbalanced on its own. `#if 0` blocks are dead code and blanked. Balanced groups are left alone, so no fact of a
well-formed file is lost. Blanking keeps every newline: lines and offsets stay true.
"""
from __future__ import annotations

import re

# Searched from its literal '#' (fast); only blanks may come before it on its line (checked per hit).
_DIRECTIVE = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b")
_NOISE = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _kept(lines: list[bytes], lo: int, hi: int, blanked: set[int]) -> bytes:
    """Lines lo..hi-1 without the blanked ones. Most groups have none blanked inside (an include guard's group
    spans the whole file): joined in C then, not line by line."""
    if not any(lo <= i < hi for i in blanked):
        return b"\n".join(lines[lo:hi])
    return b"\n".join(lines[i] for i in range(lo, hi) if i not in blanked)


def _code(lines: list[bytes], lo: int, hi: int, blanked: set[int]) -> bytes:
    """The code of lines lo..hi-1: comments, strings and blanked lines dropped."""
    return _NOISE.sub(b"", _kept(lines, lo, hi, blanked))


def _balance(code: bytes) -> int:
    return code.count(b"{") - code.count(b"}")


def _dangling_else(text: bytes) -> bool:
    return text.rstrip().endswith(b"else") and re.search(rb"\belse$", text.rstrip()) is not None


def select(data: bytes, choice: int = 0) -> tuple[bytes, set[int], int]:
    """(the text with the chosen branches blanked, the 1-based lines blanked, how many readings hold every branch);
    data itself when nothing is blanked. `choice`: which branch of a group whose branches all leave the same
    non-zero brace balance is kept (0, the first, as ctags does; k, the k-th, or the group's last when it has
    fewer). The readings: the most branches such a group has (0 when there is none); extract reads the file once
    per choice below it, for the facts only that branch holds (Shape.cu's `#else` parallel_cat calls)."""
    if b"#if" not in data and b"# if" not in data:
        return data, set(), 0
    lines = data.split(b"\n")
    groups = _groups(data)
    blanked: set[int] = set()
    most = 0  # the most branches of a group one branch of which is kept
    for group in groups:  # innermost first: an outer group's balance sees its inner groups already decided
        branches = list(zip(group, group[1:]))  # (directive line, next directive line)
        kind = lines[group[0]].split(b"#", 1)[1].strip()
        if re.match(rb"if\s+0\b", kind):
            blanked.update(range(group[0] + 1, group[1]))
            continue
        if _in_arguments(lines, group[0], blanked):
            # `thrust::sort(\n#if CUDA_VERSION >= 7000\n thrust::cuda::par(...),\n#endif\n begin, ...)` (1.4's
            # THCTensorSort.cu): no grammar reads a directive inside an argument list; the first branch is kept
            # as code, the directives and the other branches become blanks
            blanked.update(group)
            blanked.update(range(group[1] + 1, group[-1]))
            continue
        codes = [_code(lines, a + 1, b, blanked) for a, b in branches]
        balances = [_balance(code) for code in codes]
        if len(branches) == 1 and _dangling_else(codes[0]):
            # `#if OLD_CUDA  if (n < k) { thrust(...); } else  #endif  { cub(...); }`: the block after the group is
            # the code both builds run; the grammar cannot read an `else` cut off by a directive
            blanked.update(range(group[0] + 1, group[1]))
        elif len(branches) == 1 and balances[0] != 0:
            blanked.update(range(group[0] + 1, group[1]))
        elif len(branches) > 1 and balances[0] != 0 and all(b == balances[0] for b in balances):
            most = max(most, len(branches))
            kept = min(choice, len(branches) - 1)
            if kept == 0:
                blanked.update(range(group[1] + 1, group[-1]))
            else:  # the grammar reads `#if X`, the kept branch's code, `#endif`
                a, b = branches[kept]
                blanked.update(i for i in range(group[0] + 1, group[-1]) if not a < i < b)
    if not blanked:
        return data, set(), most
    for i in blanked:
        lines[i] = re.sub(rb"[^\n]", b" ", lines[i])
    return b"\n".join(lines), {i + 1 for i in blanked}, most


def _in_arguments(lines: list[bytes], at: int, blanked: set[int]) -> bool:
    """Whether the directive on line `at` sits inside a call's argument list: the code before it ends with `(` or
    `,` (comments and blanked lines skipped; a few lines back at most)."""
    for i in range(at - 1, max(-1, at - 6), -1):
        if i in blanked:
            continue
        code = _NOISE.sub(b"", lines[i]).rstrip()
        if code.lstrip().startswith(b"#"):
            return False
        if code:
            return code.endswith((b"(", b","))
    return False


def _groups(text: bytes) -> list[list[int]]:
    """Each #if group as its directive line numbers [if, elif/else..., endif], innermost groups first."""
    stack: list[list[int]] = []
    done: list[list[int]] = []
    # the few directive lines are found by a search over the whole text, not by a Python loop over every line
    row, pos = 0, 0
    for m in _DIRECTIVE.finditer(text):
        line_start = text.rfind(b"\n", 0, m.start()) + 1
        if text[line_start:m.start()].strip(b" \t"):
            continue
        row += text.count(b"\n", pos, m.start())
        pos = m.start()
        word = m.group(1)
        if word in (b"if", b"ifdef", b"ifndef"):
            stack.append([row])
        elif word in (b"elif", b"else") and stack:
            stack[-1].append(row)
        elif word == b"endif" and stack:
            group = stack.pop()
            group.append(row)
            done.append(group)
    return done
