"""What a model learned and the warnings for a degenerate one, from the client and the ``pgs``
command against a real service: ``models.coefficients`` and ``pgs models coefficients`` list
the weights by name, ``pgs jobs create --wait`` prints the warnings of a sigma-1e12 fit on
stderr, with or without --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pgs_client import Client

from tests.client.conftest import run_pgs
from tests.cluster.harness import ApiServer

pytestmark = pytest.mark.system


def test_the_client_pages_through_the_weights_by_name(client: Client, heart: Path):
    ds = client.datasets.upload(heart)
    job = client.jobs.create(
        ds, solver="lbfgs", params={"loss": "logistic", "sigma": 1e-3}, test_fraction=0.3
    )
    job = client.jobs.wait(job)
    assert job.warnings == [] and job.coefficients is not None
    (top,) = job.coefficients.outputs
    assert top.class_ == 1 and top.nonzero == 13
    weights = list(client.models.coefficients(job.model_id, page_size=4))
    assert len(weights) == 13 and {w.name for w in weights} == {str(j) for j in range(1, 14)}
    assert [abs(w.model_weight) for w in weights] == sorted(
        (abs(w.model_weight) for w in weights), reverse=True
    )
    page = client.models.coefficient_page(job.model_id, limit=2)
    assert page.total == 13 and page.intercept == pytest.approx(top.intercept) and len(page.items) == 2


def test_the_command_line_lists_weights_and_prints_warnings(service: ApiServer, heart: Path):
    url = service.base
    ds = json.loads(run_pgs("datasets", "upload", str(heart), "--json", url=url).stdout)
    create = ["jobs", "create", "--dataset", str(ds["id"]), "--test-fraction", "0.3", "--wait"]
    zero = run_pgs(*create, "--solver", "scd", "--param", "loss=logistic", "--param", "sigma=1e12", url=url)
    assert zero.returncode == 0, zero.stderr
    assert "warning (zero_weights): sigma 1e12 leaves every weight at 0" in " ".join(zero.stderr.split())
    assert "warning (majority_class)" in zero.stderr
    as_json = run_pgs(*create, "--param", "loss=logistic", "--param", "sigma=1e12", "--json", url=url)
    assert json.loads(as_json.stdout)["warnings"] and "warning (zero_weights)" in as_json.stderr

    sound = run_pgs(*create, "--param", "loss=logistic", "--param", "sigma=1e-3", "--json", url=url)
    job = json.loads(sound.stdout)
    assert job["warnings"] == [] and "warning" not in sound.stderr
    listed = run_pgs("models", "coefficients", str(job["model_id"]), "--limit", "5", url=url)
    assert listed.returncode == 0, listed.stderr
    assert "13 non-zero weights" in listed.stdout and "model_weight" in listed.stdout
    page = json.loads(
        run_pgs("models", "coefficients", str(job["model_id"]), "--limit", "5", "--json", url=url).stdout
    )
    assert page["total"] == 13 and len(page["items"]) == 5 and page["class"] == 1
    # A wide terminal: how a record's cells wrap depends on its other cells' widths.
    shown = run_pgs("models", "show", str(job["model_id"]), url=url, COLUMNS="200")
    assert shown.returncode == 0 and "13 non-zero" in shown.stdout
