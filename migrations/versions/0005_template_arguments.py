"""template arguments and backend choices

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 20:40:00

Adds the explicit template arguments of calls (calls.template_args: `gemm_internal<float>(...)`) and of explicit
specializations (symbols.template_args: `template <> void gemm_internal<float>(...)`), and call_links rows that hold
only for calls written with given template arguments (call_links.template_args). An index built before has no
template arguments to read (NULL everywhere: every call links as before); `opindex build` fills them. Adds
backend_choices (`ConvBackend backend = _select_conv_backend(...)`, then `switch (backend)`), empty until a build.
The links are derived again here (the link step of earlier revisions waits for these columns).
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('backend_choices',
    sa.Column('id', sa.Integer(), nullable=False, comment='row id'),
    sa.Column('checkout_id', sa.Integer(), nullable=False, comment='the checkout this row came from (checkouts.id)'),
    sa.Column('file', sa.Text(), nullable=False, comment='path relative to the checkout root'),
    sa.Column('line', sa.Integer(), nullable=False, comment='1-based line'),
    sa.Column('callee', sa.Text(), nullable=False, comment='the function called for the choice (_select_conv_backend)'),
    sa.Column('qualifier', sa.Text(), nullable=False, comment="its qualifier as written, '' for a bare call"),
    sa.Column('variable', sa.Text(), nullable=False, comment="the variable its result initializes (backend); '' for if"),
    sa.Column('declared', sa.Text(), nullable=False, comment="that variable's type as written (ConvBackend); '' for if"),
    sa.Column('tested_line', sa.Integer(), nullable=False, comment="the first line after the call that branches on it; for if, the call's own line"),
    sa.Column('test', sa.String(length=16), nullable=False, comment="switch (`switch (backend)`), compare (`backend == ConvBackend::Cudnn`, the constant of the variable's declared type) or if (the call is in an `if (...)` condition on its line: `if (train && is_fused_kernel_acceptable(input, p))`)"),
    sa.Column('caller', sa.Text(), nullable=False, comment="qualified name of the enclosing function, '' at file level"),
    sa.ForeignKeyConstraint(['checkout_id'], ['checkouts.id'], ),
    sa.PrimaryKeyConstraint('id'),
    comment='Calls that choose a path: `ConvBackend backend = _select_conv_backend(...);` whose result the same function then branches on (a switch on the variable, or a comparison with a constant of its type, or of any type when it is declared `auto`), and calls in an `if (...)` condition (methods only on a plainly named object: `params.use_cudnn(input)`). The chooser runs no device code itself; the trace shows it where the choice is made.'
    )
    with op.batch_alter_table('backend_choices', schema=None) as batch_op:
        batch_op.create_index('ix_backend_choices_caller', ['caller'], unique=False)
    with op.batch_alter_table('symbols', schema=None) as batch_op:
        batch_op.add_column(sa.Column('template_args', sa.Text(), nullable=True, comment='C++: the template arguments of an explicit specialization, as written, whitespace collapsed (`<float>` for `template <> void gemm<float>(...)`); NULL for any other definition'))
    with op.batch_alter_table('calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('template_args', sa.Text(), nullable=True, comment='C++: the explicit template arguments of a call that is not a method call, as written, whitespace collapsed (`<float>` for `gemm_internal<float>(...)`); NULL when none are written'))
    with op.batch_alter_table('call_links', schema=None) as batch_op:
        batch_op.add_column(sa.Column('template_args', sa.Text(), nullable=True, comment='NULL: the row holds for every call of that name in that file. Set: it holds only for the calls written with exactly these template arguments (calls.template_args), which name explicit specializations among the definitions (gemm_internal<float>(...) -> the gemm_internal<float> specialization, not all six); such calls use these rows instead of the NULL ones'))
    _derive_links()


def _derive_links() -> None:
    """Links are derived facts: all of them again from the facts the index holds (build/link.py)."""
    from opindex.indexer import link
    bind = op.get_bind()
    root = bind.exec_driver_sql("SELECT root FROM checkouts LIMIT 1").scalar()
    if bind.dialect.name == "sqlite":
        link.derive(bind.connection.dbapi_connection, root)


def downgrade() -> None:
    with op.batch_alter_table('backend_choices', schema=None) as batch_op:
        batch_op.drop_index('ix_backend_choices_caller')
    op.drop_table('backend_choices')
    with op.batch_alter_table('call_links', schema=None) as batch_op:
        batch_op.drop_column('template_args')
    with op.batch_alter_table('calls', schema=None) as batch_op:
        batch_op.drop_column('template_args')
    with op.batch_alter_table('symbols', schema=None) as batch_op:
        batch_op.drop_column('template_args')
