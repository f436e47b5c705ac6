"""The C++/CUDA side of two indexes: dispatch stubs, registrations per device, __global__ kernels, library calls.

Kernels are matched as a reader would: by qualified name first (the same name in another file has moved), then a
removed and an added kernel are one renamed kernel when what launches them is the same function (call position)
and their bodies are alike, or their bodies alone are very alike (content: the tokens of the definition, its own
name left out, compared as sets). Thresholds are CONTENT_WITH_CALLER and CONTENT_ALONE (docs/diff.md).
"""
from __future__ import annotations

import re
from pathlib import Path

from . import facts

CONTENT_WITH_CALLER = 0.5  # a shared launching function and bodies this alike: renamed
CONTENT_ALONE = 0.8  # bodies this alike, wherever launched: renamed
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|[^\s\w]")


def site(row: dict) -> str:
    return f"{row['file']}:{row['line']}"


def stubs_diff(a, b) -> dict:
    sa, sb = {r["stub"]: r for r in facts.declared_stubs(a)}, {r["stub"]: r for r in facts.declared_stubs(b)}
    return {"added": [{"stub": s, "b": site(sb[s])} for s in sorted(set(sb) - set(sa))],
            "removed": [{"stub": s, "a": site(sa[s])} for s in sorted(set(sa) - set(sb))]}


def _registered(con) -> dict[str, dict[str, dict]]:
    """stub -> device -> {kernels: sorted names, at: the first registration site}."""
    out: dict[str, dict[str, dict]] = {}
    for r in facts.registrations(con):
        per = out.setdefault(r["stub"], {}).setdefault(r["device"], {"kernels": set(), "at": site(r)})
        if r["kernel"]:
            per["kernels"].add(r["kernel"])
    return out


def registrations_diff(a, b, skip: set[str] = frozenset()) -> dict:
    """Per stub (but those in `skip`: declared on one side only, listed as such), devices gained and lost, and
    the kernels that changed per device."""
    ra, rb = _registered(a), _registered(b)
    changed = {}
    for stub in sorted((set(ra) | set(rb)) - skip):
        da, db = ra.get(stub, {}), rb.get(stub, {})
        kernels = {d: {"a": sorted(da[d]["kernels"]), "b": sorted(db[d]["kernels"]), "at_a": da[d]["at"],
                       "at_b": db[d]["at"]} for d in sorted(set(da) & set(db)) if da[d]["kernels"] != db[d]["kernels"]}
        gained, lost = sorted(set(db) - set(da)), sorted(set(da) - set(db))
        if gained or lost or kernels:
            changed[stub] = {"gained": {d: db[d]["at"] for d in gained}, "lost": {d: da[d]["at"] for d in lost},
                             "kernels": kernels}
    return {"changed": changed}


def _kernels(con) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in facts.global_kernels(con):
        out.setdefault(r["qualified_name"], []).append(r)
    return out


def kernels_diff(a, b, root_a: str | None, root_b: str | None) -> dict:
    """__global__ kernels added, removed, moved (same qualified name, no file in common) and renamed."""
    ka, kb = _kernels(a), _kernels(b)
    moved = [{"kernel": n, "a": site(ka[n][0]), "b": site(kb[n][0])} for n in sorted(set(ka) & set(kb))
             if not {r["file"] for r in ka[n]} & {r["file"] for r in kb[n]}]
    removed = {n: ka[n][0] for n in sorted(set(ka) - set(kb))}
    added = {n: kb[n][0] for n in sorted(set(kb) - set(ka))}
    for na, nb in _same_bare_name(removed, added):  # another namespace, and maybe another file: moved
        moved.append({"kernel": nb, "from": na, "a": site(removed.pop(na)), "b": site(added.pop(nb))})
    renamed = kernel_renames(removed, added, facts.launch_callers(a), facts.launch_callers(b),
                             Bodies(root_a), Bodies(root_b))
    paired_a, paired_b = {r["from"] for r in renamed}, {r["to"] for r in renamed}
    return {"added": [{"kernel": n, "b": site(r)} for n, r in added.items() if n not in paired_b],
            "removed": [{"kernel": n, "a": site(r)} for n, r in removed.items() if n not in paired_a],
            "moved": moved, "renamed": renamed,
            "content_compared": Bodies(root_a).readable and Bodies(root_b).readable}


