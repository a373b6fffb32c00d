"""The package: its core needs httpx only, it carries the repository's license, and its result
objects parse what the service sends.

That pgs_client/schemas.py follows the app's OpenAPI document is checked by ``make check``
(``client/tools/generate_schemas.py --check``)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from pgs_client import Job
from pgs_client.convert import from_json

REPO = Path(__file__).resolve().parents[2]


def test_the_core_depends_on_httpx_only_and_imports_nothing_heavy():
    requires = importlib.metadata.requires("pgs-client") or []
    assert [r for r in requires if "extra ==" not in r] == ["httpx>=0.27"]
    heavy = ["numpy", "scipy", "pandas", "sklearn", "numba", "fastapi", "typer", "rich"]
    # After httpx, which itself imports rich and click when they are installed.
    probe = (
        "import sys, httpx; before = set(sys.modules); import pgs_client; "
        f"print([m for m in {heavy!r} if m in set(sys.modules) - before])"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_client_carries_the_repositorys_license():
    """client/ is built on its own, so its LICENSE is a copy of the repository's: the same text."""
    assert (REPO / "client" / "LICENSE").read_text() == (REPO / "LICENSE").read_text()


def test_result_objects_parse_nested_values_and_ignore_unknown_fields():
    job = from_json(
        Job,
        {
            "id": 3,
            "status": "running",
            "solver": "pgs",
            "task": "binary",
            "dataset_id": 1,
            "test_dataset_id": None,
            "test_fraction": 0.25,
            "split_seed": 0,
            "params": {},
            "targets": [0.8],
            "time_budget_s": None,
            "progress": {"iteration": 5, "n_iter": 10, "fraction": 0.5, "samples_seen": 5},
            "metrics": None,
            "stop_reason": None,
            "error": None,
            "model_id": None,
            "attempts": 1,
            "cancel_requested": False,
            "created_at": "2026-01-02T03:04:05Z",
            "started_at": None,
            "finished_at": None,
            "a_field_from_a_newer_service": 1,
        },
    )
    assert job.progress.fraction == 0.5
    assert job.created_at.year == 2026 and job.created_at.tzinfo is not None
