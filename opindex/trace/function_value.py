"""What a C++ function of no arguments returns in the build traced, read from its body: a condition that calls one
(`if (at::native::cudnnv8_enabled_check_debug())`, `static bool disable = getDisableAddmmCudaLt(); if (!disable)`)
is read with that value.

The body is read statement by statement at its top level, in the build traced: `#if` branches the build does not
compile are skipped (cudnnv8_enabled_check_debug's `#if defined(USE_MACA) return false; #endif`), locals are set
from what this module can evaluate, an `if` whose test is false is skipped, and the first `return` reached gives
the value. The process environment is PyTorch's default, empty: `std::getenv(...)` is nullptr and
`c10::utils::check_env(...)` is nullopt (getDisableAddmmCudaLt reads ENABLE_ADDMM_CUDA_LT, unset: Lt disabled in
this fork). Anything else (an argument, a call, a loop around the return) leaves the value unknown (None).

A function of arguments is read the same way with what the call's trace knows of them (`env`): an undefined tensor
(None), a literal, and a tensor parameter bound to a TensorArg, on the traced device, of the dtype the trace
states and of the sizes a traced call gives it, so `targets.device().type() == at::kCPU` is false on cuda,
`log_probs.scalar_type() == at::kFloat` true for float32 and `self.size(dim) <= 4096` true for a 1024x1024 tensor
(`dim()`, `numel()`, `size(d)`, integer `+ - * /` and comparisons are read; the dtypes SCALAR_TYPES names: any
other dtype test stays unknown, as the conditions rows read them).
A local is set by its declaration and by each assignment at the body's top level; one assigned in a block that may
or may not run (an `if` whose test is unknown, a loop) is unknown after it. A call of another function in the body
(`return at::_use_cudnn_ctc_loss(log_probs, targets, il, tl, BLANK);`) is read through `env[CALLS]`, a function of
(name, argument values, depth) that the caller gives (trace/conditions.py BodyGuards): at most MAX_CALL_DEPTH calls
deep, deeper is unknown. Locals of a named type that this module cannot value (`IntArrayRef il(...)`) are Typed:
their type tells overloads apart.
"""
from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass

from ..pytorch.syntax import closes_at_end, parenthesized, split_top_level

NULL = object()  # nullptr / nullopt: an unset environment variable
_CALL = re.compile(r"(?<![\w.>:])((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\(\s*\)(?!\s*(?:\.|->|\(|\w))")
_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
# the C++ types of a local this module values (numbers and bools; `auto`), one pattern for every reader of them
NUMBER_TYPE = r"(?:bool|int|auto|u?int(?:8|16|32|64)_t|unsigned|long|size_t|double|float|(?:c10::)?SymInt)"
_LOCAL = re.compile(r"^(?:static\s+)?(?:const(?:expr)?\s+)?(?:char\s*\*|const\s+char\s*\*|char\s+const\s*\*|"
                    + NUMBER_TYPE + r")\s*(?:const\s+)?\*?\s*([A-Za-z_]\w*)\s*=\s*(.+)$", re.S)
_ENV = re.compile(r"^(?:std::)?getenv\s*\(|^c10::utils::check_env\s*\(|^check_env\s*\(")
MAX_LINES = 120  # a longer body is not read (the functions this serves are a few lines; _select_conv_backend 106)
MAX_CALL_DEPTH = 4  # calls read through other functions' bodies (a deeper one is unknown)
CALLS = "(calls)"  # the key of env that holds the reader of a call's value (never a C++ name)
BUILD = "(build)"  # ... and the build's reader of a test (a config macro `CUB_SUPPORTS_SCAN_BY_KEY()` the body returns)
THIS = "(this)"  # ... and the Struct whose method the body is (its other methods are called by bare name)
# The dtype a C++ ScalarType constant names (`at::kFloat`, `ScalarType::Half`); a test against any other one (kInt,
# kLong) stays unknown, for conditions rows (trace/conditions.py) and function bodies alike
SCALAR_TYPES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
                "ComplexFloat": "complex64", "ComplexDouble": "complex128", "ComplexHalf": "complex32"}


def calls_in(condition: str) -> list[str]:
    """The no-argument calls of free functions a condition makes (`getDisableAddmmCudaLt()`, not
    `iter.is_contiguous()` nor `detail::getCUDAHooks().x()`)."""
    return _CALL.findall(condition)


def substitute(condition: str, value_of, where_of=None) -> str:
    """`condition` with each no-argument call whose value is known written as `true` or `false`; with `where_of`
    (name -> where it was read), for a reader, the call kept and followed by both:
    `at::maca::get_maca_disable_sigmoid_opt() (= false: aten/src/ATen/Context.cpp:118)`."""
    def repl(m):
        value = value_of(m.group(1))
        if not isinstance(value, bool):
            return m.group(0)
        text = "true" if value else "false"
        if where_of is None:
            return text
        where = where_of(m.group(1))
        return f"{m.group(0)} (= {text}{': ' + where if where else ''})"
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
class TensorArg:
    """A tensor a call passes: on the traced device (None: not said, --device all), of the dtype the trace states
    (None: not said) and of the sizes a traced call gives it (None: not said)."""
    device: str | None
    dtype: str | None
    sizes: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Typed:
    """A value not known, of a known C++ type (`IntArrayRef il(...)`, a local `Tensor`): it tells overloads apart."""
    type: str


