"""``Idempotency-Key`` on every creating POST (jobs, data sets, studies): a request retried with
the same key and the same request answers with the resource the first one created, never a
second one; the same key with another request is a 409.

A key is scoped to the caller (its principal), so two clients cannot collide on one. It is stored
in the transaction that creates the resource, so the two exist together or not at all; a
concurrent request with the same key loses the race on the key's primary key and answers with the
winner's resource. Deleting the resource forgets the key (the foreign key cascades).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.errors import conflict
from app.db.tables import Dataset, IdempotencyKey, Job, Study

Resource = TypeVar("Resource", Job, Dataset, Study)

# The column of idempotency_keys that names each kind of resource.
_COLUMN: dict[type[Any], str] = {Job: "job_id", Dataset: "dataset_id", Study: "study_id"}


@dataclass(frozen=True)
class Idempotency:
    """One request's key (None: the caller sent none) and the hash of what it asks for."""

    principal: str
    key: str | None
    request_hash: str


def idempotency(principal: str, key: str | None, operation: str, request: Any) -> Idempotency:
    """``request``: anything JSON-serializable that two identical requests share (the body, or
    an upload's file hash and fields); ``operation`` keeps one key from serving two endpoints."""
    canonical = json.dumps([operation, request], sort_keys=True, separators=(",", ":"))
    return Idempotency(principal, key, hashlib.sha256(canonical.encode()).hexdigest())


def replay(session: Session, idem: Idempotency, model: type[Resource]) -> Resource | None:
    """The resource an earlier request with this key created; None when there was none."""
    if idem.key is None:
        return None
    row = session.get(IdempotencyKey, (idem.principal, idem.key))
    if row is None:
        return None
    ident = getattr(row, _COLUMN[model])
    if row.request_hash != idem.request_hash or ident is None:
        raise conflict(f"Idempotency-Key {idem.key!r} was already used with a different request")
    resource = session.get(model, ident)
    assert resource is not None  # cascade: the key goes with its resource
    return resource


def commit_created(session: Session, idem: Idempotency, resource: Resource) -> Resource | None:
    """Commit the new (flushed) ``resource`` with its key. None when it is committed; the
    resource of a concurrent request with the same key when that one committed first (this
    one is rolled back)."""
    if idem.key is not None:
        session.add(
            IdempotencyKey(
                principal=idem.principal,
                key=idem.key,
                request_hash=idem.request_hash,
                **{_COLUMN[type(resource)]: resource.id},
            )
        )
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        winner = replay(session, idem, type(resource))
        if winner is None:
            raise
        return winner
    return None
