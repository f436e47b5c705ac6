"""Text and Markdown of a Diff and a ForkReport. Text lists show `limit` items each (0: all) and say how many more
there are and how to see them; Markdown shows every item by default."""
from __future__ import annotations

from ..render.printable import markdown_text, printable

PLURAL = {"registration": "registrations", "kernel": "__global__ kernels", "launch": "launches",
          "library": "library calls"}
MARK = {"same": "=", "moved": ">", "changed": "~", "added": "+", "removed": "-"}


def _more(items: list, limit: int) -> tuple[list, str]:
    if limit and len(items) > limit:
        return items[:limit], f"… {len(items) - limit} more (--limit N shows N, --limit 0 all)"
    return items, ""


def _head(d) -> list[str]:
    def one(label, s):
        return f"{label}: {s['checkout'] or '?'} (PyTorch {s['pytorch_version'] or '?'}; index {s['index']})"
    return [one("A", d.a), one("B", d.b)]


def _at(where: str | None, other: str | None = None) -> str:
    """file:line, shortened to :line when `other` names the same file."""
    if where and other and where.rpartition(":")[0] == other.rpartition(":")[0]:
        return ":" + where.rpartition(":")[2]
    return where or ""


# -- one entry's changes, in one line each -----------------------------------------------------------------------
def entry_lines(change: dict) -> list[str]:
    out = []
    schema = change.get("schema")
    if schema:
        args = schema["arguments"]
        parts = [f"+{a}" for a in args["added"]] + [f"-{a}" for a in args["removed"]] + [
            f"{c['a']} -> {c['b']}" for c in args["changed"]]
        if args.get("reordered"):
            parts.append("arguments reordered")
        if "returns" in schema:
            parts.append(f"returns {schema['returns']['a']} -> {schema['returns']['b']}")
        out.append("schema: " + "; ".join(parts))
    dispatch = change.get("dispatch")
    if dispatch:
        parts = [f"+{k}" for k in dispatch["gained"]] + [f"-{k}" for k in dispatch["lost"]] + [
            f"{k}: {v['a']} -> {v['b']}" for k, v in dispatch["kernels"].items()]
        out.append("dispatch: " + ", ".join(parts))
    for field in ("structured", "ufunc", "composite", "variants", "output_differentiability"):
        if field in change:
            out.append(f"{field}: {change[field]['a']} -> {change[field]['b']}")
    formulas = change.get("formulas")
    if formulas:
        for k, v in formulas["changed"].items():
            out.append(f"formula {k}: {v['a']}  ->  {v['b']}")
        out += [f"formula {k} added: {v}" for k, v in formulas["added"].items()]
        out += [f"formula {k} removed: {v}" for k, v in formulas["removed"].items()]
    return out


def _clip(text: str, width: int | None) -> str:
    text = printable(text)
    return text if not width or len(text) <= width else text[:width - 1] + "…"


def registry_lines(ops: dict, derivatives: dict, limit: int, width: int | None) -> list[str]:
    out = [f"native_functions.yaml: {len(ops['added'])} added, {len(ops['removed'])} removed, "
           f"{len(ops['renamed'])} renamed, {len(ops['changed'])} changed"]
    for label in ("added", "removed"):
        shown, more = _more(ops[label], limit)
        if shown:
            out.append(_clip(f"  {label}: " + ", ".join(shown), width) + (f"  {more}" if more else ""))
    shown, more = _more(ops["renamed"], limit)
    out += [_clip(f"  renamed: {r['from']} -> {r['to']}  {r['a']} -> {_at(r['b'], r['a'])}", width) for r in shown]
    out += [f"  {more}"] if more else []
    shown, more = _more(list(ops["changed"].items()), limit)
    for name, change in shown:
        out.append(f"  changed: {name}  {change['a']} -> {_at(change['b'], change['a'])}")
        out += [_clip(f"    {line}", width) for line in entry_lines(change)]
    out += [f"  {more}"] if more else []
    out.append(f"derivatives.yaml: {len(derivatives['added'])} added, {len(derivatives['removed'])} removed, "
               f"{len(derivatives['changed'])} changed")
    for label in ("added", "removed"):
        shown, more = _more(derivatives[label], limit)
        if shown:
            out.append(_clip(f"  {label}: " + ", ".join(shown), width) + (f"  {more}" if more else ""))
    shown, more = _more(list(derivatives["changed"].items()), limit)
    for name, change in shown:
        out.append(f"  changed: {name}  {change['a']} -> {_at(change['b'], change['a'])}")
        out += [_clip(f"    {line}", width) for line in entry_lines(change)]
    out += [f"  {more}"] if more else []
    return out


