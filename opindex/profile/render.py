"""Printing an annotated profile: a terminal table, CSV, JSON, a Markdown report (what a coding agent reads) and
one self-contained HTML page (inline CSS bars, <details> per kernel with its chain and source snippets)."""
from __future__ import annotations

import csv
import html
import io
import json
from pathlib import Path

from ..render.printable import markdown_text
from .report import ProfileRows, row_dict

CSV_COLUMNS = ["rank", "share", "gpu_us", "calls", "kind", "status", "short", "op", "definition", "launch_site",
               "body", "body_definition", "registration", "stub", "dispatch", "native_function", "library",
               "library_call", "note", "kernel", "call", "traced_end", "in_trace", "ends_here"]
SNIPPET_KERNELS = 40     # kernels of the HTML page that get source snippets (the top ones by GPU time)


def where(r: dict) -> str:
    """The one source location of a row: the __global__ definition, else the library call site."""
    if r.get("definition"):
        return r["definition"]
    if r.get("library_calls"):
        loc, fn = (r["library_calls"][0].split(" ") + [""])[:2]
        return f"{loc} {fn}".strip()
    return ""


def flat(r: dict) -> dict:
    body = r.get("body") or {}
    return {"rank": r.get("rank"), "share": round(r["share"], 6), "gpu_us": r["gpu_us"], "calls": r["calls"],
            "kind": r["kind"], "status": r["status"], "short": r["short"], "op": r.get("op") or "",
            "definition": r.get("definition") or "", "launch_site": (r.get("launch_sites") or [""])[0],
            "body": body.get("function") or body.get("name") or "", "body_definition": body.get("definition") or "",
            "registration": r.get("registration") or "", "stub": r.get("stub") or "",
            "dispatch": r.get("dispatch") or "", "native_function": r.get("native_function") or "",
            "library": r.get("library") or "", "library_call": (r.get("library_calls") or [""])[0],
            "note": r.get("note") or "", "kernel": r["kernel"], "call": r.get("call") or "",
            "traced_end": _traced_where(r), "in_trace": _yes_no(r, "in_trace"), "ends_here": _yes_no(r, "ends_here")}


def _traced_where(r: dict) -> str:
    t = r.get("traced")
    return f"{t['end']} {t['file']}:{t['line']}" if t else ""


def _yes_no(r: dict, key: str) -> str:
    t = r.get("traced")
    return "" if not t else "yes" if t[key] else "no"


def _header_lines(rows: ProfileRows) -> list[str]:
    s = rows.summary()
    lines = [f"profile: {s['profile']} ({s['kernels']} kernel names, {s['total_gpu_us']:,.1f} us of GPU time"
             + (f", torch {s['torch_version']}" if s["torch_version"] else "") + ")",
             f"index: {s['index'] or '?'} (PyTorch {s['index_pytorch_version'] or '?'} at "
             f"{s['checkout_root'] or '?'})",
             f"attributed to a source location: {100 * s['attributed_share']:.1f}% of GPU time"]
    t = s["traced_calls"]
    if t["rows"]:  # a profile recorded with shapes: each kernel's op call traced with its inputs
        share = 100 * t["in_trace_gpu_us"] / t["gpu_us"] if t["gpu_us"] else 0.0
        absent = f"; {t['not_in_checkout']} of the others are not in this checkout" if t["not_in_checkout"] else ""
        lines.append(f"traced with the recorded inputs: {t['rows']} kernels' op calls; the kernel that ran is in "
                     f"its call's trace for {t['in_trace']} ({share:.1f}% of their GPU time{absent}), the main "
                     f"chain's end for {t['ends_here']}")
    return lines


def to_table(rows: ProfileRows, width: int = 60, links: bool = False) -> str:
    """The terminal table; with `links` each source location an OSC 8 hyperlink to its file."""
    out = _header_lines(rows)
    out += [f"warning: {w}" for w in rows.warnings]
    out.append("")
    head = f"{'#':>3} {'share':>6} {'GPU us':>9} {'calls':>5}  {'kernel':<{width}}  {'op':<28} source"
    out += [head, "-" * len(head)]
    for r in rows:
        src = _terminal_linked(where(r), rows.checkout_root) if links and where(r) else where(r) or f"({r['status']})"
        disp = r.get("native_function") or ""
        out.append(f"{r.get('rank', ''):>3} {100 * r['share']:5.1f}% {r['gpu_us']:9.1f} {r['calls']:>5}  "
                   f"{_clip(r['short'], width):<{width}}  {_clip(r.get('op') or '', 28):<28} {src}"
                   + (f"  -> aten::{disp}" if disp and " | " not in disp else f"  -> {disp}" if disp else ""))
    out += [""] + [f"cap: {c}" for c in rows.caps]
    return "\n".join(out) + "\n"


