"""``/v1/solvers``: which solvers the service runs, their losses and parameters."""

from __future__ import annotations

from typing import Any

from pgs_client.convert import from_json
from pgs_client.errors import NotFound
from pgs_client.operations import covers
from pgs_client.schemas import SolverRead
from pgs_client.transport import Transport


def _explained(exc: NotFound) -> NotFound:
    detail = (
        f"this service does not offer GET /v1/solvers ({exc.detail}); it is older than the solver catalogue"
    )
    return NotFound(exc.status, {**exc.problem, "detail": detail}, exc.headers)


class Solvers:
    """``client.solvers()`` lists the solvers; ``client.solvers.get(name)`` reads one."""

    def __init__(self, transport: Transport):
        self._t = transport

    @covers("GET /v1/solvers")
    def __call__(self) -> list[SolverRead]:
        return [from_json(SolverRead, s) for s in self._get("/v1/solvers")["solvers"]]

    @covers("GET /v1/solvers/{name}")
    def get(self, name: str) -> SolverRead:
        return from_json(SolverRead, self._get(f"/v1/solvers/{name}"))

    def _get(self, path: str) -> Any:
        try:
            return self._t.get(path)
        except NotFound as exc:
            # The service's own 404s ("solver x does not exist") carry a problem type; a bare
            # 404 means the service has no such route.
            if exc.type != "about:blank":
                raise
            raise _explained(exc) from exc
