"""Facts read from a file's text as written, for the link step (which opens no checkout file): the #include lines
of a C++ file, the template parameter names of its templates (symbols.template_parameters), the declared type of a
local variable that receives a method call (calls.receiver_type); and in torchgen's Python, the launcher calls the
C++ it generates makes (generated_launch_sites). Each reads the text the way the link step once read the file
(decoded as UTF-8, bad bytes replaced, str.splitlines), so the links come out as before."""
from __future__ import annotations

import json
import re
from collections import defaultdict

from ..pytorch.stubs import PARAMETER
from .cpp_names import launch_kind

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")
_RECEIVING_KINDS = ("function", "method", "impl_func", "global_kernel")


def cpp_text_facts(path: str, data: bytes, rows: dict[str, list[tuple]]) -> None:
    """Add includes rows, symbols.template_parameters and calls.receiver_type to a C++ file's rows (in place;
    `data` is the file as written, before any Objective-C rewriting)."""
    symbols, calls = rows.get("symbols", []), rows.get("calls", [])
    text = None
    if b"include" in data:
        text = data.decode("utf-8", "replace")
        rows["includes"] = _includes(path, text)
    templates = [i for i, s in enumerate(symbols) if s[9]]  # is_template
    sites: dict[str, list[int]] = defaultdict(list)  # caller -> the method calls on a plainly named local
    for i, c in enumerate(calls):
        if c[6] and c[5] not in ("self", "this") and _IDENTIFIER.match(c[5]):
            sites[c[3]].append(i)
    if not templates and not sites:
        return
    if text is None:
        text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    for i in templates:
        s = symbols[i]
        got = lines[max(1, s[1] - 11) - 1:max(1, s[1] - 11) - 1 + min(s[1], 12)]
        symbols[i] = s[:12] + (json.dumps(template_parameters(got)),)
    if not sites:
        return
    spans: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for s in symbols:
        if s[4] in _RECEIVING_KINDS and s[6] in sites:
            spans[s[6]].append((s[1], s[2], s[8] or ""))
    for caller, at in sites.items():
        for start, end, sig in spans.get(caller, ()):
            inside = [i for i in at if start <= calls[i][1] <= end]
            if not inside:
                continue
            decls = declarations(lines[start - 1:end], start, {calls[i][5] for i in inside})
            if not decls:
                continue
            parameters = set(PARAMETER.findall(sig))
            for i in inside:
                c = calls[i]
                if c[5] in parameters or c[-1] is not None:
                    continue  # a parameter: the walk reads its type from the signature
                found = [d for ln, name, d in decls if name == c[5] and ln <= c[1]]
                if found:
                    calls[i] = c[:-1] + (found[-1],)


def _includes(path: str, text: str) -> list[tuple[str, int, str]]:
    """(file, line, path) of each #include, lines counted on from the one before (not from the top each time)."""
    out, line, pos = [], 1, 0
    for m in _INCLUDE.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        out.append((path, line, m.group(1)))
    return out


_GENERATED_CALL = re.compile(r"\b(\w*gpu_kernel\w*|launch_\w+)\s*\(")


def generated_launch_sites(path: str, data: bytes, rows: dict[str, list[tuple]]) -> None:
    """The TensorIterator launcher calls in the text of torchgen's Python defs (the C++ they write)."""
    if not path.startswith("torchgen/") or b"gpu_kernel" not in data:
        return
    text = data.decode("utf-8", "replace")
    if "gpu_kernel" not in text:
        return
    defs = sorted(((s[1], s[2], s[6]) for s in rows.get("symbols", ()) if s[4] in ("function", "method")),
                  key=lambda d: d[0])
    out = []
    for i, raw in enumerate(text.splitlines(), 1):
        for m in _GENERATED_CALL.finditer(raw):
            if launch_kind(m.group(1), "") != "tensor_iterator":
                continue
            inner = [d for d in defs if d[0] <= i <= d[1]]
            if inner:
                out.append((path, i, m.group(1), inner[-1][2]))  # the innermost def
    rows["generated_launch_sites"] = out


