"""Two indexes side by side (`opindex diff A B [NAME ...]`, `Index.diff`), and a fork against its upstream from the
fork alone (`opindex diff --fork FORK`, `Index.fork_report`).

The diff reads each index with diff/facts.py and compares plain records: the registries (registry.py), the
C++/CUDA side (code.py), one op's two main chains (chains.py, over Trace objects the library made); a fork report
reads one index (fork.py). Results are plain data: to_dict is the JSON shape of docs/diff.md; render.py writes
text and Markdown.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from . import chains, code, facts, fork, registry

JSON_VERSION = 1  # of Diff.to_dict's and ForkReport.to_dict's shapes (docs/diff.md)


def side(path, meta: dict) -> dict:
    return {"index": str(path), "checkout": meta.get("checkout_root"), "pytorch_version": meta.get("pytorch_version")}


@dataclass
class Diff:
    a: dict  # side(): index, checkout, pytorch_version
    b: dict
    device: str
    names: list[str]
    ops: dict  # registry.native_diff
    derivatives: dict  # registry.derivatives_diff
    code: dict | None = None  # code.code_diff (the whole index; None with names)
    op_chains: list[dict] = field(default_factory=list)  # one per name: op_chain()
    notes: list[str] = field(default_factory=list)  # what was not compared, and why

    @property
    def differences(self) -> bool:
        """Whether anything differs (the command exits 0 when it does, 1 when not)."""
        registry_part = any(self.ops[k] for k in ("added", "removed", "renamed", "changed")) or any(
            self.derivatives[k] for k in ("added", "removed", "changed"))
        code_part = self.code is not None and any(
            v for part in self.code.values() for k, v in part.items() if k != "content_compared")
        chain_part = any(s["status"] != "same" for c in self.op_chains for s in c["steps"]) or any(
            c["device_code"]["only_a"] or c["device_code"]["only_b"] for c in self.op_chains)
        return registry_part or code_part or chain_part

    def to_dict(self) -> dict:
        return {"version": JSON_VERSION, "a": self.a, "b": self.b, "device": self.device, "names": self.names,
                "differences": self.differences, "ops": self.ops, "derivatives": self.derivatives,
                "code": self.code, "op_chains": self.op_chains, "notes": self.notes}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_text(self, limit: int = 10, width: int | None = None) -> str:
        from .render import diff_text
        return diff_text(self, limit=limit, width=width)

    def to_markdown(self, limit: int = 0) -> str:
        from .render import diff_markdown
        return diff_markdown(self, limit=limit)


@dataclass
class ForkReport:
    fork: dict  # side()
    names: list[str]
    macros: list[dict]  # [{name, source}]
    branches: dict  # {fork, upstream, unknown}: [{file, line, end_line, condition, caller}]
    folders: list[dict]  # [{folder, files}]
    sites: dict  # {fork, upstream}: {registration, kernel, launch, library}: [{name, file, line, caller}]

    @property
    def differences(self) -> bool:
        return bool(self.branches["fork"] or self.branches["upstream"] or self.folders)

    def to_dict(self) -> dict:
        return {"version": JSON_VERSION, "fork": self.fork, "names": self.names, "differences": self.differences,
                "macros": self.macros, "branches": self.branches, "folders": self.folders, "sites": self.sites}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_text(self, limit: int = 10, width: int | None = None) -> str:
        from .render import fork_text
        return fork_text(self, limit=limit, width=width)

    def to_markdown(self, limit: int = 0) -> str:
        from .render import fork_markdown
        return fork_markdown(self, limit=limit)


def compare(con_a, con_b, side_a: dict, side_b: dict, *, device: str = "cuda", traces=()) -> Diff:
    """The diff of two open indexes. `traces`: (name, trace of a, trace of b) for each op asked; without any, the
    whole registries and the whole C++/CUDA side."""
    if not traces:
        diff = Diff(side_a, side_b, device, [],
                    registry.native_diff(facts.native_entries(con_a), facts.native_entries(con_b)),
                    registry.derivatives_diff(facts.derivative_entries(con_a), facts.derivative_entries(con_b)),
                    code.code_diff(con_a, con_b, side_a["checkout"], side_b["checkout"]))
        if not diff.code["kernels"]["content_compared"]:
            diff.notes.append("kernel bodies not compared (a checkout is not readable here): renames are matched "
                              "by call position only")
        return diff
    wanted = [chains.chain_ops(ta, tb) for _, ta, tb in traces]  # (base names, full names) of each op's entries
    all_names = set().union(*(names for names, _ in wanted))
    all_full = set().union(*(full for _, full in wanted))
    entries_a, entries_b = facts.native_entries(con_a, all_names), facts.native_entries(con_b, all_names)
    derivs_a, derivs_b = facts.derivative_entries(con_a, all_full), facts.derivative_entries(con_b, all_full)
    per_op = [op_chain(name, ta, tb, registry.native_diff(entries_a, entries_b, names),
                       registry.derivatives_diff(derivs_a, derivs_b, full))
              for (name, ta, tb), (names, full) in zip(traces, wanted)]
    return Diff(side_a, side_b, device, [n for n, _, _ in traces], registry.native_diff(entries_a, entries_b),
                registry.derivatives_diff(derivs_a, derivs_b), None, per_op)


def op_chain(name: str, ta, tb, ops: dict, derivatives: dict) -> dict:
    """One op's diff: its two main chains aligned (steps), the device code each side runs, its registry entries
    and backward formulas."""
    return {"query": name, "a_message": "" if ta.hops else ta.message, "b_message": "" if tb.hops else tb.message,
            "steps": chains.steps(ta, tb), "device_code": chains.device_code(ta, tb), "ops": ops,
            "derivatives": derivatives,
            "truncated": {k: t.truncated for k, t in (("a", ta), ("b", tb)) if t.truncated}}


def fork_report(con, fork_side: dict, required: dict, *, macros=(), traces=()) -> ForkReport:
    """What the fork at `con` changes against upstream; with `traces` ((name, trace) pairs), only what lies in the
    files those traces reach."""
    files = {h.file for _, t in traces for h in t.hops if h.file} if traces else None
    found = fork.report(con, required, list(macros), files)
    return ForkReport(fork_side, [n for n, _ in traces], found["macros"], found["branches"], found["folders"],
                      found["sites"])
