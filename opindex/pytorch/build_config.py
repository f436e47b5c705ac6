"""The build a trace is for: preprocessor macros and library versions, and how `#if` tests read under them.

A checkout compiles differently per build: `#if defined(USE_ROCM)`, `#if !AT_CUDNN_ENABLED()` placeholders,
`#if CUDNN_VERSION >= 8907` gates, a vendor's `#ifdef USE_MACA`. A trace names the build it is for, and each value
says where it came from (its `source`), in this order (trace/conditions.py BuildContext asks them):
1. what the user states: `-D NAME[=VALUE]`, `-U NAME` (as a compiler takes them), a YAML config file;
2. what the checkout itself requires: a branch holding `#error` or `static_assert(0/false, ...)` can never be
   compiled, so its test is false (DeviceUtils.cuh's `#else static_assert(0, "Must use -DUSE_MACA")` makes a fork
   need USE_MACA);
3. UPSTREAM_CUDA below: a current upstream CUDA build on Linux;
4. the checkout's CMake options (its top-level CMakeLists.txt: `option(...)` defaults, and a
   `cmake_dependent_option(...)`'s default where its condition holds under this build: the fork's
   USE_FLASH_ATTENTION is ON only `USE_CUDA AND NOT ROCM AND NOT USE_MACA`); ON is the macro defined;
5. the checkout's own `#define`s, read under their own `#if`s (Descriptors.h defines USE_CUDNN_RNN_V8_API when
   CUDNN_VERSION >= 8907);
6. otherwise unknown: the trace shows both sides and says so.

`evaluate` reads a test with three values: True, False, None (unknown).
"""
from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, replace

from .devices import PLATFORM_MACROS

# the input dtypes a trace can be for (--dtype), as torch names them
DTYPES = ("float32", "float64", "float16", "bfloat16", "complex64", "complex128", "complex32", "int64", "int32",
          "int16", "int8", "uint8", "bool")
UNDEFINED = object()  # a macro known not to be defined (-U, or a default)
DEFINED = object()  # a macro known to be defined, with no number for its value (`#define USE_CUDNN_RNN_V8_API`)


@dataclass(frozen=True)
class Setting:
    name: str
    value: object  # a string (`1`, `90100`, `` for a bare define) or UNDEFINED
    source: str  # where it came from: "-D", "-U", "config FILE", "required by FILE:LINE", "upstream default", ...

    def text(self) -> str:
        return f"{self.name} undefined" if self.value is UNDEFINED else \
            f"{self.name}={self.value}" if self.value != "" else f"{self.name} defined"


# A current upstream build of the CUDA backend on Linux (PyTorch 2.4's CUDA 12.4 wheels ship cuDNN 9.1): what a
# user who states nothing most likely runs. Function-like config macros (ATen/cuda/CUDAConfig.h, written by CMake)
# are given as `NAME()`.
UPSTREAM_CUDA = {
    "USE_CUDA": "1",
    "CUDA_VERSION": "12040",
    "CUDNN_VERSION": "90100",
    # the CUB that CUDA 12.4 ships (CCCL 2.3.2: `#define CUB_VERSION 200302` in cub/version.cuh of the
    # nvidia-cuda-cccl-cu12 12.4.127 wheel); ATen's cub_definitions.cuh tests it (CUB_SUPPORTS_SCAN_BY_KEY() ...)
    "CUB_VERSION": "200302",
    "AT_CUDNN_ENABLED()": "1",
    "AT_ROCM_ENABLED()": "0",
    "AT_MAGMA_ENABLED()": "1",
    "AT_CUSPARSELT_ENABLED()": "1",
    "_WIN32": UNDEFINED,
    "_MSC_VER": UNDEFINED,
    "__APPLE__": UNDEFINED,
    "C10_MOBILE": UNDEFINED,
    "FBCODE_CAFFE2": UNDEFINED,
    "USE_MACA": UNDEFINED,  # a vendor's build macro: off upstream (a fork that requires it says so, rule 2)
    # the GPU the trace is for (pytorch/device_props.py): one architecture, sm_90 (H100/H200)
    "TORCH_CUDA_ARCH_LIST": "9.0",
    # other platforms' macros (ROCm/HIP ...): a CUDA build never defines them
    **{name: UNDEFINED for name, platform in PLATFORM_MACROS.items() if platform != "CUDA"},
}


