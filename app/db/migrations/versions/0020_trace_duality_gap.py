"""Trace points record the duality gap P(w) - D(alpha) of the solvers that keep a dual point
(sdca): a bound on the distance of each checkpoint's objective to the optimum. Nullable: points
written before this revision, and by solvers without a dual point, have none."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_trace_duality_gap"
down_revision: str | Sequence[str] | None = "0018_init_model"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("job_trace", sa.Column("duality_gap", sa.Float(), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+), not a batch rebuild, as 0018's downgrade does.
    op.drop_column("job_trace", "duality_gap")