@dataclass(frozen=True)
class Const:
    """A named constant a function returns (`return BatchNormBackend::Native;`), by its last name."""
    name: str


@dataclass(frozen=True)
class Struct:
    """An object whose fields a body sets one by one (`ConvParams<int64_t> params; params.groups = groups_; ...`):
    its type's name (`ConvParams`) and the fields' values known ((name, value) pairs); its methods are read with
    them (`params.is_depthwise(input, weight)` reads `groups`, `transposed`)."""
    type: str
    fields: tuple[tuple[str, object], ...]


def body_value(root: str | None, file: str, line: int, end_line: int, build_holds,
               env: dict | None = None, calls=None):
    """The value the function defined at file:line..end_line returns (True/False, an int, or a Const), read as the
    module docstring says; `env`: its parameters' values where the call gives them (None for an undefined tensor
    or an empty optional: `weight.defined()` is false; a TensorArg for a tensor); `calls`: the reader of a call in
    the body (name, argument values, depth) -> value, None to leave calls unknown."""
    if not root or end_line - line > MAX_LINES:
        return None
    lines = _read(os.path.join(root, file), line, end_line)
    if lines is None:
        return None
    text = "\n".join(_active(lines, build_holds) or [])
    if "{" not in text:
        return None
    body = text[text.index("{") + 1:text.rindex("}")] if "}" in text else None
    env = {k: NULL if v is None else v for k, v in (env or {}).items()}
    if calls is not None:
        env[CALLS] = calls
    env[BUILD] = build_holds
    return None if body is None else _run(body, env)


def expansion_value(root: str | None, file: str, line: int, macro: dict, build_holds, env: dict | None = None,
                    calls=None):
    """The value a function written by a macro returns (the fork's 139 `DEFINE_MACA_ENV_API_NE(get_maca_x,
    "PYTORCH_X")`, each `bool api_name() { static char const* temp = std::getenv(env_name); return temp !=
    nullptr; }`): the macro's body with its parameters written as the invocation's arguments at file:line, read as
    body_value reads a body (an empty environment: false). None when the invocation or the body cannot be split."""
    if not root:
        return None
    lines = _read(os.path.join(root, file), line, line + 4)
    text = " ".join(lines or [])
    m = re.search(r"\b" + re.escape(macro["name"]) + r"\s*\(", text) if macro.get("name") else None
    params = [p.strip() for p in (macro.get("parameters") or "()").strip()[1:-1].split(",") if p.strip()]
    if m is None or not params:
        return None
    inner = text[m.end():]
    depth, end = 1, None
    for i, ch in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            end = i
            break
    if end is None:
        return None
    args = [a.strip() for a in split_top_level(inner[:end], ",", "([{<")]
    if len(args) != len(params) or "..." in params:
        return None
    body = macro["body"]
    for p, a in zip(params, args):
        body = re.sub(r"(?<![\w#])" + re.escape(p) + r"\b", lambda _m, a=a: a, body)
    if "{" not in body or "}" not in body:
        return None
    env = {k: NULL if v is None else v for k, v in (env or {}).items()}
    if calls is not None:
        env[CALLS] = calls
    env[BUILD] = build_holds
    return _run(body[body.index("{") + 1:body.rindex("}")], env)


def _active(lines: list[str], build_holds, blank: bool = False) -> list[str] | None:
    """The lines the build compiles (with `blank`, every other line kept as "", so line numbers hold); None when
    an #if around a line cannot be decided (with `blank`: the lines before that #if)."""
    out, stack = [], []  # stack: (this branch on, some branch taken)
    for text in lines:
        m = _DIRECTIVE.match(text)
        if m is None:
            if all(on for on, _ in stack):
                out.append(re.sub(r"//.*$", "", text))
            elif blank:
                out.append("")
            continue
        if blank:
            out.append("")
        kind, rest = m.group(1), m.group(2).strip()
        test = {"ifdef": f"defined({rest})", "ifndef": f"!defined({rest})"}.get(kind, rest)
        if kind in ("if", "ifdef", "ifndef"):
            value = build_holds(test)
            if value is None:
                return out[:-1] if blank else None
            stack.append((value, value))
        elif kind == "elif" and stack:
            taken = stack[-1][1]
            value = False if taken else build_holds(test)
            if value is None:
                return out[:-1] if blank else None
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


MAX_WAYS = 32  # ways through a body's open tests read for one value (past them: unknown)


def _run(body: str, env: dict | None = None) -> bool | None:
    """The value the body returns on every way the values known let it take (None: unknown, or ways that differ)."""
    status, value = _exec(_statements(body), {} if env is None else env, [MAX_WAYS])
    return value if status == "return" else None


def _exec(sts: list[str], env: dict, budget: list[int]) -> tuple[str, object]:
    """("return", value) where the statements return a value known, ("fall", None) where they run to their end,
    ("unknown", None) otherwise. An `if` whose test the values leave open and whose blocks return is read both
    ways, each with what follows it: where both return one value, that is the value (use_cudnn_depthwise returns
    false whether or not the GPU supports cuDNN's depthwise kernels, for a float32 input); `budget` counts the
    ways read so."""
    for i, st in enumerate(sts):
        if st.startswith("return"):
            value = _eval(st[len("return"):].rstrip(";").strip(), env)
            value = value if isinstance(value, (Const, TensorArg)) else _truth(value)  # (view4d returns a
            # tensor: `return tensor.unsqueeze(2);`)
            return ("return", value) if value is not None else ("unknown", None)
        if _if_block(st) is not None:
            chain, n = _if_chain(sts, i)
            return _exec_chain(chain, sts[i + n:], env, budget)
        if _BLOCK_STATEMENT.match(st) or "{" in st:
            if "return" in st:
                return "unknown", None
            _forget_assigned(st, env)
            continue
        _assign(st, env)
    return "fall", None


