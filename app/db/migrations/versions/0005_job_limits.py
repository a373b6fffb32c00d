"""Job limits: the owner of a job (the queue quota per API key), its wall-clock limit, and
models that are the last iterate of an unfinished run.

All columns are nullable: jobs queued before this revision have no owner (they count against
the server-wide queue cap only) and take the server's limit when they run; older models are
finished ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_job_limits"
down_revision: str | Sequence[str] | None = "0004_trace_sparsity"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("owner", sa.String(64), nullable=True))
    op.add_column("jobs", sa.Column("time_limit_s", sa.Float(), nullable=True))
    op.create_index("ix_jobs_owner_status", "jobs", ["owner", "status"])
    op.add_column("models", sa.Column("partial_reason", sa.String(32), nullable=True))


def downgrade() -> None:
    # Columns dropped in place (ALTER TABLE ... DROP COLUMN, SQLite 3.35+), not by a batch
    # rebuild: dropping the rebuilt jobs table would cascade into job_trace.
    op.drop_column("models", "partial_reason")
    op.drop_index("ix_jobs_owner_status", table_name="jobs")
    op.drop_column("jobs", "time_limit_s")
    op.drop_column("jobs", "owner")
