"""The conditions C++ code runs under: each branch of every `#if` group, and the blocks of `if (...)` tests on one
name that a default argument can decide (the conditions table).

A call inside `#ifdef __HIP_PLATFORM_HCC__` runs only in a ROCm build; one inside `if (label_smoothing > 0.0)` only
when the caller passes a label smoothing. The facts keep such calls (both sides of every group are indexed); these
rows say under what they run, so the trace can skip another platform's code and rank a default path first.
Both are found by regular expressions in C; only an `if` match asks the tree for its blocks.
"""
from __future__ import annotations

import bisect
import re

from ..pytorch.syntax import closes_at_end, define_at, split_top_level

# a directive, continuation lines included; searched from its literal '#' (a pattern that starts at the line would
# be tried at every line), only blanks may come before it on its line (checked per hit)
_DIRECTIVE = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b((?:[^\n\\]|\\\n|\\)*)")
# `if (label_smoothing > 0.0)`, `if (!weight.defined())`, `if (max_norm.has_value())`, `if (train)`,
# `if (reduction == Reduction::Mean)`, `if (output_size[0] == 1)`: one name (or an element of one), a literal (a number or an enum's constant) or a presence test (what a default argument decides), nothing else; literal-led (a word boundary first
# would keep the engine from skipping to each "if"), the character before is checked per hit
# (or a global setting: `if (globalContext().deterministicAlgorithms())`, `if (at::globalContext().blasPreferredBackend()
# == BlasBackend::Cublaslt)`, whose default PyTorch documents)
_ONE_TEST = (rb"(!\s*)?(?:(?:at::)?globalContext\(\)\.[A-Za-z_]\w*\(\)\s*(?:[!=]=\s*[\w:]+\s*)?|(?:\*\s*)?[A-Za-z_]\w*(?:\[\s*\d+\s*\])?(?:\.\w+\((?:\s*[\w:]+\s*)?\))?\s*(?:(?:==|!=|>=|<=|>|<)\s*"
             rb"(?:-?[\w.:]+|\"[^\"\\\n]*\")\s*|\.\s*(?:has_value|defined)\s*\(\s*\)\s*)?)")
# (an optional's value compared with a string too: `} else if (*rounding_mode == "trunc") {`, BinaryOps.cpp:455)
# the device a tensor is on (the traced device decides it): `self.device().type() == DeviceType::CUDA`, 1.4's
# `self.type().device_type() == kCUDA`, `x.is_cuda()`, `self.device().is_cpu()`
_DEVICE_TEST = rb"(?:!\s*)?[\w.]+(?:(?:\.device\(\)\.type|\.type\(\)\.device_type|\.device_type)\(\)\s*[!=]=\s*(?:c10::|at::)?(?:DeviceType::|k)\w+|(?:\.device\(\))?\.is_(?:cuda|cpu)\(\))\s*"
# (a method call may take one word: `output.is_contiguous(memory_format)`) ... and such tests joined by && or || (a
# line continuation after one too), one level of parentheses too (`reduction == Reduction::None && n_dims ==
# 2`, `self.device().type() == DeviceType::CUDA && (accumulate || globalContext().deterministicAlgorithms())`:
# the defaults, the device and the settings decide them)
_ATOM = rb"(?:" + _DEVICE_TEST + rb"|" + _ONE_TEST + rb"|\(\s*" + _ONE_TEST + rb"(?:(?:&&|\|\|)\s*" + _ONE_TEST + \
    rb")*\)\s*)"
_GUARD = re.compile(rb"if\s*\(\s*" + _ATOM + rb"(?:(?:&&|\|\|)(?:\s|\\\n)*" + _ATOM + rb")*\)")
# a test of a dtype, which the input's dtype decides: `if (at::isComplexType(common_dtype))`, `if (dtype ==
# ScalarType::Half)`, `if (self.is_complex())` (the whole condition is kept, read from the tree)
_DTYPE_GUARD = re.compile(rb"if\s*\(\s*!?\s*(?:(?:at::|c10::)?(?:isComplexType|isFloatingType|isReducedFloatingType|"
                          rb"isIntegralType)\s*\(|[\w.]+(?:\(\))?\s*[!=]=\s*(?:at::|c10::)?(?:ScalarType::|k)(?:Half|"
                          rb"BFloat16|Float|Double|ComplexHalf|ComplexFloat|ComplexDouble)\b|[\w.]+\.is_(?:complex|"
                          rb"floating_point)\(\s*\))")

