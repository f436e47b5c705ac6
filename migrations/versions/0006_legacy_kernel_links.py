"""legacy kernel links

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04 13:00:00

Adds legacy_kernel_links: a dispatch row naming a legacy kernel the build generates (PyTorch 1.4's
legacy::cuda::_th_sort, written from Declarations.cwrap and nn.yaml) -> its declaration and the generic TH/THC/THNN
function it calls. The links are derived again here.
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('legacy_kernel_links',
    sa.Column('id', sa.Integer(), nullable=False, comment='row id'),
    sa.Column('checkout_id', sa.Integer(), nullable=False, comment='the checkout this row came from (checkouts.id)'),
    sa.Column('dispatch_id', sa.Integer(), nullable=True, comment="native_dispatch.id of a row naming the legacy function; NULL for one only C++ code calls (bmm_cuda's `legacy::cuda::_th_bmm(self, mat2)`)"),
    sa.Column('kernel', sa.Text(), nullable=False, comment='the kernel as written (legacy::cuda::_th_sort)'),
    sa.Column('declaration', sa.Text(), nullable=False, comment='the declaration that generates it (_th_sort, _thnn_nll_loss)'),
    sa.Column('decl_file', sa.Text(), nullable=False, comment='aten/src/ATen/Declarations.cwrap or aten/src/ATen/nn.yaml'),
    sa.Column('decl_line', sa.Integer(), nullable=False, comment='the line of its name: in that file'),
    sa.Column('cname', sa.Text(), nullable=False, comment="the TH/THC/THNN function it calls: the declaration's cname (sort), for nn.yaml's with the part the generated function runs (ClassNLLCriterion_updateOutput for _forward; _updateGradInput and _accGradParameters for _backward)"),
    sa.Column('symbol_id', sa.Integer(), nullable=True, comment='symbols.id of the definition, NULL when none was found'),
    sa.Column('definition', sa.Text(), nullable=True, comment='its qualified name'),
    sa.Column('def_file', sa.Text(), nullable=True, comment='file of the definition'),
    sa.Column('def_line', sa.Integer(), nullable=True, comment='line of the definition'),
    sa.ForeignKeyConstraint(['checkout_id'], ['checkouts.id'], ),
    sa.PrimaryKeyConstraint('id'),
    comment="Legacy kernels generated at build time (PyTorch 1.4 and earlier: LegacyTHFunctionsCUDA.cpp and LegacyTHFunctionsCPU.cpp are written from Declarations.cwrap and nn.yaml, so `legacy::cuda::_th_sort` has no definition in the source): the declaration that generates each, and the generic TH/THC/THNN function it calls for that backend (THCTensor_(sort) in THC/generic/ for CUDA, THTensor_(sort) in TH/generic/ for CPU; THNN_(X) in THCUNN/ or THNN/). Read from those files' text at build time; only for the legacy functions (named by a dispatch row or called as legacy::cuda::x(...)) the source does not define."
    )
    with op.batch_alter_table('legacy_kernel_links', schema=None) as batch_op:
        batch_op.create_index('ix_legacy_kernel_links_kernel', ['kernel'], unique=False)
    _derive_links()


def _derive_links() -> None:
    """Links are derived facts: all of them again from the facts the index holds (build/link.py)."""
    from opindex.indexer import link
    bind = op.get_bind()
    root = bind.exec_driver_sql("SELECT root FROM checkouts LIMIT 1").scalar()
    if bind.dialect.name == "sqlite":
        link.derive(bind.connection.dbapi_connection, root)


def downgrade() -> None:
    with op.batch_alter_table('legacy_kernel_links', schema=None) as batch_op:
        batch_op.drop_index('ix_legacy_kernel_links_kernel')
    op.drop_table('legacy_kernel_links')
