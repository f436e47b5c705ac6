"""A trace in a notebook. The main chain (Trace.main_chain: the default path for the device) one hop a line, and
under each hop the branches that leave it, each one line with the number of hops below it. A branch's hops load
when it is opened: they travel once, as compressed data the page's script reads (nn.LSTM on PyTorch 2.4, 786 hops:
24 KB of the page's 47 KB, where HTML of every hop was 251 KB), and where no script runs (an untrusted notebook)
the line says which `t.branch(ID)` shows them. The Markdown has the same shape, the branches as lines."""
from __future__ import annotations

import base64
import html
import json
import os
import zlib

from ..trace.model import Trace
from .links import ENV, FILE_URL
from .trace_text import choice_note, header_lines, ranked_summary

_STYLE = ("<style>.opindex-trace ol,.opindex-trace ul{margin:0 0 0 1.2em;padding:0}.opindex-trace summary"
          "{cursor:pointer}.opindex-trace .w,.opindex-trace .d{color:#6b7280}.opindex-trace .x{color:#b91c1c}"
          "</style>")

# Opens a branch: reads the data once (base64 of zlib, DecompressionStream), then on each <details data-h> opened
# for the first time puts the hops below it in, each with children as a <details> of its own (loaded the same way).
# Each file:line shown becomes a link (the checkout root and the URL template travel in the root's data-r, data-u).
# Text goes in through textContent: names from source files are never HTML.
_SCRIPT = """<script>(function(){var root=document.currentScript.parentNode,hops=null;
function linked(w){var m=/^(.*):(\\d+)$/.exec(w.textContent);if(!m||!root.dataset.r)return w;var a=el('a','w',w.textContent);
a.href=root.dataset.u.split('{path}').join(encodeURI(root.dataset.r+'/'+m[1])).split('{line}').join(m[2]);
if(w.parentNode)w.parentNode.replaceChild(a,w);return a;}
root.querySelectorAll('span.w').forEach(linked);
function load(){if(hops)return Promise.resolve(hops);var b=atob(root.querySelector('.opindex-data').textContent);
var a=new Uint8Array(b.length);for(var i=0;i<b.length;i++)a[i]=b.charCodeAt(i);
return new Response(new Blob([a]).stream().pipeThrough(new DecompressionStream('deflate'))).json().then(function(d){
hops={};d.h.forEach(function(x){hops[x[0]]={id:x[0],p:x[1],layer:x[2],name:x[3],f:x[4]<0?'':d.f[x[4]],line:x[5],
detail:x[6],absent:x[7],n:x[8],kids:[]};});d.h.forEach(function(x){if(hops[x[1]])hops[x[1]].kids.push(hops[x[0]]);});
return hops;});}
function el(t,c,s){var e=document.createElement(t);if(c)e.className=c;if(s!==undefined)e.textContent=s;return e;}
function line(h){var s=el('span');if(h.absent)s.appendChild(el('span','x','\\u2717 '));s.appendChild(el('b','',h.layer));
s.appendChild(document.createTextNode(' '));s.appendChild(el('code','',h.name));
if(h.f&&h.line){s.appendChild(document.createTextNode(' '));s.appendChild(linked(el('span','w',h.f+':'+h.line)));}
if(h.detail){s.appendChild(document.createTextNode(' '));s.appendChild(el('span','d',h.detail));}return s;}
function fill(d,id){var box=d.querySelector('.b');load().then(function(all){var ul=el('ul');
all[id].kids.forEach(function(k){var li=el('li');if(k.kids.length){var det=el('details');det.dataset.h=k.id;
var sm=el('summary');sm.appendChild(line(k));sm.appendChild(el('i','',' ('+k.n+' below)'));det.appendChild(sm);
det.appendChild(el('div','b'));li.appendChild(det);}else li.appendChild(line(k));ul.appendChild(li);});
box.replaceChildren(ul);d.dataset.loaded='1';});}
root.addEventListener('toggle',function(e){var d=e.target;if(d.open&&d.dataset.h&&!d.dataset.loaded)fill(d,+d.dataset.h);},true);
})();</script>"""


