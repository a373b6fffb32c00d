"""The order in which queued jobs get a free worker: owners take turns, oldest first within one.

The queue is the jobs table. A queued job's turn is its place among its owner's queued jobs (1
for the oldest) plus the number of its owner's running jobs; the lowest turn goes first, then the
oldest job. So an owner who queued a hundred jobs and one who then queued one alternate, instead of
the second waiting for all hundred, and an owner who holds every worker yields the next one to an
owner who holds none.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import func, select

from app.db.engine import SessionFactory
from app.db.tables import Job, JobStatus


def fair_order(factory: SessionFactory, among: Collection[int]) -> list[int]:
    """The jobs of ``among`` that are still queued (and not being cancelled), first turn first."""
    place = func.row_number().over(partition_by=Job.owner, order_by=Job.id)
    queued = (
        select(Job.id, Job.owner, place.label("place"))
        .where(Job.status == JobStatus.QUEUED, Job.cancel_requested.is_(False))
        .subquery()
    )
    running = (
        select(Job.owner, func.count().label("n"))
        .where(Job.status == JobStatus.RUNNING)
        .group_by(Job.owner)
        .subquery()
    )
    turn = queued.c.place + func.coalesce(running.c.n, 0)
    # The whole queue (at most PGS_MAX_QUEUED_JOBS rows) is ranked: the places count every queued
    # job of an owner, also those another API process holds.
    stmt = (
        select(queued.c.id).outerjoin(running, running.c.owner == queued.c.owner).order_by(turn, queued.c.id)
    )
    wanted = set(among)
    with factory() as s:
        return [job_id for job_id in s.scalars(stmt) if job_id in wanted]