_BLOCK_STATEMENT = re.compile(r"(?:for|while|do|switch|else)\b")  # (not `double nd = ...;`)


def _exec_chain(chain: list[tuple], rest: list[str], env: dict, budget: list[int]) -> tuple[str, object]:
    """An if/else-if/else chain (_if_chain), then `rest`."""
    for n, (test, block, one) in enumerate(chain):
        held = True if test is None else _truth(_eval(test, env))
        if held is False:
            continue
        if held is True:
            status, value = _exec(_statements(block), env, budget)
            return (status, value) if status != "fall" else _exec(rest, env, budget)
        blocks = [b for _, b, _ in chain[n:]]
        if not any("return" in b for b in blocks) or (one and len(chain) == 1):
            # a block that may or may not run and returns nothing: its locals are unknown after it. (A one-line
            # `if (curDevice == -1) return false;` whose test is open is read as not taken, as before such ifs
            # were read at all: PyTorch writes its error and sentinel returns so)
            for b in blocks:
                _forget_assigned(b, env)
            return _exec(rest, env, budget)
        budget[0] -= 1
        if budget[0] < 0:
            return "unknown", None
        taken = _exec(_statements(block) + rest, dict(env), budget)
        other = _exec_chain(chain[n + 1:], rest, dict(env), budget)
        return taken if taken == other and taken[0] == "return" else ("unknown", None)
    return _exec(rest, env, budget)


def _if_chain(sts: list[str], i: int) -> tuple[list[tuple], int]:
    """The `if` at sts[i] and the `else if` / `else` statements after it: [(test or None, block, one statement
    without braces)], and how many statements they are."""
    chain, n = [_if_block(sts[i])], 1
    while i + n < len(sts) and re.match(r"else\b", sts[i + n]):
        tail = sts[i + n][4:].strip()
        branch = _if_block(tail)
        if branch is None:
            inner = re.fullmatch(r"\{(.*)\}", tail, re.S)
            branch = (None, inner.group(1), False) if inner else (None, tail, True)
        chain.append(branch)
        n += 1
        if branch[0] is None:
            break
    return chain, n


def _assign(st: str, env: dict) -> None:
    """A declaration or assignment statement, read into `env`; a local another statement may set (`n++;`,
    `cudaGetDevice(&curDevice);`) is unknown after it."""
    _set(st, env)
    step = _STEP.fullmatch(st.rstrip(";").strip())
    if step is not None:  # `n++;`, `--n;`: a known int stepped
        name = step.group(1) or step.group(4)
        sign = step.group(2) or step.group(3)
        value = env.get(name)
        if name in env:
            env[name] = value + (1 if sign == "++" else -1) if _is_int(value) else None
        return
    for address in _ADDRESS.findall(st):
        if address in env and address not in (CALLS, BUILD):
            env[address] = None


_STEP = re.compile(r"([A-Za-z_]\w*)\s*(\+\+|--)|(\+\+|--)\s*([A-Za-z_]\w*)")
_ADDRESS = re.compile(r"(?<![&\w])&\s*([A-Za-z_]\w*)(?!\s*[(\[.]|\s*->)")


def _set(st: str, env: dict) -> None:
    field = _FIELD.match(st.rstrip(";"))
    if field is not None:  # `params.groups = groups_;` of an object declared above: that field's value
        this = env.get(field.group(1))
        if isinstance(this, Struct):
            fields = dict(this.fields)
            fields[field.group(2)] = _whole(_eval(field.group(3), env))
            env[field.group(1)] = Struct(this.type, tuple(fields.items()))
        return
    declared = _DECLARED.match(st.rstrip(";"))
    if declared is not None and declared.group(1).rpartition("::")[2] not in _NOT_TYPES:  # `ConvParams<...> params;`
        env[declared.group(2)] = Struct(declared.group(1).rpartition("::")[2], ())
        return
    local = _LOCAL.match(st.rstrip(";"))
    if local is not None:
        env[local.group(1)] = _eval(local.group(2).strip(), env)
        return
    assigned = _ASSIGN.match(st.rstrip(";"))
    if assigned is not None and assigned.group(1) in env:  # `use_cudnn = use_cudnn && ...;`
        name, op, expr = assigned.groups()
        value = _eval(expr, env)
        if op in ("&", "|"):  # `x &= y`: as `x && y`, `x |= y` as `x || y` (for the bools read here)
            joined = [_truth(env[name]), _truth(value)]
            value = (False if False in joined else None if None in joined else True) if op == "&" else \
                (True if True in joined else None if None in joined else False)
        elif op:
            value = None
        env[name] = value
        return
    typed = _TYPED.match(st.rstrip(";"))
    if typed is not None and typed.group(1) not in ("auto", "return", "else"):
        env[typed.group(2)] = Typed(_type_name(typed.group(1)))