def parse_define(text: str, source: str) -> Setting:
    """`NAME`, `NAME=VALUE` (-D), as a compiler takes it (`-D NAME` defines it as 1)."""
    name, eq, value = text.partition("=")
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*(\(\))?", name):
        raise ValueError(f"not a macro name: {name!r} (give NAME, NAME=VALUE or NAME()=VALUE)")
    return Setting(name, value.strip() if eq else "1", source)


def settings_from(defines=(), undefines=(), config: dict | None = None, config_source: str = "config") \
        -> dict[str, Setting]:
    """The user's settings: a config mapping first ({NAME: value, or None/false for undefined}), then -D, then -U
    (the later wins, as on a compiler's command line)."""
    out: dict[str, Setting] = {}
    for name, value in (config or {}).items():
        if value is None or value is False:
            out[name] = Setting(name, UNDEFINED, config_source)
        else:
            out[name] = parse_define(f"{name}={'1' if value is True else value}", config_source)
    for d in defines:
        s = parse_define(d, "-D")
        out[s.name] = s
    for u in undefines:
        name = u.strip()
        if not re.fullmatch(r"[A-Za-z_]\w*(\(\))?", name):
            raise ValueError(f"not a macro name: {name!r}")
        out[name] = Setting(name, UNDEFINED, "-U")
    return out


# -- three-valued evaluation of a preprocessor test ---------------------------------------------------------------
_TOKEN = re.compile(r"\s*(defined\s*\(\s*\w+\s*\)|defined\s+\w+|\bnot\b|&&|\|\||==|!=|<=|>=|<<|>>|[<>!+\-*/%()]|"
                    r"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*(?:\s*\(\s*\))?)")
_BINARY = [("||",), ("&&",), ("==", "!="), ("<", ">", "<=", ">="), ("+", "-"), ("*", "/", "%")]


def tokens(test: str) -> list[str]:
    out, pos = [], 0
    while pos < len(test):
        m = _TOKEN.match(test, pos)
        if m is None:
            if test[pos:].strip():
                raise ValueError(f"cannot read {test[pos:]!r}")
            break
        out.append(re.sub(r"\s+", "", m.group(1)) if not m.group(1).startswith("defined ") else m.group(1))
        pos = m.end()
    return out


@functools.lru_cache(maxsize=16384)
def _tokens(test: str) -> tuple[str, ...]:
    return tuple(tokens(test))  # (each trace's build reads the same #if tests: read once per text)


def evaluate(test: str, value_of) -> bool | None:
    """Whether a preprocessor test holds: True, False, or None when a name it needs is unknown. `value_of(name)`
    gives a macro's value: an int, UNDEFINED, or None (unknown); `defined(X)` and `X()` ask it too."""
    try:
        toks = _tokens(test)
        result, rest = _expr(toks, 0, value_of)
    except (ValueError, IndexError, ZeroDivisionError):
        return None
    if rest:
        return None
    return None if result is None else bool(result)


def _expr(toks: list[str], level: int, value_of):
    if level == len(_BINARY):
        return _unary(toks, value_of)
    left, toks = _expr(toks, level + 1, value_of)
    while toks and toks[0] in _BINARY[level]:
        op = toks[0]
        right, toks = _expr(toks[1:], level + 1, value_of)
        left = _apply(op, left, right)
    return left, toks


