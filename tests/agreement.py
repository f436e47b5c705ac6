"""SQL and trace agree: for each op, the kernel definitions `opindex trace` walks under its dispatch rows are the
rows the op_kernels view gives (both read op_kernel_links). Shared by tests/test_links.py and benchmarks/links.py."""
from __future__ import annotations


def trace_kernels(ix, full_name: str) -> set[tuple]:
    """(kernel, file, line) of the definitions the trace shows right under the op's own dispatch rows."""
    # every device's rows, no hop cap: the cap may stop the walk before the op's last dispatch row (mm.out's
    # sparse CSR kernel lies past the 5000th hop of an all-device walk)
    t = ix.trace(f"aten::{full_name}", device="all", depth=0, max_hops=0)
    hops = {h.id: h for h in t.hops}
    # the op's entry wherever the walk showed it (another overload's walk may reach it first); not other overloads
    roots = {h.id for h in t.hops if h.layer == "native" and h.kind == "entry" and h.name == f"aten::{full_name}"}
    own = roots | {h.id for h in t.hops if h.kind == "structured_delegate" and h.parent in roots}
    out = set()
    for h in t.hops:
        parent = hops.get(h.parent)
        if parent is None or parent.layer != "dispatch" or parent.parent not in own:
            continue
        kernel = parent.name.split(": ", 1)[1]
        if h.layer in ("cpp", "cuda") and (not h.absent or h.kind == "raises"):  # a definition that only raises
            out.add((kernel, h.file, h.line))                                    # is still the one named
        elif h.absent or h.layer == "codegen":  # no definition: none found, or generated (ufunc_add_CUDA)
            out.add((kernel, None, None))
    return out


def view_kernels(ix, full_name: str) -> set[tuple]:
    """The same from SQL; an op with a structured_delegate reads the delegate's rows, as the trace does."""
    entry = ix.rows("SELECT structured_delegate FROM native_functions WHERE full_name = :n", {"n": full_name})[0]
    holder = entry["structured_delegate"] or full_name
    return {(r["kernel"], r["file"], r["line"]) for r in ix.rows(
        "SELECT kernel, file, line FROM op_kernels WHERE function = :n", {"n": holder})}


def disagreements(ix, full_names) -> list[tuple[str, set, set]]:
    out = []
    for name in full_names:
        a, b = trace_kernels(ix, name), view_kernels(ix, name)
        if a != b:
            out.append((name, a, b))
    return out
