"""Time-to-accuracy studies: the studies table and the study columns of jobs.

Revision ID: 0002_studies
Revises: 0001
Create Date: 2026-11-27

The job columns are added with ``ALTER TABLE ... ADD COLUMN`` (``REFERENCES`` inline), which both
SQLite and PostgreSQL do in place. Batch mode (copy the table, drop the old one) is avoided on
purpose: with foreign keys enforced, dropping ``jobs`` would cascade into ``job_trace`` and the
idempotency keys. For the same reason there is no downgrade on SQLite: it cannot drop a column
that is part of a foreign key, and the rebuild would have to know every other branch's columns of
``jobs``. Restore the pre-upgrade backup instead.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_studies"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PLAIN_JOB_COLUMNS = ("study_run", "study_repeat", "train_size", "subsample_seed", "select_sigma")


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("task", sa.String(length=16), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=True),
        sa.Column("test_dataset_id", sa.Integer(), nullable=True),
        sa.Column("test_fraction", sa.Float(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("n_train", sa.Integer(), nullable=False),
        sa.Column("runs", sa.JSON(), nullable=False),
        sa.Column("sizes", sa.JSON(), nullable=False),
        sa.Column("repeats", sa.Integer(), nullable=False),
        sa.Column("targets", sa.JSON(), nullable=False),
        sa.Column("select_sigma", sa.JSON(), nullable=True),
        sa.Column("time_budget_s", sa.Float(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["test_dataset_id"], ["datasets.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.add_column(
        "jobs",
        # No ON DELETE: SQLAlchemy's SQLite reflection cannot read it from an inline REFERENCES.
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("studies.id"), nullable=True),
        inline_references=True,
    )
    op.add_column("jobs", sa.Column("study_run", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("study_repeat", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("train_size", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("subsample_seed", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("select_sigma", sa.JSON(), nullable=True))
    op.create_index("ix_jobs_study_id", "jobs", ["study_id"], unique=False)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        raise NotImplementedError(
            "0002_studies cannot be downgraded on SQLite (see the module docstring); "
            "restore the database file saved before the upgrade"
        )
    op.drop_index("ix_jobs_study_id", table_name="jobs")
    for name in ("study_id", *_PLAIN_JOB_COLUMNS):
        op.drop_column("jobs", name)
    op.drop_table("studies")
