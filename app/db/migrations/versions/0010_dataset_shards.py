"""Data sets stored as shards: the bytes each takes in the store (the disk quota's measure), and
non-zero counts beyond 32 bits.

``stored_bytes`` stays NULL for a data set still in the old one-``.npz`` form; the start-up
conversion (app/services/datasets/shard_migration.py) fills it when it rewrites the file as shards, so
the data files are never touched by a schema migration. ``nnz`` becomes a 64-bit column on
PostgreSQL (SQLite's INTEGER is 64-bit already; altering it there would rebuild the table).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_dataset_shards"
down_revision: str | Sequence[str] | None = "0009_preprocessing_and_names"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("datasets", sa.Column("stored_bytes", sa.BigInteger(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("datasets", "nnz", type_=sa.BigInteger(), existing_nullable=False)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("datasets", "nnz", type_=sa.Integer(), existing_nullable=False)
    op.drop_column("datasets", "stored_bytes")