def code_lines(code: dict, limit: int, width: int | None) -> list[str]:
    stubs, regs, kernels, libs = code["stubs"], code["registrations"], code["kernels"], code["library_calls"]
    out = [f"dispatch stubs: {len(stubs['added'])} added, {len(stubs['removed'])} removed"]
    for label, side in (("added", "b"), ("removed", "a")):
        shown, more = _more(stubs[label], limit)
        out += [f"  {label}: {s['stub']}  {s[side]}" for s in shown] + ([f"  {more}"] if more else [])
    out.append(f"registrations: {len(regs['changed'])} stubs changed their devices or kernels")
    shown, more = _more(list(regs["changed"].items()), limit)
    for stub, ch in shown:
        parts = [f"+{d} {w}" for d, w in ch["gained"].items()] + [f"-{d} {w}" for d, w in ch["lost"].items()] + [
            f"{d}: {', '.join(k['a'])} -> {', '.join(k['b'])} {k['at_b']}" for d, k in ch["kernels"].items()]
        out.append(_clip(f"  {stub}: " + "; ".join(parts), width))
    out += [f"  {more}"] if more else []
    out.append(f"__global__ kernels: {len(kernels['added'])} added, {len(kernels['removed'])} removed, "
               f"{len(kernels['moved'])} moved, {len(kernels['renamed'])} renamed")
    shown, more = _more(kernels["renamed"], limit)
    for r in shown:
        why = f"bodies {r['content']:.0%} alike" + (f", launched by {', '.join(r['launched_by'])}"
                                                   if r["launched_by"] else "")
        out.append(_clip(f"  renamed: {r['from']} -> {r['to']}  {r['a']} -> {_at(r['b'], r['a'])}  ({why})", width))
    out += [f"  {more}"] if more else []
    shown, more = _more(kernels["moved"], limit)
    for r in shown:
        name = f"{r['from']} -> {r['kernel']}" if r.get("from") else r["kernel"]
        out.append(_clip(f"  moved: {name}  {r['a']} -> {r['b']}", width))
    out += [f"  {more}"] if more else []
    for label, side in (("added", "b"), ("removed", "a")):
        shown, more = _more(kernels[label], limit)
        out += [_clip(f"  {label}: {k['kernel']}  {k[side]}", width) for k in shown] + ([f"  {more}"] if more else [])
    out.append(f"library calls: {len(libs['added'])} functions added, {len(libs['removed'])} removed")
    for label, side in (("added", "b"), ("removed", "a")):
        shown, more = _more(libs[label], limit)
        out += [_clip(f"  {label}: {x['library']} {x['function']}  {x[side]} ({x['calls']} call"
                      f"{'s' if x['calls'] != 1 else ''})", width) for x in shown] + ([f"  {more}"] if more else [])
    return out


# -- one op ---------------------------------------------------------------------------------------------------------
def _hop(h: dict | None) -> str:
    return f"{h['name']}  {h['file']}:{h['line']}" if h and h["file"] else (h["name"] if h else "")


