"""Data sets without labels (rows to predict in a batch, uploaded with ``labelled=false``), and
why a batch prediction has no metrics. Every data set before this revision has labels; every
batch prediction before it left ``metrics_note`` unset."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_unlabelled_datasets"
down_revision: str | Sequence[str] | None = "0020_trace_duality_gap"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("datasets", sa.Column("labelled", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.add_column("batch_predictions", sa.Column("metrics_note", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("batch_predictions", "metrics_note")
    op.drop_column("datasets", "labelled")
