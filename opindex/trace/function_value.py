"""What a C++ function of no arguments returns in the build traced, read from its body: a condition that calls one
(`if (at::native::cudnnv8_enabled_check_debug())`, `static bool disable = getDisableAddmmCudaLt(); if (!disable)`)
is read with that value.

The body is read statement by statement at its top level, in the build traced: `#if` branches the build does not
compile are skipped (cudnnv8_enabled_check_debug's `#if defined(USE_MACA) return false; #endif`), locals are set
from what this module can evaluate, an `if` whose test is false is skipped, and the first `return` reached gives
the value. The process environment is PyTorch's default, empty: `std::getenv(...)` is nullptr and
`c10::utils::check_env(...)` is nullopt (getDisableAddmmCudaLt reads ENABLE_ADDMM_CUDA_LT, unset: Lt disabled in
this fork). Anything else (an argument, a call, a loop around the return) leaves the value unknown (None).
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from ..pytorch.syntax import closes_at_end, split_top_level

NULL = object()  # nullptr / nullopt: an unset environment variable
_CALL = re.compile(r"(?<![\w.>:])((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\(\s*\)(?!\s*(?:\.|->|\(|\w))")
_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
_LOCAL = re.compile(r"^(?:static\s+)?(?:const\s+)?(?:bool|int|auto|char\s*\*|const\s+char\s*\*|uint8_t|int64_t)\s*"
                    r"(?:const\s+)?\*?\s*([A-Za-z_]\w*)\s*=\s*(.+)$", re.S)
_ENV = re.compile(r"^(?:std::)?getenv\s*\(|^c10::utils::check_env\s*\(|^check_env\s*\(")
MAX_LINES = 80  # a longer body is not read (the functions this serves are a few lines)


def calls_in(condition: str) -> list[str]:
    """The no-argument calls of free functions a condition makes (`getDisableAddmmCudaLt()`, not
    `iter.is_contiguous()` nor `detail::getCUDAHooks().x()`)."""
    return _CALL.findall(condition)


def substitute(condition: str, value_of) -> str:
    """`condition` with each no-argument call whose value is known written as `true` or `false`."""
    def repl(m):
        value = value_of(m.group(1))
        return m.group(0) if not isinstance(value, bool) else ("true" if value else "false")
    return _CALL.sub(repl, condition)


@functools.lru_cache(maxsize=512)
def _read(path: str, first: int, last: int) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError:
        return None
    return lines[first - 1:last]


@dataclass(frozen=True)
class Const:
    """A named constant a function returns (`return BatchNormBackend::Native;`), by its last name."""
    name: str


def body_value(root: str | None, file: str, line: int, end_line: int, build_holds,
               env: dict | None = None):
    """The value the function defined at file:line..end_line returns (True/False, an int, or a Const), read as the
    module docstring says; `env`: its parameters' values where the call gives them (None for an undefined tensor
    or an empty optional: `weight.defined()` is false)."""
    if not root or end_line - line > MAX_LINES:
        return None
    lines = _read(os.path.join(root, file), line, end_line)
    if lines is None:
        return None
    text = "\n".join(_active(lines, build_holds) or [])
    if "{" not in text:
        return None
    body = text[text.index("{") + 1:text.rindex("}")] if "}" in text else None
    return None if body is None else _run(body, {k: NULL if v is None else v for k, v in (env or {}).items()})


def _active(lines: list[str], build_holds) -> list[str] | None:
    """The lines the build compiles; None when an #if around a line cannot be decided."""
    out, stack = [], []  # stack: (this branch on, some branch taken)
    for text in lines:
        m = _DIRECTIVE.match(text)
        if m is None:
            if all(on for on, _ in stack):
                out.append(re.sub(r"//.*$", "", text))
            continue
        kind, rest = m.group(1), m.group(2).strip()
        test = {"ifdef": f"defined({rest})", "ifndef": f"!defined({rest})"}.get(kind, rest)
        if kind in ("if", "ifdef", "ifndef"):
            value = build_holds(test)
            if value is None:
                return None
            stack.append((value, value))
        elif kind == "elif" and stack:
            taken = stack[-1][1]
            value = False if taken else build_holds(test)
            if value is None:
                return None
            stack[-1] = (value, taken or value)
        elif kind == "else" and stack:
            stack[-1] = (not stack[-1][1], True)
        elif kind == "endif" and stack:
            stack.pop()
    return out