def _kids(t: Trace) -> dict:
    kids: dict = {}
    for h in t.hops:
        kids.setdefault(h.parent, []).append(h)
    return kids


def _size(kids: dict, hop) -> int:
    n, todo = 0, [hop]
    while todo:
        h = todo.pop()
        n += 1
        todo += kids.get(h.id, [])
    return n


def _heading(t: Trace) -> str:
    way = "top-down" if t.direction == "down" else "bottom-up"
    return f"({way}, device {t.device}, dtype {t.dtype}, depth {t.depth})"


def _hops(n: int) -> str:
    return f"{n:,} hop" + ("" if n == 1 else "s")


def _parts(t: Trace) -> tuple[list, dict, list]:
    """The main chain, each chain hop's branches (its children off the chain) and the roots off the chain."""
    kids = _kids(t)
    chain = t.main_chain()
    on = {h.id for h in chain}
    branches = {h.id: [k for k in kids.get(h.id, []) if k.id not in on] for h in chain}
    others = [r for r in kids.get(None, []) if r.id not in on]
    return chain, branches, others


def _esc(s) -> str:
    return html.escape(str(s), quote=False)


def _hop_html(h) -> str:
    where = f' <span class="w">{_esc(h.file)}:{h.line}</span>' if h.file and h.line else ""
    detail = f' <span class="d">{_esc(h.detail)}</span>' if h.detail else ""
    mark = '<span class="x">✗</span> ' if h.absent else ""
    return f"{mark}<b>{h.layer}</b> <code>{_esc(h.name)}</code>{where}{detail}"


def _data(t: Trace, kids: dict, on: set) -> str:  # (an empty trace's data: "")
    """The hops off the main chain, for the script: [id, parent, layer, name, file index, line, detail, absent,
    hops below], the files once; JSON, zlib, base64."""
    files: dict[str, int] = {}
    rows = []
    for h in t.hops:
        if h.id in on:
            continue
        f = files.setdefault(h.file, len(files)) if h.file else -1
        rows.append([h.id, h.parent, str(h.layer), h.name, f, h.line or 0, h.detail or "", int(h.absent),
                     _size(kids, h) - 1])
    text = json.dumps({"f": list(files), "h": rows}, separators=(",", ":"))
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")


def notebook_html(t: Trace) -> str:
    head = f"<p><b>opindex trace <code>{_esc(t.query)}</code></b> {_heading(t)}"
    if not t.hops:
        cands = "".join(f"<li><code>{_esc(c)}</code></li>" for c in t.candidates)
        return f'<div class="opindex-trace">{head}</p><p>{_esc(t.message)}</p>' + (
            f"<ul>{cands}</ul>" if cands else "") + "</div>"
    kids = _kids(t)
    chain, branches, others = _parts(t)

    def branch(h) -> str:
        below = _size(kids, h) - 1
        if not below:
            return f"<li>{_hop_html(h)}</li>"
        return (f'<li><details data-h="{h.id}"><summary>{_hop_html(h)} <i>({_hops(below)} below)</i></summary>'
                f'<div class="b"><i>t.branch({h.id}) shows them</i></div></details></li>')

    folded = sum(len(b) for b in branches.values()) + len(others)
    where = (f' data-r="{html.escape(t.root)}" data-u="{html.escape(os.environ.get(ENV) or FILE_URL)}"'
             if t.root else "")  # read by the script: each file:line a link (file://, or $OPINDEX_EDITOR_URL)
    out = [f'<div class="opindex-trace"{where}>{_STYLE}{head}: {_hops(len(t.hops))}; the main chain '
           f"({_hops(len(chain))}), then {folded:,} branch{'' if folded == 1 else 'es'} folded (click to open)</p>"]
    if t.index:  # which index answered
        out.append(f'<p class="d">{_esc(t.which_index().removeprefix("the "))}</p>')
    out += [f"<p>{_esc(line)}</p>" for line in header_lines(t)]  # the call and the build traced
    if t.message:
        out.append(f"<p>{_esc(t.message)}</p>")
    if t.truncated:
        out.append(f"<p><b>TRUNCATED</b>: {_esc(t.truncated.get('reason', ''))}</p>")
    summary = ranked_summary(t, chain)
    if summary:
        out.append(f'<p class="d">Main chain {_esc(summary)}</p>')
    out.append("<ol>")
    for h in chain:
        below = "".join(branch(k) for k in branches[h.id])
        note = choice_note(t, h)  # where the chain went one way of several: the mark and what decided it
        mark = (f" <b>{_esc(note[0])}</b>" + (f'<div class="d">{_esc(note[1])}</div>' if note[1] else "")
                if note else "")
        out.append(f"<li>{_hop_html(h)}{mark}" + (f"<ul>{below}</ul>" if below else "") + "</li>")
    out.append("</ol>")
    if others:
        out.append(f"<p>Other starts:</p><ul>{''.join(branch(r) for r in others)}</ul>")
    data = _data(t, kids, {h.id for h in chain}) if folded else ""
    out.append(f'<script type="application/octet-stream" class="opindex-data">{data}</script>{_SCRIPT}')
    out.append("</div>")
    return "".join(out)


