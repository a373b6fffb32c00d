"""Lineage: what was trained on a data set is never lost.

A data set that a model or a study comes from is not deleted unless the caller insists
(``?force=true``); then every model trained on it keeps a snapshot of it (name, SHA-256, shape,
task, how the file was read) in its own row, shown as the model's ``training_dataset``. A data
set that a queued or running job or batch prediction reads is never deleted.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app.core.errors import conflict
from app.db.tables import BatchPrediction, Dataset, Job, JobStatus, Model, Study, utcnow


def _ids(s: Session, stmt: Any) -> list[int]:
    return [int(i) for i in s.scalars(stmt)]


def check_deletable(s: Session, dataset: Dataset, force: bool) -> None:
    """409 naming what still uses ``dataset``; ``force`` overrides only finished users."""
    ident = dataset.id
    jobs = _ids(
        s,
        select(Job.id).where(
            or_(Job.dataset_id == ident, Job.test_dataset_id == ident), Job.status.in_(JobStatus.ACTIVE)
        ),
    )
    batches = _ids(
        s,
        select(BatchPrediction.id).where(
            BatchPrediction.dataset_id == ident, BatchPrediction.status.in_(JobStatus.ACTIVE)
        ),
    )
    if jobs or batches:
        raise conflict(
            f"dataset {ident} is used by queued or running job(s) {jobs} and batch "
            f"prediction(s) {batches}; cancel them or wait for them to finish"
        )
    if force:
        return
    models = _ids(s, select(Model.id).where(Model.dataset_id == ident).order_by(Model.id))
    studies = _ids(
        s,
        select(Study.id)
        .where(or_(Study.dataset_id == ident, Study.test_dataset_id == ident))
        .order_by(Study.id),
    )
    if models or studies:
        raise conflict(
            f"dataset {ident} is used by model(s) {models} and study(ies) {studies}; "
            "pass force=true to delete it anyway (the models keep its name, sha256, "
            "shape and how it was read)"
        )


def snapshot(dataset: Dataset) -> dict[str, Any]:
    """What a model keeps of its training data set once that is deleted."""
    return {
        "id": dataset.id,
        "name": dataset.name,
        "sha256": dataset.sha256,
        "size_bytes": dataset.size_bytes,
        "n_samples": dataset.n_samples,
        "n_features": dataset.n_features,
        "nnz": dataset.nnz,
        "task": dataset.task,
        "classes": dataset.classes,
        "format": dataset.format,
        "compressed": dataset.compressed,
        "index_base": dataset.index_base,
        "label_kind": dataset.label_kind,
        "created_at": dataset.created_at.isoformat(),
        "deleted_at": utcnow().isoformat(),
    }


def keep_in_models(s: Session, dataset: Dataset) -> None:
    """Before the delete (same transaction): the models trained on ``dataset`` keep it."""
    s.execute(update(Model).where(Model.dataset_id == dataset.id).values(training_dataset=snapshot(dataset)))
