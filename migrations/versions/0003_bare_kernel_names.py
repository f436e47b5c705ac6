"""bare kernel names in the views

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-03 13:00:00

No table changes: the views changed (kernel_launch_sites.kernel and stub_kernels.kernel are bare names, the
qualified name is `definition`; stub_kernels gained template_args). Views are not alembic's business here:
`opindex migrate` drops them before the revisions run and creates this code's views after the upgrade, so this
revision only marks an index whose views are older, which is then refused with the command that upgrades it.
"""
from __future__ import annotations

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
