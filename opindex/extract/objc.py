"""Objective-C++ (.mm) read as C++: the Objective-C syntax is rewritten, in place, to C++ the grammar can read.

The MPS and Metal backends are written in Objective-C++. tree-sitter-cpp reads their C++ (functions, namespaces,
calls, REGISTER_DISPATCH, TORCH_IMPL_FUNC) but not the Objective-C in between, and its error recovery on
`@autoreleasepool { ... }`, message sends and blocks both costs time and can lose the scope of the functions after
them. `prepare` rewrites those constructs to C++ of the same length, line for line, so every fact keeps its line:

- `@autoreleasepool {` -> `{` (a plain block); `__block`, `__bridge*` qualifiers -> blanks;
- a message send `[receiver sel:a other:b]` -> `receiver.sel(a ,     b)`, `[receiver sel]` -> `receiver.sel()`: a
  method call named after the selector's first part (MPSGraph's `[graph matrixMultiplicationWithPrimaryTensor:x
  secondaryTensor:y name:nil]` is `graph.matrixMultiplicationWithPrimaryTensor(x, y, nil)`); the C++ calls in the
  receiver and the arguments stay calls;
- a block `^(params) {` -> a lambda `[](params){` (the blank before or after it gives the room), `^T*(params) {`
  -> `[]  (params) {`, and a block type `(^Name)(...)` -> a function pointer `(*Name)(...)`;
- literals `@"s"`, `@(x)`, `@1` -> `"s"`, `(x)`, `1`; `@[a, b]` and `@{k : v}` -> `(a, b)` and `(k , v)`;
  `@available(...)`, `@selector(...)`, `@encode(...)` -> `1`; `@try`/`@catch` -> `try`/`catch`; fast enumeration
  `for (NSNumber* x in shape)` -> the range-for `for (NSNumber* x :  shape)`;
- `@interface`/`@implementation`/`@protocol` ... `@end` (Objective-C classes and their methods) -> blank lines.

Strings (raw strings too: the Metal shader sources embedded in `R"METAL(...)METAL"`), character literals and
comments are left as they are.
"""
from __future__ import annotations

import re

# The calls that hand work to Apple's GPU frameworks (library_calls): PyTorch's runMPSGraph (OperationUtils.mm) runs
# a cached MPSGraph on the MPS stream; read as method calls, the sends that encode or run a graph (MPSGraph) and
# those that dispatch a Metal compute kernel (MTLComputeCommandEncoder). Selectors by their first part.
LIBRARY_CALLS = {"runMPSGraph": "mpsgraph"}
LIBRARY_SELECTORS = {"encodeToCommandBuffer": "mpsgraph", "runWithMTLCommandQueue": "mpsgraph",
                     "runAsyncWithMTLCommandQueue": "mpsgraph", "dispatchThreads": "metal",
                     "dispatchThreadgroups": "metal"}

_IDENT_START = re.compile(rb"[A-Za-z_]")
_IDENT = re.compile(rb"[A-Za-z_]\w*")
_SPACE = b" \t\r\n"
# a message send follows one of these (or a keyword such as return): an expression starts there
_EXPR_BEFORE = set(b"=(,:{};[!?&|+-*/%<>^~") | {0}
_CLASS_BLOCK = re.compile(rb"^[ \t]*@(?:interface|implementation|protocol)\b.*?^[ \t]*@end\b", re.M | re.S)
_BLANKED_WORDS = re.compile(rb"@autoreleasepool\b|\b__block\b|\b__bridge(?:_transfer|_retained)?\b")
_ONE_WORDS = re.compile(rb"@(?:available|selector|encode)\s*\(")
_TRY_WORDS = re.compile(rb"@(?=try\b|catch\b)")
_FOR = re.compile(rb"\bfor\s*\(")
_FOR_IN = re.compile(rb"(?<=\s)in(?=\s)")


def _blank(buf: bytearray, start: int, end: int) -> None:
    """Spaces over buf[start:end], newlines kept."""
    for i in range(start, end):
        if buf[i] not in (10, 13):
            buf[i] = 32


_SKIP_START = re.compile(rb"//|/\*|\"|'")
_STRING_END = re.compile(rb'(?:[^"\\\n]|\\[\s\S])*(?:"|$)', re.M)  # to the closing quote or the line's end
_CHAR_END = re.compile(rb"(?:[^'\\\n]|\\[\s\S])*(?:'|$)", re.M)


