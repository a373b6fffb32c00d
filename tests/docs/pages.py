"""The repository's Markdown pages that the docs tests read, and which of them the docs test runs.

Every page with a fenced code block is in exactly one of :data:`RUN` (its runnable examples run
against a real service by tests/docs/test_pages.py) and :data:`NOT_RUN` (with the reason);
test_pages.py fails on a page in neither, so a new page's examples are run or say why not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.cluster.harness import REPO

PAGES = sorted(
    str(p.relative_to(REPO))
    for p in [
        REPO / "README.md",
        REPO / "CONTRIBUTING.md",
        REPO / "client" / "README.md",
        *REPO.glob("docs/**/*.md"),
    ]
)


@dataclass(frozen=True)
class Run:
    """What a page needs beyond a fresh service: settings of the service (``service``) and of
    the reader's shell (``reader``). In a value, ``{service}`` is the directory the service runs
    in (its data dir is ``{service}/var``), ``{reader}`` the reader's working directory and
    ``{repo}`` this checkout."""

    service: dict[str, str] = field(default_factory=dict)
    reader: dict[str, str] = field(default_factory=dict)


RUN: dict[str, Run] = {
    "README.md": Run(),
    "client/README.md": Run(),
    "docs/tutorial.md": Run(),
    "docs/how-to/auth.md": Run(
        service={
            "PGS_API_KEYS": "ops:admin:key-admin-01,team-a:member:key-team-a-1,"
            "team-a:reader:key-reader-a1,team-b:member:key-team-b-1"
        }
    ),
    # The reader's shell has the service's settings, as the page asks: its data dir and its code.
    "docs/how-to/backup.md": Run(reader={"PGS_DATA_DIR": "{service}/var", "PYTHONPATH": "{repo}"}),
    "docs/how-to/batch-predictions.md": Run(),
    "docs/how-to/choose-sigma.md": Run(),
    "docs/how-to/datasets.md": Run(),
    "docs/how-to/export-import.md": Run(),
    # The operator starts the service with the import root the page names: ./imports of its
    # working directory.
    "docs/how-to/large-uploads.md": Run(service={"PGS_IMPORT_ROOTS": "{reader}/imports"}),
    "docs/how-to/metrics.md": Run(),
    "docs/how-to/model-registry.md": Run(),
    "docs/how-to/read-coefficients.md": Run(),
    "docs/how-to/refresh-a-model.md": Run(),
    "docs/how-to/studies.md": Run(),
    "docs/how-to/weights.md": Run(),
    "docs/explanation/solver.md": Run(),
    "docs/explanation/solver-auto.md": Run(),
    "docs/explanation/solver-sdca.md": Run(),
    "docs/explanation/solvers-l1.md": Run(),
    "docs/explanation/storage.md": Run(service={"PGS_WORKER_MEMORY_BYTES": "40000"}),
}

NOT_RUN: dict[str, str] = {
    "CONTRIBUTING.md": "its one block is the make targets of a development checkout (no-run, syntax only)",
    "docs/how-to/cluster.md": "PostgreSQL, Dask and docker compose set-ups (no-run, syntax only)",
    "docs/how-to/early-stopping.md": "hour-long benchmark commands (no-run, syntax only)",
    "docs/explanation/solvers-lecture.md": "benchmark scripts over the large data sets the figures "
    "were measured on (no-run, syntax only)",
}
