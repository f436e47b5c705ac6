"""`opindex coverage --html`: one self-contained page (no script or style from elsewhere), an ops x keys matrix
coloured by status, with a text filter on op names, a status filter and a namespace filter. Each cell's title
holds the status, the kernel and its file:line, and its letter links to that file (file://, or $OPINDEX_EDITOR_URL's
editor URL: render/links.py); a composite cell lists what the backend lacks under it."""
from __future__ import annotations

import html

from .links import url

COLOURS = {"kernel": "#2e8b57", "inherited": "#66c28a", "composite_explicit": "#4f81c7",
           "composite_implicit": "#9bb8e6", "fallback": "#e0a030", "missing": "#d05050"}
LETTERS = {"kernel": "K", "inherited": "I", "composite_explicit": "E", "composite_implicit": "C",
           "fallback": "F", "missing": "·"}

_HEAD = """<!doctype html><html><head><meta charset="utf-8"><title>opindex coverage</title><style>
body{font:13px system-ui,sans-serif;margin:1em}table{border-collapse:collapse}
th{position:sticky;top:0;background:#fff;writing-mode:vertical-rl;font-weight:normal;padding:2px}
td{border:1px solid #fff;padding:0 4px;text-align:center;color:#fff;font-size:11px}
td a{color:#fff;text-decoration:none}td.op{text-align:left;color:#000;font-family:monospace;white-space:nowrap}
.legend span{display:inline-block;padding:2px 6px;margin-right:4px;color:#fff}
.controls{margin:.5em 0}.controls input,.controls select{margin-right:1em}
</style></head><body>"""

_SCRIPT = """<script>
function apply(){const q=document.getElementById('q').value.toLowerCase(),
s=document.getElementById('s').value,n=document.getElementById('n').value;let shown=0;
for(const tr of document.querySelectorAll('tbody tr')){const op=tr.dataset.op;
const ok=(!q||op.toLowerCase().includes(q))&&(!n||op.startsWith(n+'::'))&&(!s||tr.dataset.s.split(' ').includes(s));
tr.style.display=ok?'':'none';if(ok)shown++}document.getElementById('count').textContent=shown}
</script>"""


def to_html(rows: list[dict], keys: tuple[str, ...], notes: list[str], title: str = "", root: str | None = None,
            index: str = "") -> str:
    """The page; `root` (the checkout's) makes each cell's location a link, `index` (Index.which()) is said under
    the title."""
    ops: dict[str, dict[str, dict]] = {}
    for r in rows:
        ops.setdefault(r["op"], {})[r["key"]] = r
    namespaces = sorted({op.partition("::")[0] for op in ops})
    used = [k for k in keys if any(k in cells for cells in ops.values())]
    parts = [_HEAD, f"<h1>Backend coverage{': ' + html.escape(title) if title else ''}</h1>"]
    parts += [f"<p>{html.escape(n)}</p>" for n in ([index] if index else []) + notes]
    parts.append("<p class=legend>" + "".join(
        f"<span style='background:{c}'>{LETTERS[s]} {s}</span>" for s, c in COLOURS.items())
        + " C! a composite that reaches ops the key lacks (hover a cell: which, and each kernel's file:line)</p>")
    parts.append("<div class=controls>op <input id=q oninput=apply()> status <select id=s onchange=apply()>"
                 "<option value=''>any</option>" + "".join(f"<option>{s}</option>" for s in COLOURS) +
                 "</select> namespace <select id=n onchange=apply()><option value=''>any</option>" +
                 "".join(f"<option>{html.escape(n)}</option>" for n in namespaces) +
                 f"</select> <span id=count>{len(ops)}</span> ops</div>")
    parts.append("<table><thead><tr><th></th>" + "".join(f"<th>{html.escape(k)}</th>" for k in used)
                 + "</tr></thead><tbody>")
    for op in sorted(ops):
        cells = ops[op]
        statuses = " ".join(sorted({c["status"] for c in cells.values()}))
        parts.append(f"<tr data-op='{html.escape(op)}' data-s='{statuses}'><td class=op>{html.escape(op)}</td>")
        for k in used:
            parts.append(_cell(cells.get(k), root))
        parts.append("</tr>")
    parts.append("</tbody></table>" + _SCRIPT + "</body></html>\n")
    return "".join(parts)


def _cell(r: dict | None, root: str | None = None) -> str:
    if r is None:
        return "<td></td>"
    tip = r["status"]
    if r.get("file"):
        tip += f"\n{r.get('kernel') or ''} {r['file']}:{r['line']}"
    if r.get("dtypes"):
        tip += f"\ndtypes: {r['dtypes']}"
    if r.get("lacks"):
        tip += "\nlacks: " + ", ".join(r["lacks"])
    letter = LETTERS[r["status"]] + ("!" if r.get("lacks") else "")
    target = url(root, r.get("file"), r.get("line")) if r.get("file") else None
    text = f"<a href=\"{html.escape(target)}\">{html.escape(letter)}</a>" if target else html.escape(letter)
    return f"<td style='background:{COLOURS[r['status']]}' title=\"{html.escape(tip)}\">{text}</td>"