def _skips(data: bytes) -> list[tuple[int, int]]:
    """Byte ranges of comments, strings (raw strings too) and character literals, in order."""
    out = []
    n = len(data)
    m = _SKIP_START.search(data)
    while m:
        i, tok = m.start(), m.group()
        if tok == b"//":
            j = data.find(b"\n", i)
            j = n if j < 0 else j
        elif tok == b"/*":
            j = data.find(b"*/", i + 2)
            j = n if j < 0 else j + 2
        elif tok == b'"':
            j = None
            if i > 0 and data[i - 1] == 82 and (i < 2 or not (data[i - 2] == 95 or chr(data[i - 2]).isalnum())):
                k = data.find(b"(", i)  # R"delim( ... )delim"
                if 0 <= k - i <= 17:
                    j = data.find(b")" + data[i + 1:k] + b'"', k)
                    j = n if j < 0 else j + k - i + 1
            if j is None:
                j = _STRING_END.match(data, i + 1).end()
        elif i > 0 and chr(data[i - 1]).isalnum():  # a digit separator (1'000), not a character literal
            m = _SKIP_START.search(data, i + 1)
            continue
        else:
            j = _CHAR_END.match(data, i + 1).end()
        out.append((i, j))
        m = _SKIP_START.search(data, max(j, i + 1))
    return out


def prepare(data: bytes) -> bytes:
    """The text with its Objective-C written as same-length C++ (see the module doc); unchanged without any."""
    if b"@" not in data and b"[" not in data and b"^" not in data and b"__b" not in data and b" in " not in data:
        return data
    buf = bytearray(data)
    for m in _CLASS_BLOCK.finditer(data):
        _blank(buf, m.start(), m.end())
    data = bytes(buf)
    skips = _skips(data)
    code = bytearray(data)  # strings and comments as blanks; a string's opening quote stays (@"s" is still known)
    for s, e in skips:
        s += data[s] == 34
        code[s:e] = b" " * (e - s)
    code = bytes(code)
    for m in _BLANKED_WORDS.finditer(code):
        _blank(buf, m.start(), m.end())
    for m in _TRY_WORDS.finditer(code):
        buf[m.start()] = 32
    for m in _ONE_WORDS.finditer(code):
        end = _close(code, m.end() - 1)
        if end is not None:
            _blank(buf, m.start(), end + 1)
            buf[m.start()] = ord("1")
    for m in _FOR.finditer(code):  # for (NSNumber* x in shape) -> for (NSNumber* x :  shape)
        end = _close(code, m.end() - 1)
        inside = _FOR_IN.search(code, m.end(), end) if end is not None else None
        if inside:
            buf[inside.start():inside.end()] = b": "
    _literals(code, buf)
    _blocks(code, buf)
    _sends(code, buf)
    return bytes(buf)


# not `*`, `<`, `>` ([NSArray<NSNumber*> array]) nor `->`: a receiver holds no other operator
_BAD_RECEIVER = re.compile(rb"[,=+/%?|&!~^;]|-(?!>)")
_BRACKET = re.compile(rb"[][(){}]")
_TOKEN = re.compile(rb"[][(){}]|\s+|[^][(){}\s]+")
_PAIRS = {ord("("): ord(")"), ord("["): ord("]"), ord("{"): ord("}")}


def _close(code: bytes, i: int) -> int | None:
    """The index of the bracket closing the one at i (strings and comments are blanks in `code`)."""
    stack = []
    for m in _BRACKET.finditer(code, i):
        c = code[m.start()]
        if c in _PAIRS:
            stack.append(_PAIRS[c])
        elif not stack or stack.pop() != c:
            return None
        elif not stack:
            return m.start()
    return None


def _literals(code: bytes, buf: bytearray) -> None:
    """@"s", @(x), @1 -> the literal; @[a, b] -> (a, b); @{k : v} -> (k , v)."""
    i = code.find(b"@")
    while i >= 0:
        nxt = code[i + 1:i + 2]
        if nxt in (b'"', b"(") or nxt.isdigit() or nxt in (b"-", b"."):
            buf[i] = 32
        elif nxt in (b"[", b"{"):
            end = _close(code, i + 1)
            if end is not None:
                buf[i], buf[i + 1], buf[end] = 32, ord("("), ord(")")
                last, _ = _previous(code, end)
                if last == 44:  # @[a, b,] -> (a, b ): a trailing comma is no C++ expression
                    buf[code.rindex(b",", 0, end)] = 32
                if nxt == b"{":  # the top-level `:` of a dictionary literal
                    depth = 0
                    for j in range(i + 2, end):
                        c = code[j]
                        if c in _PAIRS:
                            depth += 1
                        elif c in (41, 93, 125):
                            depth -= 1
                        elif c == 58 and depth == 0 and code[j - 1] != 58 and code[j + 1] != 58:
                            buf[j] = ord(",")
        i = code.find(b"@", i + 1)


_BLOCK_TYPE = re.compile(rb"[A-Za-z_][\w:]*(?:\s*<[^(){};]*>)?[\s*&]*(?=[({])")


def _brace_after(code: bytes, k: int) -> bool:
    """True when `(params)` (if any) and then `{` follow k: a block's body (`a ^b(c);` is an XOR)."""
    if code[k:k + 1] == b"(":
        end = _close(code, k)
        if end is None:
            return False
        k = end + 1
    while k < len(code) and code[k] in _SPACE:
        k += 1
    return code[k:k + 1] == b"{"