def _same_bare_name(removed: dict, added: dict) -> list[tuple[str, str]]:
    """(removed, added) qualified names with one bare name, each bare name once on either side."""
    def bare(names):
        out: dict[str, list[str]] = {}
        for n in names:
            out.setdefault(n.rpartition("::")[2], []).append(n)
        return {k: v[0] for k, v in out.items() if len(v) == 1}
    ba, bb = bare(removed), bare(added)
    return [(ba[k], bb[k]) for k in sorted(set(ba) & set(bb))]


class Bodies:
    """The token sets of definitions read from a checkout (each file read once); empty when it is not readable."""

    def __init__(self, root: str | None):
        self.root = Path(root) if root else None
        self.readable = bool(self.root and self.root.is_dir())
        self.lines: dict[str, list[str]] = {}

    def tokens(self, row: dict) -> frozenset[str]:
        if not self.readable:
            return frozenset()
        if row["file"] not in self.lines:
            try:
                self.lines[row["file"]] = (self.root / row["file"]).read_text(errors="replace").splitlines()
            except OSError:
                self.lines[row["file"]] = []
        text = "\n".join(self.lines[row["file"]][row["line"] - 1:row["end_line"] or row["line"]])
        return frozenset(_TOKEN.findall(text)) - {row["name"]}


def similarity(x: frozenset, y: frozenset) -> float:
    return len(x & y) / len(x | y) if x and y else 0.0


def kernel_renames(removed: dict, added: dict, callers_a: dict, callers_b: dict, bodies_a: Bodies,
                   bodies_b: Bodies) -> list[dict]:
    """Pairs (removed, added) by content and call position, best first, each kernel at most once."""
    tokens_a = {n: bodies_a.tokens(r) for n, r in removed.items()}
    tokens_b = {n: bodies_b.tokens(r) for n, r in added.items()}
    options = []
    for na in removed:
        for nb in added:
            shared = sorted(callers_a.get(na, set()) & callers_b.get(nb, set()))
            ta, tb = tokens_a[na], tokens_b[nb]
            if not shared and (not ta or not tb or min(len(ta), len(tb)) < CONTENT_ALONE * max(len(ta), len(tb))):
                continue  # (sets of such sizes cannot reach CONTENT_ALONE)
            content = similarity(ta, tb)
            if content >= CONTENT_ALONE or (shared and content >= CONTENT_WITH_CALLER):
                options.append((-(content + (0.5 if shared else 0)), na, nb, content, shared))
    taken_a, taken_b, out = set(), set(), []
    for _, na, nb, content, shared in sorted(options):
        if na not in taken_a and nb not in taken_b:
            taken_a.add(na)
            taken_b.add(nb)
            out.append({"from": na, "to": nb, "a": site(removed[na]), "b": site(added[nb]),
                        "content": round(content, 2), "launched_by": shared})
    return out


def library_diff(a, b) -> dict:
    """Library functions called (library, function) on one side only, each with its first call site."""
    def calls(con):
        out: dict[tuple, dict] = {}
        for r in facts.library_calls(con):
            out.setdefault((r["library"], r["function"]), {**r, "count": 0})["count"] += 1
        return out
    ca, cb = calls(a), calls(b)
    return {"added": [{"library": k[0], "function": k[1], "b": site(cb[k]), "calls": cb[k]["count"]}
                      for k in sorted(set(cb) - set(ca))],
            "removed": [{"library": k[0], "function": k[1], "a": site(ca[k]), "calls": ca[k]["count"]}
                        for k in sorted(set(ca) - set(cb))]}


def code_diff(a, b, root_a: str | None, root_b: str | None) -> dict:
    stubs = stubs_diff(a, b)
    one_side = {s["stub"] for s in stubs["added"] + stubs["removed"]}
    return {"stubs": stubs, "registrations": registrations_diff(a, b, one_side),
            "kernels": kernels_diff(a, b, root_a, root_b), "library_calls": library_diff(a, b)}