# a test of a template's type argument, which the input's dtype decides where the type is the dispatched scalar_t
# (`if (std::is_same<DT, float>::value && 80 <= cc && cc < 100)`, mem_eff_attention/kernels/cutlassF.h:302; `if
# constexpr (std::is_same_v<scalar_t, int64_t>)`): the whole condition is kept, read from the tree
_TYPE_GUARD = re.compile(rb"if\s*(?:constexpr\s*)?\(\s*!?\s*(?:std::)?is_same(?:_v)?\s*<")


# a branch the source marks likely or unlikely (`if (C10_UNLIKELY(x))`, a fork's `if (maca_unlikely(x))`, `if
# (__builtin_expect(x, 0))`): the whole condition is kept, read from the tree
_HINT_GUARD = re.compile(rb"if\s*\(\s*!?\s*(?:\w*(?:unlikely|UNLIKELY|likely|LIKELY)\w*|__builtin_expect)\s*\(")
# a bare name first, then `&&` anything (`if (use_cudnn && eps >= detail::getCUDAHooks().batchnormMinEpsilonCuDNN())`):
# the name is a local flag (_local_flag reads what it was set to) or a parameter, and decides the whole test when false
_FLAG_GUARD = re.compile(rb"if\s*\(\s*!?\s*[A-Za-z_]\w*\s*&&")
# a free function of no arguments, whose value in the build traced the trace reads from its body
# (trace/function_value.py): `if (at::native::cudnnv8_enabled_check_debug())`
# (or of plain arguments, a chooser the trace reads from its body: `if (should_use_small_sort(self, dim))`)
_CALL_GUARD = re.compile(rb"if\s*\(\s*!?\s*(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*\s*\(\s*(?:[A-Za-z_][\w.]*\s*(?:,\s*[A-Za-z_][\w.]*\s*)*)?\)\s*\)")

# an `if (` whose test starts with a NaN check (`x != x`), kept when the whole test is such checks (_nan_test)
_NAME_CHAIN = rb"[A-Za-z_]\w*(?:\(\))?(?:\s*(?:\.|->)\s*[A-Za-z_]\w*(?:\(\))?)*"
_NAN_IF = re.compile(rb"if\s*\(\s*(" + _NAME_CHAIN + rb")\s*!=\s*\1(?![\w.(])")
# any `if (`, kept only when a conjunct of its test is a bare name (_flag_conjunct): `if (cond_cudnn_grid_sampler(input,
# grid) && ... && align_corners)` is false whenever the flag is (a parameter a default argument sets, or a local)
_ANY_IF = re.compile(rb"if\s*\((?=[^;{]*&&)")  # (only tests with a `&&` before the block: the rest never qualify)
_BARE_NAME = re.compile(r"!?\s*[A-Za-z_]\w*")
# any `if (` whose test reads a tensor's sizes (`if (self.numel() == self.size(dim))`, `if (input.dim() == 4)`): kept
# when the test itself does (_SIZES_IN), for a traced call's tensors to decide (trace/conditions.size_expr_holds)
# (or compares a name with arithmetic of names: `else if (dim == ndim - 1)`, ndim a size local)
# (or an element's size: `dim_size * sizeof(scalar_t) <= 4096`, the input's dtype gives it)
_SIZE_IF = re.compile(rb"if\s*\((?=[^;{]*(?:\.\s*(?:numel|dim|size)\(|sizeof\s*\(\s*scalar_t\s*\)|"
                      rb"\w\s*(?:==|!=|<=|>=|<|>)\s*[A-Za-z_]\w*\s*[-+*]))")
_SIZES_IN = re.compile(r"\.\s*(?:numel|dim|size)\(|sizeof\s*\(\s*scalar_t\s*\)|"
                       r"^!?\s*[A-Za-z_]\w*\s*(?:==|!=|<=|>=|<|>)\s*[A-Za-z_]\w*\s*[-+*]\s*(?:[A-Za-z_]\w*|\d+)$")