def _if_block(st: str) -> tuple[str, str, bool] | None:
    """(test, block, whether it is one statement without braces) of `if (test) {block}` or `if (test) statement;`,
    the test's parentheses matched (`if (a) { for (...) {...} }` tests `a`); None for any other statement."""
    m = re.match(r"^if\s*\(", st)
    if m is None:
        return None
    depth = 0
    for i in range(m.end() - 1, len(st)):
        depth += (st[i] == "(") - (st[i] == ")")
        if depth == 0:
            rest = re.fullmatch(r"\s*\{(.*)\}", st[i + 1:], re.S)
            if rest is None:  # `if (self.dim() == 0) return false;`: one statement, no braces
                one = st[i + 1:].strip()
                return (st[m.end():i], one, True) if one.endswith(";") and not one.startswith(("if", "{")) else None
            return st[m.end():i], rest.group(1), False
    return None


_FIELD = re.compile(r"^([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$", re.S)
# an object declared without a value (its fields set one by one after): a struct's name, optionally a template's
_DECLARED = re.compile(r"^((?:[A-Za-z_]\w*::)*[A-Z]\w*)(?:<[^;{}()]*>)?\s+([A-Za-z_]\w*)$")
_NOT_TYPES = frozenset({"return", "else", "auto", "const", "static", "Tensor", "TensorBase", "Scalar", "Device",
                        "Generator", "Storage", "TensorOptions", "DimVector"})  # (values, not structs)


