"""Names, tags and descriptions; model versions and aliases with their history; lineage
snapshots; the data set's task origin; batch predictions.

Columns are added with ``ALTER TABLE ... ADD COLUMN``, which SQLite and PostgreSQL do in place
(0002_studies says why batch mode is avoided); the downgrade drops them in place too. Tag lists
default to ``[]`` for existing rows, and existing data sets count as having a guessed task (the
upload could not declare it as such).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_registry"
down_revision: str | Sequence[str] | None = "0005_job_limits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _labels(table: str) -> None:
    """description and tags; every labelled resource has both."""
    op.add_column(table, sa.Column("description", sa.Text(), nullable=True))
    op.add_column(table, sa.Column("tags", sa.JSON(), nullable=False, server_default=sa.text("'[]'")))


def upgrade() -> None:
    _labels("datasets")
    op.add_column(
        "datasets", sa.Column("task_source", sa.String(length=16), nullable=False, server_default="guessed")
    )
    _labels("jobs")
    op.add_column("jobs", sa.Column("name", sa.String(length=255), nullable=True))
    op.add_column("jobs", sa.Column("model_name", sa.String(length=255), nullable=True))
    _labels("models")
    op.add_column("models", sa.Column("name", sa.String(length=255), nullable=True))
    op.add_column("models", sa.Column("version", sa.Integer(), nullable=True))
    op.add_column("models", sa.Column("training_dataset", sa.JSON(), nullable=True))
    op.create_index("ux_models_name_version", "models", ["name", "version"], unique=True)

    op.create_table(
        "model_aliases",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("alias", sa.String(length=64), nullable=False),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("models.id"), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", "alias"),
    )
    op.create_table(
        "alias_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("alias", sa.String(length=64), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=True),
        sa.Column("previous_model_id", sa.Integer(), nullable=True),
        sa.Column("principal", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_alias_events_name_alias", "alias_events", ["name", "alias"])

    op.create_table(
        "batch_predictions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("models.id", ondelete="SET NULL"), nullable=True),
        sa.Column(
            "dataset_id", sa.Integer(), sa.ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("extra_features", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("n_rows", sa.Integer(), nullable=False),
        sa.Column("rows_done", sa.Integer(), nullable=False),
        sa.Column("result_key", sa.String(length=255), nullable=True),
        sa.Column("outputs", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_batch_predictions_status", "batch_predictions", ["status"])
    op.create_index("ix_batch_predictions_model_id", "batch_predictions", ["model_id"])


def downgrade() -> None:
    # Columns dropped in place (ALTER TABLE ... DROP COLUMN, SQLite 3.35+), not by a batch
    # rebuild: dropping the rebuilt jobs table would cascade into job_trace.
    op.drop_table("batch_predictions")
    op.drop_table("alias_events")
    op.drop_table("model_aliases")
    op.drop_index("ux_models_name_version", table_name="models")
    for table, columns in (
        ("models", ("training_dataset", "version", "name", "tags", "description")),
        ("jobs", ("model_name", "name", "tags", "description")),
        ("datasets", ("task_source", "tags", "description")),
    ):
        for column in columns:
            op.drop_column(table, column)
