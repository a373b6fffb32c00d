"""Idempotency keys for every creating POST: a key now names the data set or study it created,
not only a job (exactly one of job_id, dataset_id, study_id is set).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_idempotent_creates"
down_revision: str | Sequence[str] | None = "0007_registry"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batch mode: SQLite cannot alter a column's nullability or add a foreign key in place.
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.alter_column("job_id", existing_type=sa.Integer(), nullable=True)
        batch.add_column(sa.Column("dataset_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("study_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_idempotency_keys_dataset_id", "datasets", ["dataset_id"], ["id"], ondelete="CASCADE"
        )
        batch.create_foreign_key(
            "fk_idempotency_keys_study_id", "studies", ["study_id"], ["id"], ondelete="CASCADE"
        )


def downgrade() -> None:
    op.execute("DELETE FROM idempotency_keys WHERE job_id IS NULL")
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.drop_constraint("fk_idempotency_keys_study_id", type_="foreignkey")
        batch.drop_constraint("fk_idempotency_keys_dataset_id", type_="foreignkey")
        batch.drop_column("study_id")
        batch.drop_column("dataset_id")
        batch.alter_column("job_id", existing_type=sa.Integer(), nullable=False)
