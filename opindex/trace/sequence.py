"""Whether two calls of one body run one after the other, or are alternatives (read from the source text).

The main chain's last tie-break (trace/rank.py): of two ends ranked alike whose paths part at two calls of the same
body, source order holds for alternatives (PyTorch tries its fast paths first), but of calls that run in sequence
the later one makes the op's result: batch_norm_cuda_out computes the statistics (batch_norm_mean_var, inside
`if (train) {`) and then, after the if/else, the output (batch_norm_elementwise).
"""
from __future__ import annotations

import functools
import os
import re

_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[{}]|'
                    r'\b(?:else|case|return)\b|\bdefault\s*:|^[ \t]*#[ \t]*(?:else|elif)\b', re.S | re.M)
C_FAMILY = (".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp")


def in_sequence(lines: list[str], first: int, later: int) -> bool:
    """Whether the statement at line `first` (1-based) is followed, on the same path, by line `later`: no `return`
    at or above its depth after it (an early return makes what follows the other way), `later` not in the `else`
    branch or another `case` of a test that holds `first`, nor in a block of its own opened since (`if (b) {
    later(); }` after `if (a) { first(); }`), and no `#else`/`#elif` between them."""
    return _read(lines, first, later) == "sequence"


def may_follow(lines: list[str], first: int, later: int) -> bool:
    """Whether `later` runs after `first` on the path that reaches it: in sequence, or in a block of its own opened
    since (`first(); if (b) { later(); }`), not another way of a test that holds `first`."""
    return _read(lines, first, later) in ("sequence", "") and 0 < first < later <= len(lines)


_BLOCK = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[{}();]', re.S)
# a block that runs each time the code around it does: a plain `{ ... }` scope or a loop's body. Not one under a
# test, nor a lambda's (a lambda defined there runs where it is called: `auto conj_chalf = [&] { ... };`, and an
# AT_DISPATCH's case lambdas are alternatives the dtype picks)
_RUNS = re.compile(r"(?:for|while|do)\b|$")


def runs_after(lines: list[str], first: int, later: int, held: frozenset[int] | set[int] = frozenset()) -> bool:
    """Whether `later` runs after `first` each time `first` runs: in sequence, or in blocks opened since that run
    each time (a loop's body, a plain scope: `fill<<<...>>>(...); for (...) { radixFindKthValues<<<...>>>(...);
    }`, an `if` or `else` whose test starts on a line of `held`, the tests the trace read as true), not under a
    test of its own nor in a lambda."""
    kind = _read(lines, first, later)
    if kind or not 0 < first < later <= len(lines):
        return kind == "sequence"
    return all(_runs(h, at, held) for h, at in _blocks(lines, first, first, later)[1])


def runs_before(lines: list[str], start: int, first: int, later: int,
                held: frozenset[int] | set[int] = frozenset()) -> bool:
    """Whether `first` has run each time `later` runs, in the body from line `start`: no else, case, early return
    or #else makes them alternatives, and each block that holds `first` but not `later` runs each time (`if (a)
    { first(); } later();`: first may not have run; a loop's body, a plain scope, a test of `held`: it has)."""
    if not 0 < start <= first < later <= len(lines) or alternatives(lines, first, later):
        return False
    return all(_runs(h, at, held) for h, at in _blocks(lines, start, first, later)[0])


_HELD = re.compile(r"(?:\}\s*)?(?:else\b\s*)?(?:if\b|$)")  # (an `if`, `else if` or `else` block's header)


def _runs(header: str, line: int, held) -> bool:
    """A block that runs each time the code around it does: a loop's body, a plain scope, or a test's block
    whose test (its header's line) the trace read as true."""
    return bool(_RUNS.match(header)) or (line in held and bool(_HELD.match(header)))


def blocks_between(lines: list[str], start: int, first: int, later: int) -> tuple[list[str], list[str]]:
    """The headers (the text before each `{`, from the last `;` or brace outside parentheses; comments left out)
    of the blocks that hold line `first` but not `later`, and of those that hold `later` but not `first`, reading
    the text from line `start`."""
    held, opened = _blocks(lines, start, first, later)
    return [h for h, _ in held], [h for h, _ in opened]


