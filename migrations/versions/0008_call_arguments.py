"""call arguments and the other text facts the link step read

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05 12:00:00

The link step opens no checkout file any more: what it read from the source text is extracted as facts. Adds
calls.arguments (the argument texts of each C++ call, a JSON array), calls.receiver_type (the declared type of a local
variable a method is called on), symbols.template_parameters (a template's parameter names), includes (#include
lines) and generated_launch_sites (launcher calls in torchgen's Python text).

A migration cannot read the source again, so an index built before holds none of these facts (NULL, no rows): the
links are derived again from the facts it has, and those that need the new facts (functor_links of passed arguments
and template parameters, stub_arguments, receiver_types, generated_launches, a header's call links through the
files that include it) are missing until the next `opindex build`, which re-extracts every file: the migration
clears meta.extractor_fingerprint (a build by other extractors starts cold) and records why in meta.rebuild_needed,
which `opindex migrate` prints.
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

REBUILD = ("built before schema 0008: the call arguments, #includes, template parameters and receiver types the "
           "links read are not in it; run `opindex build` (it re-extracts every file) to get all the links back")


def upgrade() -> None:
    with op.batch_alter_table('calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('arguments', sa.Text(), nullable=True, comment='C++: the call\'s arguments as written, split at top level, a JSON array of strings (comments dropped, whitespace collapsed; one longer than 120 characters is cut and ends in \'...\'): `["iter", "SmallBitonicSort{}"]`; NULL for Python calls and for calls of a temporary object'))
        batch_op.add_column(sa.Column('receiver_type', sa.Text(), nullable=True, comment='C++ method call on a plainly named local variable (not a parameter, `self` or `this`): the type its last declaration above the call in the same function declares, as written (c10::Device), or for `auto x = e;` the text `auto = e`; else NULL'))
    with op.batch_alter_table('symbols', schema=None) as batch_op:
        batch_op.add_column(sa.Column('template_parameters', sa.Text(), nullable=True, comment='C++ template: the names of its template parameters in order, a JSON array (`["exponential_kernel", "RNG"]` for `template<template<typename> class exponential_kernel, typename RNG>`; \'\' for an unnamed one; `[]` when its head was not read); NULL for any other definition'))
    op.create_table('includes',
    sa.Column('id', sa.Integer(), nullable=False, comment='row id'),
    sa.Column('checkout_id', sa.Integer(), nullable=False, comment='the checkout this row came from (checkouts.id)'),
    sa.Column('file', sa.Text(), nullable=False, comment='path relative to the checkout root'),
    sa.Column('line', sa.Integer(), nullable=False, comment='1-based line'),
    sa.Column('path', sa.Text(), nullable=False, comment='the included path as written between <> or "" (ATen/ATen.h)'),
    sa.ForeignKeyConstraint(['checkout_id'], ['checkouts.id'], ),
    sa.PrimaryKeyConstraint('id'),
    comment="#include lines of the C++/CUDA sources, any line that starts with one (inside #if branches and block comments too): the link step reads a header's calls in the files that include it."
    )
    with op.batch_alter_table('includes', schema=None) as batch_op:
        batch_op.create_index('ix_includes_file', ['file'], unique=False)
    op.create_table('generated_launch_sites',
    sa.Column('id', sa.Integer(), nullable=False, comment='row id'),
    sa.Column('checkout_id', sa.Integer(), nullable=False, comment='the checkout this row came from (checkouts.id)'),
    sa.Column('file', sa.Text(), nullable=False, comment='path relative to the checkout root'),
    sa.Column('line', sa.Integer(), nullable=False, comment='1-based line'),
    sa.Column('launcher', sa.Text(), nullable=False, comment='the TensorIterator launcher named in the text (gpu_kernel)'),
    sa.Column('caller', sa.Text(), nullable=False, comment='qualified name of the innermost def around that line'),
    sa.ForeignKeyConstraint(['checkout_id'], ['checkouts.id'], ),
    sa.PrimaryKeyConstraint('id'),
    comment="TensorIterator launcher calls (`gpu_kernel(`, `launch_...(`) written in the text of torchgen's Python defs (the C++ they generate); generated_launches links them to the def."
    )
    bind = op.get_bind()
    if bind.exec_driver_sql("SELECT count(*) FROM files").scalar():  # an index with data: rebuild to fill them
        bind.exec_driver_sql("DELETE FROM meta WHERE key IN ('extractor_fingerprint', 'rebuild_needed')")
        bind.exec_driver_sql("INSERT INTO meta VALUES ('extractor_fingerprint', ''), ('rebuild_needed', ?)",
                             (REBUILD,))
    _derive_links()


def _derive_links() -> None:
    """Links are derived facts: all of them again from the facts the index holds (indexer/link.py)."""
    from opindex.indexer import link
    bind = op.get_bind()
    root = bind.exec_driver_sql("SELECT root FROM checkouts LIMIT 1").scalar()
    if bind.dialect.name == "sqlite":
        link.derive(bind.connection.dbapi_connection, root)


def downgrade() -> None:
    op.drop_table('generated_launch_sites')
    with op.batch_alter_table('includes', schema=None) as batch_op:
        batch_op.drop_index('ix_includes_file')
    op.drop_table('includes')
    with op.batch_alter_table('symbols', schema=None) as batch_op:
        batch_op.drop_column('template_parameters')
    with op.batch_alter_table('calls', schema=None) as batch_op:
        batch_op.drop_column('receiver_type')
        batch_op.drop_column('arguments')
