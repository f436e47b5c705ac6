"""The side branches of an op: its backward formulas, decompositions, codegen and Python surfaces."""
from __future__ import annotations

from .. import facts as q
from ...pytorch.devices import IMPLICIT_KEYS
from ...pytorch.python_rules import binding_namespace
from ..model import Hop
from ..python import bridged_entries
from .step import Step
from .text import bridge_detail
from .ops import backward_ops


class TailWalk(Step):
    def tails_below(self) -> None:
        """Backward, decompositions and codegen of the ops a Python surface reaches directly (first showings)."""
        for h in list(self.trace.hops):
            parent = self.trace.hops[h.parent] if h.parent is not None else None
            if (h.layer == "native" and h.kind == "entry" and parent is not None and parent.layer == "bridge"
                    and h.id not in self.b.repeats):
                entry = q.native_by_full_name(self.con, h.name.removeprefix("aten::"))
                if entry:
                    self.tail(entry[0], h)

    def tail(self, entry: dict, hop) -> None:
        self.backward_of(entry, hop)
        self.decompositions(entry, hop)
        self.codegen(entry, hop)

    def backward_of(self, entry: dict, parent: Hop) -> None:
        ders = q.derivatives_of(self.con, entry)
        if not ders:
            self.b.add(parent, "backward", "note", f"no derivatives.yaml entry for {entry['full_name']}"
                     + (" (autograd through its composite kernel)" if is_composite(self.con, entry) else ""),
                     absent=True)
            return
        for der in ders:
            hop = self.b.add(parent, "backward", "derivative", f"derivatives.yaml: {der['full_name']}", der["file"],
                           der["line"], der["schema"])
            for f in q.formulas(self.con, der["id"]):
                label = "forward (JVP)" if f["is_forward"] else "grad"
                fh = self.b.add(hop, "backward", "formula", f"{f['inputs']}: {f['formula']}", f["file"], f["line"],
                              f"{label} formula" + (f" [{f['dispatch_key']}]" if f["dispatch_key"] != "Default"
                                                     else ""))
                if self.backward and not f["is_forward"]:
                    for op in self.b.capped(backward_ops(self.con, f["formula"]), 3, "ops of the formula", fh):
                        self.ops.native(op, fh, 0)

    def decompositions(self, entry: dict, parent: Hop) -> None:
        """Python decompositions, references and meta functions of the op (one hop per function)."""
        covered: dict[tuple, list[str]] = {}
        for d in q.decompositions_of(self.con, entry["name"]):
            if d["overload"] and entry["overload"] and d["overload"] not in (entry["overload"], "default"):
                continue
            covered.setdefault((d["kind"], d["function"], d["file"], d["line"]), []).append(
                f"aten.{d['op']}{'.' + d['overload'] if d['overload'] else ''}")
        for (kind, function, file, line), ops in covered.items():
            self.b.add(parent, "decomposition", kind, function, file, line, f"{kind} of {', '.join(ops)}")

    def codegen(self, entry: dict, parent: Hop) -> None:
        """Where the op's generated bindings come from (read these instead of building PyTorch)."""
        variants = entry["variants"]
        names = ["native_functions.py", "register_dispatch_key.py", "gen.py", "RegisterDispatchKey.cpp"]
        if "method" in variants:
            names.append("python_variable_methods.cpp")
        if "function" in variants:
            names.append("python_torch_functions.cpp" if not entry["python_module"]
                         else f"python_{entry['python_module']}_functions.cpp")
        if q.derivatives_of(self.con, entry):
            names += ["VariableType.cpp", "Functions.cpp", "gen_variable_type.py"]
        if entry["ufunc_inner_loop"]:
            names.append("ufunc.py")
        found = q.codegen_files(self.con, tuple(names))
        if not found:
            return
        head = self.b.add(parent, "codegen", "bindings", f"generated bindings of {entry['full_name']}",
                        detail="read these instead of building: the generators and the templates they fill")
        for f in found:
            what = "template" if f["layer"] == "codegen" else "generator"
            self.b.add(head, "codegen", what, f["path"], f["path"], 1, f"{what} for {entry['full_name']}")

    def surfaces(self, entry: dict, parent: Hop) -> None:
        """The Python code that reaches this op directly, and the bindings its variants create."""
        bridges = [b for b in q.bridges_to(self.con, entry["name"])
                   if entry in bridged_entries(self.con, b) or b["kind"] == "torch_ops"]
        # The public surfaces first (torch/nn), then the rest; a method call on a name is only a guess
        bridges.sort(key=lambda b: (not b["file"].startswith("torch/nn/"), b["kind"] == "tensor_method",
                                    b["file"].startswith(("functorch/benchmarks", "torch/testing")), b["file"]))
        unique = {(b["caller"], b["text"]): b for b in reversed(bridges)}
        bridges = [b for b in bridges if unique[(b["caller"], b["text"])] is b]
        ns = binding_namespace(entry["python_module"])
        bound = [f"{ns}.{entry['name']}"] * ("function" in entry["variants"]) + \
            [f"Tensor.{entry['name']}"] * ("method" in entry["variants"])
        if not bridges and not bound:
            return
        head = self.b.add(parent, "python", "surfaces", f"Python surfaces of {entry['full_name']}",
                        detail=f"bound as {', '.join(bound)}" if bound else "")
        for b in self.b.capped(bridges, 6, "Python callers", head):
            self.b.add(head, "python", "caller", f"{b['caller'] or b['file']} -> {b['text']}", b["file"], b["line"],
                     bridge_detail(b))


def is_composite(con, entry: dict) -> bool:
    keys = {r["dispatch_key"] for r in q.dispatch_rows(con, entry["id"])}
    return bool(keys & set(IMPLICIT_KEYS))
