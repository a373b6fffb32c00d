"""The installed ``pgs`` console script, run in subprocesses (and a shell) against a real service:
output for people and for scripts, and the documented exit codes."""

from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import typer
from pgs_client.cli.app import app
from typer.testing import CliRunner

from tests.client.conftest import API_KEY, PGS, run_pgs
from tests.cluster.harness import ApiServer, free_port

# Against real services (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group (typer ships its own click classes)
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def _json(done: subprocess.CompletedProcess[str]):
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_help_on_every_command():
    commands = _commands(typer.main.get_command(app))
    assert ("jobs", "watch") in commands and ("predict",) in commands and len(commands) > 20
    runner = CliRunner()
    for command in commands:
        done = runner.invoke(app, [*command, "--help"], prog_name="pgs")
        assert done.exit_code == 0 and "Usage: pgs" in done.output, (command, done.output)
    # And through the installed script, as a user runs it.
    for command in ([], ["jobs", "create"]):
        done = subprocess.run([PGS, *command, "--help"], capture_output=True, text=True)
        assert done.returncode == 0 and "Usage: pgs" in done.stdout, done.stderr


def test_version_is_the_installed_clients():
    done = subprocess.run([PGS, "--version"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"pgs-client {importlib.metadata.version('pgs-client')}\n"


def test_upload_train_trace_predict(service: ApiServer, heart: Path, tmp_path: Path):
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--name", "cli heart", "--json", url=url))
    assert ds["n_samples"] == 270 and ds["name"] == "cli heart"
    listing = run_pgs("datasets", "ls", url=url)
    assert listing.returncode == 0 and "cli heart" in listing.stdout

    job = _json(
        run_pgs(
            "jobs",
            "create",
            "--dataset",
            str(ds["id"]),
            "--solver",
            "pgs",
            "--param",
            "loss=logistic",
            "--param",
            "sigma=1e-3",
            "--test-fraction",
            "0.25",
            "--target",
            "0.8",
            "--wait",
            "--json",
            url=url,
        )
    )
    seed = job["params"].pop("random_state")  # drawn by the service, recorded with the job
    assert job["status"] == "succeeded" and job["params"] == {"loss": "logistic", "sigma": 0.001}
    assert isinstance(seed, int)
    assert job["targets"] == [0.8]
    shown = run_pgs("jobs", "show", str(job["id"]), url=url)
    assert shown.returncode == 0 and "succeeded" in shown.stdout
    n_iter = job["progress"]["n_iter"]
    assert f"of {n_iter:,} (100%)" in shown.stdout and "elapsed" in shown.stdout

    trace = _json(run_pgs("jobs", "trace", str(job["id"]), "--json", url=url))
    assert trace[-1]["test_score"] == pytest.approx(job["metrics"]["test_accuracy"])
    table = run_pgs("jobs", "trace", str(job["id"]), url=url)
    assert table.returncode == 0 and "test_score" in table.stdout

    # In a shell, as a user types it: predictions.csv from the redirected stdout.
    out = tmp_path / "predictions.csv"
    env = {**os.environ, "PGS_URL": url}
    done = subprocess.run(
        f"'{PGS}' predict {job['model_id']} '{heart}' > '{out}'",
        shell=True,
        env=env,
        capture_output=True,
        text=True,
        executable="/bin/bash",
    )
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 270
    assert set(rows[0]) == {"prediction", "score", "probability_-1", "probability_1"}
    assert {r["prediction"] for r in rows} <= {"-1", "1"}
    as_json = _json(run_pgs("predict", str(job["model_id"]), str(heart), "--json", url=url))
    assert [str(p) for p in as_json["predictions"]] == [r["prediction"] for r in rows]

    models = _json(run_pgs("models", "ls", "--json", url=url))
    assert job["model_id"] in [m["id"] for m in models]


def test_sigma_auto_from_the_command_line(service: ApiServer, heart: Path, tmp_path: Path):
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    args = ["--param", "loss=logistic", "--sigma", "auto", "--folds", "3", "--grid", "1e-2,1e-3,1e-4"]
    job = _json(run_pgs("jobs", "create", "--dataset", str(ds["id"]), *args, "--wait", "--json", url=url))
    assert job["status"] == "succeeded" and job["params"]["sigma"] == "auto"
    assert job["selection_options"]["grid"] == [1e-2, 1e-3, 1e-4] and job["selection_options"]["folds"] == 3
    assert job["selection"]["splits"] == "3-fold" and job["selection"]["sigma"] in (1e-2, 1e-3, 1e-4)
    figure = tmp_path / "path.svg"
    done = run_pgs("jobs", "plot", str(job["id"]), "--kind", "path", "-o", str(figure), url=url)
    assert done.returncode == 0 and b'id="path-chosen"' in figure.read_bytes(), done.stderr
    refused = run_pgs(
        "jobs", "create", "--dataset", str(ds["id"]), "--sigma", "auto", "--grid", "1e-3,0", url=url
    )
    assert refused.returncode != 0 and "selection.grid" in refused.stderr


def test_early_stopping_from_the_command_line(service: ApiServer, heart: Path):
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    args = [
        "--param",
        "sigma=1e-3",
        "--early-stopping",
        "--validation-fraction",
        "0.3",
        "--n-iter-no-change",
        "2",
    ]
    job = _json(run_pgs("jobs", "create", "--dataset", str(ds["id"]), *args, "--wait", "--json", url=url))
    assert job["status"] == "succeeded" and job["selection_options"] is None
    assert {k: job["params"][k] for k in ("early_stopping", "validation_fraction", "n_iter_no_change")} == {
        "early_stopping": True,
        "validation_fraction": 0.3,
        "n_iter_no_change": 2,
    }
    assert job["stop_reason"] in ("no_improvement", "completed")
    refused = run_pgs(
        "jobs", "create", "--dataset", str(ds["id"]), "--early-stopping", "--tol", "-1", url=url
    )
    assert refused.returncode == 3 and "body.params.tol" in refused.stderr


def test_a_refresh_from_the_command_line(service: ApiServer, heart: Path):
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    args = ["jobs", "create", "--dataset", str(ds["id"]), "--param", "loss=logistic", "--wait", "--json"]
    start = _json(run_pgs(*args, url=url))
    refreshed = _json(run_pgs(*args, "--init-model", str(start["model_id"]), url=url))
    assert refreshed["status"] == "succeeded" and refreshed["init_model_id"] == start["model_id"]
    refused = run_pgs(*args, "--init-model", "nothing@here", url=url)
    assert refused.returncode != 0 and "init_model" in refused.stderr


def test_threshold_target_metric_and_the_test_metrics_from_the_command_line(service: ApiServer, heart: Path):
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    args = ["--param", "loss=logistic", "--param", "sigma=1e-3", "--test-fraction", "0.25"]
    args += ["--threshold", "f1", "--target-metric", "roc_auc", "--target", "0.7"]
    job = _json(run_pgs("jobs", "create", "--dataset", str(ds["id"]), *args, "--wait", "--json", url=url))
    assert job["status"] == "succeeded" and job["target_metric"] == "roc_auc"
    assert job["threshold"]["source"] == "validation" and job["threshold"]["metric"] == "f1"
    assert "0.7" in job["metrics"]["time_to_target"]
    for command in ("jobs", "models"):
        ident = job["id"] if command == "jobs" else job["model_id"]
        shown = run_pgs(command, "show", str(ident), url=url)
        assert shown.returncode == 0, shown.stderr
        for text in ("test metrics", "balanced_accuracy", "roc_auc", "per class", "confusion matrix"):
            assert text in shown.stdout, (command, text)
    given = run_pgs("jobs", "create", "--dataset", str(ds["id"]), *args[:4], "--threshold", "1.5", url=url)
    assert given.returncode != 0 and "threshold.value" in given.stderr


def test_class_and_row_weights_from_the_command_line(service: ApiServer, tmp_path: Path):
    url = service.base
    data = tmp_path / "weighted.csv"
    rows = [f"{i % 7 - 3},{(i * 5) % 11 - 5},{1 + i % 3},{'a' if i % 7 > 3 else 'b'}" for i in range(120)]
    data.write_text("x1,x2,w,label\n" + "\n".join(rows) + "\n")
    ds = _json(run_pgs("datasets", "upload", str(data), "--json", url=url))
    args = [
        "--sigma",
        "1e-3",
        "--class-weight",
        "balanced",
        "--weight-column",
        "w",
        "--test-fraction",
        "0.25",
    ]
    job = _json(run_pgs("jobs", "create", "--dataset", str(ds["id"]), *args, "--wait", "--json", url=url))
    assert job["status"] == "succeeded" and job["weight_column"] == "w"
    assert job["params"]["class_weight"] == "balanced" and 2 in job["preprocessing"]["ignore"]
    mapping = ["--class-weight", '{"a": 3}', "--weight-column", "label"]
    refused = run_pgs("jobs", "create", "--dataset", str(ds["id"]), *mapping, url=url)
    assert refused.returncode != 0 and "weight_column" in refused.stderr


def test_watch_shows_a_live_bar_with_the_test_score(service: ApiServer, heart: Path):
    """On a terminal (a pseudo-terminal here) ``jobs watch`` draws the bar with the job's
    progress and its current test accuracy; the job stops at its time budget, long enough for
    ``pgs`` to start and see it running while the other process of a parallel run loads the
    machine."""
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    job = _json(
        run_pgs(
            "jobs",
            "create",
            "--dataset",
            str(ds["id"]),
            "--test-fraction",
            "0.25",
            "--param",
            "n_iter=1000000000",
            "--time-budget",
            "10",
            "--json",
            url=url,
        )
    )
    master, terminal = os.openpty()
    proc = subprocess.Popen(
        [PGS, "jobs", "watch", str(job["id"])],
        stdout=subprocess.PIPE,
        stderr=terminal,
        env={**os.environ, "PGS_URL": url, "COLUMNS": "120"},
    )
    os.close(terminal)
    screen = b""
    with os.fdopen(master, "rb", buffering=0) as pty:
        while True:
            try:
                chunk = pty.read(65536)
            except OSError:  # EIO: the command ended and closed the terminal
                break
            if not chunk:
                break
            screen += chunk
    stdout = proc.stdout.read().decode() if proc.stdout else ""
    assert proc.wait() == 0
    text = screen.decode(errors="replace")
    assert f"job {job['id']}" in text and "running test_accuracy" in text
    assert "succeeded" in stdout and "time_budget" in stdout


def test_studies(service: ApiServer, heart: Path, tmp_path: Path):
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    spec = tmp_path / "study.json"
    spec.write_text(
        json.dumps(
            {
                "dataset_id": ds["id"],
                "test_fraction": 0.25,
                "sizes": [60, 120],
                "repeats": 2,
                "targets": [0.7],
                "runs": [{"solver": "pgs", "params": {"sigma": 1e-3}}],
            }
        )
    )
    study = _json(run_pgs("studies", "create", str(spec), "--wait", "--json", url=url))
    assert study["status"] == "succeeded" and len(study["table"]) == 2
    shown = run_pgs("studies", "show", str(study["id"]), url=url)
    assert shown.returncode == 0 and "time to target" in shown.stdout
    jobs = _json(run_pgs("studies", "jobs", str(study["id"]), "--json", url=url))
    assert len(jobs) == 4
    figure = tmp_path / "study.svg"
    assert run_pgs("studies", "plot", str(study["id"]), "-o", str(figure), url=url).returncode == 0
    assert figure.read_bytes().startswith(b"<?xml")
    assert str(study["id"]) in run_pgs("studies", "ls", url=url).stdout


def test_exit_codes(service: ApiServer, strict_service: ApiServer, heart: Path):
    url = service.base
    missing = run_pgs("jobs", "show", "999999999", url=url)
    assert missing.returncode == 4 and "job 999999999 does not exist" in missing.stderr

    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    refused = run_pgs("jobs", "create", "--dataset", str(ds["id"]), "--param", "sigma=-1", url=url)
    assert refused.returncode == 3 and "body.params.sigma" in refused.stderr

    usage = run_pgs("jobs", "create", "--param", "sigma=1", url=url)
    assert usage.returncode == 2 and "--dataset" in usage.stderr
    assert run_pgs("jobs", "create", "--dataset", "1", "--param", "sigma", url=url).returncode == 2

    assert run_pgs("datasets", "ls", url=strict_service.base).returncode == 5
    assert run_pgs("datasets", "ls", url=strict_service.base, PGS_API_KEY="wrong").returncode == 5
    assert run_pgs("datasets", "ls", url=strict_service.base, PGS_API_KEY=API_KEY).returncode == 0

    unreachable = run_pgs("datasets", "ls", url=f"http://127.0.0.1:{free_port()}")
    assert unreachable.returncode == 6 and "ConnectError" in unreachable.stderr

    job = _json(
        run_pgs(
            "jobs",
            "create",
            "--dataset",
            str(ds["id"]),
            "--param",
            "n_iter=1000000000",
            "--time-budget",
            "600",
            "--json",
            url=url,
        )
    )
    assert run_pgs("jobs", "cancel", str(job["id"]), url=url).returncode == 0
    cancelled = run_pgs("jobs", "watch", str(job["id"]), url=url)
    assert cancelled.returncode == 1 and "cancelled" in cancelled.stderr


def test_solvers_command(service: ApiServer):
    listing = run_pgs("solvers", url=service.base)
    assert listing.returncode == 0, listing.stderr
    assert "pgs" in listing.stdout and "kernel_pgs" in listing.stdout and "huber" in listing.stdout
    one = run_pgs("solvers", "gcd", url=service.base)
    assert one.returncode == 0, one.stderr
    assert "GCDClassifier" in one.stdout and "GCDRegressor" in one.stdout
    assert "(0, 1e+12]" in one.stdout  # sigma's range, as the service bounds it
    as_json = _json(run_pgs("solvers", "gcd", "--json", url=service.base))
    assert [t["task"] for t in as_json["tasks"]] == ["classification", "regression"]
    assert "hinge" not in as_json["tasks"][0]["losses"]
    unknown = run_pgs("solvers", "no-such-solver", url=service.base)
    assert unknown.returncode == 4 and "no-such-solver" in unknown.stderr


def test_a_dual_solver_s_trace_shows_its_duality_gap(service: ApiServer, heart: Path):
    url = service.base
    ds = _json(run_pgs("datasets", "upload", str(heart), "--json", url=url))
    job = _json(
        run_pgs(
            "jobs",
            "create",
            "--dataset",
            str(ds["id"]),
            "--solver",
            "sdca",
            "--param",
            "sigma=1e-3",
            "--wait",
            "--json",
            url=url,
        )
    )
    assert job["status"] == "succeeded", job
    # A terminal wide enough for the header's names unfolded.
    table = run_pgs("jobs", "trace", str(job["id"]), url=url, COLUMNS="200")
    assert table.returncode == 0 and "duality_gap" in table.stdout
    # The other solvers record no gap: no empty column for them.
    pgs = _json(
        run_pgs(
            "jobs", "create", "--dataset", str(ds["id"]), "--param", "n_iter=100", "--wait", "--json", url=url
        )
    )
    plain = run_pgs("jobs", "trace", str(pgs["id"]), url=url, COLUMNS="200")
    assert "objective" in plain.stdout and "duality_gap" not in plain.stdout
