"""Typed records shared by the layers, each carrying where it came from.

Extractors emit plain tuples (fast to pickle from worker processes); these records are what the library hands to
users and what errors carry. They are frozen: a record is a fact about one checkout at one build.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    file: str  # relative to the checkout root
    line: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class OpindexError(Exception):
    """An error the user can act on; the CLI prints it as one line and exits non-zero."""


class SourceError(OpindexError):
    """Bad input at a known place."""

    def __init__(self, location: Location | str, message: str):
        self.location = location
        self.message = message
        super().__init__(f"{location}: {message}")


@dataclass(frozen=True)
class Symbol:
    """A definition (C++/CUDA function, kernel, structured kernel, class; Python class or def)."""
    name: str
    qualified_name: str
    kind: str
    language: str
    location: Location
    signature: str | None = None


@dataclass(frozen=True)
class DispatchRow:
    dispatch_key: str
    kernel: str
    implicit: bool
    location: Location


@dataclass(frozen=True)
class NativeFunction:
    """A native_functions.yaml entry with its dispatch rows."""
    full_name: str
    schema: str
    variants: str
    structured: bool
    structured_delegate: str | None
    location: Location
    dispatch: tuple[DispatchRow, ...] = ()

    def rows(self) -> list[dict]:
        """One flat row per dispatch row (one with empty dispatch columns when there is none): what `opindex op`
        prints, for a notebook too."""
        base = {"function": self.full_name, "structured": self.structured,
                "structured_delegate": self.structured_delegate, "variants": self.variants, "entry": str(self.location)}
        return [{**base, "dispatch_key": d.dispatch_key, "kernel": d.kernel, "implicit": d.implicit}
                for d in self.dispatch] or [{**base, "dispatch_key": None, "kernel": None, "implicit": None}]


@dataclass(frozen=True)
class Registration:
    stub: str
    kernel: str | None
    macro: str
    device: str
    location: Location


@dataclass(frozen=True)
class CallSite:
    caller: str
    callee: str
    qualifier: str
    location: Location


@dataclass(frozen=True)
class Stub:
    """A dispatch stub: where it is declared/defined, who calls it, what each device registers."""
    name: str
    declarations: tuple[Location, ...]
    callers: tuple[CallSite, ...]
    registrations: tuple[Registration, ...]

    def rows(self) -> list[dict]:
        """Declarations, call sites and registrations as flat rows: what `opindex stub` prints."""
        rows = [{"what": "declared/defined", "device": None, "name": self.name, "file": d.file, "line": d.line}
                for d in self.declarations]
        rows += [{"what": "called", "device": c.qualifier, "name": c.caller, "file": c.location.file,
                  "line": c.location.line} for c in self.callers]
        rows += [{"what": f"registered ({r.macro})", "device": r.device, "name": r.kernel, "file": r.location.file,
                  "line": r.location.line} for r in self.registrations]
        return rows
