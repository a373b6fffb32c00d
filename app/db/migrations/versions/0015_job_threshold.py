"""A job's decision threshold options (the request's ``threshold``: a given value, or the metric
that chooses it on validation rows; app/services/jobs/threshold.py), the metric its targets
name (app/services/metrics/names.py), and a batch prediction's
metrics against its data set's labels (app/services/metrics). Nullable: a job without options, as
every job written before this revision, uses the default threshold; a batch prediction before it
has no metrics; a job without a target metric has the task's (accuracy or RMSE)."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_job_threshold"
down_revision: str | Sequence[str] | None = "0014_job_weight_column"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("threshold_options", sa.JSON(), nullable=True))
    op.add_column("jobs", sa.Column("target_metric", sa.String(32), nullable=True))
    op.add_column("batch_predictions", sa.Column("metrics", sa.JSON(), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+), not a batch rebuild: dropping the rebuilt jobs table would cascade
    # into job_trace (0009_preprocessing_and_names).
    op.drop_column("jobs", "threshold_options")
    op.drop_column("jobs", "target_metric")
    op.drop_column("batch_predictions", "metrics")