_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def preprocessor(data: bytes) -> list[tuple[int, int, str]]:
    """(first line, last line, condition) of each branch of each #if group; not include guards (`#ifndef X_H`
    then `#define X_H`)."""
    if b"#" not in data:
        return []
    out: list[tuple[int, int, str]] = []
    stack: list[list] = []  # per open group: [line of the branch's directive, its condition, conditions so far]
    line, pos = 1, 0
    for m in _DIRECTIVE.finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1
        if data[start:m.start()].strip(b" \t"):
            continue  # a '#' inside a line: not a directive
        line += data.count(b"\n", pos, m.start())
        last = line + m.group(0).count(b"\n")  # the directive's last line (continuations)
        word = m.group(1).decode()
        rest = _clean(m.group(2))
        if word in ("if", "ifdef", "ifndef"):
            if word == "ifndef" and _guard_of_file(data, m.end(), rest):
                stack.append([last, None, []])  # an include guard: no condition worth a row
            else:
                cond = f"defined({rest})" if word == "ifdef" else f"!defined({rest})" if word == "ifndef" else rest
                stack.append([last, cond, [cond]])
        elif word in ("elif", "else") and stack:
            first, cond, before = stack[-1]
            if cond is not None:
                out.append((first, line - 1, cond))
            if before:
                cond = rest if word == "elif" else f"not ({' || '.join(before)})" if len(before) > 1 else \
                    f"not ({before[0]})"
                stack[-1] = [last, cond, before + [rest]]
        elif word == "endif" and stack:
            first, cond, _ = stack.pop()
            if cond is not None:
                out.append((first, line - 1, cond))
        line, pos = last, m.end()
    return [(a + 1, b, c) for a, b, c in out if b > a]  # the lines inside the branch, the directive's own not


# code that cannot compile: an `#error` directive, a `static_assert(0, ...)` / `static_assert(false)`; the #if
# branch around one is never built (a fork's `#else static_assert(0, "Must use -DUSE_MACA")`)
_ERROR = re.compile(rb"#[ \t]*error\b[^\n]*|static_assert\s*\(\s*(?:0|false)\s*[,)]")


def requirements(data: bytes) -> list[tuple[int, str]]:
    """(line, text) of each `#error` and `static_assert(0/false ...)` (conditions rows of kind #error)."""
    if b"error" not in data and b"static_assert" not in data:
        return []
    out = []
    for m in _ERROR.finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1
        if m.group(0).startswith(b"#") and data[start:m.start()].strip(b" \t"):
            continue  # a '#' inside a line: not a directive
        line = data.count(b"\n", 0, m.start()) + 1
        out.append((line, m.group(0).decode("utf-8", "replace").strip()[:200]))
    return out