# -- the declared type of a method call's receiver -------------------------------------------------------------------
_DECLARATION = re.compile(r"(?<![\w:.>-])((?:const\s+)?[A-Za-z_][\w:]*(?:<[^;(){}]*>)?)\s*[&*]*\s+"
                          r"([A-Za-z_]\w*)\s*(?:=\s*([^;]*)|[;({\[,])")
_NOT_TYPES = frozenset({"return", "else", "case", "new", "delete", "throw", "co_return", "goto", "typedef",
                        "using", "namespace", "struct", "class", "enum", "if", "while", "for", "switch"})


def declarations(body: list[str], first_line: int, names: set[str]) -> list[tuple[int, str, str]]:
    """(line, name, declared type) of the declarations of `names` in a function's lines; `auto x = e` gives
    `auto = e`."""
    out = []
    for i in _declaring_lines(body, names):
        for m in _DECLARATION.finditer(body[i]):
            kind = m.group(1)
            if kind in _NOT_TYPES or m.group(2) not in names:
                continue
            if kind.removeprefix("const ").strip() == "auto" and m.group(3) is not None:
                kind = f"auto = {m.group(3).strip()}"
            out.append((first_line + i, m.group(2), kind))
    return out


_AFTER_DECLARED = re.compile(r"\s*[=;({\[,]")


def _declaring_lines(body: list[str], names: set[str]) -> list[int]:
    """The lines (0-based) where _DECLARATION may declare one of `names`: the name after a blank and before `=`,
    `;`, `(`, `{`, `[` or `,`. Found by str.find over the function's text, so the regex runs on those few lines
    only (a few lines may be found that it then does not match)."""
    text = "\n".join(body)
    found = set()
    for name in names:
        i = text.find(name)
        while i >= 0:
            if i > 0 and text[i - 1].isspace() and _AFTER_DECLARED.match(text, i + len(name)):
                found.add(text.count("\n", 0, i))
            i = text.find(name, i + len(name))
    return sorted(found)


# -- template parameter names ----------------------------------------------------------------------------------------
_TEMPLATE = re.compile(r"\btemplate\s*<")


def template_parameters(got: list[str]) -> list[str]:
    """The template parameter names of the definition on the last of `got` (its `template <...>` on that line or
    the eleven before: a template template parameter's own head may take a line per parameter, 1.8's
    reduce_dispatch), in order; [] when it is not a template."""
    text = " ".join(got)
    def_start = len(text) - len(got[-1]) if got else 0
    # the outermost `template <`: not one inside a parameter list (`template<template<typename> class k, ...>`)
    heads = [m.end() - 1 for m in _TEMPLATE.finditer(text) if text[:m.start()].rstrip()[-1:] not in ("<", ",")]
    if not heads:
        return []
    open_at = heads[-1]
    depth, start, parts = 0, open_at + 1, []
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
            if depth == 0:
                parts.append(text[start:i])
                if any(c in text[i:def_start] for c in ";{}"):
                    return []  # the head of an earlier definition (`template <...> void f(T x) {}`)
                break
        elif ch == "," and depth == 1:
            parts.append(text[start:i])
            start = i + 1
    out = []
    if parts == [""]:
        return out  # `template <>`: an explicit specialization has no parameters of its own
    for part in parts:  # `template<typename> class exponential_kernel`, `typename RNG`, `int N = 4`
        while "<" in part and part != (part := re.sub(r"<[^<>]*>", "", part)):
            pass  # a template template parameter's own head, defaults and all (`template <typename T, typename
            # acc_t = T> typename OpFunctor`)
        m = re.search(r"([A-Za-z_]\w*)\s*$", part.split("=", 1)[0])
        out.append(m.group(1) if m else "")
    return out
