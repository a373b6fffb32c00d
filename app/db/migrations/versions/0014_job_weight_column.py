"""A job's ``weight_column``: the column of its data set whose values weigh the rows in the loss
and the test score (app/services/jobs/weights.py). Nullable: a job without one, as every job
written before this revision, weighs every row alike."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_job_weight_column"
down_revision: str | Sequence[str] | None = "0013_job_selection"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("weight_column", sa.String(length=255), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+), not a batch rebuild: dropping the rebuilt jobs table would cascade
    # into job_trace (0009_preprocessing_and_names).
    op.drop_column("jobs", "weight_column")
