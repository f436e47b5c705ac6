"""The dtypes a kernel's AT_DISPATCH macro covers, where the source says: the AT_DISPATCH sites in the dispatch
row's kernel definition, else in the functions its dispatch stub registers for the key's device. The family is the
macro's name after AT_DISPATCH_ (FLOATING_TYPES_AND2: float, double and the two types the call names)."""
from __future__ import annotations

from ..pytorch.dispatch_keys import split


class Dtypes:
    def __init__(self, kernel_rows: list[dict], stub_rows: list[dict]):
        self.own: dict[int, list[str]] = {}
        for r in kernel_rows:
            _add(self.own.setdefault(r["dispatch_id"], []), r["dtypes"])
        self.stub: dict[tuple[int, str], list[str]] = {}
        for r in stub_rows:
            _add(self.stub.setdefault((r["dispatch_id"], r["device"]), []), r["dtypes"])

    def of(self, kernel, key: str) -> str | None:
        """Comma-joined dtype families of a dispatch row's kernel on `key`'s device; None when the source does not
        say (no AT_DISPATCH found, or the kernel is no dispatch row)."""
        if kernel.dispatch_id is None:
            return None
        found = self.own.get(kernel.dispatch_id)
        if not found:
            parts = split(key)
            found = self.stub.get((kernel.dispatch_id, parts[1] if parts else key))
        return ", ".join(found) if found else None


def _add(into: list[str], family: str | None) -> None:
    if family and family not in into:
        into.append(family)
