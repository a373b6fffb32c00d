"""Trace points record the predictor's non-zero weights and the data accesses so far.

Merges the two branches that start at 0001 (studies and job leases) into one head. The columns
are nullable: points written before this revision, and by solvers that do not count data
accesses, have none.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_trace_sparsity"
down_revision: str | Sequence[str] | None = ("0002_studies", "0003")
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("job_trace", sa.Column("nnz_weights", sa.BigInteger(), nullable=True))
    op.add_column("job_trace", sa.Column("data_accesses", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("job_trace") as batch:
        batch.drop_column("data_accesses")
        batch.drop_column("nnz_weights")