def _terminal_linked(text: str, root: str | None) -> str:
    """`file:line rest` with its location an OSC 8 hyperlink (render.links.terminal_link)."""
    from ..render.links import osc8, terminal_link
    loc, sep, rest = text.partition(" ")
    file, _, line = loc.rpartition(":")
    target = terminal_link(root, file, int(line)) if file and line.isdigit() else None
    return osc8(loc, target) + sep + rest


def to_csv(rows: ProfileRows) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(flat(r))
    return buf.getvalue()


def to_json(rows: ProfileRows) -> str:
    return json.dumps({"summary": rows.summary(), "kernels": [row_dict(r) for r in rows]}, indent=2,
                      default=str) + "\n"


def to_markdown(rows: ProfileRows) -> str:
    out = ["# Profile to source", ""]
    out += [f"- {line}" for line in _header_lines(rows)]
    out += [f"- **warning**: {w}" for w in rows.warnings]
    out += [f"- cap: {c}" for c in rows.caps]
    out += ["", "| # | share | GPU us | calls | kernel | op | source | aten op |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.get('rank')} | {100 * r['share']:.1f}% | {r['gpu_us']:.1f} | {r['calls']} | "
                   f"`{_md(r['short'])}` | {_md(r.get('op') or '')} | {_md(where(r) or r['status'])} | "
                   f"{_md(r.get('native_function') or '')} |")
    out.append("")
    for r in rows:
        out += [f"## {r.get('rank')}. `{_md(r['short'])}` ({100 * r['share']:.1f}%, {r['calls']} calls)", "",
                f"- kernel: `{_md(r['kernel'])}`"]
        if r.get("demangled"):
            out.append(f"- demangled: `{_md(r['demangled'])}`")
        out.append(f"- status: {r['status']}" + (f" ({r['library']})" if r.get("library") else ""))
        if r.get("op"):
            out.append(f"- launched by: {r['op']}" + (f" inside {r['outer_op']}" if r.get("outer_op") and
                                                          r["outer_op"] != r["op"] else "")
                       + (f" ({r['scope']})" if r.get("scope") else ""))
        if r.get("module") or r.get("python"):
            out.append("- from Python: " + ", ".join(x for x in (
                f"module {r['module']}" if r.get("module") else "", f"`{_md(r['python'])}`" if r.get("python") else "")
                if x))
        if r.get("note"):
            out.append(f"- note: {_md(r['note'])}")
        if r.get("call"):
            out.append(f"- recorded call: `{_md(r['call'])}`")
        if r.get("traced"):
            t = r["traced"]
            out.append(f"- traced with those inputs: the main chain ends at `{_md(t['end'])}` {t['file']}:{t['line']}"
                       f"; the kernel that ran is {'in' if t['in_trace'] else 'not in'} that trace"
                       + (" and is its end" if t["ends_here"] else ""))
        if r["chain"]:
            out.append("- chain (bottom-up):")
            for h in r["chain"]:
                loc = f"{h.file}:{h.line}" if h.file else ""
                out.append(f"  - {h.kind}: `{_md(h.name)}` {loc}" + (f" - {_md(h.detail)}" if h.detail else ""))
        for extra in (r.get("library_calls") or [])[1:]:
            out.append(f"  - also: {_md(extra)}")
        out.append("")
    return "\n".join(out)


def _linked(text: str, root: str | None, template: str | None) -> str:
    """`text` (file:line, maybe followed by a function name) escaped, its location a link (render.links.url)."""
    from ..render.links import url
    loc, _, rest = text.partition(" ")
    file, _, line = loc.rpartition(":")
    target = url(root, file, int(line), template) if file and line.isdigit() else None
    if not target:
        return html.escape(text)
    return (f"<a href=\"{html.escape(target)}\">{html.escape(loc)}</a>"
            + (f" {html.escape(rest)}" if rest else ""))


