"""The Python layer of a walk: modules, classes, defs and what they call, down to the bridges into C++."""
from __future__ import annotations

from .. import facts as q
from ...pytorch.plumbing import PLUMBING_OPS
from ...pytorch.python_rules import ENTRY_METHODS
from ..conditions import Guards
from ..model import Condition, Hop
from ..python import bases_text, bridged_entries, find_method, follow_python, module_of, self_method
from .step import Step
from .text import bridge_detail, dotted

MAX_OVERLOADS = 4  # native entries shown per bridged name


class PythonWalk(Step):
    def boolean_dispatch(self, targets: list) -> None:
        """F.max_pool2d = boolean_dispatch(..., if_true=max_pool2d_with_indices, if_false=_max_pool2d): the object,
        at its assignment, then each branch def (the argument's value picks one at run time)."""
        module, _, name = targets[0].dispatch.rpartition(".")
        where = q.dispatch_assignment(self.con, module, name) or {"file": None, "line": None}
        hop = self.b.add(None, "python", "boolean_dispatch", targets[0].dispatch, where["file"], where["line"],
                       "boolean_dispatch: calls one of the defs below by the value of an argument (return_indices "
                       "for the max pools)")
        for target in targets:
            self.python_function(target.obj, hop, target.label)
        self.tails.tails_below()

    def python_class(self, cls: dict, parent: Hop | None = None, label: str | None = None) -> Hop:
        hop = self.b.add(parent, "python", "class", label or cls["qualified_name"], cls["file"], cls["line"],
                       f"class {cls['name']}{bases_text(self.con, cls)}")
        found = [(m, find_method(self.con, cls, m)) for m in ENTRY_METHODS]
        method, forward = next(((m, d) for m, d in found if d is not None), (None, None))
        if forward is None:
            self.b.add(hop, "python", "note", f"no {'(), '.join(ENTRY_METHODS)}() in this class or its bases",
                     absent=True)
            return hop
        fwd = self.b.add(hop, "python", method if method == "forward" else "method", forward["qualified_name"],
                       forward["file"], forward["line"], f"def {method}{forward.get('signature') or '(...)'}")
        self.python_body(forward, fwd, python_depth=2)
        return hop

    def python_function(self, fn: dict, parent: Hop | None = None, label: str | None = None) -> Hop:
        hop = self.b.add(parent, "python", "function", label or fn["qualified_name"], fn["file"], fn["line"],
                       f"def {fn['name']}{fn.get('signature') or '(...)'}")
        composed = q.python_compositions_of(self.con, fn["qualified_name"], fn["file"])
        if composed:
            hop.detail += f"; composed in Python of {composed[0]['ops']} ops: {composed[0]['op_names']}"
        self.python_body(fn, hop, python_depth=2)
        return hop

    def python_body(self, fn: dict, parent: Hop, python_depth: int) -> None:
        """A Python def's bridges into C++ and the defs and bindings it calls, in source order (the first call of
        an op is walked in full, later ones point up: torch.norm's default `torch.linalg.vector_norm(...)` at
        functional.py:1616 comes before its `_VF.norm(...)` at :1645, whichever way each is found)."""
        bridges = q.python_bridges_in(self.con, fn["qualified_name"], fn["file"])
        # F.embedding's `if max_norm is not None:` (max_norm=None): the renorm under it is not the default path
        guards = self.conditions.python(fn)
        seen: set[tuple[int, str]] = set()
        steps: list[tuple[int, int, dict]] = []  # (line, 0 for a bridge row / 1 for a call, the row)
        for b in bridges:
            if b["op"] not in PLUMBING_OPS and (b["line"], b["op"]) not in seen:
                seen.add((b["line"], b["op"]))
                steps.append((b["line"], 0, b))
        if python_depth > 0:
            steps += [(call["line"], 1, call) for call in q.python_calls_in(self.con, fn["qualified_name"], fn["file"])
                      if (call["line"], call["callee"]) not in seen]  # not bridges
        steps.sort(key=lambda step: step[:2])
        for _, is_call, row in steps:
            if self.b.full():
                return
            if not is_call:
                with self.b.noted(parent, guards.at(row["line"])):
                    self.bridge(row, parent)
            else:
                self.python_call(fn, row, parent, guards, python_depth)

    def python_call(self, fn: dict, call: dict, parent: Hop, guards: Guards, python_depth: int) -> None:
        """A call in a Python def: into another def (walked) or a binding found through names (a bridge)."""
        if call["qualifier"] in ("self", "cls"):
            target = self_method(self.con, fn, call["callee"])
        else:
            target = follow_python(self.con, module_of(self.con, fn), call["qualifier"], call["callee"])
        if target is None:
            return
        kind, obj = target
        mark = len(self.trace.hops)
        with self.b.noted(parent, guards.at(call["line"])):
            if kind == "def" and obj["qualified_name"] != fn["qualified_name"]:
                hop = self.b.add(parent, "python", "calls", obj["qualified_name"], obj["file"], obj["line"],
                               f"{dotted(call)}(...) at {call['file']}:{call['line']}")
                self.python_body(obj, hop, python_depth - 1)
                self.b.prune(mark + 1, keep_if={"bridge"}) or self.b.prune(mark, keep_if={"bridge"})
            elif kind == "bridge" and obj.get("alias_file"):
                # torch.linalg.vector_norm(...): the hop is the assignment that names the binding, called here
                hop = self.bridge({**obj, "file": obj["alias_file"], "line": obj["alias_line"]}, parent)
                hop.called_at = f"{call['file']}:{call['line']}"
                hop.detail += f" (its Python name is assigned here; called at {hop.called_at})"
            elif kind == "bridge":
                self.bridge({**obj, "file": call["file"], "line": call["line"]}, parent)

    def bridge(self, b: dict, parent: Hop) -> Hop:
        hop = self.b.add(parent, "bridge", b["kind"], b["text"], b["file"], b["line"], bridge_detail(b))
        entries = bridged_entries(self.con, b)
        if not entries and b["kind"] == "tensor_method":
            self.b.truncate(hop.id)  # x.dim(), x.size(): a method of the Python object, not an op
            return hop
        if not entries:
            self.b.add(hop, "native", "note", f"no native_functions.yaml entry named {b['op']}", absent=True)
        call = self.build.call
        unfit = dict(call.bridge_unfit) if call is not None else {}
        if call is not None and parent.parent is None:  # the binding a traced alias names (`conv2d =
            # _add_docstr(torch.conv2d, ...)`): the call's own values fit its overloads or not (call.py bind)
            unfit.update({(b["file"], b["line"], schema): why for schema, why in call.unfit.items()})
        # the overloads the values fit walked first: what they share (a helper both reach) is shown with the
        # values of the one the call takes
        entries = sorted(entries, key=lambda e: (b["file"], b["line"], e["schema"]) in unfit)
        for entry in self.b.capped(entries, MAX_OVERLOADS, "overloads", hop):
            native = self.ops.native(entry, hop)
            why = unfit.get((b["file"], b["line"], entry["schema"]))
            if why is not None and native is not None:  # the values this bridge passes do not fit the overload
                native.conditions.append(Condition("overload", why[0], why[1], why[2], assumed=False))
        return hop
