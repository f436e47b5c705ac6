"""Effective coverage of CompositeImplicitAutograd ops: a backend inherits such an op for free when every op its
kernel calls is covered on that backend, through their own composites too (transitively). What it lacks are the
ops at the bottom of that walk that the backend has no kernel for.

The calls are read from the kernel's C++ body (calls inside the definition a CIA dispatch row names): `at::x(...)`,
`at::_ops::x::call(...)`, a bare `x(...)` in namespace at, and method calls `t.x(...)`, wherever x names an op
(`x_symint`, `x_out` and `x_outf` name x). A
call names an op, not an overload: a name counts as covered when one of its overloads (its out= overloads for
`x_out(...)` / `x_outf(...)`) is, so the answer is optimistic where overloads differ per backend.
"""
from __future__ import annotations

from .ops import Op
from .status import COVERED

OP_QUALIFIERS = ("at", "at::_ops", "")


def called_ops(calls: list[dict], ops: dict[str, Op]) -> dict[str, set[str]]:
    """native_function_id of a composite entry -> the aten op names (base) its kernel calls."""
    names = {op.base for op in ops.values() if op.namespace == "aten"}
    out: dict[int, set[str]] = {}
    for c in calls:
        callee = c["callee"]
        if not (c["is_method"] or c["qualifier"] in OP_QUALIFIERS):
            continue
        base = callee.removesuffix("_symint")  # at::native_layer_norm_symint(...): the SymInt API of the op
        for name in (base, base.removesuffix("_outf"), base.removesuffix("_out")):
            if name in names:
                out.setdefault(c["native_function_id"], set()).add(name)
                break
    return out


class Effective:
    """Per backend key: which composite ops a backend inherits, and what each lacks (memoised, cycle-safe)."""

    def __init__(self, ops: dict[str, Op], calls_by_entry: dict[int, set[str]], status_of):
        self.ops = ops
        self.calls = calls_by_entry
        self.status_of = status_of  # (op, key) -> Status
        self.by_base: dict[str, list[Op]] = {}
        for op in ops.values():
            if op.namespace == "aten":
                self.by_base.setdefault(op.base, []).append(op)
        self._lacks: dict[tuple[str, str], frozenset[str]] = {}

    def lacks(self, op: Op, key: str, visiting: frozenset = frozenset()) -> frozenset[str]:
        """The op names, reached through `op`'s composite kernel, that `key` has no kernel for."""
        memo = self._lacks.get((op.name, key))
        if memo is not None:
            return memo
        out: set[str] = set()
        entry_id = op.entry["id"] if op.entry else None
        for name in sorted(self.calls.get(entry_id, ())):
            if name == op.base or name in visiting:
                continue
            out |= self._name_lacks(name, key, visiting | {op.base})
        found = frozenset(out)
        self._lacks[(op.name, key)] = found
        return found

    def _name_lacks(self, name: str, key: str, visiting: frozenset) -> set[str]:
        best: set[str] | None = None
        for other in self.by_base.get(name, ()):
            s = self.status_of(other, key).status
            if s not in COVERED:
                continue
            if s != "composite_implicit":
                return set()
            lacking = set(self.lacks(other, key, visiting))
            if not lacking:
                return set()
            best = lacking if best is None or len(lacking) < len(best) else best
        return {name} if best is None else best
