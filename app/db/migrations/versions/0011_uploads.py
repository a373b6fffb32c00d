"""Resumable uploads and server-side imports (the uploads table); data set sizes past 2 GiB.

``datasets.size_bytes`` was a 32-bit INTEGER on PostgreSQL (SQLite's INTEGER is 64-bit already):
an upload of more than 2 GiB could not be recorded there.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_uploads"
down_revision: str | Sequence[str] | None = "0010_dataset_shards"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _is_postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    op.create_table(
        "uploads",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("length", sa.BigInteger(), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("metadata_header", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("options", sa.JSON(), nullable=True),
        sa.Column("dataset_id", sa.Integer(), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_uploads_owner_state", "uploads", ["owner", "state"])
    op.create_index("ix_uploads_expires_at", "uploads", ["expires_at"])
    if _is_postgresql():
        op.alter_column("datasets", "size_bytes", type_=sa.BigInteger())


def downgrade() -> None:
    if _is_postgresql():
        op.alter_column("datasets", "size_bytes", type_=sa.Integer())
    op.drop_index("ix_uploads_expires_at", table_name="uploads")
    op.drop_index("ix_uploads_owner_state", table_name="uploads")
    op.drop_table("uploads")
