"""The ``pgs`` commands that reach the rest of the API, run as installed, in subprocesses,
against a real service: labels and job options, aliases and ``name@alias``, batch predictions,
export and import, a data set's columns, uploads by id, the account and the service; and one
exit code per class of failure (usage, refused, conflict, not found, auth, unreachable)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client.conftest import API_KEY, run_pgs
from tests.cluster.harness import ApiServer, free_port

# Against real services (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(_ok(done))


@pytest.fixture(scope="module")
def named(service: ApiServer, heart: Path) -> dict[str, Any]:
    """heart_scale, and a job started with the options a registry user sets: a name, tags, the
    model's name, preprocessing and the split's seed."""
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--name", "parity heart", "--json", url=url))
    job = _json(
        run_pgs(
            *(
                "jobs",
                "create",
                "--dataset",
                str(ds["id"]),
                "--param",
                "n_iter=300",
                "--param",
                "random_state=0",
            ),
            *("--test-fraction", "0.25", "--split-seed", "7", "--name", "parity run"),
            *("--tag", "parity", "--tag", "nightly", "--description", "for the parity tests"),
            *("--model-name", "parity-heart", "--preprocessing", '{"scaling": "none"}'),
            *("--wait", "--json"),
            url=url,
        )
    )
    return {"dataset": ds, "job": job}


def test_jobs_create_sends_labels_model_name_preprocessing_and_split_seed(service: ApiServer, named):
    job = named["job"]
    assert (job["name"], job["tags"], job["split_seed"]) == ("parity run", ["parity", "nightly"], 7)
    assert job["description"] == "for the parity tests"
    assert job["preprocessing"]["scaling"] == "none"
    model = _json(run_pgs("models", "show", str(job["model_id"]), "--json", url=service.base))
    assert (model["name"], model["version"]) == ("parity-heart", 1)
    listed = _json(run_pgs("jobs", "ls", "--tag", "parity", "--json", url=service.base))
    assert [j["id"] for j in listed] == [job["id"]]
    table = _ok(run_pgs("models", "ls", "--name", "parity-heart", url=service.base, COLUMNS="200"))
    assert f"│ {job['model_id']} " in table and "parity" not in _ok(
        run_pgs("models", "ls", "--name", "x", url=service.base)
    )


def test_edit_renames_describes_and_tags_datasets_jobs_and_models(service: ApiServer, named):
    url = service.base
    ds_id, job_id, model_id = named["dataset"]["id"], named["job"]["id"], named["job"]["model_id"]
    ds = _json(
        run_pgs(
            "datasets", "edit", str(ds_id), "--name", "heart (parity)", "--tag", "medical", "--json", url=url
        )
    )
    assert (ds["name"], ds["tags"]) == ("heart (parity)", ["medical"])
    job = _json(
        run_pgs("jobs", "edit", str(job_id), "--clear-tags", "--description", "renamed", "--json", url=url)
    )
    assert (job["tags"], job["description"]) == ([], "renamed")
    table = _ok(run_pgs("models", "edit", str(model_id), "--tag", "candidate", url=url, COLUMNS="200"))
    assert "candidate" in table and "parity-heart" in table
    nothing = run_pgs("jobs", "edit", str(job_id), url=url)
    assert nothing.returncode == 2 and "nothing to change" in nothing.stderr


def test_upload_zero_based_and_a_threshold_chosen_on_a_validation_fraction(service: ApiServer, heart: Path):
    """Two body fields reached by flags of their own (tests/client/test_cli_surface.py walks
    them all)."""
    url = service.base
    # heart_scale's indices start at 1: read as 0-based, feature 0 is an empty column.
    ds = _json(run_pgs("datasets", "upload", str(heart), "--zero-based", "true", "--json", url=url))
    assert (ds["index_base"], ds["n_features"]) == (0, 14)
    chosen = ("--threshold", "f1", "--threshold-validation-fraction", "0.3")
    job = _json(
        run_pgs(
            "jobs", "create", "--dataset", str(ds["id"]), "--param", "n_iter=50", *chosen, "--json", url=url
        )
    )
    assert job["threshold_options"]["metric"] == "f1"
    assert job["threshold_options"]["validation_fraction"] == 0.3
    alone = run_pgs("jobs", "create", "--dataset", str(ds["id"]), *chosen[2:], url=url)
    assert alone.returncode == 2 and "needs --threshold" in alone.stderr


def test_aliases_and_name_at_alias_wherever_a_model_is_taken(service: ApiServer, named, heart: Path):
    url = service.base
    model_id = named["job"]["model_id"]
    alias = _json(run_pgs("aliases", "set", "parity-heart@staging", str(model_id), "--json", url=url))
    assert (alias["model_id"], alias["version"]) == (model_id, 1)
    # Promote what staging points to: an alias given where the model is.
    promoted = _json(
        run_pgs("aliases", "set", "parity-heart@prod", "parity-heart@staging", "--json", url=url)
    )
    assert promoted["model_id"] == model_id
    assert "parity-heart" in _ok(run_pgs("aliases", "ls", "--name", "parity-heart", url=url, COLUMNS="200"))
    assert _json(run_pgs("aliases", "show", "parity-heart@prod", "--json", url=url))["model_id"] == model_id

    by_alias = _ok(run_pgs("predict", "parity-heart@prod", str(heart), url=url))
    assert by_alias == _ok(run_pgs("predict", str(model_id), str(heart), url=url))
    assert by_alias.splitlines()[0].startswith("prediction,score") and len(by_alias.splitlines()) == 271
    shown = _json(run_pgs("models", "show", "parity-heart@prod", "--json", url=url))
    assert shown["id"] == model_id
    weights = _json(run_pgs("models", "coefficients", "parity-heart@prod", "--limit", "3", "--json", url=url))
    assert len(weights["items"]) == 3

    _ok(run_pgs("aliases", "rm", "parity-heart@staging", url=url))
    history = _json(run_pgs("aliases", "history", "parity-heart@staging", "--json", url=url))
    assert [e["model_id"] for e in history] == [model_id, None]
    gone = run_pgs("aliases", "show", "parity-heart@staging", url=url)
    assert gone.returncode == 4 and "parity-heart@staging" in gone.stderr


def test_batch_predictions_create_list_show_result_rm(service: ApiServer, named, heart: Path, tmp_path: Path):
    url = service.base
    model, ds_id = "parity-heart@batch", str(named["dataset"]["id"])
    _ok(run_pgs("aliases", "set", model, str(named["job"]["model_id"]), url=url))
    batch = _json(run_pgs("batches", "create", model, ds_id, "--wait", "--json", url=url))
    assert batch["status"] == "succeeded" and batch["progress"]["rows_done"] == 270
    listing = _json(run_pgs("batches", "ls", model, "--json", url=url))
    assert [b["id"] for b in listing] == [batch["id"]]
    assert "succeeded" in _ok(run_pgs("batches", "show", model, str(batch["id"]), url=url))

    out = tmp_path / "batch.csv"
    _ok(run_pgs("batches", "result", model, str(batch["id"]), "-o", str(out), url=url))
    rows = out.read_text().splitlines()
    assert rows[0].startswith("row,prediction,score") and len(rows) == 271
    # The same predictions as the rows sent in requests.
    sent = _ok(run_pgs("predict", model, str(heart), url=url)).splitlines()
    assert [r.split(",")[1] for r in rows[1:]] == [r.split(",")[0] for r in sent[1:]]

    ended = run_pgs("batches", "cancel", model, str(batch["id"]), url=url)
    assert ended.returncode == 3 and "409" in ended.stderr  # a conflict: it already ended
    _ok(run_pgs("batches", "rm", model, str(batch["id"]), url=url))
    assert _json(run_pgs("batches", "ls", model, "--json", url=url)) == []


def test_export_and_import_a_model(service: ApiServer, named, tmp_path: Path):
    url = service.base
    model_id = named["job"]["model_id"]
    npz, onnx = tmp_path / "heart.npz", tmp_path / "heart.onnx"
    _ok(run_pgs("models", "export", str(model_id), "-o", str(npz), url=url))
    _ok(run_pgs("models", "export", "parity-heart@prod", "-o", str(onnx), url=url))
    assert npz.read_bytes()[:2] == b"PK" and onnx.stat().st_size > 0
    imported = _json(run_pgs("models", "import", str(npz), "--json", url=url))
    assert imported["id"] != model_id and imported["n_features"] == 13
    refused = run_pgs("models", "export", str(model_id), "-o", str(tmp_path / "heart.txt"), url=url)
    assert refused.returncode == 2 and "npz, json or onnx" in refused.stderr


def test_dataset_columns_and_a_forced_delete(service: ApiServer, tmp_path: Path):
    url = service.base
    path = tmp_path / "credit.csv"
    path.write_text("age,housing,default\n30,rent,no\nNA,own,yes\n45,rent,no\n51,,yes\n")
    ds = _json(run_pgs("datasets", "upload", str(path), "--label-column", "default", "--json", url=url))
    columns = _json(run_pgs("datasets", "columns", str(ds["id"]), "--json", url=url))
    assert [(c["name"], c["kind"], c["missing"]) for c in columns] == [
        ("age", "numeric", 1),
        ("housing", "text", 1),
    ]
    table = _ok(run_pgs("datasets", "columns", str(ds["id"]), url=url, COLUMNS="200"))
    assert "rent 2" in table
    job = _json(
        run_pgs(
            "jobs", "create", "--dataset", str(ds["id"]), "--param", "n_iter=50", "--wait", "--json", url=url
        )
    )
    refused = run_pgs("datasets", "rm", str(ds["id"]), url=url)
    assert refused.returncode == 3 and "409" in refused.stderr  # a model comes from it
    _ok(run_pgs("datasets", "rm", str(ds["id"]), "--force", url=url))
    assert _json(run_pgs("models", "show", str(job["model_id"]), "--json", url=url))["id"] == job["model_id"]


def test_uploads_by_id(service: ApiServer):
    url = service.base
    created = httpx.post(
        f"{url}/v1/uploads", headers={"Tus-Resumable": "1.0.0", "Upload-Length": "100"}, timeout=30
    )
    upload_id = created.headers["Location"].rsplit("/", 1)[1]
    shown = _json(run_pgs("uploads", "show", upload_id, "--json", url=url))
    assert (shown["state"], shown["offset"], shown["length"]) == ("receiving", 0, 100)
    _ok(run_pgs("uploads", "rm", upload_id, url=url))
    assert run_pgs("uploads", "show", upload_id, url=url).returncode == 4


def test_me_health_metrics_and_audit(service: ApiServer, strict_service: ApiServer, named):
    url = service.base
    me = _json(run_pgs("me", "--json", url=url))
    assert (me["role"], me["authenticated"]) == ("admin", False)
    health = _json(run_pgs("health", "--json", url=url))
    assert health["status"] == "ready" and health["database"] == "ok" and health["version"]
    assert "pgs_jobs" in _ok(run_pgs("metrics", url=url))
    events = _json(run_pgs("audit", "--resource", "dataset", "--limit", "5", "--json", url=url))
    assert events and {e["resource"] for e in events} == {"dataset"}
    assert "action" in _ok(run_pgs("audit", "--limit", "1", url=url))

    strict = strict_service.base
    assert _json(run_pgs("me", "--json", url=strict, PGS_API_KEY=API_KEY))["authenticated"] is True
    assert run_pgs("audit", url=strict).returncode == 5  # no key: 401


def test_one_exit_code_per_class_of_failure(service: ApiServer, strict_service: ApiServer):
    """As docs/reference/cli.md documents them (from pgs_client.cli.EXIT_CODES)."""
    url = service.base
    usage = run_pgs("batches", "create", url=url)
    assert usage.returncode == 2 and "Missing argument" in usage.stderr
    invalid = run_pgs("aliases", "set", "no-at-sign", "1", url=url)
    assert invalid.returncode == 3 and "422" in invalid.stderr
    missing = run_pgs("models", "show", "nobody@prod", url=url)
    assert missing.returncode == 4 and "nobody@prod" in missing.stderr
    unauthorised = run_pgs("aliases", "ls", url=strict_service.base, PGS_API_KEY="wrong")
    assert unauthorised.returncode == 5 and "403" in unauthorised.stderr
    unreachable = run_pgs("health", url=f"http://127.0.0.1:{free_port()}")
    assert unreachable.returncode == 6 and "ConnectError" in unreachable.stderr
