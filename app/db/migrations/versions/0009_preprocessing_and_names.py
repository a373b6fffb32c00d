"""Preprocessing learned with a model, and the names of a data set's columns.

Data sets keep their CSV header (feature_names, label_name), which columns hold text
(text_columns, one-hot encoded by preprocessing) and how many numeric cells were empty
(n_missing). A job records its resolved preprocessing; a model the fitted preprocessing's
settings and the feature names a caller may key prediction rows by. All nullable or defaulted:
rows written before this revision have no names and no preprocessing, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_preprocessing_and_names"
down_revision: str | Sequence[str] | None = "0008_idempotent_creates"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("datasets", sa.Column("feature_names", sa.JSON(), nullable=True))
    op.add_column("datasets", sa.Column("label_name", sa.String(255), nullable=True))
    op.add_column("datasets", sa.Column("text_columns", sa.JSON(), nullable=True))
    op.add_column("datasets", sa.Column("n_missing", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("jobs", sa.Column("preprocessing", sa.JSON(), nullable=True))
    op.add_column("models", sa.Column("preprocessing", sa.JSON(), nullable=True))
    op.add_column("models", sa.Column("feature_names", sa.JSON(), nullable=True))


def downgrade() -> None:
    # Columns dropped in place (ALTER TABLE ... DROP COLUMN, SQLite 3.35+), not by a batch
    # rebuild: dropping the rebuilt jobs table would cascade into job_trace.
    for table, columns in (
        ("models", ("feature_names", "preprocessing")),
        ("jobs", ("preprocessing",)),
        ("datasets", ("n_missing", "text_columns", "label_name", "feature_names")),
    ):
        for column in columns:
            op.drop_column(table, column)