def _blocks(lines: list[str], start: int, first: int, later: int) -> tuple[list[tuple[str, int]],
                                                                          list[tuple[str, int]]]:
    """blocks_between, each header with the line it starts on."""
    text = "\n".join(lines[start - 1:later - 1])
    at_first = sum(len(line) + 1 for line in lines[start - 1:first - 1])
    stack: list[tuple[int, str]] = []
    held, n, begin, parens, piece, opened = None, 0, 0, 0, [], 0
    for m in _BLOCK.finditer(text):
        if held is None and m.start() >= at_first:
            held = list(stack)
        tok = m.group()
        if tok.startswith(("//", "/*")):
            piece.append(text[begin:m.start()])
            if not text[opened:m.start()].strip():
                opened = m.end()  # (a header starts after the comments above it)
            begin = m.end()
        elif tok in ("(", ")"):
            parens += 1 if tok == "(" else -1  # (a `for (...; ...; ...)` header's semicolons)
        elif tok == "{":
            n += 1
            head = "".join(piece) + text[begin:m.start()]
            lead = opened + len(text[opened:m.start()]) - len(text[opened:m.start()].lstrip())
            stack.append((n, " ".join(head.split()), start + text.count("\n", 0, lead)))
            begin, piece, opened = m.end(), [], m.end()
        elif tok == "}" or (tok == ";" and parens <= 0):
            if tok == "}" and stack:
                stack.pop()
            begin, piece, opened = m.end(), [], m.end()
    held = list(stack) if held is None else held
    return [(h, at) for _, h, at in (b for b in held if b not in stack)], \
        [(h, at) for _, h, at in (b for b in stack if b not in held)]


def built_lines(lines: list[str], off, first: int = 1, last: int | None = None) -> list[str]:
    """A file's lines as a build compiles them: a line `off(n)` says is under a false #if, and every directive
    line, blank (the same count, so line numbers hold); only lines first..last are read so (the span _read reads)."""
    last = len(lines) if last is None else min(last, len(lines))
    return lines[:first - 1] + ["" if text.lstrip().startswith("#") or off(n) else text
                                for n, text in enumerate(lines[first - 1:last], first)] + lines[last:]


def alternatives(lines: list[str], first: int, later: int) -> bool:
    """Whether `later` is another way than `first`: the `else` branch or another `case` of a test that holds
    `first`, past an early return after it, or the other side of an `#if`; not a block of its own opened since
    (which may run after `first`, under a test)."""
    return _read(lines, first, later) == "alternatives"


def _read(lines: list[str], first: int, later: int) -> str:
    """"sequence", "alternatives" or "" (later runs under a test of its own opened since, or the lines are out of
    range) for the statements at lines `first` < `later`. Read once per list of lines and `first` for every later
    line up to SCAN_AHEAD past the farthest asked (the main chain's tie-break asks of one launch against each later
    one: host_softmax's 30 launches)."""
    if not 0 < first < later <= len(lines):
        return ""
    key = (id(lines), first)
    kept = _RELATIONS.get(key)
    if kept is None or kept[0] is not lines or len(kept[1]) < later - first:
        if len(_RELATIONS) >= MAX_RELATIONS:
            _RELATIONS.clear()
        kept = _RELATIONS[key] = (lines, _relations(lines, first, min(len(lines), later + SCAN_AHEAD)))
    return kept[1][later - first - 1]


SCAN_AHEAD = 256  # lines read past a later line asked of, for the next ask with the same first line
MAX_RELATIONS = 2048  # (lines, first) readings kept (past it: all dropped, then read again as asked)
_RELATIONS: dict = {}


