"""The upward walk: a Trace built bottom-up, from a __global__ kernel, a kernel function or a stub up to the
registrations, the stub's callers, the native functions whose kernels reach them, and their Python surfaces. It
keeps its hops with the same TraceBuilder as the downward walk (trace/builder.py)."""
from __future__ import annotations

from ..pytorch.devices import BY_OPTION, dispatch_keys, registration_devices
from ..pytorch.python_rules import binding_namespace
from . import facts as q
from .builder import TraceBuilder
from .model import Hop, Trace
from .walk.text import cpp_detail
from .python import bridged_entries
from .upsteps import UpSteps, dispatch_key_order, last

MAX_CALLERS = 6  # the default of Trace.limit (--limit): callers, launches, registrations walked per step
MAX_BRIDGES = 8


class UpWalker:
    def __init__(self, con, trace: Trace, backward: bool = False):
        self.con, self.trace, self.device = con, trace, trace.device
        self.b = TraceBuilder(trace)
        self.steps = UpSteps(con)  # what counts as a step up: shared with the profile (trace/upsteps.py)

    def start(self, targets: list) -> None:
        """Walk up from the looked-up targets (opindex.trace.targets.Target)."""
        for target in targets:
            if target.kind == "global_kernel":
                self.global_kernel(target.obj)
            elif target.kind == "stub":
                self.stub_up(target.label, None, 4)
            elif target.kind in ("native", "python_binding", "by_name"):  # an op: its Python surfaces and callers
                if not target.obj["is_out"] or target.kind == "native":
                    self.native_up(target.obj["id"], None)
            else:
                self.function(target.obj)

    def global_kernel(self, k: dict, parent: Hop | None = None) -> Hop:
        hop = self.b.add(parent, "cuda", "global_kernel", f"__global__ {k['qualified_name']}", k["file"], k["line"],
                       cpp_detail(k), kernel=k["name"])
        launches = q.launches_of(self.con, k["name"], k["file"])
        if not launches:
            self.b.add(hop, "cuda", "note", f"no <<<>>> launch of {k['name']} found", absent=True)
        for launch in self.fan_in(launches, hop, "launches", lambda x: (x["file"], x["line"])):
            lh = self.b.add(hop, "cuda", "launch", f"{launch['kernel']}<<<{launch['config'] or ''}>>>",
                          launch["file"], launch["line"], f"launched in {launch['caller'] or 'file scope'}",
                          kernel=launch["kernel"])
            self.up_function(launch["caller"], launch["file"], lh, budget=4, line=launch["line"])
        return hop

    # -- fan-in: every caller named, the first `limit` walked, the rest grouped by file --------------------------
    def fan_in(self, items: list[dict], parent: Hop, what: str, key, label=None, limit: int | None = None):
        """The distinct items (by `key`) to walk from `parent`, as the caller walks them: all of them up to
        Trace.limit (0: no limit); past it the first `limit`, then the rest grouped into one hop per file that names
        each one (and, for a function, the stubs it is registered for and the ops whose kernel it is), so nothing
        is dropped unsaid."""
        unique = list({key(x): x for x in reversed(items)}.values())[::-1]  # first occurrence of each, in order
        limit = self.trace.limit if limit is None else limit
        if not limit or len(unique) <= limit:
            yield from unique
            return
        walked, rest = unique[:limit], unique[limit:]
        yield from walked
        self.group_by_file(rest, parent, f"more {what}", label)
        self.trace.cut("callers", self.trace.limit, "callers, launches and registrations of one hop past --limit are "
                                                    "grouped by file, named but not walked (--limit N walks N, "
                                                    "--limit 0 every one)")
        return walked

    def group_by_file(self, items: list[dict], parent: Hop, what: str, label=None) -> None:
        name_of = label or (lambda x: self.describe(x.get("caller") or x.get("kernel") or ""))
        by_file: dict[str, list[dict]] = {}
        for x in items:
            by_file.setdefault(x["file"], []).append(x)
        for file, group in sorted(by_file.items(), key=lambda fg: (-len(fg[1]), fg[0])):
            names = list(dict.fromkeys(name_of(x) for x in group))
            self.b.add(parent, parent.layer if parent.layer in ("cpp", "cuda", "stub") else "cpp", "grouped",
                     f"{len(group)} {what} in {file}", file, group[0]["line"],
                     "not walked (--limit): " + ", ".join(names))

    def describe(self, qualified_name: str) -> str:
        """A caller, with the stubs it is registered for and the ops whose kernel it is (by op, not only by file)."""
        name = last(qualified_name)
        stubs = sorted({r["stub"] for r in self.steps.registrations([name], None)})
        ops = list(dict.fromkeys(r["full_name"] for r in self.steps.dispatch_rows([name])))
        tags = [f"registered for {', '.join(stubs)}"] * bool(stubs) + [f"kernel of {', '.join(ops[:3])}"] * bool(ops)
        return f"{qualified_name} ({'; '.join(tags)})" if tags else qualified_name

    def function(self, d: dict, parent: Hop | None = None) -> Hop:
        return self.up_function(d["qualified_name"], d["file"], parent, budget=4)

    def up_function(self, qualified_name: str, file: str, parent: Hop | None, budget: int,
                    line: int | None = None) -> Hop | None:
        """Up from the definition of `qualified_name` in `file` (with `line`, a call's: the overload that holds
        it)."""
        if not qualified_name or self.b.full():
            return None
        d = q.enclosing_definition(self.con, qualified_name, file, line)
        if d is None:
            return self.b.add(parent, "cpp", "note", f"{qualified_name} (no definition indexed)", file, None,
                            absent=True)
        key = (qualified_name, file, d["line"])
        hop = self.b.add(parent, "cpp", d["kind"], qualified_name, d["file"], d["line"], cpp_detail(d))
        if key in self.b.seen_cpp:
            return self.b.repeat(hop)
        self.b.seen_cpp.add(key)
        names = list(dict.fromkeys((d["name"], last(qualified_name))))
        regs = self._device_own(self.steps.registrations(names, d["file"]), "device",
                                registration_devices)
        rows = self._device_own(self.steps.kernel_of(self.steps.dispatch_rows(names), d["file"], d["line"]),
                                "dispatch_key", lambda o: dispatch_key_order(dispatch_keys(o)))
        for r in self.fan_in(regs, hop, "registrations", lambda x: x["id"],
                             lambda x: f"{x['device']}: {x['stub']} ({x['macro']})"):
            rh = self.b.add(hop, "registration", r["macro"], f"{r['device']}: {r['stub']}", r["file"], r["line"],
                          f"{r['macro']}({r['stub']}, {r['kernel']})")
            self.stub_up(r["stub"], rh, budget - 1, device=r["device"])
        for r in self.fan_in(rows, hop, "dispatch rows", lambda x: x["id"],
                             lambda x: f"{x['dispatch_key']}: {x['kernel']} (aten::{x['full_name']})"):
            dh = self.b.add(hop, "dispatch", r["dispatch_key"], f"{r['dispatch_key']}: {r['kernel']}", r["file"],
                          r["line"], f"kernel of aten::{r['full_name']}")
            self.native_up(r["native_function_id"], dh)
        if budget > 0:
            walk = self.steps.callers(d, ends_here=bool(regs or rows))
            for c in self.fan_in(walk, hop, "callers", lambda x: (x["caller"], x["file"])):
                self.up_function(c["caller"], c["file"], hop, budget - 1, line=c["line"])
        return hop

    def _device_own(self, found: list[dict], key: str, keys_of) -> list[dict]:
        """Of the registrations or dispatch rows naming a function several devices share (structured_exp_out is
        the kernel of `CPU, CUDA: exp_out`), those of the traced device (and the composites): a CUDA kernel's way up
        is no CPU row. A function no row of the device names keeps them all (another device's kernel, traced)."""
        if self.trace.device == "all" or self.trace.device not in BY_OPTION:
            return found
        own = set(keys_of(self.trace.device))
        mine = [r for r in found if r[key] in own]
        return mine or found

    def stub_up(self, stub: str, parent: Hop | None, budget: int, device: str | None = None) -> Hop:
        hop = self.b.add(parent, "stub", "stub", stub)
        if stub in self.b.seen_stub:
            return self.b.repeat(hop)
        self.b.seen_stub.add(stub)
        decl = q.stub_declarations(self.con, stub)
        if decl:
            hop.file, hop.line = decl[0]["file"], decl[0]["line"]
            hop.detail = f"DECLARE_DISPATCH({decl[0]['fn_type'] or ''}, {stub})" if decl[0]["action"] == "declare" \
                else f"DEFINE_DISPATCH({stub})"
        if parent is None:  # started from the stub: show where it runs on each device
            for r in q.registrations(self.con, stub, "all"):
                self.b.add(hop, "registration", r["macro"], f"{r['device']}: {r['kernel'] or 'no kernel'}",
                         r["file"], r["line"], f"{r['macro']}({stub}, {r['kernel'] or ''})")
        every = self.steps.stub_calls(stub, None)
        callers = self.steps.stub_calls(stub, device)
        if not callers:
            why = f" for {device} (called with {', '.join(sorted({c['device_arg'] for c in every}))} only)" \
                if every else ""
            self.b.add(hop, "cpp", "note", f"no call of {stub} found{why}", absent=True)
        for c in self.fan_in(callers, hop, "stub calls", lambda x: (x["caller"], x["file"], x["line"])):
            text, detail = (f"{c['via']}(..., {stub}, ...)", f"passes {stub} to {c['via']}, called in {c['caller']}") \
                if c["via"] else (f"{stub}({c['device_arg'] or ''}, ...)", f"called in {c['caller']}")
            ch = self.b.add(hop, "stub", "stub_call", text, c["file"], c["line"], detail)
            self.up_function(c["caller"], c["file"], ch, budget, line=c["line"])
        return hop

    def op_callers(self, entry: dict, parent: Hop, budget: int) -> None:
        """Composite kernels that call this op through at:: (layer_norm calls at::native_layer_norm)."""
        if budget <= 0:
            return
        names = (entry["name"], f"{entry['name']}_symint")
        callers = {}  # one per definition holding a call (overloads of one name apart)
        for c in q.composite_callers(self.con, names):
            d = q.enclosing_definition(self.con, c["caller"], c["file"], c["line"])
            if d is not None:
                callers.setdefault((d["qualified_name"], d["file"], d["line"]), {**c, "definition": d})
        for c in self.fan_in(list(callers.values()), parent, "composite callers",
                             lambda x: (x["caller"], x["file"], x["definition"]["line"])):
            d = c["definition"]
            if (d["qualified_name"], d["file"], d["line"]) in self.b.seen_cpp:
                continue
            rows = [r for r in self.steps.kernel_of(self.steps.dispatch_rows([d["name"]]), d["file"], d["line"])
                    if r["dispatch_key"] in q.COMPOSITE_KEYS]
            if not rows:  # a helper of a composite kernel (the static two-argument log_softmax SoftMax.cpp:508
                # calls at::_log_softmax for the public one at :517): up through its callers
                if budget > 1:
                    self.up_function(d["qualified_name"], d["file"], parent, budget - 1, line=d["line"])
                continue
            self.b.seen_cpp.add((d["qualified_name"], d["file"], d["line"]))
            # one hop per caller, the ops it is the kernel of below it (a caller is never listed twice)
            ops = ", ".join(dict.fromkeys(f"aten::{r['full_name']}" for r in rows))
            ch = self.b.add(parent, "cpp", "op_caller", d["qualified_name"], d["file"], d["line"],
                          f"{rows[0]['dispatch_key']} kernel of {ops} calls at::{entry['name']}")
            for r in rows:
                self.native_up(r["native_function_id"], ch, budget - 1)

    def native_up(self, native_function_id: int, parent: Hop, budget: int = 2) -> None:
        entry = q.native_by_id(self.con, native_function_id)
        hop = self.b.add(parent, "native", "entry", f"aten::{entry['full_name']}", entry["file"], entry["line"],
                       entry["schema"])
        if entry["id"] in self.b.seen_native:
            self.b.repeat(hop)
            return
        self.b.seen_native.add(entry["id"])
        targets = [entry] + q.delegating_entries(self.con, entry["full_name"])
        for e in targets[1:]:
            self.b.add(hop, "native", "structured_delegate", f"aten::{e['full_name']}", e["file"], e["line"],
                     f"structured_delegate: {entry['full_name']}")
        self.python_surfaces(targets, hop)
        named = set()  # add.Tensor delegates to add.out: the callers of at::add are walked once
        for e in targets:
            if e["name"] not in named:
                named.add(e["name"])
                self.op_callers(e, hop, budget)

    def python_surfaces(self, entries: list[dict], parent: Hop) -> None:
        """Bindings the entries' variants create (torch.x, Tensor.x) and the Python code that calls them."""
        seen: set[str] = set()
        for entry in entries:
            ns = binding_namespace(entry["python_module"])
            for variant, name in (("function", f"{ns}.{entry['name']}"), ("method", f"Tensor.{entry['name']}")):
                if variant in entry["variants"] and name not in seen and not entry["is_out"]:
                    seen.add(name)
                    self.b.add(parent, "python", "binding", name, entry["file"], entry["line"],
                             f"bound from variants: {variant} of {entry['full_name']}")
        every = []
        for entry in entries:
            bridges = [b for b in q.bridges_to(self.con, entry["name"]) if entry in bridged_entries(self.con, b)]
            bridges.sort(key=lambda b: (not b["file"].startswith("torch/nn/"), b["kind"] == "tensor_method",
                                        b["file"]))
            every += [b for b in bridges if f"{b['caller']}:{b['text']}" not in seen]
        # Python callers are leaves (nothing is walked from them): more of them are listed than of callers
        limit = self.trace.limit and max(self.trace.limit, MAX_BRIDGES)
        for b in self.fan_in(every, parent, "Python callers", lambda b: (b["caller"], b["text"]),
                             lambda b: f"{b['caller'] or b['file']}: {b['text']}", limit=limit):
            bh = self.b.add(parent, "bridge", b["kind"], f"{b['caller'] or b['file']}: {b['text']}", b["file"],
                            b["line"], "Python caller")
            if (b["caller"] or "").startswith("torch.nn.functional."):
                self.module_surfaces(b["caller"].rpartition(".")[2], bh)

    def module_surfaces(self, functional: str, parent: Hop) -> None:
        """The nn.Modules whose forward calls a functional (nn.LayerNorm.forward calls F.layer_norm): the surface
        most code reaches the op through, one level above the functional."""
        calls = q.module_forwards_calling(self.con, functional)
        for c in self.fan_in(calls, parent, "nn.Module callers", lambda c: c["caller"]):
            module = c["caller"].removesuffix(".forward")
            self.b.add(parent, "python", "module", module, c["file"], c["line"],
                       f"{module.rpartition('.')[2]}.forward calls F.{functional}")