def _apply(op: str, a, b):
    if op == "&&":  # false when either side is, whatever the other: three values
        return 0 if 0 in (a, b) else None if None in (a, b) else 1
    if op == "||":
        return 1 if any(x is not None and x != 0 for x in (a, b)) else None if None in (a, b) else 0
    if a is None or b is None:
        return None
    return int({"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]) \
        if op in ("==", "!=", "<", ">", "<=", ">=") else {"+": a + b, "-": a - b, "*": a * b, "/": a // b,
                                                          "%": a % b}[op]


def _unary(toks: list[str], value_of):
    head = toks[0]
    if head in ("!", "not"):
        value, rest = _unary(toks[1:], value_of)
        return (None if value is None else int(not value)), rest
    if head == "-":
        value, rest = _unary(toks[1:], value_of)
        return (None if value is None else -value), rest
    if head == "(":
        value, rest = _expr(toks[1:], 0, value_of)
        if not rest or rest[0] != ")":
            raise ValueError("unbalanced")
        return value, rest[1:]
    if head.startswith("defined"):
        name = re.sub(r"^defined\s*\(?\s*(\w+)\s*\)?$", r"\1", head)
        value = value_of(name)
        return (None if value is None else int(value is not UNDEFINED)), toks[1:]
    if head[0].isdigit():
        return int(head.rstrip("uUlL"), 0), toks[1:]
    value = value_of(head)
    if value is UNDEFINED:
        return 0, toks[1:]  # an undefined name reads as 0 in #if
    return (None if value is DEFINED else value), toks[1:]


def as_number(value: object):
    """A setting's value as #if reads it: an int, UNDEFINED, or DEFINED when it is no number (`true`/`false` read
    as 1/0, as in C++ after the preprocessor; an empty define is no number)."""
    if value is UNDEFINED or value is None:
        return value
    text = str(value).strip().rstrip("uUlL")
    if text in ("true", "false"):
        return int(text == "true")
    try:
        return int(text, 0)
    except ValueError:
        return DEFINED


# -- the checkout's CMake options ---------------------------------------------------------------------------------
# `option(USE_NUMPY "Use NumPy" ON)` and `cmake_dependent_option(USE_MEM_EFF_ATTENTION "..." ON "USE_CUDA OR
# USE_ROCM AND NOT USE_MACA" OFF)` in the top-level CMakeLists.txt: an option the build turns on is a macro the
# C++ tests (`#if defined(USE_MEM_EFF_ATTENTION)`, attention.cu:971), passed by the build as -DNAME
_OPTION = re.compile(r'^\s*option\s*\(\s*(\w+)\s+"(?:[^"\\]|\\.)*"\s*(ON|OFF)?\s*\)', re.M | re.S)
_DEPENDENT = re.compile(r'^\s*cmake_dependent_option\s*\(\s*(\w+)\s+"(?:[^"\\]|\\.)*"\s+(ON|OFF)\s+"([^"]*)"\s+'
                        r'(ON|OFF)\s*\)', re.M | re.S)


# the variables CMake itself sets for a build on Linux (a current upstream CUDA build's platform)
CMAKE_PLATFORM = {"UNIX": True, "LINUX": True, "APPLE": False, "WIN32": False, "MSVC": False, "ANDROID": False,
                  "IOS": False, "CMAKE_CROSSCOMPILING": False}


@dataclass(frozen=True)
class CMakeOption:
    name: str
    value: str  # ON | OFF: the default (a dependent option's, when its condition holds)
    depends: str | None  # a cmake_dependent_option's condition (`USE_CUDA AND NOT USE_MACA`)
    otherwise: str  # its value when the condition does not hold
    line: int
    guard: str | None = None  # the `if()` blocks it is declared in, as one condition (None: at the top level)
    later: "CMakeOption | None" = None  # another declaration of the name, after this one (`if(USE_MACA)
    # option(USE_XNNPACK ... OFF) else() option(USE_XNNPACK ... ON) endif()`)


# `if(`, `elseif(`, `else(`, `endif(` at a line's start; the test is read up to its balanced `)`
_BLOCK = re.compile(r"^[ \t]*(if|elseif|else|endif)[ \t]*\(", re.M | re.I)


def _guards(text: str) -> list[tuple[int, str | None]]:
    """[(offset, the condition of the if() blocks from there on, None at the top level)]: an `elseif` or `else`
    branch holds where the tests before it in its block do not."""
    out: list[tuple[int, str | None]] = [(0, None)]
    stack: list[list[str]] = []  # per open block: the tests written so far, the current branch's last
    for m in _BLOCK.finditer(text):
        depth, pos = 1, m.end()
        while pos < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[pos], 0)
            pos += 1
        test = " ".join(text[m.end():pos - 1].split())
        word = m.group(1).lower()
        if word == "if":
            stack.append([f"({test})"])
        elif word in ("elseif", "else") and stack:
            stack[-1][-1] = f"NOT {stack[-1][-1]}"
            stack[-1].append(f"({test})" if word == "elseif" else "")
        elif word == "endif" and stack:
            stack.pop()
        parts = [t for block in stack for t in block if t]
        out.append((pos, " AND ".join(parts) if parts else None))
    return out


