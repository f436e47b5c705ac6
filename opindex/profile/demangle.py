"""Mangled kernel names (`_ZN2at6native...`), as Nsight and cuobjdump print them, made readable.

binutils' `c++filt` is used when it is installed (one process for a whole batch); without it, a small demangler for
the common subset of the Itanium C++ ABI that CUDA kernel names use. It returns None beyond that subset (local names
with lambdas, `Z...E`), never a guess: tests/test_profile.py checks it against c++filt on 74 real names."""
from __future__ import annotations

import re
import shutil
import subprocess

ANON = "(anonymous namespace)"


def is_mangled(name: str) -> bool:
    return name.startswith("_Z") or name.startswith("__Z")


_CXXFILT = shutil.which("c++filt")


def demangle_many(names: list[str]) -> dict[str, str | None]:
    """Demangle a batch: one c++filt process for all of them (a process per name would dominate a big profile)."""
    mangled = [n for n in dict.fromkeys(names) if is_mangled(n)]
    out: dict[str, str | None] = {}
    if not mangled:
        return out
    if _CXXFILT:
        try:
            res = subprocess.run([_CXXFILT], input="\n".join(mangled) + "\n", capture_output=True, text=True,
                                 timeout=30)
            lines = res.stdout.splitlines()
            if res.returncode == 0 and len(lines) == len(mangled):
                for n, d in zip(mangled, lines):
                    out[n] = d if d != n else None
        except (OSError, subprocess.SubprocessError):
            pass
    for n in mangled:
        if out.get(n) is None:
            out[n] = itanium_demangle(n)
    return out


def demangle(name: str) -> str | None:
    return demangle_many([name]).get(name)


_BUILTIN = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
            "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
            "x": "long long", "y": "unsigned long long", "f": "float", "d": "double", "e": "long double",
            "w": "wchar_t", "z": "...", "Dh": "__half", "DF16_": "_Float16"}
_LITERAL_SUFFIX = {"i": "", "j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull", "b": ""}


