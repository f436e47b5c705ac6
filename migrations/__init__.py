"""Alembic migrations of the opindex schema (shipped inside the package as opindex._migrations)."""