def _guard_at(guards: list[tuple[int, str | None]], offset: int) -> str | None:
    return guards[bisect.bisect_right([g[0] for g in guards], offset) - 1][1]


@functools.lru_cache(maxsize=8)
def cmake_options(root: str | None) -> dict[str, CMakeOption]:
    """The options the checkout's top-level CMakeLists.txt declares (the first declaration of each name, the others
    chained as `later`); {} without one."""
    if not root:
        return {}
    try:
        with open(f"{root}/CMakeLists.txt", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return {}
    guards = _guards(text)
    found: list[tuple[int, CMakeOption]] = []
    for m in _OPTION.finditer(text):
        line = text.count("\n", 0, m.start(1)) + 1
        found.append((m.start(), CMakeOption(m.group(1), m.group(2) or "OFF", None, "OFF", line,
                                             _guard_at(guards, m.start()))))
    for m in _DEPENDENT.finditer(text):
        line = text.count("\n", 0, m.start(1)) + 1
        # (a list of conditions, `USE_DISTRIBUTED;USE_NCCL`, holds when each does)
        parts = [c.strip() for c in m.group(3).split(";") if c.strip()]
        depends = " AND ".join(f"({c})" for c in parts) if len(parts) > 1 else "".join(parts)
        found.append((m.start(), CMakeOption(m.group(1), m.group(2), " ".join(depends.split()), m.group(4), line,
                                             _guard_at(guards, m.start()))))
    out: dict[str, CMakeOption] = {}
    for _, option in sorted(found, key=lambda f: -f[0]):  # the last first: each chains the later ones
        out[option.name] = replace(option, later=out.get(option.name))
    return out


# CMake's other operators of if(): a condition that uses one is not read (unknown)
_CMAKE_OPERATORS = {"MATCHES", "STREQUAL", "STRLESS", "STRGREATER", "EQUAL", "LESS", "GREATER", "LESS_EQUAL",
                    "GREATER_EQUAL", "VERSION_LESS", "VERSION_GREATER", "VERSION_EQUAL", "VERSION_LESS_EQUAL",
                    "VERSION_GREATER_EQUAL", "EXISTS", "COMMAND", "POLICY", "TARGET", "TEST", "IN_LIST",
                    "IS_DIRECTORY", "IS_ABSOLUTE", "IS_SYMLINK", "IS_NEWER_THAN", "STREQUAL"}


def cmake_condition(condition: str, value_of, defined_of=None) -> bool | None:
    """A CMake `if()`-style condition of names, NOT, AND, OR and parentheses (NOT binds tightest, then AND, then
    OR), with `value_of(name)` -> True/False/None; `DEFINED name` asks `defined_of(name)` (None: unknown). None
    when it cannot be said (another operator, a string or a `${...}` expansion)."""
    tokens = re.findall(r"\(|\)|[^\s()]+", condition)
    if any(t in _CMAKE_OPERATORS or t.startswith(('"', "${")) for t in tokens):
        return None
    pos = 0

    def atom():
        nonlocal pos
        if pos >= len(tokens):
            return None
        tok = tokens[pos]
        pos += 1
        if tok == "NOT":
            v = atom()
            return None if v is None else not v
        if tok == "DEFINED":
            name = tokens[pos] if pos < len(tokens) else ""
            pos += 1
            return defined_of(name) if defined_of is not None else None
        if tok == "(":
            v = disjunction()
            pos += 1  # the closing parenthesis
            return v
        if tok.upper() in ("ON", "TRUE", "YES", "1"):
            return True
        if tok.upper() in ("OFF", "FALSE", "NO", "0"):
            return False
        return value_of(tok)

    def joined(word: str, operand, wins: bool):
        """Operands joined by `word` (AND: a false one wins; OR: a true one), three-valued."""
        def read():
            nonlocal pos
            v = operand()
            while pos < len(tokens) and tokens[pos] == word:
                pos += 1
                w = operand()
                v = wins if wins in (v, w) else None if None in (v, w) else not wins
            return v
        return read

    conjunction = joined("AND", atom, False)
    disjunction = joined("OR", conjunction, True)
    return disjunction()