def guards(data: bytes, root, caller_at) -> list[tuple[int, int, str, str]]:
    """(first line, last line, condition, caller) of the blocks of `if (x ...)` tests on one name (_GUARD), of
    dtype tests (_DTYPE_GUARD), of type arguments (_TYPE_GUARD), of branch hints (_HINT_GUARD), of a flag joined by `&&` to anything (_FLAG_GUARD),
    of tests that read a tensor's sizes (_SIZE_IF),
    the else block as `not (...)`; only inside
    functions. The then block's rows start at the `if` line."""
    if b"if" not in data:
        return []
    out, seen = [], set()
    found = [*_GUARD.finditer(data), *_DTYPE_GUARD.finditer(data), *_HINT_GUARD.finditer(data),
             *_FLAG_GUARD.finditer(data), *_CALL_GUARD.finditer(data)]
    if b"is_same" in data:
        found += _TYPE_GUARD.finditer(data)
    patterned = {m.start() for m in found}
    found += [m for m in _ANY_IF.finditer(data) if m.start() not in patterned]
    found += [m for m in _SIZE_IF.finditer(data) if m.start() not in patterned]
    if b"!=" in data:
        found += [m for m in _NAN_IF.finditer(data) if m.start() not in patterned]
    for m in sorted(found, key=lambda m: m.start()):
        if m.start() and data[m.start() - 1] in _WORD or m.start() in seen:
            continue  # `elif (`, `verify_if(`: not the keyword; an `if` both patterns find
        seen.add(m.start())
        node = root.descendant_for_byte_range(m.start(), m.start() + 2)
        statement = node.parent if node is not None else None
        if statement is None or statement.type != "if_statement":
            continue
        caller = caller_at(m.start())
        condition = statement.child_by_field_name("condition")
        then = statement.child_by_field_name("consequence")
        if not caller or condition is None or then is None:
            continue
        cond = _clean(condition.text)
        cond = cond[1:-1].strip() if cond.startswith("(") and cond.endswith(")") else cond
        if m.start() not in patterned and not _flag_conjunct(cond) and not _SIZES_IN.search(cond) and \
                not _flag_disjunction(cond) and not _nan_test(cond):
            continue
        cond = _local_flag(data, m.start(), cond) or cond
        out.append((statement.start_point[0] + 1, then.end_point[0] + 1, cond, caller))
        other = statement.child_by_field_name("alternative")
        if other is not None:
            out.append((other.start_point[0] + 1, other.end_point[0] + 1, f"not ({cond})", caller))
        elif _returns(then) and statement.parent is not None and statement.parent.type == "compound_statement":
            # an early return (multinomial_out's `if (!with_replacement || n_sample == 1) { ... return result; }`):
            # the rest of the block runs only when the test is false
            out.append((then.end_point[0] + 2, statement.parent.end_point[0] + 1, f"not ({cond})", caller))
    return out


def _returns(block) -> bool:
    """Whether a then-block ends in a return (or throw): what follows it in the enclosing block is its else."""
    if block.type in ("return_statement", "throw_statement"):
        return True
    last = block.named_children[-1] if block.type == "compound_statement" and block.named_children else None
    while last is not None and last.type == "comment":
        last = last.prev_named_sibling
    return last is not None and last.type in ("return_statement", "throw_statement")


def _flag_conjunct(cond: str) -> bool:
    """Whether a test joins by top-level `&&` (and no top-level `||`) a bare name to other tests."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(cond):
        c = cond[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and cond.startswith("||", i):
            return False
        elif depth == 0 and cond.startswith("&&", i):
            parts.append(cond[start:i])
            start = i = i + 2
            continue
        i += 1
    parts.append(cond[start:])
    return len(parts) > 1 and any(_BARE_NAME.fullmatch(p.strip()) for p in parts)


# a test of a tensor's layout or kind, which the traced tensor decides (trace/conditions.device_holds)
_KIND_CALL = re.compile(r"!?\s*[A-Za-z_][\w.]*\.is_\w+\(\s*\)")


def _flag_disjunction(cond: str) -> bool:
    """Whether a test is a top-level `||` of parts each a flag conjunction (`train && f(input, p)`, in
    parentheses), a bare name or a kind test (`input.is_nested()`): Dropout.cpp's `input.is_nested() || (train &&
    is_fused_kernel_acceptable(input, p))` is false when train is."""
    parts = split_top_level(cond, "||", "([{")
    if len(parts) < 2:
        return False
    for part in (p.strip() for p in parts):
        while part.startswith("(") and part.endswith(")") and closes_at_end(part):
            part = part[1:-1].strip()
        if not (_flag_conjunct(part) or _BARE_NAME.fullmatch(part) or _KIND_CALL.fullmatch(part)):
            return False
    return True


def _nan_test(cond: str) -> bool:
    """Whether a test is NaN checks joined by `||` or `&&` (`x != x`: clamp_out's `min.get().toDouble() !=
    min.get().toDouble() || max.get().toDouble() != max.get().toDouble()`), which a number of the general case
    makes false."""
    parts = [q.strip() for p in split_top_level(cond, "||", "([{") for q in split_top_level(p, "&&", "([{")]
    return all((m := re.fullmatch(r"(.+?)\s*!=\s*(.+)", p)) is not None and m.group(1).strip() == m.group(2).strip()
               for p in parts)


def _clean(text: bytes) -> str:
    """A condition as one line: continuations joined, comments dropped, blanks collapsed."""
    text = re.sub(rb"/\*.*?\*/|//[^\n]*", b"", text.replace(b"\\\n", b" "), flags=re.S)
    return " ".join(text.decode("utf-8", "replace").split())


def _guard_of_file(data: bytes, after: int, name: str) -> bool:
    """`#ifndef X` whose next non-blank line is `#define X`."""
    defined = define_at(data, after + 1 if data[after:after + 1] == b"\n" else after)
    while defined is None and data[after:after + 1] == b"\n" and data[after + 1:after + 2] == b"\n":
        after += 1
        defined = define_at(data, after + 1)
    return defined == name