class _Demangler:
    """The common subset of the Itanium C++ ABI that CUDA kernel names use: _Z, nested names (N...E), source names,
    template arguments (I...E) with types and literals (L...E), pointers/references/const, builtin types, St/Sa
    abbreviations, substitutions (S_, S0_ ...) and template parameters (T_, T0_ ...). Anything else raises."""

    def __init__(self, s: str):
        self.s, self.i = s, 0
        self.subs: list[str] = []
        self.tparams: list[str] = []

    def fail(self):
        raise ValueError(f"unsupported at {self.i}: {self.s[self.i:self.i + 10]!r}")

    def peek(self, n=1):
        return self.s[self.i:self.i + n]

    def take(self, text):
        if not self.s.startswith(text, self.i):
            self.fail()
        self.i += len(text)

    def number(self) -> int:
        m = re.compile(r"n?\d+").match(self.s, self.i)
        if not m:
            self.fail()
        self.i = m.end()
        return -int(m.group()[1:]) if m.group()[0] == "n" else int(m.group())

    def source_name(self) -> str:
        n = self.number()
        name = self.s[self.i:self.i + n]
        self.i += n
        return ANON if name.startswith("_GLOBAL__N") else name

    def encoding(self) -> str:
        self.take("_Z")
        name, is_template = self.name()
        self.tparams = getattr(self, "last_targs", []) if is_template else []
        params = []
        if self.i < len(self.s):
            if is_template:
                self.type()          # a template function's mangled name encodes its return type first
            while self.i < len(self.s) and self.peek() not in ("E", "."):
                params.append(self.type())
        ret = "void " if is_template else ""
        plist = "" if params == ["void"] else ", ".join(params)
        return f"{ret}{name}({plist})"

    def name(self) -> tuple[str, bool]:
        if self.peek() == "N":
            self.i += 1
            parts, last_template = [], False
            prefix = ""
            while self.peek() != "E":
                if self.peek() in ("K", "V", "r"):
                    self.i += 1
                    continue
                if self.peek() == "I":
                    args = self.template_args()
                    prefix += args
                    self.subs.append(prefix)
                    last_template = True
                    parts[-1] += args
                    continue
                from_sub = self.peek() == "S" and not parts
                if self.peek() == "S":
                    part = self.substitution()
                elif self.peek() == "T":
                    part = self.template_param()
                else:
                    part = self.source_name()
                parts.append(part)
                prefix = "::".join(parts)
                if not from_sub:          # a substitution is a candidate already; it is not added twice
                    self.subs.append(prefix)
                last_template = False
            self.take("E")
            return "::".join(parts), last_template
        if self.peek(2) == "St":
            self.i += 2
            n = "std::" + self.source_name()
        else:
            n = self.source_name()
        if self.peek() == "I":
            self.subs.append(n)
            n += self.template_args()
            return n, True
        return n, False

    def template_args(self) -> str:
        self.take("I")
        args = []
        while self.peek() != "E":
            if self.peek() == "L":
                args.append(self.literal())
            elif self.peek() == "J":   # argument pack
                self.i += 1
                while self.peek() != "E":
                    args.append(self.type())
                self.i += 1
            else:
                args.append(self.type())
        self.take("E")
        self.last_targs = args       # the outermost list closes last: after name(), the function's own
        return "<" + ", ".join(args) + (" >" if args and args[-1].endswith(">") else ">")

    def literal(self) -> str:
        self.take("L")
        if self.peek(2) == "_Z":
            v = self.encoding()
        else:
            t = self.peek()
            if t in _LITERAL_SUFFIX:
                self.i += 1
                v = str(self.number())
                if t == "b":
                    v = "true" if v == "1" else "false"
                else:
                    v += _LITERAL_SUFFIX[t]
            else:
                ty = self.type()
                v = f"({ty}){self.number()}"
        self.take("E")
        return v

    def substitution(self) -> str:
        if self.peek(2) == "St":
            self.i += 2
            return "std"
        abbrev = {"Sa": "std::allocator", "Sb": "std::basic_string", "Ss": "std::string"}
        if self.peek(2) in abbrev:
            v = abbrev[self.peek(2)]
            self.i += 2
            return v
        self.take("S")
        m = re.compile(r"[0-9A-Z]*_").match(self.s, self.i)
        if not m:
            self.fail()
        self.i = m.end()
        seq = m.group()[:-1]
        idx = 0 if seq == "" else int(seq, 36) + 1
        if idx >= len(self.subs):
            self.fail()
        return self.subs[idx]

    def template_param(self) -> str:
        self.take("T")
        m = re.compile(r"\d*_").match(self.s, self.i)
        if not m:
            self.fail()
        self.i = m.end()
        idx = 0 if m.group() == "_" else int(m.group()[:-1]) + 1
        return self.tparams[idx] if idx < len(self.tparams) else f"T{idx}"

    def type(self) -> str:
        c = self.peek()
        for code in ("DF16_", "Dh"):
            if self.s.startswith(code, self.i):
                self.i += len(code)
                return _BUILTIN[code]
        if c in _BUILTIN and c not in ("D",):
            self.i += 1
            return _BUILTIN[c]
        if c == "P":
            self.i += 1
            t = self.type() + "*"
        elif c == "R":
            self.i += 1
            t = self.type() + "&"
        elif c == "O":
            self.i += 1
            t = self.type() + "&&"
        elif c == "K":
            self.i += 1
            t = self.type() + " const"
        elif c == "S":
            t = self.substitution()
            if t == "std":                  # St <unqualified-name>: std::x is a candidate, so is std::x<args>
                t = "std::" + self.source_name()
                self.subs.append(t)
                if self.peek() == "I":
                    t += self.template_args()
                    self.subs.append(t)
            elif self.peek() == "I":        # a substituted template name with its arguments
                t += self.template_args()
                self.subs.append(t)
            return t
        elif c == "T":
            t = self.template_param()
        elif c == "N":
            t, _ = self.name()              # name() adds every prefix of a nested name, the whole one included
            return t
        elif c.isdigit():
            t, _ = self.name()
        else:
            self.fail()
        self.subs.append(t)
        return t


def itanium_demangle(name: str) -> str | None:
    """The built-in fallback for when c++filt is absent; None when the name is beyond its subset."""
    try:
        d = _Demangler(name.lstrip("_") and ("_Z" + name.split("_Z", 1)[1]))
        out = d.encoding()
        return out if d.i >= len(d.s) or d.s[d.i] == "." else None
    except (ValueError, IndexError, RecursionError):  # RecursionError: nesting past Python's stack
        return None