def _statements(body: str) -> list[str]:
    """The top-level statements of a body: `x;` or `if (...) {...}` (an if's block kept whole)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                out.append(body[start:i + 1].strip())
                start = i + 1
        elif ch == ";" and depth == 0:
            out.append(body[start:i + 1].strip())
            start = i + 1
    return [s for s in out if s]


def _run(body: str, env: dict | None = None) -> bool | None:
    env = {} if env is None else env
    for st in _statements(body):
        if st.startswith("return"):
            value = _eval(st[len("return"):].rstrip(";").strip(), env)
            return value if isinstance(value, Const) else _truth(value)
        m = re.match(r"^if\s*\((.*)\)\s*\{(.*)\}$", st, re.S)
        if m is not None:
            test = _truth(_eval(m.group(1), env))
            if test is True:
                found = _run(m.group(2), env)
                if found is not None or "return" in m.group(2):
                    return found
            elif test is None and "return" in m.group(2):
                return None  # a return the test may or may not reach
            continue
        if st.startswith(("for", "while", "do", "switch")) or "{" in st:
            if "return" in st:
                return None
            continue
        local = _LOCAL.match(st.rstrip(";"))
        if local is not None:
            env[local.group(1)] = _eval(local.group(2).strip(), env)
    return None


def _truth(value) -> bool | None:
    if value is NULL:
        return False
    return value if isinstance(value, bool) else (bool(value) if isinstance(value, int) else None)


def _eval(expr: str, env: dict):
    """A value: True/False, an int, NULL, or None (unknown)."""
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")") and closes_at_end(expr):
        expr = expr[1:-1].strip()
    for op in ("||", "&&"):
        parts = split_top_level(expr, op, "(")
        if len(parts) > 1:
            values = [_truth(_eval(p, env)) for p in parts]
            if op == "||":
                return True if True in values else None if None in values else False
            return False if False in values else None if None in values else True
    for op in ("==", "!="):
        parts = split_top_level(expr, op, "(")
        if len(parts) == 2:
            a, b = _eval(parts[0], env), _eval(parts[1], env)
            if a is None or b is None:
                return None
            same = a is b if NULL in (a, b) else a == b
            return same if op == "==" else not same
    if expr.startswith("!"):
        value = _truth(_eval(expr[1:], env))
        return None if value is None else not value
    if expr in ("true", "false"):
        return expr == "true"
    if expr in ("nullptr", "NULL", "c10::nullopt", "std::nullopt"):
        return NULL
    if re.fullmatch(r"-?\d+[uUlL]*", expr):
        return int(re.sub(r"[uUlL]+$", "", expr))
    if _ENV.match(expr):
        return NULL
    present = re.fullmatch(r"([A-Za-z_]\w*)\.(?:defined|has_value)\(\s*\)", expr)
    if present is not None:  # an undefined tensor or empty optional the call passes
        return False if env.get(present.group(1)) is NULL else None
    if re.fullmatch(r"(?:[A-Za-z_]\w*::)+[A-Za-z_]\w*", expr):
        return Const(expr.rpartition("::")[2])
    return env.get(expr) if re.fullmatch(r"[A-Za-z_]\w*", expr) else None


_COMPARED = re.compile(r"^((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\((.*)\)\s*(==|!=)\s*((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)$", re.S)


def compared_call(condition: str) -> tuple[str, list[str], str, str] | None:
    """(function, argument texts, operator, constant) of a test `f(a, b) == X::Y` (a chooser's result compared with
    one of its constants: `_select_batch_norm_backend(input, weight, ...) == BatchNormBackend::Cudnn`), else None."""
    m = _COMPARED.match(condition.strip())
    if m is None:
        return None
    args = [a.strip() for a in split_top_level(m.group(2), ",", "([{<")] if m.group(2).strip() else []
    return m.group(1), args, m.group(3), m.group(4)