_SWITCH = re.compile(rb"switch\s*\(")
# a case label at the switch body's own depth: `case MemoryFormat::ChannelsLast:` (`::` is not its colon), `default:`
_LABEL = re.compile(rb"\b(?:case\s+((?:[^:;{}]|::)+?)\s*:(?!:)|default\s*:)")
# what a scan of braces reads: comments and literals (skipped whole), brackets, and the words a label starts with
_TOKEN = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[{}()]|\b(?:case|default)\b', re.S)


def switch_cases(data: bytes, root, caller_at) -> list[tuple[int, int, str, str]]:
    """(first line, last line, condition, caller) of each `case` of a `switch` inside a function: `E == X` for
    `switch (E) { case X: ... }` (labels that share statements: `E == X || E == Y`; `default:` the negation of the
    others). A switch on a local initialised in the same function by `auto E = init;` tests `init` (`switch
    (memory_format)` after `const auto memory_format = input_.suggest_memory_format();` tests
    `input_.suggest_memory_format() == MemoryFormat::ChannelsLast`): what the trace's inputs can decide. The body
    and its labels are read from the text by brace depth: an `#ifdef` that splits `} else {` leaves the tree's
    case nodes wrong (DilatedMaxPool2d.cu), never the braces' balance."""
    if b"switch" not in data:
        return []
    out, newlines = [], None
    for m in _SWITCH.finditer(data):
        if m.start() and data[m.start() - 1] in _WORD:
            continue
        caller = caller_at(m.start())
        body = _body(data, m.end() - 1) if caller else None
        if body is None:
            continue
        tested, first, last = body
        tested = _initializer(data, m.start(), tested) or tested
        if newlines is None:
            newlines = [n.start() for n in re.finditer(b"\n", data)]
        out += _cases(data, first, last, tested, caller, newlines)
    return out


def _body(data: bytes, paren: int) -> tuple[str, int, int] | None:
    """The tested expression and the byte range inside the braces of a switch whose `(` is at `paren`."""
    close = _match(data, paren, b"(", b")")
    if close is None:
        return None
    brace = close + 1
    while brace < len(data) and data[brace:brace + 1] in b" \t\r\n":
        brace += 1
    if data[brace:brace + 1] != b"{":
        return None
    end = _match(data, brace, b"{", b"}")
    return (_clean(data[paren + 1:close]), brace + 1, end) if end is not None else None


def _match(data: bytes, start: int, open_: bytes, close: bytes) -> int | None:
    """The position of the bracket closing the one at `start` (comments and literals skipped), within 200 KB."""
    depth = 0
    for m in _TOKEN.finditer(data, start, min(len(data), start + 200_000)):
        t = m.group(0)
        if t == open_:
            depth += 1
        elif t == close:
            depth -= 1
            if depth == 0:
                return m.start()
    return None