def notebook_markdown(t: Trace) -> str:
    """Markdown with the same shape: the chain as a numbered list, under each hop its branches one line each (the
    hops below one: `t.branch(ID)`)."""

    def md(s) -> str:
        """Prose as Markdown shows it: no emphasis, link or HTML made of C++ text (`<T, T_ACC>` stays)."""
        s = html.escape(str(s), quote=False)
        for c in "\\`*_[]|":  # the backslash first, so the escapes added after it stay single
            s = s.replace(c, "\\" + c)
        return s

    def code(s) -> str:
        fence = "``" if "`" in s else "`"
        return f"{fence}{s}{fence}" if fence == "`" else f"{fence} {s} {fence}"

    def hop(h) -> str:
        where = f" — `{h.file}:{h.line}`" if h.file and h.line else ""
        detail = f" — {md(h.detail)}" if h.detail else ""
        mark = "✗ " if h.absent else ""
        return f"{mark}**{h.layer}** {code(h.name)}{where}{detail}"

    def branch(h, indent: str) -> str:
        below = _size(kids, h) - 1
        return f"{indent}- {hop(h)}" + (f" *({_hops(below)} below: `t.branch({h.id})`)*" if below else "")

    head = f"### opindex trace `{t.query}` {_heading(t)}"
    if not t.hops:
        return f"{head}\n\n**{md(t.message)}**\n\n" + "".join(f"- `{c}`\n" for c in t.candidates)
    kids = _kids(t)
    chain, branches, others = _parts(t)
    folded = sum(len(b) for b in branches.values()) + len(others)
    out = [head, "", f"{_hops(len(t.hops))}: the main chain ({_hops(len(chain))}), then {folded:,} "
                     f"branch{'' if folded == 1 else 'es'}, one line each.", ""]
    if t.index:  # which index answered
        out += [md(t.which_index().removeprefix("the ")), ""]
    lines = header_lines(t)  # the call and the build traced
    out += [line for text in lines for line in (md(text), "")]
    if t.message:
        out += [md(t.message), ""]
    if t.truncated:
        out += [f"**TRUNCATED**: {md(t.truncated.get('reason', ''))}", ""]
    summary = ranked_summary(t, chain)
    if summary:
        out += [f"Main chain {md(summary)}", ""]
    for i, h in enumerate(chain, 1):
        note = choice_note(t, h)  # where the chain went one way of several: the mark and what decided it
        out.append(f"{i}. {hop(h)}" + (f" **{md(note[0])}**" if note else ""))
        if note and note[1]:
            out.append(f"   *{md(note[1])}*")
        out += [branch(b, "   ") for b in branches[h.id]]
    if others:
        out += ["", "Other starts:", ""] + [branch(r, "") for r in others]
    return "\n".join(out) + "\n"
