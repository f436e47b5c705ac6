"""What a vendor fork changes against the upstream it forked from, read from the fork alone.

A fork's own platform shows in three places of its tree: the macro its build defines (USE_MACA: the fork requires
it, an `#error` or `static_assert(0)` under `#ifndef` says so, and upstream's CUDA build leaves it undefined), the
`#if` branches that test that macro, and folders named after the platform (native/cuda/maca_kernels/). The report
lists the branches the fork's build compiles (its code), the upstream branches it leaves out, its folders, and the
registrations, __global__ kernels, launches and library calls inside its code.
"""
from __future__ import annotations

import re

from ..pytorch.build_config import UNDEFINED, UPSTREAM_CUDA, evaluate
from ..pytorch.devices import VENDOR_PLATFORMS
from . import facts

SITE_KINDS = ("registration", "kernel", "launch", "library")


def fork_macros(required: dict) -> list[dict]:
    """The macros the checkout requires defined that upstream's CUDA build leaves undefined (or never names)."""
    return [{"name": name, "source": s.source} for name, s in sorted(required.items())
            if s.value is not UNDEFINED and UPSTREAM_CUDA.get(name, UNDEFINED) is UNDEFINED]


# the parts of a build macro's name that say "a build option", not which platform (USE_MACA, C10_USE_FPGA)
MACRO_WORDS = frozenset({"use", "c10", "at", "enable", "enabled", "have", "with", "build", "backend", ""})


def platform_words(macros: list[str]) -> set[str]:
    """The platform's name as folders spell it: the parts of each macro's name but MACRO_WORDS (USE_MACA -> maca,
    C10_USE_FPGA -> fpga), and the vendor platforms (pytorch/devices.py VENDOR_PLATFORMS) whose name a macro
    holds."""
    words = {w for m in macros for w in m.removesuffix("()").lower().split("_")} - MACRO_WORDS
    return words | {p.name.lower() for p in VENDOR_PLATFORMS for m in macros if p.name.lower() in m.lower()}


def branches(con, macros: list[str]) -> dict[str, list[dict]]:
    """#if branches testing a fork macro, by what the fork's build does with them: fork (compiled: the fork's
    code), upstream (left out: the code the fork replaces), unknown (other macros decide too)."""
    out = {"fork": [], "upstream": [], "unknown": []}
    seen = set()
    for macro in macros:
        word = re.compile(rf"\b{re.escape(macro.removesuffix('()'))}\b")
        for r in facts.conditions_naming(con, macro.removesuffix("()")):
            if not word.search(r["condition"]) or (r["file"], r["line"]) in seen:
                continue
            seen.add((r["file"], r["line"]))
            held = evaluate(r["condition"], lambda name: 1 if name in macros else None)
            out["fork" if held else "upstream" if held is False else "unknown"].append(r)
    return out


def folders(con, words: set[str]) -> list[dict]:
    """Folders whose name has a platform word as a part (maca_kernels), with their C/C++/CUDA files."""
    found: dict[str, int] = {}
    for path in facts.cpp_files(con):
        parts = path.split("/")[:-1]
        for i, part in enumerate(parts):
            if words & set(re.split(r"[_\-.]", part.lower())):
                folder = "/".join(parts[:i + 1])
                found[folder] = found.get(folder, 0) + 1
                break
    return [{"folder": f, "files": n} for f, n in sorted(found.items())]


def _inside(spans: dict[str, list[tuple[int, int]]], folder_list: list[str], row: dict) -> bool:
    return any(row["file"].startswith(f + "/") for f in folder_list) or any(
        a <= row["line"] <= b for a, b in spans.get(row["file"], ()))


def sites(con, found: dict, folder_rows: list[dict]) -> dict[str, dict[str, list[dict]]]:
    """Registrations, kernels, launches and library calls in the fork's code (its branches and folders), and in
    the upstream branches its build leaves out."""
    fork_spans: dict[str, list[tuple[int, int]]] = {}
    for r in found["fork"]:
        fork_spans.setdefault(r["file"], []).append((r["line"], r["end_line"]))
    upstream_spans: dict[str, list[tuple[int, int]]] = {}
    for r in found["upstream"]:
        upstream_spans.setdefault(r["file"], []).append((r["line"], r["end_line"]))
    folder_list = [f["folder"] for f in folder_rows]
    out = {"fork": {k: [] for k in SITE_KINDS}, "upstream": {k: [] for k in SITE_KINDS}}
    for row in facts.code_sites(con):
        if _inside(fork_spans, folder_list, row):
            out["fork"][row["what"]].append(row)
        elif _inside(upstream_spans, [], row):
            out["upstream"][row["what"]].append(row)
    return out


def report(con, required: dict, macros: list[str] | None = None, files: set[str] | None = None) -> dict:
    """The fork report of one index. `macros`: the platform's macros when the checkout does not require them
    (default: fork_macros); `files`: only what lies in these files (one op's trace)."""
    named = [{"name": m, "source": "given"} for m in macros] if macros else fork_macros(required)
    names = [m["name"] for m in named]
    found = branches(con, names)
    folder_rows = folders(con, platform_words(names))
    code = sites(con, found, folder_rows)
    if files is not None:
        found = {k: [r for r in v if r["file"] in files] for k, v in found.items()}
        folder_rows = [f for f in folder_rows if any(p.startswith(f["folder"] + "/") for p in files)]
        code = {side: {k: [r for r in v if r["file"] in files] for k, v in kinds.items()}
                for side, kinds in code.items()}
    return {"macros": named, "branches": found, "folders": folder_rows, "sites": code}
