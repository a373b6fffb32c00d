"""The options of a job's ``params.sigma: "auto"`` (the request's ``selection`` with its
defaults; app/services/jobs/selection.py). Nullable: a job with a numeric sigma has none, as
every job written before this revision."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_job_selection"
down_revision: str | Sequence[str] | None = "0012_owners"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("selection_options", sa.JSON(), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+), not a batch rebuild: dropping the rebuilt jobs table would cascade
    # into job_trace (0009_preprocessing_and_names).
    op.drop_column("jobs", "selection_options")