def _blocks(code: bytes, buf: bytearray) -> None:
    """Blocks as lambdas: `^(params) {` -> `[](params){`, `^{` -> `[]{` (the room from a blank after or before it),
    `^Type*(params) {` -> `[]     (params) {`; a block type `(^Name)(...)` -> the function pointer `(*Name)(...)`."""
    i = code.find(b"^")
    while i >= 0:
        before, _ = _previous(code, i)
        typed = _BLOCK_TYPE.match(code, i + 1)
        if before == 40:  # (^Name)
            buf[i] = ord("*")
        elif typed:  # ^MPSGraphTensor*(MPSGraph* graph, ...) {, ^bool { : the return type's room takes the []
            if _brace_after(code, typed.end()):
                _blank(buf, i, typed.end())
                buf[i:i + 2] = b"[]"
        else:
            k = i + 1
            if code[k:k + 1] == b"(":
                end = _close(code, k)
                k = end + 1 if end is not None else None
            if k is not None:
                brace = k
                while brace < len(code) and code[brace] in _SPACE:
                    brace += 1
                if code[brace:brace + 1] == b"{":
                    if brace > k and code[k] in b" \t":  # `^(...) {`: the blank before { gives the room
                        buf[i + 2:k + 1] = code[i + 1:k]
                        buf[i:i + 2] = b"[]"
                    elif i > 0 and code[i - 1] in b" \t":  # `, ^{`: the blank before ^ does
                        buf[i - 1:i + 1] = b"[]"
                    else:
                        buf[i] = 32
        i = code.find(b"^", i + 1)


def _previous(code: bytes, i: int) -> tuple[int, bytes]:
    """The last non-blank byte before i (0 at the start) and the word it ends, if any."""
    j = i - 1
    while j >= 0 and code[j] in _SPACE:
        j -= 1
    if j < 0:
        return 0, b""
    k = j
    while k >= 0 and (chr(code[k]).isalnum() or code[k] == 95):
        k -= 1
    return code[j], code[k + 1:j + 1]


def _sends(code: bytes, buf: bytearray) -> None:
    """[receiver sel:a other:b] -> receiver.sel(a ,     b); [receiver sel] -> receiver.sel() (the receiver moves one
    column left). Inner sends first: an outer send moves its receiver as already written."""
    sends = []
    i = code.find(b"[")
    while i >= 0:
        before, word = _previous(code, i)
        # an expression starts here (after `if (x)` and a cast `(int)` too: a send is no subscript, see below)
        if before in _EXPR_BEFORE or before == 41 or word in (b"return", b"case", b"throw", b"else", b"do"):
            end = _close(code, i)
            if end is not None:
                parts = _selector_parts(code, i + 1, end)
                if parts is not None:
                    sends.append((i, end, parts))
        i = code.find(b"[", i + 1)
    for i, end, parts in reversed(sends):
        r_end = parts[0][0]
        while code[r_end - 1] in _SPACE:
            r_end -= 1
        buf[i:r_end - 1] = buf[i + 1:r_end]
        buf[r_end - 1] = 46  # .
        sel_start, sel_end = parts[0]
        if code[sel_end - 1] != 58:  # [receiver unary]: the selector moves next to the dot
            name = code[sel_start:sel_end]
            _blank(buf, r_end, end)
            buf[r_end:r_end + len(name) + 1] = name + b"("
        else:
            buf[sel_end - 1] = 40  # sel: -> sel(
            for sel_start, sel_end in parts[1:]:  # other: -> ,
                _blank(buf, sel_start, sel_end)
                buf[sel_start] = 44
        buf[end] = 41


def _selector_parts(code: bytes, start: int, end: int) -> list[tuple[int, int]] | None:
    """The selector parts of a message send between brackets, as (start, end after its colon), or None when the
    text is not a message send (an array size, a lambda's captures, an attribute)."""
    depth, i, parts = 0, start, []
    seen_receiver = False
    while i < end:
        tok = _TOKEN.match(code, i)
        j = tok.end()
        c = code[i]
        if c in _PAIRS:
            depth += 1
            seen_receiver = True
        elif c in (41, 93, 125):
            depth -= 1
        elif c in _SPACE:
            if depth == 0 and seen_receiver and j < end:
                m = _IDENT.match(code, j)
                if m:
                    after = m.end()
                    if after < end and code[after] == 58 and code[after + 1] != 58 and code[i - 1] not in (58, 63):
                        parts.append((j, after + 1))  # ` sel:` (not `a ? b :`, not `x::y`)
                        i = after + 1
                        continue
                    if not parts:  # [receiver unary]: nothing but blanks may follow
                        rest = code[after:end]
                        return [(j, after)] if not rest.strip() else None
        else:
            seen_receiver = True
            if not parts and depth == 0 and _BAD_RECEIVER.search(code, i, j):
                return None  # [a, b], [&], [x = y], [n + 1]: captures or a size, not a send (-> is fine)
        i = j
    return parts or None