def _cases(data: bytes, first: int, last: int, tested: str, caller: str,
           newlines: list[int]) -> list[tuple[int, int, str, str]]:
    """The labels at the body's own depth, each case running from its label to the line before the next label
    that has statements of its own."""
    labels, depth = [], 0
    for m in _TOKEN.finditer(data, first, last):
        t = m.group(0)
        if t in (b"{", b"("):
            depth += 1
        elif t in (b"}", b")"):
            depth -= 1
        elif depth == 0 and t[:1] in (b"c", b"d"):
            label = _LABEL.match(data, m.start())
            if label:
                labels.append((m.start(), label.end(), _clean(label.group(1)) if label.group(1) else None))
    out, shared, every = [], [], [x for _, _, x in labels if x is not None]
    for i, (start, after, label) in enumerate(labels):
        stop = labels[i + 1][0] if i + 1 < len(labels) else last
        if not shared:
            begin = start  # the first of the labels sharing these statements
        shared.append(label)
        if not data[after:stop].strip():
            continue  # `case A:` with nothing of its own: it shares the next label's statements
        if None in shared:  # default (with any labels sharing it): runs when no other label matches
            others = [x for x in every if x not in shared]
            cond = f"not ({' || '.join(f'{tested} == {x}' for x in others)})" if others else None
        else:
            cond = " || ".join(f"{tested} == {x}" for x in shared)
        first_line = bisect.bisect_left(newlines, begin) + 1
        if cond:  # to the line before the next label's
            out.append((first_line, max(first_line, bisect.bisect_left(newlines, stop) + 1 - 1), cond, caller))
        shared = []
    return out


def _local_flag(data: bytes, before: int, cond: str) -> str | None:
    """`if (contiguous)` after `bool contiguous = iter.is_contiguous();`: the test of what the local holds
    (`iter.is_contiguous()`, `!(...)` for `if (!contiguous)`), which the trace's inputs can decide; None when the
    name is no local set that way (a parameter: `if (train)`)."""
    parts = split_top_level(cond, "&&", brackets="(")
    if len(parts) > 1:  # `use_cudnn && eps >= ...`: each flag of a conjunction read the same way
        read = [_local_flag(data, before, p.strip()) for p in parts]
        if all(r is None for r in read):
            return None
        return " && ".join(f"({r})" if r is not None else p.strip() for p, r in zip(parts, read))
    chosen = re.fullmatch(r"([A-Za-z_]\w*)\s*(==|!=)\s*((?:[A-Za-z_]\w*::)+[A-Za-z_]\w*)", cond)
    if chosen is not None:  # `if (backend == BatchNormBackend::Cudnn)` after `BatchNormBackend backend = f(...);`
        init = _chooser_initializer(data, before, chosen.group(1))
        return None if init is None else f"{init} {chosen.group(2)} {chosen.group(3)}"
    m = re.fullmatch(r"(!\s*)?([A-Za-z_]\w*)", cond)
    init = _initializer(data, before, m.group(2)) if m else None
    if init is None:
        return None
    return f"!({init})" if m.group(1) else init


def _initializer(data: bytes, before: int, name: str) -> str | None:
    """The initializer of `auto name = ...;` or `bool name = ...;` (const or not) in the FLAG_WINDOW lines above a
    switch or an if on `name`."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    window = _lines_above(data, before)
    found = list(re.finditer(rb"\b(?:auto|bool)\s+" + name.encode() + rb"\s*=\s*([^;{}]+);", window))
    if not found:
        return None
    init = found[-1]
    # a later plain assignment at the declaration's own depth replaces the value (1.8's batch_norm: `bool use_cudnn
    # = false; use_cudnn = (input.is_cuda() && ... && weight.defined() ...);`); one inside a nested block (an `if`
    # that may or may not run: addmm's `useLtInterface = ...`) leaves it unknown
    value, guarded = _clean(init.group(1)), []
    for m in re.finditer(rb"(?<![\w.>&*])" + name.encode() + rb"\s*=(?!=)\s*([^;{}]+);", window[init.end():]):
        before_it = window[init.end():init.end() + m.start()]
        tests = _enclosing_tests(before_it)
        if tests is None:
            return None
        tests = [f"[#if {t}]" for t in _open_directives(before_it)] + tests
        assigned = _clean(re.sub(rb"(?m)^\s*#.*$", b"", m.group(1)))
        if tests:  # set only when the ifs around it hold: the value so far, or that
            guarded.append(" && ".join(f"({t})" for t in tests + [assigned]))
        else:
            value, guarded = assigned, []
    return " || ".join([f"({value})"] + [f"({g})" for g in guarded]) if guarded else value


FLAG_WINDOW = 200  # lines above a test searched for the flag's declaration (addmm's useLtInterface: 103)


def _lines_above(data: bytes, before: int) -> bytes:
    """The FLAG_WINDOW lines of `data` above the offset `before`, where a test's flag is declared and set."""
    start = before
    for _ in range(FLAG_WINDOW):
        start = data.rfind(b"\n", 0, start - 1)
        if start <= 0:
            return data[:before]
    return data[start:before]


