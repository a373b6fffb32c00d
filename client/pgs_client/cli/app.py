"""The ``pgs`` commands (typer): one group per resource, ``pgs solvers`` and ``pgs predict``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from pgs_client.cli import (
    EXIT_FINISHED_BADLY,
    aliases,
    batches,
    columns,
    labels,
    output,
    predictions,
    service,
    transfer,
    uploads,
)
from pgs_client.cli.context import DatasetId, JobId, Json, Limit, ModelArg, StudyId
from pgs_client.cli.context import client as _client
from pgs_client.client import Client
from pgs_client.errors import JobCancelled, JobFailed
from pgs_client.operations import UPLOAD_OPERATIONS, covers
from pgs_client.resources.jobs import score_text
from pgs_client.version import VERSION

app = typer.Typer(
    help="Train and serve models on a PGS service.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=False,
)
datasets = typer.Typer(help="Upload, list, show, edit and delete data sets.", no_args_is_help=True)
jobs = typer.Typer(help="Start, follow and inspect training jobs.", no_args_is_help=True)
models = typer.Typer(help="List, show, edit, export, import and delete models.", no_args_is_help=True)
studies = typer.Typer(help="Time-to-accuracy studies.", no_args_is_help=True)
for group, name in ((datasets, "datasets"), (jobs, "jobs"), (models, "models"), (studies, "studies")):
    app.add_typer(group, name=name)
for group, name in (
    (aliases.group, "aliases"),
    (batches.group, "batches"),
    (uploads.group, "uploads"),
):
    app.add_typer(group, name=name)
# Commands written in modules of their own, under the groups above.
datasets.command("edit")(labels.datasets_edit)
datasets.command("columns")(columns.datasets_columns)
jobs.command("edit")(labels.jobs_edit)
models.command("edit")(labels.models_edit)
models.command("export")(transfer.models_export)
models.command("import")(transfer.models_import)

Name = Annotated[str | None, typer.Option(help="Only those with this name")]
Tags = Annotated[
    list[str] | None,
    typer.Option("--tag", metavar="TAG", help="Only those with this tag (repeat it: all of them)"),
]

DATASET_COLUMNS = ["id", "name", "task", "n_samples", "n_features", "classes", "created_at"]
JOB_COLUMNS = ["id", "status", "solver", "dataset_id", "model_id", "score", "created_at"]
MODEL_COLUMNS = ["id", "solver", "task", "estimator", "job_id", "score", "created_at"]
COEFFICIENT_COLUMNS = ["name", "weight", "model_weight", "column", "category"]
STUDY_COLUMNS = ["id", "name", "status", "task", "dataset_id", "sizes", "repeats", "created_at"]
TRACE_COLUMNS = ["iteration", "samples_seen", "solver_seconds", "objective", "test_score", "nnz_weights"]
STUDY_ROW_COLUMNS = ["label", "m", "target", "repeats", "reached", "median_seconds", "median_iterations"]


def _print_version(asked: bool) -> None:
    if asked:
        print(f"pgs-client {VERSION}")
        raise typer.Exit()


@app.callback()
def connect(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(envvar="PGS_URL", show_envvar=True, help="The service [default: http://127.0.0.1:8000]"),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(envvar="PGS_API_KEY", show_envvar=True, help="Bearer key, if the service has keys"),
    ] = None,
    # Eager: printed before anything connects, whatever else the command line says.
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit"),
    ] = False,
) -> None:
    """Train and serve models on a PGS service (see `pgs COMMAND --help`)."""
    ctx.obj = ctx.with_resource(Client(url, api_key))


def _scored(items: list[Any], as_json: bool) -> list[Any]:
    """Jobs or models for a listing: in a table, their test score instead of all metrics."""
    if as_json:
        return items
    return [{**output.plain(i), "score": score_text(i.metrics)} for i in items]


# -- solvers -------------------------------------------------------------------------------------


@app.command("solvers")
@covers("GET /v1/solvers", "GET /v1/solvers/{name}")
def solvers_cmd(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="One solver in full")] = None,
    as_json: Json = False,
) -> None:
    """The solvers the service runs: tasks, losses and parameters."""
    c = _client(ctx)
    if name is None:
        solvers = c.solvers()
        output.show(
            solvers if as_json else [_solver_row(s) for s in solvers],
            as_json,
            ["name", "title", "losses", "paper"],
        )
        return
    solver = c.solvers.get(name)
    if as_json:
        output.emit_json(solver)
        return
    for task in solver.tasks:
        output.table(
            [_param_row(p) for p in task.params],
            ["name", "type", "default", "range", "choices", "description"],
            title=f"{solver.name} ({task.task}, {task.estimator}): {solver.title}; "
            f"{solver.paper}, {solver.algorithm}",
        )


def _solver_row(solver: Any) -> dict[str, Any]:
    return {
        "name": solver.name,
        "title": solver.title,
        "losses": {t.task: t.losses for t in solver.tasks},
        "paper": f"{solver.paper}, {solver.algorithm}",
    }


def _param_row(param: Any) -> dict[str, Any]:
    """A parameter for the table: its range as an interval, "or null" when null is accepted."""
    r = param.range
    interval = (
        None
        if r is None
        else (f"{'[' if r.min_inclusive else '('}{r.min:.12g}, {r.max:.12g}{']' if r.max_inclusive else ')'}")
    )
    return {
        **output.plain(param),
        "range": interval,
        "type": param.type + (" or null" if param.nullable else ""),
    }


# -- datasets ------------------------------------------------------------------------------------


# The upload form's labelled field: --unlabelled stores rows without labels, to predict in a batch.
Labelled = Annotated[
    bool,
    typer.Option(
        "--labelled/--unlabelled",
        help="--unlabelled: the rows have no label column (new rows to predict with pgs batches "
        "create); an svmlight line's leading label is not kept",
    ),
]


@datasets.command("upload")
@covers(*UPLOAD_OPERATIONS)
def datasets_upload(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            exists=True, dir_okay=False, help="svmlight/LIBSVM or CSV (plain or gzip), Parquet or Arrow"
        ),
    ],
    name: Annotated[str | None, typer.Option(help="Default: the file name")] = None,
    format: Annotated[str, typer.Option(help="auto | svmlight | csv | parquet | arrow")] = "auto",
    label_column: Annotated[
        str | None, typer.Option(help="CSV: number or header name; Parquet, Arrow: name")
    ] = None,
    task: Annotated[str, typer.Option(help="auto | classification | regression")] = "auto",
    na_values: Annotated[
        str | None,
        typer.Option(
            help="CSV: the cells that are missing values, comma-separated (default: "
            "NA,N/A,NaN,nan,null,NULL,None; an empty cell always is)"
        ),
    ] = None,
    header: Annotated[str, typer.Option(help="CSV: auto | true | false (a header line of names)")] = "auto",
    zero_based: Annotated[
        str, typer.Option(help="svmlight: auto | true | false (feature indices start at 0)")
    ] = "auto",
    n_features: Annotated[
        int | None, typer.Option(help="The width to store (a test set's: its training set's)")
    ] = None,
    tags: Annotated[str | None, typer.Option(metavar="T1,T2,...", help="Tags, comma-separated")] = None,
    description: Annotated[str | None, typer.Option(help="A description")] = None,
    labelled: Labelled = True,
    compress: Annotated[bool, typer.Option(help="gzip a plain file on the way")] = False,
    resumable: Annotated[
        bool | None,
        typer.Option(
            help="Send in chunks that survive a dropped connection (running the command again "
            "resumes); default: for files of 64 MiB and more"
        ),
    ] = None,
    as_json: Json = False,
) -> None:
    """Upload a data set (a progress bar for big files)."""
    ds = _client(ctx).datasets.upload(
        file,
        name,
        format=format,
        label_column=label_column,
        task=task,
        na_values=None if na_values is None else na_values.split(","),
        header=header,
        zero_based=zero_based,
        n_features=n_features,
        tags=None if tags is None else [t.strip() for t in tags.split(",") if t.strip()],
        description=description,
        labelled=labelled,
        compress=compress,
        resumable=resumable,
    )
    output.show(ds, as_json, title=f"dataset {ds.id}")


@datasets.command("import")
@covers("POST /v1/datasets/import", "GET /v1/uploads/{upload_id}")
def datasets_import(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(help="A path, file:// or http(s) URL under the service's PGS_IMPORT_ROOTS")
    ],
    name: Annotated[str | None, typer.Option(help="Default: the file name")] = None,
    format: Annotated[str, typer.Option(help="auto | svmlight | csv | parquet | arrow")] = "auto",
    task: Annotated[str, typer.Option(help="auto | classification | regression")] = "auto",
    label_column: Annotated[
        str | None, typer.Option(help="CSV: number or header name; Parquet, Arrow: name")
    ] = None,
    header: Annotated[str, typer.Option(help="CSV: auto | true | false")] = "auto",
    zero_based: Annotated[str, typer.Option(help="svmlight: auto | true | false")] = "auto",
    n_features: Annotated[
        int | None, typer.Option(help="The data set's width (a test set's: its training set's)")
    ] = None,
    na_values: Annotated[
        str | None, typer.Option(help="CSV: the cells that are missing values, comma-separated")
    ] = None,
    description: Annotated[str | None, typer.Option(help="The data set's description")] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", metavar="TAG", help="A tag of the data set (repeat it)")
    ] = None,
    labelled: Labelled = True,
    as_json: Json = False,
) -> None:
    """Have the service read a data set itself (no upload), and wait for it."""
    given = {
        "labelled": None if labelled else "false",
        "label_column": label_column,
        "n_features": n_features,
        "na_values": na_values,
        "description": description,
        "tags": None if not tag else ",".join(tag),
    }
    fields = {k: v for k, v in given.items() if v is not None}
    ds = _client(ctx).datasets.import_source(
        source, name, format=format, task=task, header=header, zero_based=zero_based, **fields
    )
    output.show(ds, as_json, title=f"dataset {ds.id}")


@datasets.command("ls")
@covers("GET /v1/datasets")
def datasets_ls(
    ctx: typer.Context, name: Name = None, tag: Tags = None, limit: Limit = 20, as_json: Json = False
) -> None:
    """List data sets."""
    output.show(list(_client(ctx).datasets.list(limit, name=name, tag=tag)), as_json, DATASET_COLUMNS)


@datasets.command("show")
@covers("GET /v1/datasets/{dataset_id}")
def datasets_show(ctx: typer.Context, dataset_id: DatasetId, as_json: Json = False) -> None:
    """One data set."""
    output.show(_client(ctx).datasets.get(dataset_id), as_json, title=f"dataset {dataset_id}")


@datasets.command("rm")
@covers("DELETE /v1/datasets/{dataset_id}")
def datasets_rm(
    ctx: typer.Context,
    dataset_id: DatasetId,
    force: Annotated[
        bool,
        typer.Option("--force", help="Also when models or studies come from it (they keep its metadata)"),
    ] = False,
) -> None:
    """Delete a data set (refused while a queued or running job uses it)."""
    _client(ctx).datasets.delete(dataset_id, force=force)
    output.stderr.print(f"deleted dataset {dataset_id}")


# -- jobs ----------------------------------------------------------------------------------------


def _param(text: str) -> tuple[str, Any]:
    """``name=value``; the value is read as JSON (numbers, true, null, "..."), else a string."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise typer.BadParameter(f"{text!r} is not name=value")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def _option(name: str, value: Any) -> Any:
    """A selection option as the service reads it: ``grid`` from ``1e-3,1e-4``, text (``folds``,
    ``patience``: a number, a word or null) as ``--param`` reads its values."""
    if name == "grid":
        try:
            return [float(sigma) for sigma in value.split(",")]
        except ValueError as exc:
            raise typer.BadParameter(f"{value!r} is not a comma-separated list of numbers") from exc
    return _param(f"{name}={value}")[1] if isinstance(value, str) else value


