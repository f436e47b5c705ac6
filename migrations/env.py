"""Alembic environment: migrations run on the connection opindex hands in (or the ini's URL)."""
from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from opindex.schema import metadata

config = context.config


def _run(connection) -> None:
    # render_as_batch: SQLite cannot ALTER most things in place; batch mode copies tables (PostgreSQL ignores it)
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=metadata,
                      literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        with create_engine(config.get_main_option("sqlalchemy.url")).connect() as conn:
            _run(conn)
