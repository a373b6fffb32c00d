"""Warm starts (a job's ``init_model``): the model a job starts from, on the job and on the model
it trains (their lineage). A plain id, not a foreign key: the lineage stays readable after that
model is deleted. Nullable: a cold start has none, as every job and model before this revision."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_init_model"
down_revision: str | Sequence[str] | None = "0015_job_threshold"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("init_model_id", sa.Integer(), nullable=True))
    op.add_column("models", sa.Column("init_model_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+), not a batch rebuild: dropping the rebuilt jobs table would cascade
    # into job_trace (0009_preprocessing_and_names).
    op.drop_column("models", "init_model_id")
    op.drop_column("jobs", "init_model_id")
