"""conditions

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04 14:50:00

Adds conditions: each branch of every #if group of the C++/CUDA sources, and the blocks of `if` tests on one name a
default argument can decide (C++ and Python). It is a fact table, read from the files: empty until `opindex build` fills it
(a trace of an index without its rows walks as before: no call is known to sit under a condition).
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('conditions',
    sa.Column('id', sa.Integer(), nullable=False, comment='row id'),
    sa.Column('checkout_id', sa.Integer(), nullable=False, comment='the checkout this row came from (checkouts.id)'),
    sa.Column('file', sa.Text(), nullable=False, comment='path relative to the checkout root'),
    sa.Column('line', sa.Integer(), nullable=False, comment='1-based line'),
    sa.Column('end_line', sa.Integer(), nullable=False, comment='the last line the condition holds for'),
    sa.Column('kind', sa.String(length=8), nullable=False, comment="#if (one branch of a preprocessor group: `#if`, `#ifdef`, `#ifndef`, `#elif` or `#else` up to the group's next directive; include guards are left out) or if (the block of an `if` on one name a default argument can decide, or on a global setting, or its else block; C++ and Python)"),
    sa.Column('condition', sa.Text(), nullable=False, comment='as written, continuation lines joined: `CUDNN_VERSION >= 7400`; `#ifdef X` reads `defined(X)`, `#ifndef X` `!defined(X)`, an #else `not (A || B)` of the branches before it; for if: `label_smoothing > 0.0`, `weight.defined()`, `!train`, `max_norm is not None`, `globalContext().deterministicAlgorithms()`, an else block `not (...)`'),
    sa.Column('caller', sa.Text(), nullable=False, comment="qualified name of the enclosing function, '' at file level"),
    sa.ForeignKeyConstraint(['checkout_id'], ['checkouts.id'], ),
    sa.PrimaryKeyConstraint('id'),
    comment='Conditions code runs under: each branch of every #if group of the C++/CUDA sources (USE_ROCM, CUDA_VERSION, AT_CUDNN_ENABLED(), `#if 0`), and the blocks of tests on one name that a default argument can decide: `if (x OP literal)`, `if (x.has_value())`, `if (x.defined())`, `if (x)` in C++ functions; in Python defs any one-line test of the def\'s parameters made of names, literals, comparisons, and/or/not, isinstance() and len() (`if x is not None:`, `elif p == "nuc":`), and `not (test)` over the rest of a block after a test whose block returns on every path. The trace skips code another platform\'s build compiles (`#ifdef __HIP_PLATFORM_HCC__` on --device cuda), shows the #if on a hop, and ranks a branch that the op\'s default arguments do not take (`label_smoothing > 0.0` with label_smoothing=0.0; F.embedding\'s `max_norm is not None`) after the default one.'
    )
    with op.batch_alter_table('conditions', schema=None) as batch_op:
        batch_op.create_index('ix_conditions_file', ['file'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('conditions', schema=None) as batch_op:
        batch_op.drop_index('ix_conditions_file')
    op.drop_table('conditions')
