"""Views for the common cross-layer joins (plain SQL that runs on SQLite and PostgreSQL)."""
from __future__ import annotations

VIEWS: dict[str, str] = {}
VIEW_DOCS: dict[str, str] = {}
