"""Training jobs (``/v1/jobs``): the request, its preprocessing, the answer and its trace."""

from __future__ import annotations

import datetime as dt
import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from app.schemas.coefficients import (
    COEFFICIENTS_DESCRIPTION,
    WARNINGS_DESCRIPTION,
    CoefficientSummary,
    FitWarning,
)
from app.schemas.common import Description, LabelsPatch, ModelName, PrintableName, Tags, Task


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


# A positive finite sigma (JSON parsers read NaN and Infinity, so finiteness is checked too).
PositiveSigma = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


class Selection(BaseModel):
    """The options of ``params.sigma: "auto"``: the regularisation path that chooses sigma. Every
    field has a default; ``grid`` is either given or made of ``n_sigmas`` log-spaced sigmas from
    ``sigma_max`` down to ``sigma_min``, not both."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"folds": 3, "n_sigmas": 8, "patience": 2}]},
    )

    folds: Annotated[int, Field(ge=2)] | Literal["auto", "validation"] = Field(
        default="auto",
        description="Cross-validation folds (stratified for classification); validation: one "
        "validation split; auto (default): 5 folds when the training rows are at most 100,000, "
        "else a validation split. A classifier's folds must not pass its smallest class",
    )
    validation_fraction: float = Field(
        default=0.2,
        gt=0.0,
        lt=1.0,
        description="Share of the training rows (after any test split) held out by a validation "
        "split, drawn (as the folds) with params.random_state (drawn and recorded when params "
        "leave it out); default 0.2",
    )
    grid: list[PositiveSigma] | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="The sigmas of the path (positive, finite); null (default): n_sigmas "
        "log-spaced sigmas from sigma_max down to sigma_min",
    )
    n_sigmas: int | None = Field(
        default=None, ge=2, le=1000, description="Sigmas of the default grid; null: 13 (half a decade apart)"
    )
    sigma_min: PositiveSigma | None = Field(
        default=None, description="Smallest sigma of the default grid; null: sigma_max * 1e-6"
    )
    sigma_max: PositiveSigma | None = Field(
        default=None,
        description="Largest sigma of the default grid; null: from the data, the gradient of the "
        "mean loss at w = 0 (the largest sigma worth trying)",
    )
    patience: int | None = Field(
        default=3,
        ge=1,
        description="The path stops after this many sigmas without a better score; default 3; "
        "null: the whole grid",
    )
    metric: Literal["auto", "accuracy", "rmse"] = Field(
        default="auto",
        description="Score of the path: accuracy (classification) or rmse (regression); auto "
        "(default): the one of the job's task",
    )


# The metrics a decision threshold moves, which may choose it (app/services/metrics/threshold.py).
ThresholdMetric = Literal["accuracy", "balanced_accuracy", "precision", "recall", "f1"]


class ThresholdOptions(BaseModel):
    """A binary classifier's decision threshold: a row is the positive class (the second of the
    sorted classes) when its positive-class probability exceeds it (logistic loss), or its
    decision value does (models without probabilities, such as hinge loss). Give ``value``, or
    ``metric`` to choose it on validation rows; without this object the threshold is 0.5 (a
    probability) or 0 (a decision value)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"metric": "f1"}]})

    value: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="The threshold: a probability strictly between 0 and 1 for a logistic model, "
        "any finite decision value otherwise",
    )
    metric: ThresholdMetric | None = Field(
        default=None,
        description="Choose the threshold that maximises this metric (precision, recall and f1 "
        "of the positive class) on validation rows: a seeded split of the training rows, "
        "held out from a first fit; the model is then fitted on all the training rows",
    )
    validation_fraction: float = Field(
        default=0.2,
        gt=0.0,
        lt=1.0,
        description="Share of the training rows (after any test split) the metric's validation "
        "split holds out, stratified, drawn with the job's split_seed; default 0.2",
    )

    @model_validator(mode="after")
    def _value_or_metric(self) -> ThresholdOptions:
        if (self.value is None) == (self.metric is None):
            raise ValueError("give threshold.value or threshold.metric, one of them")
        return self