def step_line(s: dict) -> str:
    a, b = s["a"], s["b"]
    if s["status"] == "same":
        lines = f"{a['file']}:{a['line']}" + ("" if a["line"] == b["line"] else f" -> :{b['line']}")
        return f"  = {s['role']:<13} {a['name']}  {lines}"
    if s["status"] == "moved":
        return f"  > {s['role']:<13} {a['name']}  {a['file']}:{a['line']} -> {b['file']}:{b['line']}"
    if s["status"] == "changed":
        where_b = _at(f"{b['file']}:{b['line']}", f"{a['file']}:{a['line']}") if b["file"] else ""
        return f"  ~ {s['role']:<13} {_hop(a)}\n  {'':<15} -> {b['name']}  {where_b}"
    return f"  {MARK[s['status']]} {s['role']:<13} {_hop(a or b)}"


def op_lines(c: dict, d, limit: int, width: int | None) -> list[str]:
    out = [f"{c['query']}   (main chains on {d.device}: A {d.a['pytorch_version'] or '?'}, "
           f"B {d.b['pytorch_version'] or '?'}; = same, line shifts shown; > moved; ~ changed; + only B; - only A)"]
    for label in ("a_message", "b_message"):
        if c[label]:
            out.append(f"  {label[0].upper()}: {c[label]}")
    out += [_clip(line, width) for s in c["steps"] for line in step_line(s).split("\n")]
    dev = c["device_code"]
    out.append("Device code: " + ("the same" if (dev["a"] or {}).get("name") == (dev["b"] or {}).get("name")
                                  else "changed"))
    out.append(_clip(f"  A runs {_hop(dev['a']) or 'no device code on its main chain'}", width))
    out.append(_clip(f"  B runs {_hop(dev['b']) or 'no device code on its main chain'}", width))
    for label, key in (("only in A's trace", "only_a"), ("only in B's trace", "only_b")):
        shown, more = _more(dev[key], limit)
        if shown:
            out.append(_clip(f"  {label}: " + ", ".join(shown), width))
            out += [f"    {more}"] if more else []
    reg, more = _more(registry_changes(c["ops"], c["derivatives"], width), limit)
    out += ["Registry and backward:"] + (reg or ["  no change in the entries on these chains"])
    out += [f"  {more}"] if more else []
    for label, cut in c["truncated"].items():
        out.append(_clip(f"TRUNCATED ({label.upper()}'s trace): {cut['reason']} (here: `opindex diff "
                         f"--trace-limit 0 --max-hops 0`, Index.diff(..., trace_limit=0, max_hops=0))", width))
    return out


def registry_changes(ops: dict, derivatives: dict, width: int | None) -> list[str]:
    out = []
    for label in ("added", "removed"):
        if ops[label]:
            out.append(_clip(f"  op {label}: " + ", ".join(ops[label]), width))
    out += [f"  op renamed: {r['from']} -> {r['to']}" for r in ops["renamed"]]
    for name, change in ops["changed"].items():
        out += [_clip(f"  {name}: {line}", width) for line in entry_lines(change)]
    for label in ("added", "removed"):
        if derivatives[label]:
            out.append(_clip(f"  backward {label}: " + ", ".join(derivatives[label]), width))
    for name, change in derivatives["changed"].items():
        out += [_clip(f"  backward {name}: {line}", width) for line in entry_lines(change)]
    return out


def diff_text(d, limit: int = 10, width: int | None = None) -> str:
    out = ["opindex diff"] + _head(d) + [""]
    if d.op_chains:
        for c in d.op_chains:
            out += op_lines(c, d, limit, width) + [""]
    else:
        out += registry_lines(d.ops, d.derivatives, limit, width) + [""]
        out += ["C++/CUDA:"] + code_lines(d.code, limit, width) + [""]
    out += [f"note: {n}" for n in d.notes]
    if not d.differences:
        out.append("no differences")
    return "\n".join(out).rstrip("\n") + "\n"


