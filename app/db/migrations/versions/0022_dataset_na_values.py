"""A CSV data set keeps the cells its upload read as missing (``na_values``), so that the models
trained on it read a CSV sent to /predict with the same markers. Nullable: data sets stored
before this revision, and those of other formats, have none (the upload defaults apply)."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022_dataset_na_values"
down_revision: str | Sequence[str] | None = "0019_unlabelled_datasets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("datasets", sa.Column("na_values", sa.JSON(), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+), as 0020's downgrade does.
    op.drop_column("datasets", "na_values")
