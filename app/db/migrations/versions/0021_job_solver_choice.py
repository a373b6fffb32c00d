"""Jobs record how their solver was chosen when the request named "auto" (solver/auto.py):
{"requested": "auto", "chosen": ..., "reason": ...}. Nullable: a job that named its solver, and
every job written before this revision, has none."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_job_solver_choice"
down_revision: str | Sequence[str] | None = "0022_dataset_na_values"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("solver_choice", sa.JSON(), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+), as 0020's downgrade does.
    op.drop_column("jobs", "solver_choice")
