"""Where a step's GPU time goes, at a glance, for the HTML report: an icicle (module -> op -> kernel, each box as
wide as its GPU time) and one stacked bar by layer (a vendor library, PyTorch's own kernels, code generated at run
time, the CUDA runtime's copies). Plain HTML and CSS: the page stays self-contained (no script or font from the
network); each kernel's box links to its row of the table below."""
from __future__ import annotations

import html

# the layer of a kernel row, by its status (profile/attribute.py), and the colour it is drawn in
LAYERS = (("vendor library", "#3b6fb6"), ("PyTorch's own kernels", "#2f9e6a"), ("generated code", "#9b59b6"),
          ("CUDA runtime (copies, fills)", "#8a8a8a"), ("not in this checkout", "#d08a2c"))
_BY_STATUS = {"library": "vendor library", "attributed": "PyTorch's own kernels", "generated": "generated code",
              "runtime": "CUDA runtime (copies, fills)"}
_COLOR = dict(LAYERS)
ICICLE_DEPTH = ("module", "op", "kernel")
NO_MODULE = "(no module recorded)"
MIN_LABEL = 4.0  # a box narrower than this share of its row shows no label (its title still names it)


def layer_of(row: dict) -> str:
    return _BY_STATUS.get(row["status"], "not in this checkout")


def module_of(row: dict) -> str:
    """The icicle's top level: the nn.Module the profiler recorded (with_modules=True), else the scope the kernel
    ran under (an optimizer step, an autograd node), else NO_MODULE."""
    return row.get("module") or row.get("scope") or NO_MODULE


def layer_bar(rows: list[dict]) -> str:
    total = sum(r["gpu_us"] for r in rows) or 1.0
    by_layer = {name: 0.0 for name, _ in LAYERS}
    for r in rows:
        by_layer[layer_of(r)] += r["gpu_us"]
    parts, keys = [], []
    for name, color in LAYERS:
        us = by_layer[name]
        if not us:
            continue
        pct = 100 * us / total
        label = f"{name} {pct:.1f}%"
        parts.append(f'<div class="seg" style="width:{pct:.3f}%;background:{color}" title="{html.escape(label)}, '
                     f'{us:,.1f} us">{html.escape(label) if pct >= 8 else ""}</div>')
        keys.append(f'<span class="key"><i style="background:{color}"></i>{html.escape(name)}: {pct:.1f}% '
                    f'({us:,.1f} us)</span>')
    return (f'<h2>GPU time by layer</h2><div class="layers">{"".join(parts)}</div>'
            f'<p class="keys">{"".join(keys)}</p>')


def icicle(rows: list[dict]) -> str:
    """Module, then op, then kernel, as nested boxes whose widths add up to their parent's."""
    tree: dict = {}
    for r in rows:
        ops = tree.setdefault(module_of(r), {})
        ops.setdefault(r.get("op") or "(no op)", []).append(r)
    total = sum(r["gpu_us"] for r in rows) or 1.0

    def us_of(node) -> float:
        if isinstance(node, dict):
            return sum(us_of(v) for v in node.values())
        if isinstance(node, list):
            return sum(r["gpu_us"] for r in node)
        return node["gpu_us"]

    def box(label: str, us: float, parent_us: float, inner: str, color: str, href: str | None = None) -> str:
        width = 100 * us / (parent_us or 1.0)
        title = f"{label}: {us:,.1f} us, {100 * us / total:.1f}% of GPU time"
        text = html.escape(label) if 100 * us / total >= MIN_LABEL / 4 and width >= MIN_LABEL else ""
        head = (f'<a class="lab" href="{href}" style="background:{color}" title="{html.escape(title)}">{text}</a>'
                if href else f'<div class="lab" style="background:{color}" title="{html.escape(title)}">{text}</div>')
        return f'<div class="node" style="width:{width:.3f}%">{head}{inner}</div>'

    def sort(items, key):
        return sorted(items, key=key, reverse=True)

    modules = []
    for module, ops in sort(tree.items(), lambda kv: us_of(kv[1])):
        m_us = us_of(ops)
        op_boxes = []
        for op, kernels in sort(ops.items(), lambda kv: us_of(kv[1])):
            o_us = us_of(kernels)
            k_boxes = "".join(box(r["short"], r["gpu_us"], o_us, "", _COLOR[layer_of(r)], f"#k{r.get('rank')}")
                              for r in sort(kernels, lambda r: r["gpu_us"]))
            op_boxes.append(box(op, o_us, m_us, f'<div class="kids">{k_boxes}</div>', "#c9d6e8"))
        modules.append(box(module, m_us, total, f'<div class="kids">{"".join(op_boxes)}</div>', "#e3e8f0"))
    return (f'<h2>GPU time by {" → ".join(ICICLE_DEPTH)}</h2><p class="hint">Each box is as wide as its GPU time '
            f'(hover for the figures); a kernel\'s box, coloured by its layer, leads to its row below.</p>'
            f'<div class="ice">{"".join(modules)}</div>')


STYLE = """
.layers{display:flex;height:26px;border:1px solid #ccc;border-radius:3px;overflow:hidden;max-width:1100px}
.seg{color:#fff;font-size:12px;line-height:26px;padding-left:4px;white-space:nowrap;overflow:hidden}
.keys .key{margin-right:14px;font-size:13px}.keys i{display:inline-block;width:10px;height:10px;margin-right:4px}
.ice{display:flex;max-width:1100px;border:1px solid #ccc}
.node{display:flex;flex-direction:column;min-width:0;box-sizing:border-box;border-right:1px solid #fff}
.kids{display:flex;min-width:0}
.lab{display:block;height:22px;line-height:22px;font-size:11px;padding:0 3px;overflow:hidden;white-space:nowrap;
text-overflow:ellipsis;color:#111;text-decoration:none;border-bottom:1px solid #fff}
a.lab{color:#fff}.hint{color:#666;font-size:13px}
"""