class MetricTargets(BaseModel):
    """Targets of a named metric: its values whose time-to-target is recorded, the trace's
    test score at each checkpoint being that metric."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"metric": "f1", "values": [0.8]}]}
    )

    metric: str = Field(
        description="Classification: accuracy, balanced_accuracy, log_loss, roc_auc, "
        "average_precision, precision, recall, f1; regression: rmse, mae, r2"
    )
    values: list[float] = Field(max_length=64, description="The metric's values to reach")


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
    solver: str = Field(
        default="pgs",
        description='Training algorithm: a name of GET /v1/solvers, or "auto": pgs, sdca or lbfgs, '
        "chosen from the training rows, features, stored values and the (smallest) sigma; the "
        "job's solver is then the chosen one and its solver_choice says why",
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="The solver's parameters, validated before queueing. Without random_state, "
        "the service draws one and records it in the job's params: sending those params back "
        "repeats the run exactly",
    )
    selection: Selection | None = Field(
        default=None,
        description='How params.sigma "auto" chooses sigma (only with it); null: the defaults',
    )
    threshold: ThresholdOptions | None = Field(
        default=None,
        description="A binary classifier's decision threshold, given or chosen for a metric on "
        "validation rows; null: 0.5 on the probability (0 on the decision value without one)",
    )
    targets: Annotated[list[float], Field(max_length=64)] | MetricTargets = Field(
        default_factory=list,
        description="Test accuracies (or RMSEs for regression) whose time-to-target is recorded; "
        'or {"metric": name, "values": [...]}: values of that metric, which the trace then '
        "records as its test score",
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
    weight_column: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        description="A numeric column of the CSV/Parquet data set (its header name) whose values "
        "weigh each row in the loss and in the test score; finite, >= 0, none missing. It is "
        "not a feature: preprocessing ignores it",
    )
    name: PrintableName | None = None
    description: Description | None = None
    tags: Tags = []
    model_name: ModelName | None = Field(
        default=None, description="Register the trained model as the next version of this name"
    )
    init_model: Annotated[int, Field(ge=1)] | Annotated[str, Field(min_length=1, max_length=400)] | None = (
        Field(
            default=None,
            description="Start the fit from this stored model's weights (a warm start: refresh a "
            "model on new rows): its id or name@alias. It must have the job's task, loss, "
            "fit_intercept, features (n_features), classes and preprocessing; the fit then uses its "
            "fitted preprocessing, so that its weights mean the same. Every solver but kernel_pgs",
        )
    )

    @field_validator("targets")
    @classmethod
    def _finite_targets(cls, v: list[float] | MetricTargets) -> list[float] | MetricTargets:
        if not all(math.isfinite(t) for t in (v.values if isinstance(v, MetricTargets) else v)):
            raise ValueError("targets must be finite numbers")
        return v

    @property
    def target_values(self) -> list[float]:
        return self.targets.values if isinstance(self.targets, MetricTargets) else self.targets

    @property
    def target_metric(self) -> str | None:
        """The metric ``targets`` name; None: accuracy or RMSE, the task's."""
        return self.targets.metric if isinstance(self.targets, MetricTargets) else None

    @model_validator(mode="after")
    def _one_evaluation_source(self) -> JobCreate:
        if self.test_dataset_id is not None and self.test_fraction is not None:
            raise ValueError("give test_dataset_id or test_fraction, not both")
        return self


class JobProgress(BaseModel):
    phase: Literal["select_sigma", "choose_threshold", "fit"] | None = Field(
        default=None,
        description='What a running job\'s counts count: "select_sigma" (sigma "auto" or a study\'s '
        'sigma search: the fits of its path done over planned), "choose_threshold" (the validation '
        'fit that picks a decision threshold) or "fit" (the model\'s own fit: iterations over n_iter); '
        "null unless it runs",
    )
    iteration: int | None
    n_iter: int | None
    fraction: float | None = Field(
        description='iteration / n_iter while it runs (with sigma "auto", while its path runs: '
        "the path's fits done over its fits planned, then the refit's iterations); 1 once it "
        "succeeded (a fit that converged or reached its target before n_iter is complete)"
    )
    samples_seen: int | None
    elapsed_s: float | None = Field(
        default=None, description="Wall seconds since it started (until it finished); null while queued"
    )
    eta_s: float | None = Field(
        default=None,
        description="Estimated wall seconds left in the current phase at that phase's rate so far "
        "(never beyond its time limit; an upper bound for a fit that may converge early; the fit "
        "follows a select_sigma or choose_threshold phase); null unless it runs and has progressed",
    )


class PathPoint(BaseModel):
    sigma: float
    mean: float | None = Field(description="Mean score over the splits; null when every fit diverged")
    std: float | None = Field(description="Standard deviation of the score over the splits")
    seconds: float = Field(description="Wall seconds of this sigma's fits")
    solver_seconds: float
    scores: list[float | None] = Field(description="Score per split; null: that fit diverged")


class SelectionResult(BaseModel):
    """What the regularisation path of params.sigma "auto" chose (from metrics.selection)."""

    sigma: float = Field(description="The chosen sigma: the best mean score, ties to the larger")
    metric: Literal["accuracy", "rmse"]
    splits: str = Field(description='How the training rows were split: "5-fold", "validation"')
    stop_reason: str = Field(
        description="completed: the whole grid; patience: no better score for that many sigmas; "
        "stopped: cancelled or out of time, the best sigma of the points fitted so far"
    )
    path: list[PathPoint] = Field(description="The sigmas fitted, largest first")


class ThresholdRead(BaseModel):
    """A binary classifier's decision threshold, as stored with its model and used by /predict."""

    value: float
    applies_to: Literal["probability", "decision_value"] = Field(
        description="probability: of the positive class (logistic models); decision_value: the "
        "model's score (models without probabilities)"
    )
    source: Literal["default", "given", "validation"]
    metric: str | None = Field(default=None, description="The metric it was chosen for (source validation)")
    validation_score: float | None = Field(
        default=None, description="That metric on the validation rows at this threshold"
    )


