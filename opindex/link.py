"""link: facts derived from the per-file facts, recomputed on every build (set-based SQL, no re-parsing)."""
from __future__ import annotations


def derive(con) -> None:
    """Nothing is materialised yet: the cross-layer joins are views (schema/views.py)."""
