"""Job leases: the heartbeat of a running job's worker and the dispatch mark of a queued job.

With several API processes and workers sharing one PostgreSQL database, no process can assume
that it owns every job: a running job is lost when its heartbeat is older than the lease, and a
queued job whose API process died (a Dask scheduler drops the work of a client that went away)
is dispatched again when no live API process has refreshed ``dispatched_at`` within the lease.

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-27

Written beside the studies migration (0002, also from 0001); app.db.engine.run_migrations
upgrades to ``heads``, so both apply in either order.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN (in place on SQLite and PostgreSQL), not batch mode: rebuilding "jobs"
    # with foreign keys on would cascade into the tables that reference it.
    op.add_column("jobs", sa.Column("heartbeat_at", sa.DateTime(), nullable=True))
    op.add_column("jobs", sa.Column("dispatched_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    # DROP COLUMN in place (SQLite >= 3.35); neither column is in an index or a key.
    op.drop_column("jobs", "dispatched_at")
    op.drop_column("jobs", "heartbeat_at")
