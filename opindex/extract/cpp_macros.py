"""A little of the C preprocessor: macro arguments, and the expansion of same-file function-like macros.

PyTorch generates stubs, registrations and kernels with function-like macros and token pasting
(`DEFINE_DISPATCH(NAME##_cudnn_stub)` in a #define, invoked per RNN kind). No regex and no parser sees those facts
in the source text; opindex expands such a macro at each invocation in the same file (parameters substituted,
`##` pasted; `#x` stringizing and variadic __VA_ARGS__ are substituted textually) and extracts from the expansion.
Only macros whose body declares, defines or registers something are expanded (see ``EXPANDABLE``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Tokens the argument scanner cares about: literals and comments are skipped whole.
_TOKENS = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|[(),]', re.S)
_BRACED = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|[(),{}]', re.S)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# A macro body that declares/defines/registers stubs, defines structured kernels, kernels or functions.
EXPANDABLE = re.compile(
    r"\b(?:DECLARE_DISPATCH|DEFINE_DISPATCH|(?:ALSO_)?REGISTER_\w*DISPATCH|TORCH_(?:PRECOMPUTE_)?(?:META|IMPL)_FUNC2?)"
    r"\s*\(|__global__"
    r"|\b(?!(?:if|for|while|switch|catch|return|sizeof|decltype)\b)[A-Za-z_]\w*(?:##\w+)*\s*\([^;{}]*\)\s*"
    r"(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?\{")
MAX_DEPTH = 4
NATIVE = re.compile(r"(?:DECLARE_DISPATCH|DEFINE_DISPATCH|(?:ALSO_)?REGISTER_\w*DISPATCH|AT_DISPATCH_\w+"
                    r"|TORCH_(?:PRECOMPUTE_)?(?:META|IMPL)_FUNC2?)$")


def collapse(text: str) -> str:
    # str.split() splits at exactly the characters re's \s matches (checked over all of Unicode), and is faster
    return " ".join(text.split())


def macro_body(raw: str) -> str:
    """Replacement text: continuation lines joined, comments dropped, whitespace collapsed."""
    return collapse(_COMMENT.sub(" ", raw.replace("\\\r\n", " ").replace("\\\n", " ")))


def arguments(data: bytes, open_paren: int, limit: int | None = None, braces: bool = False) -> tuple[list[str], int]:
    """Split `(a, f(b, c), d)` starting at data[open_paren] == '('; returns (args, index after ')').

    Stops after ``limit`` arguments when given (the rest of a long lambda need not be scanned). Unbalanced
    input returns what was found and len(data). With `braces` (a C++ call's arguments, not a macro's: the
    preprocessor splits `{0, 0}` at its comma, C++ does not), commas inside braces do not split."""
    depth, inner, start, args = 0, 0, open_paren + 1, []
    for m in (_BRACED if braces else _TOKENS).finditer(data, open_paren):
        tok = m.group()
        if tok == b"(":
            depth += 1
        elif tok == b")":
            depth -= 1
            if depth == 0:
                args.append(data[start:m.start()])
                return _clean(args), m.end()
        elif tok in (b"{", b"}"):
            inner += 1 if tok == b"{" else -1
        elif tok == b"," and depth == 1 and inner <= 0:
            args.append(data[start:m.start()])
            start = m.end()
            if limit is not None and len(args) >= limit:
                return _clean(args), m.end()
    return _clean(args), len(data)


def _clean(args: list[bytes]) -> list[str]:
    out = [collapse(_COMMENT.sub(" ", a.decode("utf-8", "replace"))) for a in args]
    return [] if out == [""] else out


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]  # () for object-like macros
    function_like: bool
    body: str
    start: int  # byte offset of the #define


def substitute(macro: Macro, args: list[str]) -> str:
    """Parameters replaced by arguments, then `##` pasted; `#x` becomes the argument text."""
    values = dict(zip(macro.params, args))
    if macro.params and macro.params[-1] == "...":
        values.pop("...", None)
        values["__VA_ARGS__"] = ", ".join(args[len(macro.params) - 1:])
    if not values:
        return macro.body.replace(" ## ", "").replace("##", "")

    def repl(m: re.Match) -> str:
        if m.group(1):  # #x: the argument as a string literal
            return f'"{values[m.group(1)]}"' if m.group(1) in values else m.group(0)
        return values.get(m.group(2), m.group(0))

    out = _PARAM.sub(repl, macro.body)
    return re.sub(r"\s*##\s*", "", out)


_PARAM = re.compile(r"(?<!#)#(?!#)\s*([A-Za-z_]\w*)|\b([A-Za-z_]\w*)\b")


class MacroTable:
    """The function-like macros of one file worth expanding, by name; a later #define of a name wins after it."""

    def __init__(self, macros: list[Macro], local: frozenset[int] = frozenset()):
        """`local`: the start offsets of the #defines written inside a function body; those are expanded
        whatever they hold (their invocations are that function's code)."""
        self.by_name: dict[str, list[Macro]] = {}
        self.local = local
        # The dispatch and structured-kernel macros themselves are understood natively, never expanded.
        candidates = [m for m in macros if m.function_like and not NATIVE.match(m.name)]
        for m in candidates:
            if m.start in local or EXPANDABLE.search(m.body):
                self.by_name.setdefault(m.name, []).append(m)
        for found in self.by_name.values():
            found.sort(key=lambda m: m.start)  # the tree's #defines, then those read from ERROR nodes: in file order
        grown = True
        while grown:  # a macro whose body invokes an expandable macro is expandable too
            grown = False
            for m in candidates:
                if m.name not in self.by_name and any(
                        re.search(rf"\b{re.escape(n)}\s*\(", m.body) for n in self.by_name):
                    self.by_name[m.name] = sorted((x for x in candidates if x.name == m.name), key=lambda x: x.start)
                    grown = True
        self.invocation = (re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in self.by_name) + rb")\s*\(")
                           if self.by_name else None)

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def lookup(self, name: str, pos: int) -> Macro | None:
        found = None
        for m in self.by_name.get(name, ()):
            if m.start <= pos or found is None:
                found = m
        return found

    def expand(self, macro: Macro, args: list[str], depth: int = 0) -> str:
        """The expansion, with nested invocations of this file's expandable macros expanded too."""
        text = substitute(macro, args)
        if depth >= MAX_DEPTH or self.invocation is None:
            return text
        data = text.encode()
        out, pos = [], 0
        for m in self.invocation.finditer(data):
            if m.start() < pos or m.group(1).decode() == macro.name:
                continue
            inner = self.lookup(m.group(1).decode(), macro.start)
            inner_args, end = arguments(data, m.end() - 1)
            out.append(data[pos:m.start()].decode())
            out.append(self.expand(inner, inner_args, depth + 1))
            pos = end
        if not out:
            return text
        out.append(data[pos:].decode())
        return "".join(out)
