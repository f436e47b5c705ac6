"""The registries side by side: native_functions.yaml and derivatives.yaml entries of two indexes, entry by entry.

An entry is its full name (`add.out`, the bare name for the default overload). Each rule here is stated in
docs/diff.md, and benchmarks/registry_diff.py computes the same diff from the two YAML files with pyyaml alone:
- added / removed: full names on one side only; renamed: a removed and an added entry with the same schema after
  the name (arguments and returns, whitespace collapsed) whose names are alike (difflib ratio >= RENAME_RATIO),
  paired best first, each entry at most once;
- changed: schema (arguments by name: added, removed, changed; returns), dispatch keys gained and lost and kernels
  changed per key (PyTorch 1.8's Math and DefaultBackend read as CompositeImplicitAutograd and
  CompositeExplicitAutograd: one key by two names is no change), structured status (structured, or the delegate),
  ufunc inner loops, composite status, variants;
- derivatives: added, removed, changed (schema, output_differentiability, formulas per inputs added, removed,
  changed).
"""
from __future__ import annotations

import difflib
import re

from ..pytorch.syntax import split_top_level

RENAME_RATIO = 0.6
# 1.8's names of two composite keys (pytorch/devices.py COMPOSITE_KEYS lists both spellings)
KEY_ALIASES = {"Math": "CompositeImplicitAutograd", "DefaultBackend": "CompositeExplicitAutograd"}
COMPOSITE_ORDER = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")


def squash(text: str | None) -> str | None:
    return None if text is None else re.sub(r"\s+", " ", text).strip()


def signature(schema: str) -> tuple[list[str], str]:
    """(arguments, returns) of `name.overload(args) -> returns`: each argument as written (whitespace collapsed),
    a kwarg-only one prefixed `* `."""
    text = squash(schema)
    start = text.find("(")
    depth, end = 0, len(text)
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            end = i
            break
    args, kwarg_only = [], False
    for part in (p.strip() for p in split_top_level(text[start + 1:end], brackets="([")):
        if part == "*":
            kwarg_only = True
        elif part:
            args.append(("* " if kwarg_only else "") + part)
    return args, text[end + 1:].strip().removeprefix("->").strip()


def _arg_name(arg: str) -> str:
    return arg.split("=", 1)[0].split()[-1]


def schema_change(a: str, b: str) -> dict | None:
    """What changed between two schemas of one entry: arguments added, removed, changed (by name), returns."""
    (args_a, ret_a), (args_b, ret_b) = signature(a), signature(b)
    if (args_a, ret_a) == (args_b, ret_b):
        return None
    by_a, by_b = {_arg_name(x): x for x in args_a}, {_arg_name(x): x for x in args_b}
    out = {"a": squash(a), "b": squash(b),
           "arguments": {"added": [by_b[n] for n in by_b if n not in by_a],
                         "removed": [by_a[n] for n in by_a if n not in by_b],
                         "changed": [{"name": n, "a": by_a[n], "b": by_b[n]} for n in by_a
                                     if n in by_b and by_a[n] != by_b[n]]}}
    if [n for n in by_a if n in by_b] != [n for n in by_b if n in by_a]:
        out["arguments"]["reordered"] = True
    if ret_a != ret_b:
        out["returns"] = {"a": ret_a, "b": ret_b}
    return out


def dispatch_table(entry: dict) -> dict[str, str]:
    """key -> kernel of an entry's rows (implicit ones included), 1.8's key names read as today's."""
    return {KEY_ALIASES.get(key, key): kernel for key, kernel, _ in entry["dispatch"]}


def composite(table: dict[str, str]) -> str | None:
    return next((k for k in COMPOSITE_ORDER if k in table), None)


def structured_status(entry: dict) -> str:
    if entry["structured"]:
        return "structured"
    if entry["structured_delegate"]:
        return f"structured_delegate: {entry['structured_delegate']}"
    return "not structured"


def entry_change(a: dict, b: dict) -> dict:
    """The fields of one native entry that differ between two indexes ({} when none)."""
    out = {}
    schema = schema_change(a["schema"], b["schema"])
    if schema:
        out["schema"] = schema
    ta, tb = dispatch_table(a), dispatch_table(b)
    if ta != tb:
        out["dispatch"] = {"gained": sorted(set(tb) - set(ta)), "lost": sorted(set(ta) - set(tb)),
                           "kernels": {k: {"a": ta[k], "b": tb[k]} for k in sorted(set(ta) & set(tb))
                                       if ta[k] != tb[k]}}
    for field, value in (("structured", structured_status), ("ufunc", lambda e: e["ufunc_inner_loop"]),
                         ("composite", lambda e: composite(dispatch_table(e))),
                         ("variants", lambda e: e["variants"])):
        va, vb = value(a), value(b)
        if va != vb:
            out[field] = {"a": va, "b": vb}
    return out