def _wait_job(c: Client, job_id: int, as_json: bool) -> None:
    """Follow a job with a live bar; show it; exit 1 if it failed or was cancelled."""
    try:
        job = c.jobs.wait(job_id, progress=True)
    except (JobFailed, JobCancelled) as exc:
        output.show(exc.job, as_json, title=f"job {job_id}")
        raise
    output.show(job, as_json, title=f"job {job_id}")


@jobs.command("create")
@covers("POST /v1/jobs")
def jobs_create(
    ctx: typer.Context,
    dataset: Annotated[int, typer.Option(help="Training data set id")],
    solver: Annotated[str, typer.Option(help="See `pgs solvers`")] = "pgs",
    param: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME=VALUE", help="Solver parameter (repeat it), e.g. --param sigma=1e-5"),
    ] = None,
    test_dataset: Annotated[int | None, typer.Option(help="Evaluation data set id")] = None,
    test_fraction: Annotated[float | None, typer.Option(help="Hold out this fraction")] = None,
    target: Annotated[
        list[float] | None,
        typer.Option(metavar="SCORE", help="Test score whose time-to-target is recorded (repeat it)"),
    ] = None,
    time_budget: Annotated[float | None, typer.Option(help="Stop after this many solver seconds")] = None,
    sigma: Annotated[
        str | None, typer.Option(help='The sigma parameter: a number, or "auto" to choose it by a path')
    ] = None,
    folds: Annotated[
        str | None, typer.Option(help="sigma auto: cross-validation folds, validation or auto")
    ] = None,
    validation_fraction: Annotated[
        float | None,
        typer.Option(help="sigma auto or early stopping: share of the training rows held out to validate"),
    ] = None,
    grid: Annotated[
        str | None, typer.Option(metavar="S1,S2,...", help="sigma auto: the sigmas of the path")
    ] = None,
    n_sigmas: Annotated[int | None, typer.Option(help="sigma auto: sigmas of the default grid")] = None,
    sigma_min: Annotated[
        float | None, typer.Option(help="sigma auto: smallest sigma of the default grid")
    ] = None,
    sigma_max: Annotated[
        float | None, typer.Option(help="sigma auto: largest sigma of the default grid")
    ] = None,
    patience: Annotated[
        str | None,
        typer.Option(help="sigma auto: stop after this many sigmas without a better score; null: never"),
    ] = None,
    metric: Annotated[str | None, typer.Option(help="sigma auto: accuracy, rmse or auto")] = None,
    early_stopping: Annotated[
        bool,
        typer.Option(
            "--early-stopping", help="Stop once the validation score stops improving (stochastic solvers)"
        ),
    ] = False,
    n_iter_no_change: Annotated[
        int | None, typer.Option(help="early stopping: checkpoints in a row without improvement")
    ] = None,
    tol: Annotated[
        float | None, typer.Option(help="early stopping: the least gain of the score that counts")
    ] = None,
    init_model: Annotated[
        str | None,
        typer.Option(metavar="MODEL", help="Start from this stored model (id or name@alias) to refresh it"),
    ] = None,
    target_metric: Annotated[
        str | None, typer.Option(help="The metric --target values are of (f1, roc_auc, r2, ...)")
    ] = None,
    threshold: Annotated[
        str | None,
        typer.Option(
            metavar="VALUE|METRIC",
            help="Binary classifier: the decision threshold, or a metric (f1, ...) that chooses "
            "it on validation rows",
        ),
    ] = None,
    threshold_validation_fraction: Annotated[
        float | None,
        typer.Option(help="--threshold METRIC: share of the training rows it is chosen on (default 0.2)"),
    ] = None,
    class_weight: Annotated[
        str | None,
        typer.Option(
            metavar='balanced|{"LABEL": W}',
            help='Weigh the classes: "balanced", or a JSON object of label to weight',
        ),
    ] = None,
    weight_column: Annotated[
        str | None, typer.Option(help="The CSV/Parquet column whose values weigh the rows")
    ] = None,
    split_seed: Annotated[int, typer.Option(help="Seed of the --test-fraction split")] = 0,
    preprocessing: Annotated[
        str | None,
        typer.Option(
            metavar="JSON",
            help='How the features are prepared, e.g. {"scaling": "none", "impute": false, '
            '"ignore": ["id"]} (scaling: auto, standard, maxabs or none)',
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="The job's name")] = None,
    description: Annotated[str | None, typer.Option(help="The job's description")] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", metavar="TAG", help="A tag of the job (repeat it)")
    ] = None,
    model_name: Annotated[
        str | None, typer.Option(help="Register the model as the next version of this name")
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Follow it until it ends")] = False,
    as_json: Json = False,
) -> None:
    """Queue a training job. --sigma auto chooses sigma by a cross-validated regularisation path,
    shaped by --folds, --grid, ... (the service's defaults for those not given). --early-stopping
    stops it once the score on --validation-fraction of its rows stops improving. --init-model
    starts the fit from a stored model's weights and preprocessing (a refresh on new rows).
    --class-weight and --weight-column weigh the rows in the loss and the test score."""
    c = _client(ctx)
    params = dict(map(_param, param or []))
    if sigma is not None:
        params["sigma"] = _param(f"sigma={sigma}")[1]
    if early_stopping:
        stopping = {"n_iter_no_change": n_iter_no_change, "tol": tol}
        params |= {"early_stopping": True} | {k: v for k, v in stopping.items() if v is not None}
        if params.get("sigma") != "auto" and validation_fraction is not None:
            # Without sigma auto the split is early stopping's own, a param (with it: the selection's).
            params["validation_fraction"], validation_fraction = validation_fraction, None
    if class_weight is not None:
        params["class_weight"] = _param(f"class_weight={class_weight}")[1]
    options = {
        "folds": folds,
        "validation_fraction": validation_fraction,
        "grid": grid,
        "n_sigmas": n_sigmas,
        "sigma_min": sigma_min,
        "sigma_max": sigma_max,
        "patience": patience,
        "metric": metric,
    }
    selection = {name: _option(name, value) for name, value in options.items() if value is not None}
    job = c.jobs.create(
        dataset,
        solver=solver,
        params=params,
        selection=selection or None,
        test_dataset=test_dataset,
        test_fraction=test_fraction,
        targets=target or [],
        target_metric=target_metric,
        threshold=_threshold(threshold, threshold_validation_fraction),
        time_budget_s=time_budget,
        init_model=init_model,
        weight_column=weight_column,
        split_seed=split_seed,
        preprocessing=None if preprocessing is None else _json_object("--preprocessing", preprocessing),
        name=name,
        description=description,
        tags=tag,
        model_name=model_name,
    )
    if wait:
        _wait_job(c, job.id, as_json)
    else:
        output.show(job, as_json, title=f"job {job.id}")