# metrics.test, the metrics of a model on its evaluation rows (app/services/metrics).
TEST_METRICS_DESCRIPTION = (
    "test: the metrics of the model on every evaluation row (the test split or test set), equal "
    "to scikit-learn's sklearn.metrics on the same predictions. Classification: rows, "
    "unknown_label_rows (rows whose label the training rows lacked, left out), weight_sum, "
    "accuracy, balanced_accuracy, log_loss (null without probabilities), roc_auc (one-vs-rest "
    "macro for multiclass), average_precision (macro for multiclass), precision, recall and f1 "
    "(of the positive class for a binary model, macro otherwise), per_class: [{label, "
    "precision, recall, f1, support}], macro: {precision, recall, f1}, confusion_matrix: "
    "{labels, matrix (rows: true label, columns: predicted)}, roc_curves: [{label, auc, fpr, "
    "tpr}] (the positive class for a binary model, each class against the rest otherwise), "
    "calibration: {bins, mean_predicted, fraction_positive, weight} (binary logistic models), "
    "threshold (a binary classifier's, as the job's threshold; null otherwise), absent: "
    "{metric: why it is null}. Regression: rows, "
    "weight_sum, rmse, mae, r2"
)


class SolverChoiceRead(BaseModel):
    requested: Literal["auto"]
    chosen: str = Field(description="The solver the job trains with (its solver)")
    reason: str = Field(description="Why, from the rows, features, stored values and sigma")


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
    params: dict[str, Any] = Field(
        description="The request's params, with the random_state the service drew when they left it out"
    )
    targets: list[float]
    target_metric: str | None = Field(
        default=None,
        description="The metric of targets and of the trace's test score; null: accuracy or rmse",
    )
    time_budget_s: float | None
    preprocessing: dict[str, Any] | None = Field(
        default=None,
        description="The resolved preprocessing: scaling, impute, categorical "
        "(one-hot encoded columns), ignore (column indices), sparse; null: raw features",
    )
    selection_options: dict[str, Any] | None = Field(
        default=None,
        description='The request\'s selection with its defaults filled in (params.sigma "auto" only)',
    )
    weight_column: str | None = Field(
        default=None, description="The column whose values weigh the rows; null: every row weighs 1"
    )
    selection: SelectionResult | None = Field(
        default=None,
        description='Once a params.sigma "auto" job has a model: the chosen sigma, the metric, '
        "the splits and the path (mean and std of the score, seconds, per sigma)",
    )
    threshold_options: dict[str, Any] | None = Field(
        default=None, description="The request's threshold with its defaults filled in"
    )
    threshold: ThresholdRead | None = Field(
        default=None,
        description="Once a binary classifier has a model: its decision threshold (from metrics.threshold)",
    )
    coefficients: CoefficientSummary | None = Field(default=None, description=COEFFICIENTS_DESCRIPTION)
    warnings: list[FitWarning] | None = Field(default=None, description=WARNINGS_DESCRIPTION)
    progress: JobProgress
    metrics: dict[str, Any] | None = Field(
        description="solver_seconds, compile_seconds (kernels loaded or compiled before the solver "
        "clock started), objective, test_accuracy (classification) or test_rmse "
        "(regression) of the model on every evaluation row, time_to_target: {target: solver "
        "seconds or null} on the trace's eval_rows sample; once finished with a model, "
        "overhead_seconds (the run's wall time minus solver_seconds) and its parts, which sum "
        "to it: load_seconds, preprocessing_seconds, compile_seconds, checkpoint_seconds, "
        "progress_seconds, final_metrics_seconds, model_write_seconds, other_seconds; for a job "
        "that trained from its shards (data over PGS_WORKER_MEMORY_BYTES), shard_window: how "
        'many shards the sampler kept open and interleaved; with params.sigma "auto", sigma (the '
        'sigma the regularisation path chose) and selection: {sigma, metric, splits ("5-fold", '
        '"validation"), stop_reason, path: [{sigma, mean, std, seconds, solver_seconds, '
        "scores}], largest sigma first}; for a binary classifier, threshold (as the job's "
        "threshold); " + TEST_METRICS_DESCRIPTION
    )
    time_limit_s: float | None = Field(
        default=None,
        description="Wall-clock seconds the run may take: time_budget_s, or the server's "
        "PGS_MAX_JOB_SECONDS when the job gave none",
    )
    stop_reason: str | None = Field(
        description="completed | converged | target_score | no_improvement (params.early_stopping: "
        "the validation score stopped improving) | time_budget (the job's own budget "
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
    init_model_id: int | None = Field(
        default=None,
        description="The model the fit started from (the request's init_model); null: a cold start",
    )
    solver_choice: SolverChoiceRead | None = Field(
        default=None,
        description='When the request named solver "auto": what it chose (the job\'s solver) and '
        "why; null when the request named the solver",
    )


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
    duality_gap: float | None = Field(
        default=None,
        description="P(w) - D(alpha), a bound on objective - optimum, for the solvers that keep a "
        "dual point (sdca); null for the others",
    )


class TraceRead(BaseModel):
    job_id: int
    score_name: str | None = Field(description="accuracy, rmse, or the metric targets name")
    points: list[TracePointRead]
