"""Pydantic request and response models of the HTTP API (XCreate / XRead)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    computed_field,
    field_validator,
    model_validator,
)

Task = Literal["binary", "multiclass", "regression"]
Label = int | float | str

# -- names, descriptions, tags (services/registry.py) -------------------------------------------

# Tags are plain tokens ("team=nlp", "prod", "v1.2"): no quotes or spaces, so a list filter can
# match one inside the stored JSON list exactly.
Tag = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:=/+-]{0,63}$")]


# A model name is a path segment of name@alias: no "@", "/" or spaces, and not all digits (an
# all-digit reference is a model id).
def _not_all_digits(name: str) -> str:
    if name.isdigit():
        raise ValueError("a model name is not all digits (that is a model id)")
    return name


ModelName = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"), AfterValidator(_not_all_digits)
]
AliasName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")]
Description = Annotated[str, StringConstraints(max_length=4000)]


def _distinct_tags(tags: list[str] | None) -> list[str] | None:
    if tags is not None and len(set(tags)) != len(tags):
        raise ValueError("tags must be distinct")
    return tags


Tags = Annotated[list[Tag], Field(max_length=32), AfterValidator(_distinct_tags)]


def _printable(value: str | None) -> str | None:
    from app.services.uploads import name_problem

    problem = None if value is None else name_problem(value)
    if problem:
        raise ValueError(f"the name {problem}")
    return value


PrintableName = Annotated[str, StringConstraints(min_length=1, max_length=255), AfterValidator(_printable)]


class LabelsPatch(BaseModel):
    """What every PATCH may change; a field left out stays as it is, null clears it."""

    model_config = ConfigDict(extra="forbid")

    description: Description | None = None
    tags: Tags | None = None

    def changes(self) -> dict[str, Any]:
        """The fields the request set (null tags mean no tags)."""
        out = self.model_dump(exclude_unset=True)
        if "tags" in out and out["tags"] is None:
            out["tags"] = []
        return out


class UploadError(BaseModel):
    status: int = Field(description="The HTTP status the failure would have had")
    detail: str


class UploadRead(BaseModel):
    """A resumable upload or an import, until (and after) it becomes a data set."""

    id: str
    state: Literal["receiving", "parsing", "done", "failed"] = Field(
        description="receiving: taking bytes (tus PATCH); parsing: being fetched, parsed and "
        "stored; done: dataset_id is the data set; failed: error says why (a failed upload can "
        "be finished again)"
    )
    length: int = Field(
        description="Bytes declared (tus Upload-Length); for an import, its "
        "size once done (a URL's cap while it is fetched)"
    )
    offset: int = Field(description="Bytes received so far")
    filename: str
    source: str | None = Field(default=None, description="An import's path or URL")
    created_at: dt.datetime
    expires_at: dt.datetime = Field(description="When an unfinished upload is deleted")
    dataset_id: int | None = None
    error: UploadError | None = None


class DatasetRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    format: Literal["svmlight", "csv"]
    compressed: bool
    n_samples: int
    n_features: int
    nnz: int
    task: Task
    classes: list[Label] | None = Field(description="Sorted distinct labels (classification)")
    index_base: int = Field(description="1 if svmlight feature indices in the file were 1-based")
    sha256: str = Field(description="SHA-256 of the file as uploaded")
    size_bytes: int = Field(description="Size of the file as uploaded")
    created_at: dt.datetime
    feature_names: list[str] | None = Field(
        default=None, description="The CSV header's feature columns (null without a header)"
    )
    label_name: str | None = Field(default=None, description="The CSV header's label column")
    text_columns: list[int] | None = Field(
        default=None,
        description="0-based feature columns holding text (CSV; one-hot encoded by a job's preprocessing)",
    )
    n_missing: int = Field(
        default=0, description="Empty numeric CSV cells (imputed by a job's preprocessing)"
    )
    description: str | None = None
    tags: list[str] = []
    task_source: Literal["guessed", "declared"] = Field(
        description="Whether the task was guessed from the labels or declared (upload or PATCH)"
    )

    @computed_field(description="How the task was chosen, and how to change it")
    def task_note(self) -> str:
        change = f'PATCH /v1/datasets/{self.id} with {{"task": "%s"}} if they are %s'
        if self.task_source == "declared":
            return f"{self.task}, as declared"
        if self.task == "regression":
            return (
                "regression, guessed: the labels are not all integers, or there are more "
                "than 20 distinct ones; " + change % ("classification", "classes")
            )
        return f"{self.task}, guessed from {len(self.classes or [])} distinct label(s); " + change % (
            "regression",
            "values to regress",
        )

    @computed_field(description="What the data set cannot be used for (stored all the same)")
    def warnings(self) -> list[str]:
        if self.task != "regression" and len(self.classes or []) < 2:
            # Kept: it can still evaluate a model (test_dataset_id), but no job can train on it.
            return [
                f"the data set has a single class ({(self.classes or ['?'])[0]!r}): no "
                "classifier can be trained on it; it can serve as evaluation data"
            ]
        return []


class DatasetPatch(LabelsPatch):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"name": "heart", "tags": ["medical"], "task": "classification"}]},
    )

    name: PrintableName | None = None
    task: Literal["classification", "regression"] | None = Field(
        default=None, description="Correct a guessed task; classes are derived from the labels"
    )


class DatasetList(BaseModel):
    items: list[DatasetRead]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null at the end")


class Preprocessing(BaseModel):
    """Learned on the training rows only (never the held-out split), stored with the model and
    applied at prediction, so callers always send raw features."""

    model_config = ConfigDict(extra="forbid")

    scaling: Literal["auto", "standard", "maxabs", "none"] = Field(
        default="auto",
        description="auto: standard (zero mean, unit variance) for CSV data, maxabs (keeps "
        "sparsity) for svmlight data",
    )
    impute: bool = Field(default=True, description="Missing numeric CSV values become the training mean")
    ignore: list[int | str] = Field(
        default_factory=list,
        max_length=10_000,
        description="Columns left out (an id column): CSV header names or 0-based feature indices",
    )


class JobCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "dataset_id": 1,
                    "test_fraction": 0.25,
                    "solver": "pgs",
                    "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 20000, "random_state": 0},
                    "targets": [0.8, 0.84],
                }
            ]
        },
    )

    dataset_id: int = Field(description="Training data set")
    test_dataset_id: int | None = Field(default=None, description="Evaluation data set")
    test_fraction: float | None = Field(
        default=None, gt=0.0, lt=1.0, description="Hold out this fraction of the training set"
    )
    split_seed: int = Field(default=0, ge=0, description="Seed of the test_fraction split")
    solver: str = Field(default="pgs", description="Training algorithm (see the registry)")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Estimator parameters (PGSClassifier / PGSRegressor), validated before queueing",
    )
    targets: list[float] = Field(
        default_factory=list,
        max_length=64,
        description="Test accuracies (or RMSEs for regression) whose time-to-target is recorded",
    )
    time_budget_s: float | None = Field(
        default=None,
        gt=0.0,
        le=7 * 86400,
        description="Stop after this many solver seconds, or as many seconds of wall-clock time",
    )
    preprocessing: Preprocessing | None = Field(
        default_factory=Preprocessing,
        description="Scaling, imputation, one-hot encoding of text columns and ignored columns, "
        "fitted on the training rows; null: the raw features as they are",
    )
    name: PrintableName | None = None
    description: Description | None = None
    tags: Tags = []
    model_name: ModelName | None = Field(
        default=None, description="Register the trained model as the next version of this name"
    )

    @field_validator("targets")
    @classmethod
    def _finite_targets(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(t) for t in v):
            raise ValueError("targets must be finite numbers")
        return v

    @model_validator(mode="after")
    def _one_evaluation_source(self) -> JobCreate:
        if self.test_dataset_id is not None and self.test_fraction is not None:
            raise ValueError("give test_dataset_id or test_fraction, not both")
        return self


class JobProgress(BaseModel):
    iteration: int | None
    n_iter: int | None
    fraction: float | None = Field(description="iteration / n_iter")
    samples_seen: int | None


class JobRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    solver: str
    task: Task
    dataset_id: int | None
    test_dataset_id: int | None
    test_fraction: float | None
    split_seed: int
    params: dict[str, Any]
    targets: list[float]
    time_budget_s: float | None
    preprocessing: dict[str, Any] | None = Field(
        default=None,
        description="The resolved preprocessing: scaling, impute, categorical "
        "(one-hot encoded columns), ignore (column indices), sparse; null: raw features",
    )
    progress: JobProgress
    metrics: dict[str, Any] | None = Field(
        description="solver_seconds, compile_seconds (kernels loaded or compiled before the solver "
        "clock started), objective, test_accuracy (classification) or test_rmse "
        "(regression), time_to_target: {target: solver seconds or null}; for a job that "
        "trained from its shards (data over PGS_WORKER_MEMORY_BYTES), shard_window: how many "
        "shards the sampler kept open and interleaved"
    )
    time_limit_s: float | None = Field(
        default=None,
        description="Wall-clock seconds the run may take: time_budget_s, or the server's "
        "PGS_MAX_JOB_SECONDS when the job gave none",
    )
    stop_reason: str | None = Field(
        description="completed | converged | target_score | time_budget (the job's own budget "
        "ran out) | time_limit (the server's PGS_MAX_JOB_SECONDS ran out; the model is partial) "
        "| cancelled"
    )
    error: str | None
    model_id: int | None
    attempts: int
    cancel_requested: bool
    created_at: dt.datetime
    started_at: dt.datetime | None
    waiting_reason: str | None = Field(
        default=None,
        description="Why a queued job has not started: the worker processes are starting, or "
        "every worker is busy (null once it runs)",
    )
    finished_at: dt.datetime | None
    # Set for the jobs of a study (null otherwise); see StudyCreate.
    study_id: int | None = None
    study_run: int | None = Field(default=None, description="Index of the study's run")
    study_repeat: int | None = None
    train_size: int | None = Field(
        default=None, description="Trained on a seeded subsample of this many training rows"
    )
    subsample_seed: int | None = None
    select_sigma: dict[str, Any] | None = Field(
        default=None, description="Sigma grid searched on a validation split of the training rows"
    )
    name: str | None = None
    description: str | None = None
    tags: list[str] = []
    model_name: str | None = None


class JobPatch(LabelsPatch):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"name": "heart baseline", "tags": ["nightly"]}]}
    )

    name: PrintableName | None = None


class JobList(BaseModel):
    items: list[JobRead]
    next_cursor: str | None


class TracePointRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    iteration: int
    samples_seen: int
    solver_seconds: float
    objective: float | None
    test_score: float | None
    nnz_weights: int | None = None
    data_accesses: int | None = None


class TraceRead(BaseModel):
    job_id: int
    score_name: Literal["accuracy", "rmse"] | None
    points: list[TracePointRead]


class ModelRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    solver: str
    task: Task
    estimator: str
    params: dict[str, Any]
    n_features: int
    classes: list[Label] | None
    job_id: int | None
    dataset_id: int | None
    metrics: dict[str, Any] | None
    nnz_weights: int | None = None
    size_bytes: int
    partial: bool = Field(
        default=False,
        description="The last iterate of a run that was cancelled or reached "
        "the server's time limit, not a finished fit",
    )
    partial_reason: Literal["cancelled", "time_limit"] | None = None
    created_at: dt.datetime
    preprocessing: dict[str, Any] | None = Field(
        default=None,
        description="The fitted preprocessing's settings (as the job's); applied to every prediction",
    )
    feature_names: list[str] | None = Field(
        default=None, description="Names a prediction row may be keyed by (the CSV header)"
    )
    name: str | None = Field(default=None, description="The model name this is a version of")
    version: int | None = Field(default=None, description="Version number within the name")
    description: str | None = None
    tags: list[str] = []
    training_dataset: dict[str, Any] | None = Field(
        default=None, description="The training data set as it was, kept when it was deleted"
    )


class ModelPatch(LabelsPatch):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"name": "heart-clf", "description": "sigma 1e-4"}]}
    )

    name: ModelName | None = Field(
        default=None, description="Register as the next version of this name (null: no name)"
    )


class ModelList(BaseModel):
    items: list[ModelRead]
    next_cursor: str | None


class SparseInstance(BaseModel):
    indices: list[int] = Field(description="0-based feature indices, distinct")
    values: list[float]


class PredictRequest(BaseModel):
    """Documentation of the JSON body; the route parses it by hand for speed."""

    instances: list[list[float] | SparseInstance] = Field(min_length=1)


class PredictResponse(BaseModel):
    predictions: list[Label]
    scores: list[float] | list[list[float]] = Field(
        description="Decision values: one per row (binary, regression) or one per class"
    )
    probabilities: list[list[float]] | None = Field(
        default=None, description="Class probabilities (logistic models only), columns = classes"
    )


# -- time-to-accuracy studies --------------------------------------------------------------------


class StudyRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    solver: str = Field(default="pgs", description="Training algorithm (see the registry)")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Estimator parameters, validated as for a job"
    )
    label: str | None = Field(
        default=None, max_length=80, description="Legend text; default: solver and loss/p"
    )


class SelectSigma(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grid: list[float] = Field(min_length=1, max_length=20, description="Candidate sigmas (> 0)")
    validation_fraction: float = Field(
        default=0.2,
        gt=0.0,
        lt=1.0,
        description="Part of each job's m training rows held out to score the grid",
    )

    @field_validator("grid")
    @classmethod
    def _positive_distinct(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(s) and s > 0 for s in v):
            raise ValueError("grid values must be finite and > 0")
        if len(set(v)) != len(v):
            raise ValueError("grid values must be distinct")
        return v


class StudyCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "dataset_id": 1,
                    "test_fraction": 0.25,
                    "runs": [
                        {
                            "solver": "pgs",
                            "params": {"loss": "logistic", "p": 2.0, "sigma": 1e-3, "n_iter": 20000},
                        },
                        {
                            "solver": "pgs",
                            "params": {"loss": "logistic", "p": 1.8, "sigma": 1e-3, "n_iter": 20000},
                        },
                    ],
                    "sizes": [50, 100, 200],
                    "repeats": 5,
                    "targets": [0.8, 0.84],
                    "seed": 0,
                }
            ]
        },
    )

    name: str | None = Field(default=None, max_length=255)
    dataset_id: int = Field(description="Training data set; sizes are subsamples of it")
    test_dataset_id: int | None = Field(default=None, description="Evaluation data set")
    test_fraction: float | None = Field(
        default=None,
        gt=0.0,
        lt=1.0,
        description="Hold out this fraction of the data set (seeded by seed) for evaluation",
    )
    runs: list[StudyRun] = Field(min_length=1, max_length=16)
    sizes: list[int] = Field(min_length=1, max_length=32, description="Training-set sizes m (distinct, >= 2)")
    repeats: int = Field(default=3, ge=1, le=100, description="Subsamples (and runs) per size")
    targets: list[float] = Field(
        min_length=1,
        max_length=16,
        description="Test accuracies (or RMSEs for regression) whose time-to-target is measured",
    )
    seed: int = Field(default=0, ge=0, le=2**31 - 1, description="Seed of the split and subsamples")
    time_budget_s: float | None = Field(
        default=None,
        gt=0.0,
        le=86400,
        description="Per job: stop after this many solver seconds, or as many of wall-clock time",
    )
    select_sigma: SelectSigma | None = Field(
        default=None, description="Choose sigma per job on a validation split of its m rows"
    )

    @field_validator("targets")
    @classmethod
    def _finite_targets(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(t) for t in v):
            raise ValueError("targets must be finite numbers")
        if len(set(v)) != len(v):
            raise ValueError("targets must be distinct")
        return v

    @field_validator("sizes")
    @classmethod
    def _sizes(cls, v: list[int]) -> list[int]:
        if any(m < 2 for m in v):
            raise ValueError("sizes must be at least 2")
        if len(set(v)) != len(v):
            raise ValueError("sizes must be distinct")
        return v

    @model_validator(mode="after")
    def _one_evaluation_source(self) -> StudyCreate:
        if (self.test_dataset_id is None) == (self.test_fraction is None):
            raise ValueError("give exactly one of test_dataset_id and test_fraction")
        return self


StudyStatus = Literal["queued", "running", "succeeded", "failed", "cancelled", "partial"]


class StudyProgress(BaseModel):
    total: int = Field(description="Jobs of the study")
    done: int = Field(description="Jobs in a terminal state")
    fraction: float
    queued: int
    running: int
    succeeded: int
    failed: int
    cancelled: int


class StudyRow(BaseModel):
    run: int = Field(description="Index into runs")
    solver: str
    label: str
    m: int = Field(description="Training-set size")
    target: float
    repeats: int = Field(description="Succeeded jobs of this run and size (the sample)")
    reached: int = Field(description="How many of them reached the target")
    median_seconds: float | None = Field(
        description="Median solver seconds to the target; a run that never reached it counts "
        "as infinitely slow, so this is null when half or more did not"
    )
    min_seconds: float | None = Field(description="Fastest run that reached the target")
    max_seconds: float | None = Field(description="Slowest run that reached the target")
    median_iterations: float | None = Field(description="Same rule as median_seconds")
    min_iterations: int | None
    max_iterations: int | None
    selected_sigmas: list[float] | None = Field(
        description="Sigma chosen by each repeat's validation split (select_sigma only)"
    )


class StudyRead(BaseModel):
    id: int
    name: str | None
    status: StudyStatus = Field(
        description="From its jobs: queued, running, succeeded, failed, cancelled, or partial "
        "(all finished, in more than one way)"
    )
    task: Task
    score_name: Literal["accuracy", "rmse"]
    dataset_id: int | None
    test_dataset_id: int | None
    test_fraction: float | None
    seed: int
    n_train: int = Field(description="Rows of the training part the sizes are drawn from")
    runs: list[StudyRun]
    sizes: list[int]
    repeats: int
    targets: list[float]
    time_budget_s: float | None
    select_sigma: SelectSigma | None
    cancel_requested: bool
    progress: StudyProgress
    created_at: dt.datetime
    finished_at: dt.datetime | None = Field(description="When its last job ended, once all have")
    table: list[StudyRow] | None = Field(
        default=None, description="One row per (run, m, target); left out of listings"
    )


class StudyList(BaseModel):
    items: list[StudyRead]
    next_cursor: str | None


# -- the solver catalogue ------------------------------------------------------------------------


class SolverParamRange(BaseModel):
    min: float = Field(description="Lower bound")
    max: float = Field(description="Upper bound")
    min_inclusive: bool
    max_inclusive: bool


class SolverParamRead(BaseModel):
    name: str
    type: Literal["number", "integer", "boolean", "string"] = Field(
        description="JSON type of its values (besides null and the choices)"
    )
    nullable: bool = Field(description="Whether null is accepted (the description says what it means)")
    default: Any = Field(description="The value when params leaves it out")
    range: SolverParamRange | None = Field(
        description="Interval of its numbers: the solver's own, within the service's bounds"
    )
    choices: list[str] | None = Field(
        description="The strings it accepts: all its values, or keywords beside its numbers"
    )
    description: str


class SolverTaskRead(BaseModel):
    task: Literal["classification", "regression"] = Field(
        description="classification: binary and multiclass data sets"
    )
    estimator: str = Field(description="The estimator class that trains it")
    losses: list[str] = Field(description="The values of params.loss")
    params: list[SolverParamRead] = Field(description="Everything a job's params may set")


class SolverRead(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "gcd",
                    "title": "Greedy coordinate descent, L1-regularised",
                    "paper": "Shalev-Shwartz, Tewari: Stochastic Methods for l1-regularized Loss "
                    "Minimization (JMLR 2011)",
                    "algorithm": "Section 4.2 (baseline)",
                    "tasks": [
                        {
                            "task": "classification",
                            "estimator": "GCDClassifier",
                            "losses": ["logistic", "smooth_hinge", "squared", "squared_hinge"],
                            "params": [
                                {
                                    "name": "sigma",
                                    "type": "number",
                                    "nullable": False,
                                    "default": 1e-5,
                                    "range": {
                                        "min": 0.0,
                                        "max": 1e12,
                                        "min_inclusive": False,
                                        "max_inclusive": True,
                                    },
                                    "choices": None,
                                    "description": "Regularisation weight.",
                                }
                            ],
                        },
                    ],
                }
            ]
        },
    )

    name: str = Field(description="The value of a job's solver")
    title: str
    paper: str = Field(description="The paper it implements")
    algorithm: str = Field(description="Where in the paper")
    tasks: list[SolverTaskRead] = Field(description="Per task it trains: its losses and parameters")


class SolverList(BaseModel):
    solvers: list[SolverRead]


# -- errors: RFC 9457 problem details (app/core/errors.py builds them) ----------------------------


class FieldError(BaseModel):
    loc: list[str | int] = Field(description="Where: body, query, path or header, then the names")
    field: str = Field(description="loc joined with dots, e.g. body.params.sigma")
    msg: str
    type: str = Field(description="Machine-readable kind, e.g. missing, value_error")


class Problem(BaseModel):
    """Every error the service answers, as ``application/problem+json``."""

    type: str = Field(description="urn:pgs:problem:<kind>, or about:blank")
    title: str = Field(description="The status's reason phrase")
    status: int
    detail: str | None = Field(description="What went wrong and what to do, for a human")
    instance: str = Field(description="The request's path")


class ValidationProblem(Problem):
    """A 422: the problem, with the fields at fault when it is about named fields."""

    errors: list[FieldError] | None = Field(
        default=None, description="One entry per field at fault (absent when no field is)"
    )


# -- aliases -------------------------------------------------------------------------------------


class AliasPut(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"model_id": 3}]})

    model_id: int = Field(ge=1, description="A version of the alias's model name")


class AliasRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    name: str
    alias: str
    model_id: int
    version: int | None = Field(description="The model's version within the name")
    updated_at: dt.datetime

    @computed_field(description="The reference to call: /v1/models/{ref}/predict")
    def ref(self) -> str:
        return f"{self.name}@{self.alias}"


class AliasList(BaseModel):
    items: list[AliasRead]


class AliasEventRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    alias: str
    model_id: int | None = Field(description="The model it points to since; null: deleted")
    previous_model_id: int | None
    principal: str = Field(description="Who changed it (the API key's principal)")
    at: dt.datetime


class AliasHistory(BaseModel):
    items: list[AliasEventRead] = Field(description="Oldest first")


# -- batch predictions ---------------------------------------------------------------------------

ExtraFeatures = Literal["fail", "ignore"]


class BatchPredictionCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"dataset_id": 1, "extra_features": "fail"}]}
    )

    dataset_id: int = Field(ge=1, description="Predict every row of this data set")
    extra_features: ExtraFeatures = Field(
        default="fail", description="Features beyond the model's width: fail, or ignore them"
    )


class BatchProgress(BaseModel):
    rows_done: int
    n_rows: int
    fraction: float


class BatchPredictionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    model_id: int | None
    dataset_id: int | None
    extra_features: ExtraFeatures
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    progress: BatchProgress
    outputs: list[str] | None = Field(description="What the result holds: predictions, scores, probabilities")
    error: str | None
    attempts: int
    cancel_requested: bool
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None


class BatchPredictionList(BaseModel):
    items: list[BatchPredictionRead]
    next_cursor: str | None
