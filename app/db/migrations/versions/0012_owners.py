"""Owners (app/core/tenants.py): every data set, upload, job, model, alias, study and batch
prediction belongs to one; model names and aliases are per owner; the audit log of writes.

Every existing object gets the owner ``default`` (what a bare key and a server without keys are),
so a deployment that predates owners sees all of its objects as before. Columns are added in
place (0002_studies says why batch mode is avoided for tables that others reference);
``model_aliases``, which nothing references, is rebuilt by hand to take the owner into its primary
key. ``jobs.owner`` and ``uploads.owner`` held the principal of the key that created the row;
both become ``default``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_owners"
down_revision: str | Sequence[str] | None = "0011_uploads"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT = "default"
_OWNED = ("datasets", "models", "studies", "batch_predictions", "alias_events")


def _owner_column() -> sa.Column:
    return sa.Column("owner", sa.String(length=64), nullable=False, server_default=DEFAULT)


def upgrade() -> None:
    for table in _OWNED:
        op.add_column(table, _owner_column())
    op.create_index("ix_datasets_owner", "datasets", ["owner"])
    op.execute(sa.text("UPDATE jobs SET owner = :d").bindparams(d=DEFAULT))
    op.execute(sa.text("UPDATE uploads SET owner = :d").bindparams(d=DEFAULT))

    op.drop_index("ux_models_name_version", table_name="models")
    op.create_index("ux_models_owner_name_version", "models", ["owner", "name", "version"], unique=True)
    op.drop_index("ix_alias_events_name_alias", table_name="alias_events")
    op.create_index("ix_alias_events_owner_name_alias", "alias_events", ["owner", "name", "alias"])

    op.create_table(
        "model_aliases_owned",
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("alias", sa.String(length=64), nullable=False),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("models.id"), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "name", "alias"),
    )
    op.execute(
        sa.text(
            "INSERT INTO model_aliases_owned (owner, name, alias, model_id, updated_at) "
            "SELECT :d, name, alias, model_id, updated_at FROM model_aliases"
        ).bindparams(d=DEFAULT)
    )
    op.drop_table("model_aliases")
    op.rename_table("model_aliases_owned", "model_aliases")

    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("actor_owner", sa.String(length=64), nullable=False),
        sa.Column("actor_key", sa.String(length=64), nullable=False),
        sa.Column("actor_role", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("resource", sa.String(length=32), nullable=False),
        sa.Column("resource_id", sa.String(length=300), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_audit_events_at", "audit_events", ["at"])
    op.create_index("ix_audit_events_owner_at", "audit_events", ["owner", "at"])


def downgrade() -> None:
    op.drop_index("ix_audit_events_owner_at", table_name="audit_events")
    op.drop_index("ix_audit_events_at", table_name="audit_events")
    op.drop_table("audit_events")
    op.create_table(
        "model_aliases_shared",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("alias", sa.String(length=64), nullable=False),
        sa.Column("model_id", sa.Integer(), sa.ForeignKey("models.id"), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", "alias"),
    )
    # Only the default owner's aliases fit a namespace without owners.
    op.execute(
        sa.text(
            "INSERT INTO model_aliases_shared (name, alias, model_id, updated_at) "
            "SELECT name, alias, model_id, updated_at FROM model_aliases WHERE owner = :d"
        ).bindparams(d=DEFAULT)
    )
    op.drop_table("model_aliases")
    op.rename_table("model_aliases_shared", "model_aliases")
    op.drop_index("ix_alias_events_owner_name_alias", table_name="alias_events")
    op.create_index("ix_alias_events_name_alias", "alias_events", ["name", "alias"])
    op.drop_index("ux_models_owner_name_version", table_name="models")
    op.create_index("ux_models_name_version", "models", ["name", "version"], unique=True)
    op.drop_index("ix_datasets_owner", table_name="datasets")
    for table in reversed(_OWNED):
        op.drop_column(table, "owner")