def _whole(value):
    """A number read from Python or C++ text as a float that is whole (`groups=32` -> 32.0) as the int it is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def settle_locals(body: str, env: dict) -> dict:
    """`env` with the locals the statements of `body` (a function body's first part, cut at a statement) set where
    they run whatever the inputs, or under tests the values known settle: `auto input = input_r;`, `ConvParams<
    int64_t> params; params.groups = groups_;`, not `input = view4d(input);` under `if (k == 3 && ...)` with k 4.
    One set under a test the values leave open, or in a loop, is unknown after it."""
    _settle(_statements(body), env)
    return env


@dataclass(frozen=True, slots=True)
class Statement:
    """A top-level statement of a body (top_statements): its first and last line and its text."""
    start: int
    end: int
    text: str


_BRACE_OR_END = re.compile(r"[{};]")


def top_statements(lines: list[str], first: int, build_holds) -> tuple[Statement, ...] | None:
    """The top-level statements of the body whose text is `lines` (from its line `first`), as the build compiles
    it; None when an #if in it cannot be decided or it has no body."""
    kept = _active(lines, build_holds, blank=True)
    if kept is None:
        return None
    text = "\n".join(kept)
    begin = text.find("{")
    if begin < 0:
        return None
    out, depth, start, line, seen = [], 0, begin + 1, first + text.count("\n", 0, begin), begin
    for m in _BRACE_OR_END.finditer(text, begin + 1):
        ch, i = m.group(), m.start()
        if ch == "{":
            depth += 1
            continue
        if ch == "}":
            depth -= 1
            if depth < 0:
                break  # (the body's own closing brace)
        if depth == 0:
            body = text[start:i + 1]
            st = body.strip()
            if st:
                line += text.count("\n", seen, start + len(body) - len(body.lstrip()))
                seen = start + len(body) - len(body.lstrip())
                out.append(Statement(line, line + st.count("\n"), st))
            start = i + 1
    return tuple(out)


def settle_statements(sts, env: dict) -> dict:
    """settle_locals of statements already split (top_statements, slice_setting)."""
    _settle([s.text if isinstance(s, Statement) else s for s in sts], env)
    return env


def slice_setting(statements, names) -> list[Statement]:
    """Of `statements` (top_statements, in source order), those that set `names` or, in turn, what those are
    computed from (a backward slice, by name: the rest cannot change their values as this module reads them)."""
    want, kept = set(names), []
    for st in reversed(statements):
        sets, mentions = _sets_and_names(st.text)
        if not want.isdisjoint(sets):
            kept.append(st)
            want.update(mentions)
    return kept[::-1]


@functools.lru_cache(maxsize=65536)
def _sets_and_names(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names a statement may set (assigned, stepped, passed by address) and every name it mentions."""
    return frozenset(n for found in _ASSIGNED.findall(text) for n in found if n), frozenset(_NAME.findall(text))


_NAME = re.compile(r"[A-Za-z_]\w*")


def names_in(st: Statement) -> frozenset[str]:
    """Every name a statement mentions."""
    return _sets_and_names(st.text)[1]


def _settle(sts: list[str], env: dict) -> None:
    i = 0
    while i < len(sts):
        st = sts[i]
        if _if_block(st) is not None:
            chain, n = _if_chain(sts, i)
            i += n
            for test, block, _ in chain:
                held = True if test is None else _truth(_eval(test, env))
                if held is True:
                    _settle(_statements(block), env)
                elif held is None:
                    for _, b, _ in chain:
                        _forget_assigned(b, env)
                if held is not False:
                    break
            continue
        if st.startswith("for") and _run_loop(st, env):
            i += 1
            continue
        if _BLOCK_STATEMENT.match(st) or "{" in st:
            _forget_assigned(st, env)
        elif not st.startswith("return"):
            _assign(st, env)
        i += 1


MAX_LOOP = 64  # iterations of a loop run to value the locals it sets (past them: unknown after it)
_RANGE_FOR = re.compile(r"for\s*\(\s*(?:const\s+)?(?:auto|int|int64_t|size_t|unsigned|long|uint64_t)\s*&?\s*"
                        r"([A-Za-z_]\w*)\s*:\s*(?:c10::)?irange\s*\(")
_LEAVES = re.compile(r"\b(?:break|continue|return|goto|throw)\b")


def _run_loop(st: str, env: dict) -> bool:
    """`for (const auto i : c10::irange(a, b)) { ... }` whose bounds the values know, run once per i (at most
    MAX_LOOP times; none that leaves early: break, continue, return): constant_pad_nd's `all_pads_non_positive`
    (PadNd.cpp:44-59) is false once a pad is positive. False where it is not such a loop (the caller then reads
    what it sets as unknown)."""
    m = _RANGE_FOR.match(st)
    if m is None:
        return False
    args = parenthesized(st, m.end())
    rest = st[m.end() + len(args) + 1:].strip()
    if not rest.startswith(")") or not rest.endswith("}") or "{" not in rest or _LEAVES.search(rest):
        return False
    bounds = [_whole(_eval(b, env)) for b in split_top_level(args, ",", "(")]
    if len(bounds) == 1:
        bounds = [0, bounds[0]]
    if len(bounds) != 2 or not all(_is_int(b) for b in bounds) or not 0 <= bounds[1] - bounds[0] <= MAX_LOOP:
        return False
    name, block = m.group(1), rest[rest.index("{") + 1:-1]
    before = env.get(name, _NO)
    for value in range(bounds[0], bounds[1]):
        env[name] = value
        _settle(_statements(block), env)
    if before is _NO:
        env.pop(name, None)
    else:
        env[name] = before
    return True


_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*([-+*/|&^])?=(?!=)\s*(.+)$", re.S)
# a local of a named type not valued here: `IntArrayRef il(ilc.data_ptr<int64_t>(), ilc.numel())`, `Tensor t = ...`
_TYPED = re.compile(r"^(?:const\s+)?((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*(?:<[^;{}()]*>)?)\s*&?\s+([A-Za-z_]\w*)\s*[({=]",
                    re.S)
_ASSIGNED = re.compile(r"(?<![\w.>:])([A-Za-z_]\w*)(?:\.\w+)?\s*(?:(?:[-+*/|&^]|<<|>>)?=(?!=)|\+\+|--)|"
                       r"(?:\+\+|--)\s*([A-Za-z_]\w*)|(?<![&\w])&\s*([A-Za-z_]\w*)")
# (an assignment, `n++` or `--n`, or its address taken: `cudaGetDevice(&curDevice)` sets it)


def _forget_assigned(block: str, env: dict) -> None:
    """The locals a block that may or may not run assigns (or passes by address) are unknown after it."""
    for names in _ASSIGNED.findall(block):
        for name in names:
            if name in env and name not in (CALLS, BUILD):
                env[name] = None


def _type_name(declared: str) -> str:
    """A C++ type as overloads are told apart by: without const, &, * and the at::/c10::/std:: namespaces."""
    text = re.sub(r"\b(?:const|volatile)\b|[&*]|\b(?:at|c10|std)::", "", declared)
    return re.sub(r"\s+", "", text)


def _truth(value) -> bool | None:
    if value is NULL:
        return False
    return value if isinstance(value, bool) else (bool(value) if isinstance(value, int) else None)


def _eval(expr: str, env: dict):
    """A value: True/False, an int, NULL, or None (unknown)."""
    expr = expr.strip()
    if "symint::" in expr:
        expr = _SYMINT.sub(lambda m: f"{m.group(2)}.{m.group(1)}({m.group(3) or ''})", expr)
    while expr.startswith("(") and expr.endswith(")") and closes_at_end(expr):
        expr = expr[1:-1].strip()
    item = _ITEM.fullmatch(expr)
    if item is not None:  # `pad[pad_idx + 1]`: an element of an int list the values know (C++ does not wrap)
        seq, at = env.get(item.group(1)), _whole(_eval(item.group(2), env))
        return _whole(seq[at]) if isinstance(seq, (list, tuple)) and _is_int(at) and 0 <= at < len(seq) else None
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
            tensor = _tensor_test(parts[0].strip(), parts[1].strip(), env)
            if tensor is not _NO:
                return tensor if tensor is None else tensor == (op == "==")
            a, b = _eval(parts[0], env), _eval(parts[1], env)
            if a is None or b is None or isinstance(a, (TensorArg, Typed)) or isinstance(b, (TensorArg, Typed)):
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
    if _FLOAT.fullmatch(expr):  # `0.9`, `1e-5`, `2.0f`
        return float(expr.rstrip("fFlL"))
    if _ENV.match(expr):
        return NULL
    present = re.fullmatch(r"([A-Za-z_]\w*)\.(?:defined|has_value)\(\s*\)", expr)
    if present is not None:  # an undefined tensor or empty optional the call passes
        return False if env.get(present.group(1)) is NULL else None
    if expr.startswith("static_cast<"):  # (its `<...>` is no comparison)
        cast = _math(expr, env)
        if cast is not _NO:
            return cast
    whole = _ONE_CALL.match(expr)
    if whole is not None and closes_at_end(expr[whole.end() - 1:]):  # one call, no operator around it (read
        # without splitting it at every operator first: a body's locals are mostly such calls)
        if whole.group(1):
            return None  # `getVectorizedAlignment<res_t>(...)`: a template's call (static_cast read above)
        return NULL if _ENV.match(expr) else _call(expr, env)
    for op in ("<=", ">=", "<", ">") if "<" in expr or ">" in expr else ():  # numbers compared
        parts = split_top_level(expr, op, "(")
        if len(parts) == 2 and "->" not in expr and "<<" not in expr and ">>" not in expr:
            a, b = _eval(parts[0], env), _eval(parts[1], env)
            if not (_is_number(a) and _is_number(b)):
                return None
            return {"<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b}[op]
    for ops in (("+", "-"), ("*", "/")):  # (left to right within a level: `a - b + c` is read as a - (b + c) only
        # where both are +, so a level with both kinds of sign is left unknown)
        for op in ops if any(o in expr for o in ops) else ():
            parts = split_top_level(expr, op, "([")  # (not inside a subscript: `pad[pad_idx + 1]`)
            if len(parts) > 1 and all(p.strip() for p in parts) and "->" not in expr:
                if any(o != op and len(split_top_level(expr, o, "([")) > 1 for o in ops):
                    return None
                values = [_eval(p, env) for p in parts]
                if not all(_is_number(v) for v in values):
                    return None
                out = values[0]
                for v in values[1:]:
                    if op == "/" and v == 0:
                        return None
                    out = out + v if op == "+" else out - v if op == "-" else out * v if op == "*" else \
                        int(out / v) if _is_int(out) and _is_int(v) else out / v  # (C++ integer division
                    # truncates toward zero)
                return out
    if "%" in expr:  # `size(weight, 0) % size(input, 1)`: ints only
        parts = split_top_level(expr, "%", "(")
        if len(parts) == 2:
            a, b = _eval(parts[0], env), _eval(parts[1], env)
            return a % b if _is_int(a) and _is_int(b) and b > 0 and a >= 0 else None
    sized = _tensor_size(expr, env) if "." in expr else _NO
    if sized is not _NO:
        return sized
    suggested = re.fullmatch(r"([A-Za-z_]\w*)\.suggest_memory_format\(\s*\)", expr)
    if suggested is not None:  # a tensor of the trace is contiguous (as the conditions rows read it)
        return Const("Contiguous") if isinstance(env.get(suggested.group(1)), TensorArg) else None
    kind = _TENSOR_KIND.fullmatch(expr)
    if kind is not None:  # a tensor of the trace is dense and strided: not MKL-DNN, sparse, quantized, meta, nested
        return False if isinstance(env.get(kind.group(1)), TensorArg) else None
    reshaped = _TENSOR_VIEW.fullmatch(expr)
    if reshaped is not None:  # `tensor.unsqueeze(2)` (Convolution.cpp's view4d), `.contiguous()`: the sizes after it
        return _view(env.get(reshaped.group(1)), reshaped.group(2), reshaped.group(3), env)
    is_cuda = re.fullmatch(r"([A-Za-z_]\w*)\.is_(cuda|cpu)\(\s*\)", expr)
    if is_cuda is not None:
        tensor = env.get(is_cuda.group(1))
        return tensor.device == is_cuda.group(2) if isinstance(tensor, TensorArg) and tensor.device else None
    if re.fullmatch(r"(?:[A-Za-z_]\w*::)+[A-Za-z_]\w*", expr):
        return Const(expr.rpartition("::")[2])
    if re.fullmatch(r"[A-Za-z_]\w*", expr):
        return env.get(expr)
    return _call(expr, env)


_ITEM = re.compile(r"([A-Za-z_]\w*)\s*\[([^\[\]]+)\]")
_TENSOR_KIND = re.compile(r"([A-Za-z_]\w*)\.is_(?:mkldnn|sparse|sparse_csr|quantized|meta|nested|mps|xpu)\(\s*\)")
_TENSOR_VIEW = re.compile(r"([A-Za-z_]\w*)\.(unsqueeze|squeeze|contiguous|expect_contiguous)\(\s*([^()]*?)\s*\)")


def _view(tensor, how: str, arg: str, env: dict):
    """A tensor argument after `unsqueeze(d)`, `squeeze(d)` or `contiguous()`: a TensorArg with those sizes; None
    where the sizes or the dim are not known."""
    if not isinstance(tensor, TensorArg):
        return None
    if how in ("contiguous", "expect_contiguous"):
        return tensor
    d = _eval(arg, env) if arg else None
    sizes = tensor.sizes
    if sizes is None or not _is_int(d):
        return None
    if how == "unsqueeze" and -len(sizes) - 1 <= d <= len(sizes):
        d = d % (len(sizes) + 1)
        return TensorArg(tensor.device, tensor.dtype, sizes[:d] + (1,) + sizes[d:])
    if how == "squeeze" and -len(sizes) <= d < len(sizes):
        d = d % len(sizes)
        return TensorArg(tensor.device, tensor.dtype, sizes[:d] + sizes[d + 1:] if sizes[d] == 1 else sizes)
    return None


_NO = object()  # not a test of a tensor argument
_ONE_CALL = re.compile(r"(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*\s*(<[\w:,\s*]*>)?\s*\(")
# `at::symint::size<T>(input, 1)`: input.size(1) (its template argument would read as a comparison)
_SYMINT = re.compile(r"(?:at::)?symint::(size|numel|dim)<\w+>\(\s*([A-Za-z_]\w*)\s*(?:,\s*([^()]+?))?\s*\)")
_SIZE = re.compile(r"^([A-Za-z_]\w*)\.(?:sym_)?(dim|ndimension|numel|size)\(\s*([^()]*?)\s*\)$")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return _is_int(value) or (isinstance(value, float) and math.isfinite(value))


_FLOAT = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?[fFlL]?")
# C++'s math a body computes a local with (randperm_out_cuda's `bits`, from std::log2 of n): each of numbers only
_MATH = {"log": math.log, "log2": math.log2, "log10": math.log10, "exp": math.exp, "sqrt": math.sqrt,
         "ceil": math.ceil, "floor": math.floor, "abs": abs, "fabs": abs, "pow": math.pow, "min": min, "max": max}
_CAST_TO = re.compile(r"^static_cast<\s*(?:const\s+)?(?:std::)?(\w+)\s*>\s*\((.*)\)$", re.S)
_INTEGRAL = re.compile(r"^(?:u?int(?:8|16|32|64)?(?:_t)?|unsigned|long|short|size_t|SymInt|char)$")


def _math(expr: str, env: dict):
    """`std::min(64, static_cast<int>(std::ceil(std::log2(x))))`: the value, _NO where this is no such call, None
    where an argument is unknown or the math fails (a log of 0). A float made whole by ceil/floor stays a float
    until a cast to an integral type, as in C++."""
    cast = _CAST_TO.match(expr)
    if cast is not None and closes_at_end(expr[expr.index("(", cast.start(2) - 1):]):
        value = _eval(cast.group(2), env)
        if not _is_number(value):
            return None if cast.group(1) in ("double", "float") or _INTEGRAL.match(cast.group(1)) else _NO
        return float(value) if cast.group(1) in ("double", "float") else \
            int(value) if _INTEGRAL.match(cast.group(1)) else _NO
    m = _CALL_ARGS.match(expr)
    if m is None or m.group(1).removeprefix("std::") not in _MATH or not closes_at_end(expr[m.start(2) - 1:]):
        return _NO
    values = [_eval(a, env) for a in _arguments(m.group(2))]
    if not values or not all(_is_number(v) for v in values):
        return None
    name = m.group(1).removeprefix("std::")
    try:
        out = _MATH[name](*values)
    except (ValueError, TypeError, OverflowError):
        return None
    return float(out) if name in ("ceil", "floor") else out


def _tensor_size(expr: str, env: dict):
    """`self.dim()`, `self.numel()`, `self.size(dim)` of a tensor argument whose sizes the call gives (a negative dim
    counts from the end, as C++ wraps it); None where they are not known, _NO for any other expression."""
    m = _SIZE.match(expr)
    if m is None:
        return _NO
    tensor = env.get(m.group(1))
    if isinstance(tensor, (list, tuple)) and m.group(2) == "size" and not m.group(3):
        return len(tensor)  # an int list's element count (`pad.size()`)
    if not isinstance(tensor, TensorArg) or tensor.sizes is None:
        return None
    sizes, what = tensor.sizes, m.group(2)
    if what in ("dim", "ndimension"):
        return len(sizes)
    if what == "numel":
        return math.prod(sizes)
    d = _eval(m.group(3), env) if m.group(3) else None
    if isinstance(d, float) and d.is_integer():
        d = int(d)
    return sizes[d] if _is_int(d) and -len(sizes) <= d < len(sizes) else None
_TENSOR_DEVICE = re.compile(r"^([A-Za-z_]\w*)\.(?:device\(\)\.type\(\)|device_type\(\)|type\(\)\.device_type\(\))$")
_TENSOR_DTYPE = re.compile(r"^([A-Za-z_]\w*)\.(?:scalar_type\(\)|dtype\(\))$")
_KIND = re.compile(r"^(?:c10::|at::)?(?:DeviceType::|ScalarType::|k)(\w+)$")


def _tensor_test(left: str, right: str, env: dict):
    """Whether a tensor argument's device or dtype is the constant it is compared with (`targets.device().type() ==
    at::kCPU`, `log_probs.scalar_type() == at::kFloat`): True/False, None when the trace does not say, _NO when
    this is no such test."""
    for a, b in ((left, right), (right, left)):
        device, dtype, kind = _TENSOR_DEVICE.match(a), _TENSOR_DTYPE.match(a), _KIND.match(b)
        if kind is None or (device is None and dtype is None):
            continue
        tensor = env.get((device or dtype).group(1))
        if not isinstance(tensor, TensorArg):
            return None
        if device is not None:
            return None if tensor.device is None else kind.group(1).lower() == tensor.device
        named = SCALAR_TYPES.get(kind.group(1))
        return None if named is None or tensor.dtype is None else named == tensor.dtype
    return _NO


_CALL_ARGS = re.compile(r"^((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\s*\((.*)\)$", re.S)


def _call(expr: str, env: dict):
    """A call of a free function or op (`at::_use_cudnn_ctc_loss(log_probs, targets, il, tl, BLANK)`), read by the
    caller's reader (env[CALLS]) with the values of its arguments; None when there is none or it does not say."""
    found = _math(expr, env) if ("std::" in expr or "static_cast" in expr) else _NO
    if found is not _NO:
        return found
    calls = env.get(CALLS)
    method = _METHOD.match(expr) or _HOOKS.match(expr)
    if method is not None and calls is not None:  # `params.is_depthwise(input, weight)`, a hook of the build's
        this = env.get(method.group(1)) if method.re is _METHOD else None  # CUDA (`detail::getCUDAHooks().
        if method.re is _HOOKS or isinstance(this, Struct):  # compiledWithMIOpen()`: CUDAHooks.cpp)
            owner = this.type if this is not None else "CUDAHooks"
            return calls(f"{owner}::{method.group(2)}", _values(method.group(3), env), this)
        return None
    m = _CALL_ARGS.match(expr)
    if m is not None and not m.group(2).strip() and env.get(BUILD) is not None and "::" not in m.group(1):
        # a function-like config macro of the build (`return CUB_SUPPORTS_SCAN_BY_KEY();` in TensorTopK.cu's
        # disable_sort_for_topk): its value where the build defines it
        held = env[BUILD](f"{m.group(1)}()")
        if isinstance(held, bool):
            return held
    if calls is None or m is None or not closes_at_end(expr[m.start(2) - 1:]):
        return None
    this = env.get(THIS)
    if isinstance(this, Struct) and "::" not in m.group(1):  # another method of the object, by bare name
        return calls(f"{this.type}::{m.group(1)}", _values(m.group(2), env), this)
    return calls(m.group(1), _values(m.group(2), env))


def _values(text: str, env: dict) -> list:
    """The values of a call's arguments (UNKNOWN where not known, None for nullptr/nullopt)."""
    values = []
    for arg in _arguments(text):
        value = env.get(arg, UNKNOWN) if re.fullmatch(r"[A-Za-z_]\w*", arg) else _eval(arg, env)
        values.append(UNKNOWN if value is None else None if value is NULL else value)
    return values


_METHOD = re.compile(r"^([A-Za-z_]\w*)\s*(?:\.|->)\s*([A-Za-z_]\w*)\s*\((.*)\)$", re.S)
_HOOKS = re.compile(r"^()(?:at::)?(?:detail::)?getCUDAHooks\(\)\s*\.\s*([A-Za-z_]\w*)\s*\((.*)\)$", re.S)


UNKNOWN = object()  # an argument whose value a call does not know (a reader of calls binds none to it)


_COMPARED = re.compile(r"^((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\((.*)\)\s*(==|!=)\s*((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)$", re.S)


def compared_call(condition: str) -> tuple[str, list[str], str, str] | None:
    """(function, argument texts, operator, constant) of a test `f(a, b) == X::Y` (a chooser's result compared with
    one of its constants: `_select_batch_norm_backend(input, weight, ...) == BatchNormBackend::Cudnn`), else None."""
    m = _COMPARED.match(condition.strip())
    if m is None:
        return None
    args = [a.strip() for a in split_top_level(m.group(2), ",", "([{<")] if m.group(2).strip() else []
    return m.group(1), args, m.group(3), m.group(4)


def _arguments(text: str) -> list[str]:
    return [a.strip() for a in split_top_level(text, ",", "([{")] if text.strip() else []


_ARGUMENT_CALL = re.compile(r"(?<![\w.>:])(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*\s*\(\s*[^\s)]")


def has_argument_calls(condition: str) -> bool:
    """Whether a test calls a free function or op with arguments (what rewrite_calls reads): a quick look first."""
    return _ARGUMENT_CALL.search(condition) is not None


def rewrite_calls(condition: str, value_of, decided) -> tuple[str, str] | None:
    """`condition` with each call of arguments that is a whole test or one part of an && / || / ! test (`(x) &&
    at::_use_cudnn_ctc_loss(log_probs, targets, ...)`) written as `true` or `false` where `value_of(name, argument
    texts)` gives (True/False, where it was read), unless `decided(text)` already reads the part or the whole test;
    with the text a reader is shown (the call kept, its value and where it was read after it). None when no call
    was written."""
    known = {}
    for text, name, args in _call_parts(condition):
        found = value_of(name, list(args))
        if found is not None and isinstance(found[0], bool) and not decided(text):
            known[text] = found
    if not known or decided(condition):
        return None

    def visit(expr: str) -> tuple[str, str]:
        text = expr.strip()
        split = _split(text)
        if split is not None:
            head, parts, op, tail = split
            pairs = [visit(p) for p in parts]
            return (head + f" {op} ".join(a for a, _ in pairs) + tail,
                    head + f" {op} ".join(b for _, b in pairs) + tail)
        if text not in known:
            return text, text
        word = "true" if known[text][0] else "false"
        return word, f"{text} (= {word}: {known[text][1]})"

    return visit(condition)


def _split(text: str) -> tuple[str, list[str], str, str] | None:
    """(what comes before, the parts, the operator joining them, what comes after) of a test that is `not (...)`,
    `!...`, `(...)` or parts joined by || or &&; None for one test."""
    if text.startswith("not (") and text.endswith(")") and closes_at_end(text[4:]):
        return "not (", [text[5:-1]], "", ")"
    if text.startswith("(") and closes_at_end(text):
        return "(", [text[1:-1]], "", ")"
    for op in ("||", "&&"):  # (before `!`: `!a && b` is `(!a) && b`)
        parts = split_top_level(text, op, "(")
        if len(parts) > 1:
            return "", parts, op, ""
    if text.startswith("!"):
        return "!", [text[1:]], "", ""
    return None


@functools.lru_cache(maxsize=8192)  # pure in the text: each test's parts found once
def _call_parts(condition: str) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The calls of arguments that are a whole test or one part of one: (text, name, argument texts)."""
    text = condition.strip()
    split = _split(text)
    if split is not None:
        return tuple(found for part in split[1] for found in _call_parts(part))
    m = _CALL_ARGS.match(text)
    if m is None or not m.group(2).strip() or not closes_at_end(text[m.start(2) - 1:]):
        return ()
    return ((text, m.group(1), tuple(_arguments(m.group(2)))),)
