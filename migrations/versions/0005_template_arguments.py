"""template arguments

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 20:40:00

Adds the explicit template arguments of calls (calls.template_args: `gemm_internal<float>(...)`) and of explicit
specializations (symbols.template_args: `template <> void gemm_internal<float>(...)`), and call_links rows that hold
only for calls written with given template arguments (call_links.template_args). An index built before has no
template arguments to read (NULL everywhere: every call links as before); `opindex build` fills them. The links
are derived again here (the link step of earlier revisions waits for these columns).
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('symbols', schema=None) as batch_op:
        batch_op.add_column(sa.Column('template_args', sa.Text(), nullable=True, comment='C++: the template arguments of an explicit specialization, as written, whitespace collapsed (`<float>` for `template <> void gemm<float>(...)`); NULL for any other definition'))
    with op.batch_alter_table('calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('template_args', sa.Text(), nullable=True, comment='C++: the explicit template arguments of a call that is not a method call, as written, whitespace collapsed (`<float>` for `gemm_internal<float>(...)`); NULL when none are written'))
    with op.batch_alter_table('call_links', schema=None) as batch_op:
        batch_op.add_column(sa.Column('template_args', sa.Text(), nullable=True, comment='NULL: the row holds for every call of that name in that file. Set: it holds only for the calls written with exactly these template arguments (calls.template_args), which name explicit specializations among the definitions (gemm_internal<float>(...) -> the gemm_internal<float> specialization, not all six); such calls use these rows instead of the NULL ones'))
    _derive_links()


def _derive_links() -> None:
    """Links are derived facts: all of them again from the facts the index holds (build/link.py)."""
    from opindex.build import link
    bind = op.get_bind()
    root = bind.exec_driver_sql("SELECT root FROM checkouts LIMIT 1").scalar()
    if bind.dialect.name == "sqlite":
        link.derive(bind.connection.dbapi_connection, root)


def downgrade() -> None:
    with op.batch_alter_table('call_links', schema=None) as batch_op:
        batch_op.drop_column('template_args')
    with op.batch_alter_table('calls', schema=None) as batch_op:
        batch_op.drop_column('template_args')
    with op.batch_alter_table('symbols', schema=None) as batch_op:
        batch_op.drop_column('template_args')