def diff_markdown(d, limit: int = 0) -> str:
    """Markdown: the same parts as the text, as headed sections; each op's chain as a table."""
    out = ["# opindex diff", "", *[f"- {line}" for line in _head(d)], ""]
    for c in d.op_chains:
        out += [f"## {markdown_text(c['query'])}", "", "| | role | A | B |", "|---|---|---|---|"]
        for s in c["steps"]:
            out.append(f"| {MARK[s['status']]} | {s['role']} | {_md_hop(s['a'])} | {_md_hop(s['b'])} |")
        dev = c["device_code"]
        out += ["", f"Device code: A {_md_hop(dev['a']) or 'none'}; B {_md_hop(dev['b']) or 'none'}", ""]
        out += [f"- {_md(line.strip())}" for line in registry_changes(c["ops"], c["derivatives"], None)] + [""]
    if not d.op_chains:
        out += ["## Registries", ""] + [f"    {line}" for line in registry_lines(d.ops, d.derivatives, limit, None)]
        out += ["", "## C++/CUDA", ""] + [f"    {line}" for line in code_lines(d.code, limit, None)] + [""]
    out += [f"Note: {_md(n)}" for n in d.notes]
    return "\n".join(out).rstrip("\n") + "\n"


def _md_hop(h: dict | None) -> str:
    """A hop as Markdown: its name as code (no HTML is rendered there: `<<<` stays as written), then file:line."""
    if not h:
        return ""
    name = "`" + printable(h["name"]).replace("`", "'").replace("|", "\\|") + "`"
    return f"{name} {_md(h['file'])}:{h['line']}" if h["file"] else name


def _md(text: str) -> str:
    return markdown_text(text).replace("|", "\\|")


# -- a fork's report ---------------------------------------------------------------------------------------------
def fork_lines(r, limit: int, width: int | None) -> list[str]:
    f = r.fork
    out = [f"opindex diff --fork: what {f['checkout'] or f['index']} (PyTorch {f['pytorch_version'] or '?'}) changes "
           f"against its upstream" + (f", in the files of {', '.join(r.names)}" if r.names else "")]
    if not r.macros:
        out.append("  its build requires no macro upstream leaves undefined (--fork-macro NAME names one)")
    out += [f"Platform macro: {m['name']} ({m['source']})" for m in r.macros]
    for key, label in (("fork", "compiled only by the fork's build (its code)"),
                       ("upstream", "left out by the fork's build (upstream code it replaces)"),
                       ("unknown", "decided by other macros too")):
        rows = r.branches[key]
        out.append(f"#if branches {label}: {len(rows)} in {len({x['file'] for x in rows})} files")
        shown, more = _more(rows, limit)
        out += [_clip(f"  {x['file']}:{x['line']}-{x['end_line']}  #if {x['condition']}"
                      + (f"  in {x['caller']}" if x["caller"] else ""), width) for x in shown]
        out += [f"  {more}"] if more else []
    out.append(f"Its own folders: {len(r.folders)}")
    out += [f"  {x['folder']}/  ({x['files']} files)" for x in r.folders]
    for side, label in (("fork", "In the fork's code"), ("upstream", "In the upstream code it leaves out")):
        kinds = r.sites[side]
        out.append(f"{label}: " + ", ".join(f"{len(kinds[k])} {PLURAL[k] if len(kinds[k]) != 1 else k}"
                                            for k in kinds))
        for k, rows in kinds.items():
            shown, more = _more(rows, limit)
            out += [_clip(f"  {k}: {x['name']}  {x['file']}:{x['line']}", width) for x in shown]
            out += [f"  {more}"] if more else []
    return out


def fork_text(r, limit: int = 10, width: int | None = None) -> str:
    return "\n".join(fork_lines(r, limit, width)) + "\n"


def fork_markdown(r, limit: int = 0) -> str:
    return "# opindex diff --fork\n\n" + "\n".join(f"    {line}" for line in fork_lines(r, limit, None)) + "\n"