def renames(removed: list[dict], added: list[dict]) -> list[tuple[dict, dict]]:
    """Pairs (removed, added) with one schema after the name, alike names first (ratio >= RENAME_RATIO), each
    entry in at most one pair; ties go to the earlier names in sort order."""
    by_sig: dict[tuple, list[dict]] = {}
    for e in added:
        by_sig.setdefault(_after_name(e["schema"]), []).append(e)
    options = []
    for r in removed:
        for e in by_sig.get(_after_name(r["schema"]), ()):
            ratio = difflib.SequenceMatcher(None, r["full_name"], e["full_name"]).ratio()
            if ratio >= RENAME_RATIO:
                options.append((-ratio, r["full_name"], e["full_name"], r, e))
    taken_a, taken_b, out = set(), set(), []
    for _, na, nb, r, e in sorted(options, key=lambda o: o[:3]):
        if na not in taken_a and nb not in taken_b:
            taken_a.add(na)
            taken_b.add(nb)
            out.append((r, e))
    return out


def _after_name(schema: str) -> tuple:
    args, returns = signature(schema)
    return tuple(args), returns


def native_diff(a: list[dict], b: list[dict], names: set[str] | None = None) -> dict:
    """The `ops` object: added, removed, renamed, changed; with `names`, only entries whose base name is one."""
    if names is not None:
        a, b = [e for e in a if e["name"] in names], [e for e in b if e["name"] in names]
    ia, ib = {e["full_name"]: e for e in a}, {e["full_name"]: e for e in b}
    removed = [ia[n] for n in sorted(set(ia) - set(ib))]
    added = [ib[n] for n in sorted(set(ib) - set(ia))]
    pairs = renames(removed, added)
    gone = {r["full_name"] for r, _ in pairs} | {e["full_name"] for _, e in pairs}
    changed = {}
    for n in sorted(set(ia) & set(ib)):
        change = entry_change(ia[n], ib[n])
        if change:
            changed[n] = {"a": f"{ia[n]['file']}:{ia[n]['line']}", "b": f"{ib[n]['file']}:{ib[n]['line']}",
                          **change}
    return {"added": [e["full_name"] for e in added if e["full_name"] not in gone],
            "removed": [e["full_name"] for e in removed if e["full_name"] not in gone],
            "renamed": [{"from": r["full_name"], "to": e["full_name"], "a": f"{r['file']}:{r['line']}",
                         "b": f"{e['file']}:{e['line']}", **entry_change(r, e)} for r, e in pairs],
            "changed": changed}


def _formulas(entry: dict) -> dict[str, str]:
    """`inputs` (or `Key: inputs` in a dispatch: section) -> the formula, whitespace collapsed."""
    return {(inputs if key == "Default" else f"{key}: {inputs}"): squash(formula)
            for key, inputs, formula, _ in entry["formulas"]}


def derivative_change(a: dict, b: dict) -> dict:
    out = {}
    schema = schema_change(a["schema"], b["schema"])
    if schema:
        out["schema"] = schema
    if squash(a["output_differentiability"]) != squash(b["output_differentiability"]):
        out["output_differentiability"] = {"a": a["output_differentiability"], "b": b["output_differentiability"]}
    fa, fb = _formulas(a), _formulas(b)
    if fa != fb:
        out["formulas"] = {"added": {k: fb[k] for k in fb if k not in fa},
                           "removed": {k: fa[k] for k in fa if k not in fb},
                           "changed": {k: {"a": fa[k], "b": fb[k]} for k in fa if k in fb and fa[k] != fb[k]}}
    return out


def derivatives_diff(a: list[dict], b: list[dict], names: set[str] | None = None) -> dict:
    """The `derivatives` object: added, removed, changed (by full name); with `names`, only those full names."""
    if names is not None:
        a, b = [e for e in a if e["full_name"] in names], [e for e in b if e["full_name"] in names]
    ia, ib = {e["full_name"]: e for e in a}, {e["full_name"]: e for e in b}
    changed = {}
    for n in sorted(set(ia) & set(ib)):
        change = derivative_change(ia[n], ib[n])
        if change:
            changed[n] = {"a": f"{ia[n]['file']}:{ia[n]['line']}", "b": f"{ib[n]['file']}:{ib[n]['line']}",
                          **change}
    return {"added": sorted(set(ib) - set(ia)), "removed": sorted(set(ia) - set(ib)), "changed": changed}
