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