def _json_object(option: str, text: str) -> dict[str, Any]:
    """An option whose value is a JSON object; anything else is a usage error (exit 2)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"{text!r} is not JSON ({exc})", param_hint=option) from exc
    if not isinstance(value, dict):
        raise typer.BadParameter(f"{text!r} is not a JSON object", param_hint=option)
    return value


def _threshold(text: str | None, validation_fraction: float | None) -> dict[str, Any] | None:
    """--threshold: a number is the threshold, a name the metric that chooses it (on
    ``validation_fraction`` of the training rows; the service's default if None)."""
    if text is None:
        if validation_fraction is not None:
            raise typer.BadParameter("needs --threshold", param_hint="--threshold-validation-fraction")
        return None
    try:
        chosen: dict[str, Any] = {"value": float(text)}
    except ValueError:
        chosen = {"metric": text}
    return chosen if validation_fraction is None else chosen | {"validation_fraction": validation_fraction}


@jobs.command("ls")
@covers("GET /v1/jobs")
def jobs_ls(
    ctx: typer.Context,
    status: Annotated[str | None, typer.Option(help="queued, running, succeeded, ...")] = None,
    dataset: Annotated[int | None, typer.Option(help="Only jobs on this data set")] = None,
    solver: Annotated[str | None, typer.Option(help="Only jobs of this solver")] = None,
    name: Name = None,
    tag: Tags = None,
    limit: Limit = 20,
    as_json: Json = False,
) -> None:
    """List jobs, newest first."""
    c = _client(ctx)
    items = list(c.jobs.list(limit, status=status, dataset=dataset, solver=solver, name=name, tag=tag))
    output.show(_scored(items, as_json), as_json, JOB_COLUMNS)


def _show_with_test_metrics(item: Any, as_json: bool, title: str) -> None:
    """A job or model; in a table, its test metrics (metrics.test) as tables of their own."""
    test = (item.metrics or {}).get("test")
    if as_json or test is None:
        output.show(item, as_json, title=title)
        return
    shown = output.plain(item)
    shown["metrics"] = {k: v for k, v in shown["metrics"].items() if k != "test"}
    output.show(shown, as_json, title=title)
    output.test_metrics(test, f"{title}: test metrics")


@jobs.command("show")
@covers("GET /v1/jobs/{job_id}")
def jobs_show(ctx: typer.Context, job_id: JobId, as_json: Json = False) -> None:
    """One job: status, progress, metrics (the test metrics, per class and the confusion matrix)."""
    _show_with_test_metrics(_client(ctx).jobs.get(job_id), as_json, f"job {job_id}")


@jobs.command("watch")
@covers("GET /v1/jobs/{job_id}")
def jobs_watch(ctx: typer.Context, job_id: JobId, as_json: Json = False) -> None:
    """Follow a job: a live bar with its progress and current test score. Exit 1 if it fails
    or is cancelled."""
    _wait_job(_client(ctx), job_id, as_json)


@jobs.command("trace")
@covers("GET /v1/jobs/{job_id}/trace")
def jobs_trace(ctx: typer.Context, job_id: JobId, as_json: Json = False) -> None:
    """The run's checkpoints: iteration, solver seconds, objective, test score (and the duality
    gap of a dual solver's run)."""
    points = _client(ctx).jobs.trace(job_id)
    # sdca records the gap that stops it; the other solvers leave it null.
    gap = ["duality_gap"] if any(p.duality_gap is not None for p in points) else []
    output.show(points, as_json, TRACE_COLUMNS + gap, title=f"job {job_id}")


@jobs.command("plot")
@covers("GET /v1/jobs/{job_id}/plot")
def jobs_plot(
    ctx: typer.Context,
    job_id: JobId,
    out: Annotated[Path, typer.Option("-o", "--output", help="File to write (.svg or .png)")],
    kind: Annotated[str, typer.Option(help="trace | path (the sigma auto path)")] = "trace",
) -> None:
    """Save the trace figure, or the regularisation path of a job whose sigma was auto."""
    fmt = "png" if out.suffix.lower() == ".png" else "svg"
    out.write_bytes(_client(ctx).jobs.plot(job_id, format=fmt, kind=kind))
    output.stderr.print(f"wrote {out}")


@jobs.command("cancel")
@covers("POST /v1/jobs/{job_id}/cancel")
def jobs_cancel(ctx: typer.Context, job_id: JobId, as_json: Json = False) -> None:
    """Cancel a queued or running job."""
    output.show(_client(ctx).jobs.cancel(job_id), as_json, title=f"job {job_id}")


# -- models and predictions ----------------------------------------------------------------------


@models.command("ls")
@covers("GET /v1/models")
def models_ls(
    ctx: typer.Context, name: Name = None, tag: Tags = None, limit: Limit = 20, as_json: Json = False
) -> None:
    """List models (--name: the versions of that name)."""
    items = list(_client(ctx).models.list(limit, name=name, tag=tag))
    output.show(_scored(items, as_json), as_json, MODEL_COLUMNS)


@models.command("show")
@covers("GET /v1/models/{model_id}")
def models_show(ctx: typer.Context, model_id: ModelArg, as_json: Json = False) -> None:
    """One model, with its test metrics, per class and the confusion matrix."""
    _show_with_test_metrics(_client(ctx).models.get(model_id), as_json, f"model {model_id}")


@models.command("coefficients")
@covers("GET /v1/models/{model_id}/coefficients")
def models_coefficients(
    ctx: typer.Context,
    model_id: ModelArg,
    class_: Annotated[
        str | None, typer.Option("--class", help="The class whose weights to list (multiclass)")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many, the largest first.")] = 20,
    as_json: Json = False,
) -> None:
    """What the model learned: its weights by name, per unit of the raw columns (a category as
    column=value), the largest |weight| on the scaled features first."""
    c = _client(ctx)
    page = c.models.coefficient_page(model_id, class_=class_, limit=1)
    items = list(c.models.coefficients(model_id, class_=class_, limit=limit))
    if as_json:
        output.emit_json(
            {"class": page.class_, "intercept": page.intercept, "total": page.total, "items": items}
        )
        return
    label = "" if page.class_ is None else f", class {page.class_}"
    title = f"model {model_id}{label}: {page.total} non-zero weights, intercept {page.intercept:.6g}"
    output.table(items, COEFFICIENT_COLUMNS, title=title)


@models.command("rm")
@covers("DELETE /v1/models/{model_id}")
def models_rm(ctx: typer.Context, model_id: ModelArg) -> None:
    """Delete a model and its files."""
    _client(ctx).models.delete(model_id)
    output.stderr.print(f"deleted model {model_id}")


@app.command("predict")
@covers("POST /v1/models/{model_id}/predict")
def predict_cmd(
    ctx: typer.Context,
    model: ModelArg,
    file: Annotated[
        str,
        typer.Argument(
            help="A CSV with a header (columns by name, in any order; a label column is left out) "
            "or svmlight lines (labels ignored), plain or gzip; - reads stdin"
        ),
    ],
    format: Annotated[
        str, typer.Option(help="auto (by extension, else the first line) | csv | svmlight")
    ] = "auto",
    extra_features: Annotated[
        str, typer.Option(help="fail | ignore: leave out features beyond the model's width")
    ] = "fail",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of CSV.")] = False,
) -> None:
    """Predict every row of FILE, sent to the service as it is; CSV on stdout (prediction,
    scores, probabilities), the predictions in the labels of the training file."""
    c = _client(ctx)
    source: IO[bytes] | Path = sys.stdin.buffer if file == "-" else Path(file)
    if isinstance(source, Path) and not source.is_file():
        raise typer.BadParameter(f"{file!r} is not a file", param_hint="FILE")
    try:
        pred = c.models.predict_file(model, source, format=format, extra_features=extra_features)
    except ValueError as exc:  # a format the service's predict does not read, an empty file
        raise typer.BadParameter(str(exc), param_hint="FILE") from exc
    if as_json:
        predictions.emit_json(pred)
    else:
        predictions.write_csv(pred, c.models.get(model).classes, sys.stdout)


# -- studies -------------------------------------------------------------------------------------


@studies.command("create")
@covers("POST /v1/studies")
def studies_create(
    ctx: typer.Context,
    spec: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON body of POST /v1/studies")],
    wait: Annotated[bool, typer.Option("--wait", help="Follow it until it ends")] = False,
    as_json: Json = False,
) -> None:
    """Start a study from a JSON file (dataset_id, runs, sizes, targets, test_fraction, ...)."""
    body = json.loads(spec.read_text())
    c = _client(ctx)
    try:
        study = c.studies.create(
            body.pop("dataset_id"), test_dataset=body.pop("test_dataset_id", None), **body
        )
    except (KeyError, TypeError) as exc:
        raise typer.BadParameter(f"{spec}: not a study request ({exc})") from exc
    if wait:
        _show_study(c.studies.wait(study, progress=True), as_json, finished=True)
    else:
        _show_study(study, as_json)


def _show_study(study: Any, as_json: bool, *, finished: bool = False) -> None:
    """Show a study; ``finished``: it was followed to its end, exit 1 unless it succeeded."""
    if as_json:
        output.emit_json(study)
    else:
        output.record(study, title=f"study {study.id}")
        if study.table:
            output.table(study.table, STUDY_ROW_COLUMNS, title="time to target")
    if finished and study.status != "succeeded":
        raise typer.Exit(EXIT_FINISHED_BADLY)


@studies.command("ls")
@covers("GET /v1/studies")
def studies_ls(ctx: typer.Context, limit: Limit = 20, as_json: Json = False) -> None:
    """List studies."""
    output.show(list(_client(ctx).studies.list(limit)), as_json, STUDY_COLUMNS)


@studies.command("show")
@covers("GET /v1/studies/{study_id}")
def studies_show(ctx: typer.Context, study_id: StudyId, as_json: Json = False) -> None:
    """One study with its time-to-target table."""
    _show_study(_client(ctx).studies.get(study_id), as_json)


@studies.command("watch")
@covers("GET /v1/studies/{study_id}")
def studies_watch(ctx: typer.Context, study_id: StudyId, as_json: Json = False) -> None:
    """Follow a study until all its jobs have ended; exit 1 unless they all succeeded."""
    _show_study(_client(ctx).studies.wait(study_id, progress=True), as_json, finished=True)


@studies.command("jobs")
@covers("GET /v1/studies/{study_id}/jobs")
def studies_jobs(ctx: typer.Context, study_id: StudyId, limit: Limit = 100, as_json: Json = False) -> None:
    """The study's jobs."""
    items = list(_client(ctx).studies.jobs(study_id, limit))
    output.show(_scored(items, as_json), as_json, JOB_COLUMNS)


@studies.command("cancel")
@covers("POST /v1/studies/{study_id}/cancel")
def studies_cancel(ctx: typer.Context, study_id: StudyId, as_json: Json = False) -> None:
    """Cancel every queued or running job of the study."""
    _show_study(_client(ctx).studies.cancel(study_id), as_json)


@studies.command("plot")
@covers("GET /v1/studies/{study_id}/plot")
def studies_plot(
    ctx: typer.Context,
    study_id: StudyId,
    out: Annotated[Path, typer.Option("-o", "--output", help="File to write (.svg or .png)")],
    y: Annotated[str, typer.Option(help="seconds | iterations")] = "seconds",
) -> None:
    """Save the time-to-target figure."""
    fmt = "png" if out.suffix.lower() == ".png" else "svg"
    out.write_bytes(_client(ctx).studies.plot(study_id, y=y, format=fmt))
    output.stderr.print(f"wrote {out}")


# -- the account and the service -------------------------------------------------------------------

for command in (service.me, service.audit, service.health, service.metrics):
    app.command()(command)