def _relations(lines: list[str], first: int, last: int) -> list[str]:
    """_read of each later line first+1..last, in one pass over the text between."""
    text = "\n".join(lines[first - 1:last - 1])
    ends, at = [], -1  # the offset where each line first..last-1 ends
    for line in lines[first - 1:last - 1]:
        at += len(line) + 1
        ends.append(at)
    out: list[str] = []
    depth, alt, kind, low, done = 0, None, "", 0, False
    # an `else` is one of a test around `first` only right after a `}` that closed a block holding `first`, or one
    # of that test's else-if blocks (`fresh`); not the else of an `if` written after `first` (multinomial_out's
    # `if (n_sample == 1) {...} else {...}` after its sampler): `chained` marks each open block begun right after
    # such an else
    fresh, chained, after_else = False, [], False

    def said() -> str:
        return "alternatives" if done or alt is not None else "sequence" if depth == low else ""

    for m in _TOKEN.finditer(text):
        while len(out) < len(ends) and m.start() >= ends[len(out)]:
            out.append(said())  # (every line before this token read: the relation of the line after it)
        if done:
            break
        tok = m.group()
        if tok.startswith(("//", "/*", '"', "'")):
            continue
        if tok.lstrip().startswith("#"):
            done = True  # the other side of an #if: a build has one or the other
        elif tok == "{":
            depth += 1
            chained.append(after_else)
            fresh = False
        elif tok == "}":
            depth -= 1
            fresh = depth < low or (chained.pop() if chained else False)
            low = min(low, depth)
            if alt is not None and (depth == alt if kind == "else" else depth < alt):
                alt = None  # past the whole if/else or switch: what follows runs after both ways
        elif tok == "return":
            fresh = False
            if depth <= 0 and alt is None:
                done = True
        elif tok == "else" and depth < 0 and fresh:
            if alt is None:  # an else of a test around `first`
                alt, kind = depth, "else"
        elif tok != "else" and depth <= 0 and depth == low:
            fresh = False
            if alt is None:  # a case of a switch around `first`
                alt, kind = depth, "case"
        else:
            fresh = False
        after_else = tok == "else" and depth < 0 and (alt is not None or fresh)
    while len(out) < len(ends):
        out.append(said())  # (`later` in a block opened since runs under a test of its own: "")
    return out


@functools.lru_cache(maxsize=64)
def file_lines(root: str | None, file: str) -> list[str] | None:
    """A checkout file's lines (None when the checkout is not here: the index alone decides nothing then)."""
    if not root or not file:
        return None
    try:
        with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return None


@functools.lru_cache(maxsize=8192)
def strided_operands_at(root: str, file: str, line: int, end_line: int) -> tuple[str, ...]:
    """pytorch/views.strided_operands of the body at file:line-end_line of the checkout at `root` (read once per
    process: a walk asks it of every body that launches a TensorIterator or calls a stub)."""
    from ..pytorch.views import strided_operands
    lines = file_lines(root, file)
    return tuple(strided_operands("\n".join(lines[line - 1:end_line]))) if lines else ()


@functools.lru_cache(maxsize=8192)
def views_at(root: str, file: str, line: int, end_line: int) -> tuple[dict, tuple[int, ...], dict]:
    """pytorch/views.view_assignments of the body at file:line-end_line, the brace depth at the start of each of
    its lines, and its other assignments (pytorch/views.other_assignments: a view assigned over is gone); read once
    per process and body (walk/sites.py asks at each fill/copy and op call it makes)."""
    from ..pytorch.views import other_assignments, view_assignments
    lines = file_lines(root, file)
    if not lines:
        return {}, (), {}
    body = lines[line - 1:end_line]
    views = view_assignments("\n".join(body), line)
    if not views:
        return {}, (), {}
    depths, depth = [], 0  # (as pytorch/views.depth_at counts them, one pass)
    for text in body:
        depths.append(depth)
        depth += text.count("{") - text.count("}")
    return views, tuple(depths), other_assignments("\n".join(body), line)


_SET_OUTPUT = re.compile(r"\bset_output(?:_raw_strided|_strided|_contiguous)?\(\s*(\d+)\s*,\s*(\w+)\s*\.\s*sizes\(\)")


@functools.lru_cache(maxsize=4096)
def outputs_sized_at(root: str, file: str, line: int, end_line: int) -> tuple[tuple[int, str], ...]:
    """(output index, input name) of each `set_output_raw_strided(0, self.sizes(), ...)` (or set_output ...) a
    meta function at file:line-end_line writes: that output has that input's sizes (read once per process)."""
    lines = file_lines(root, file)
    return tuple((int(i), like) for i, like in _SET_OUTPUT.findall("\n".join(lines[line - 1:end_line]))) \
        if lines else ()