def to_html(rows: ProfileRows, link_template: str | None = None) -> str:
    """The page; each location links to its file (`link_template`, else $OPINDEX_EDITOR_URL, else file://)."""
    root = Path(rows.checkout_root) if rows.checkout_root else None
    top = max((r["share"] for r in rows), default=0.0) or 1.0
    from .picture import STYLE, icicle, layer_bar
    parts = [_HTML_HEAD.replace("</style>", STYLE + "</style>"), "<h1>Profile to source</h1><ul>"]
    parts += [f"<li>{html.escape(line)}</li>" for line in _header_lines(rows)]
    parts += [f"<li class=warn>warning: {html.escape(w)}</li>" for w in rows.warnings]
    parts += [f"<li class=cap>cap: {html.escape(c)}</li>" for c in rows.caps]
    if len(rows) > SNIPPET_KERNELS:
        parts.append(f"<li class=cap>cap: source snippets for the first {SNIPPET_KERNELS} kernels only</li>")
    parts.append("</ul>")
    if rows:  # the picture first, then the table: one row per kernel, each opening to its chain
        parts += [layer_bar(rows), icicle(rows), "<h2>Kernels, largest GPU time first</h2>"]
    for i, r in enumerate(rows):
        color = {"attributed": "#3b7", "library": "#37b", "not in this checkout": "#c83", "generated": "#a5c"}.get(
            r["status"], "#999")
        pct = 100 * r["share"]
        src = _linked(where(r), rows.checkout_root, link_template) if where(r) else html.escape(r["status"])
        parts.append(f"<details id=k{r.get('rank')}><summary>"
                     f"<span class=bar style='width:{max(0.5, 100 * r['share'] / top) * 0.35:.2f}%;background:{color}'>"
                     f"</span><span class=pct>{pct:.1f}%</span> <code>{html.escape(r['short'])}</code> "
                     f"<span class=op>{html.escape(r.get('op') or '')}</span> "
                     f"<span class=src>{src}</span></summary>")
        parts.append(f"<p class=k>{html.escape(r['kernel'])}</p><p>{r['calls']} calls, {r['gpu_us']:.1f} us; "
                     f"status: {html.escape(r['status'])}" + (f" ({html.escape(r['library'])})" if r.get('library')
                                                              else "") + "</p>")
        if r.get("note"):
            parts.append(f"<p class=note>{html.escape(r['note'])}</p>")
        if r.get("traced"):  # the kernel's op call, traced with its recorded inputs
            t = r["traced"]
            parts.append(f"<p class=note>recorded call <code>{html.escape(r['call'])}</code>: its main chain ends at "
                         f"<code>{html.escape(t['end'])}</code> {html.escape(str(t['file']))}:{t['line']}; the "
                         f"kernel that ran is {'in' if t['in_trace'] else 'not in'} that trace"
                         f"{' and is its end' if t['ends_here'] else ''}</p>")
        parts.append("<ol class=chain>")
        for h in r["chain"]:
            loc = f"{h.file}:{h.line}" if h.file else ""
            parts.append(f"<li><b>{html.escape(str(h.kind))}</b> <code>{html.escape(h.name)}</code> "
                         f"<span class=loc>{_linked(loc, rows.checkout_root, link_template)}</span> "
                         f"{html.escape(h.detail or '')}")
            if root and i < SNIPPET_KERNELS and h.file:
                snip = _snippet(root, h.file, h.line)
                if snip:
                    parts.append(f"<pre>{html.escape(snip)}</pre>")
            parts.append("</li>")
        parts.append("</ol></details>")
    parts.append(_OPEN_TARGET + "</body></html>\n")
    return "\n".join(parts)


def _snippet(root: Path, rel: str, line: int, before: int = 1, after: int = 3) -> str | None:
    """A few lines of the checkout around a hop; only files inside the checkout root are read."""
    try:
        base = root.resolve()
        p = (base / rel).resolve()
        if not p.is_relative_to(base) or not line:
            return None
        lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    lo, hi = max(1, line - before), min(len(lines), line + after)
    return "\n".join(f"{n:>5} {lines[n - 1]}" for n in range(lo, hi + 1))


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _md(s: str) -> str:
    return markdown_text(str(s)).replace("|", "\\|").replace("`", "'")


# a kernel's box in the picture links to its row (#k3): the row opens as the page jumps to it
_OPEN_TARGET = ("<script>function opindexOpen(){var d=location.hash&&document.getElementById(location.hash.slice(1));"
                "if(d&&d.tagName==='DETAILS')d.open=true;}addEventListener('hashchange',opindexOpen);opindexOpen();"
                "</script>")

_HTML_HEAD = """<!doctype html><html><head><meta charset="utf-8"><title>opindex profile</title><style>
body{font:14px system-ui,sans-serif;margin:1.5em;max-width:1400px}
details{border-bottom:1px solid #eee;padding:2px 0}
summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.bar{display:inline-block;height:12px;vertical-align:middle;margin-right:6px;border-radius:2px}
.pct{display:inline-block;width:4em;text-align:right;font-variant-numeric:tabular-nums}
.op{color:#555}.src{color:#267;font-family:monospace}.loc{color:#267;font-family:monospace}
.k{font-family:monospace;font-size:12px;color:#444;word-break:break-all}
.warn{color:#b40}.cap{color:#666}.note{color:#666}
pre{background:#f6f6f6;padding:4px 8px;font-size:12px;overflow-x:auto;margin:2px 0 6px}
ol.chain li{margin:2px 0}
</style></head><body>"""