def _chooser_initializer(data: bytes, before: int, name: str) -> str | None:
    """The call a local of an enum type is set to and never set again (`BatchNormBackend backend =
    _select_batch_norm_backend(input, weight, ...);`), in the FLAG_WINDOW lines above a test of it."""
    window = _lines_above(data, before)
    found = list(re.finditer(rb"\b(?:auto|[A-Z]\w*(?:::\w+)*)\s+" + name.encode() +
                             rb"\s*=\s*((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*\([^;{}]*\))\s*;", window))
    if not found or re.search(rb"(?<![\w.>&*])" + name.encode() + rb"\s*=(?!=)", window[found[-1].end():]):
        return None
    return _clean(found[-1].group(1))


def _enclosing_tests(text: bytes) -> list[str] | None:
    """The tests of the `if (...) {` blocks still open at the end of `text` (a function's statements after a
    flag's declaration, up to an assignment of it), outermost first, each read as _local_flag reads an if's test;
    None when a block still open is no if's (a loop, an else, a lambda: when it runs is not a test)."""
    code = re.sub(rb"(?m)^\s*#.*$", b"", text)
    opened = []
    for i, ch in enumerate(code):
        if ch == 0x7B:  # {
            opened.append(i)
        elif ch == 0x7D and opened:  # }
            opened.pop()
    tests = []
    for at in opened:
        test = _block_test(code, at)
        if test is None:
            return None
        tests.append(test)
    return tests


def _block_test(code: bytes, at: int) -> str | None:
    """The test under which the block whose `{` is at `at` runs: an if's test (a local flag read as _local_flag
    reads it), `not (...)` of it for its else block; None for any other block."""
    head = code[:at].rstrip()
    if head.endswith(b"else"):
        closed = head[:-4].rstrip()
        if not closed.endswith(b"}"):
            return None
        depth, i = 0, len(closed) - 1
        while i >= 0:
            depth += (closed[i] == 0x7D) - (closed[i] == 0x7B)
            if depth == 0:
                break
            i -= 1
        test = _block_test(closed, i) if i >= 0 else None
        return None if test is None else f"not ({test})"
    head = head[-400:]
    starts = [m.end() for m in re.finditer(rb"\bif\s*\(", head)]
    inside = next((head[s:-1] for s in reversed(starts) if head.endswith(b")") and _balanced(head[s:-1])), None)
    if inside is None:
        return None
    test = _clean(inside)
    return _local_flag(code, at, test) or test


def _open_directives(text: bytes) -> list[str]:
    """The #if tests still open at the end of `text`, outermost first (`#else` as the negation of its #if, `#elif`
    as its own test and not the earlier ones'): the trace reads each in the build traced (trace/conditions.py)."""
    stack: list[tuple[str, list[str]]] = []  # (this branch's test, the tests of the branches before it)
    for m in re.finditer(rb"(?m)^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", text):
        kind, rest = m.group(1).decode(), _clean(m.group(2))
        if kind in ("if", "ifdef", "ifndef"):
            test = {"ifdef": f"defined({rest})", "ifndef": f"!defined({rest})"}.get(kind, rest)
            stack.append((test, []))
        elif kind in ("elif", "else") and stack:
            test, before = stack[-1]
            before = before + [test]
            mine = " && ".join([f"!({b})" for b in before] + ([f"({rest})"] if kind == "elif" else []))
            stack[-1] = (mine, before)
        elif kind == "endif" and stack:
            stack.pop()
    return [test for test, _ in stack]


def _balanced(text: bytes) -> bool:
    depth = 0
    for ch in text:
        depth += (ch == 0x28) - (ch == 0x29)
        if depth < 0:
            return False
    return depth == 0
