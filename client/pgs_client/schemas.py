# Generated from the service's OpenAPI document by client/tools/generate_schemas.py:
# do not edit by hand.

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal


@dataclass(kw_only=True)
class AliasEventRead:
    id: int
    name: str
    alias: str
    model_id: int | None
    """
    The model it points to since; null: deleted
    """
    previous_model_id: int | None
    principal: str
    """
    Who changed it (the API key's principal)
    """
    at: datetime


@dataclass(kw_only=True)
class AliasHistory:
    items: list[AliasEventRead]
    """
    Oldest first
    """


@dataclass(kw_only=True)
class AliasPut:
    model_id: int
    """
    A version of the alias's model name
    """


@dataclass(kw_only=True)
class AliasRead:
    name: str
    alias: str
    model_id: int
    version: int | None
    """
    The model's version within the name
    """
    updated_at: datetime
    ref: str
    """
    The reference to call: /v1/models/{ref}/predict
    """


@dataclass(kw_only=True)
class AuditEventRead:
    id: int
    at: datetime
    owner: str
    """
    The owner of the object written
    """
    actor_owner: str
    actor_key: str
    actor_role: str
    action: Literal["create", "update", "delete"]
    resource: str
    """
    dataset, upload, job, model, alias, study or batch_prediction
    """
    resource_id: str
    detail: dict[str, Any] | None = None
    """
    The request's method, path and status
    """


@dataclass(kw_only=True)
class AuditList:
    items: list[AuditEventRead]
    next_cursor: str | None
    """
    Pass as ?cursor= for the next page; null at the end
    """


@dataclass(kw_only=True)
class BatchPredictionCreate:
    dataset_id: int
    """
    Predict every row of this data set
    """
    extra_features: Literal["fail", "ignore"] | None = "fail"
    """
    Features beyond the model's width: fail, or ignore them
    """


@dataclass(kw_only=True)
class BatchProgress:
    rows_done: int
    n_rows: int
    fraction: float


@dataclass(kw_only=True)
class CallerRead:
    owner: str
    """
    The owner whose objects this key sees and creates
    """
    role: Literal["admin", "member", "reader"]
    """
    admin: every owner's objects; member: its owner's; reader: reads and predicts only
    """
    key_id: str
    """
    The key's non-secret name, as the audit log records it
    """
    authenticated: bool
    """
    False on a server without API keys (loopback only)
    """


@dataclass(kw_only=True)
class CategoryCount:
    value: str
    """
    The category (the empty string: an empty or missing cell)
    """
    count: int
    """
    Rows with this value
    """


@dataclass(kw_only=True)
class Coefficient:
    name: str
    """
    The raw column's name (CSV header; else its index as the data wrote it, an svmlight file's 1-based index), 'column=value' for a category of a text column
    """
    column: int
    """
    0-based raw column
    """
    category: str | None
    """
    The category of a one-hot encoded text column
    """
    weight: float
    """
    Per unit of the raw column (scaling undone; a category's weight applies to its 0/1 indicator)
    """
    model_weight: float
    """
    The solver's own weight on the preprocessed (scaled) feature: comparable across features, the order the lists follow
    """


@dataclass(kw_only=True)
class CoefficientPage:
    class_: int | float | str | None
    """
    The class these weights score
    """
    intercept: float
    items: list[Coefficient]
    """
    By |model_weight|, largest first
    """
    total: int
    """
    Non-zero weights of this class
    """
    offset: int
    limit: int


@dataclass(kw_only=True)
class ColumnStatsRead:
    index: int
    """
    0-based feature column (an svmlight file's 1-based index minus 1)
    """
    name: str | None
    """
    The column's name (CSV header, Parquet, Arrow)
    """
    kind: Literal["numeric", "text"]
    count: int
    """
    Rows with a value: numeric, every row but the missing cells (a sparse row's implicit zeros are values); text, every row but the empty or missing cells
    """
    missing: int
    """
    Rows whose cell is missing (numeric) or empty (text)
    """
    mean: float | None
    """
    Mean of the present values (numeric)
    """
    std: float | None
    """
    Population standard deviation of the present values (numeric)
    """
    min: float | None
    """
    Smallest present value (numeric)
    """
    max: float | None
    """
    Largest present value (numeric)
    """
    max_abs: float | None
    """
    Largest absolute present value (numeric)
    """
    distinct: int | None
    """
    Distinct values (text); a lower bound when categories_truncated
    """
    categories_truncated: bool | None
    """
    More distinct values than the statistics keep (1000): the most frequent are counted, and a job reads this column's categories from its rows (text)
    """
    top_categories: list[CategoryCount] | None
    """
    The most frequent values, most frequent first (text, at most 10)
    """


@dataclass(kw_only=True)
class DatasetOptions:
    name: str | None = None
    format: Literal["auto", "svmlight", "csv", "parquet", "arrow"] | None = "auto"
    labelled: bool | None = True
    """
    false: the rows have no labels (new rows to predict in a batch): every CSV, Parquet or Arrow column is a feature, an svmlight line's leading label is read and not kept; no job trains on or evaluates the data set
    """
    label_column: str | None = None
    """
    CSV: column number (0-based, negative from the end) or name; Parquet and Arrow: the column's name (default: the last column)
    """
    header: Literal["auto", "true", "false"] | None = "auto"
    zero_based: Literal["auto", "true", "false"] | None = "auto"
    task: Literal["auto", "classification", "regression"] | None = "auto"
    n_features: int | None = None
    """
    The data set's width (e.g. a test set's: the training set's n_features); the file's largest feature index may not exceed it
    """
    na_values: str | None = "NA,N/A,NaN,nan,null,NULL,None"
    """
    CSV: the cells that are missing values, comma-separated; an empty cell always is one
    """
    description: str | None = None
    tags: str | None = None
    """
    Comma-separated tags
    """


@dataclass(kw_only=True)
class DatasetPatch:
    description: str | None = None
    tags: list[str] | None = None
    name: str | None = None
    task: Literal["classification", "regression"] | None = None
    """
    Correct a guessed task; classes are derived from the labels
    """


@dataclass(kw_only=True)
class DatasetRead:
    id: int
    name: str
    format: Literal["svmlight", "csv", "parquet", "arrow"]
    compressed: bool
    n_samples: int
    n_features: int
    nnz: int
    task: Literal["binary", "multiclass", "regression"] | None
    """
    binary, multiclass or regression; null without labels
    """
    classes: list[int | float | str] | None
    """
    Sorted distinct labels (classification)
    """
    index_base: int
    """
    1 if svmlight feature indices in the file were 1-based
    """
    sha256: str
    """
    SHA-256 of the file as uploaded
    """
    size_bytes: int
    """
    Size of the file as uploaded
    """
    created_at: datetime
    task_source: Literal["guessed", "declared"]
    """
    Whether the task was guessed from the labels or declared (upload or PATCH)
    """
    task_note: str
    """
    How the task was chosen, and how to change it
    """
    warnings: list[str]
    """
    What the data set cannot be used for (stored all the same)
    """
    labelled: bool | None = True
    """
    false: rows without labels (uploaded with labelled=false) to predict in a batch; no job trains on or evaluates them
    """
    feature_names: list[str] | None = None
    """
    The feature columns' names: a CSV header's, a Parquet or Arrow file's (null for CSV without a header)
    """
    label_name: str | None = None
    """
    The label column's name (CSV header, Parquet, Arrow)
    """
    text_columns: list[int] | None = None
    """
    0-based feature columns holding text (CSV, Parquet, Arrow; one-hot encoded by a job's preprocessing)
    """
    n_missing: int | None = 0
    """
    Missing numeric cells: CSV cells that are empty or a na_values marker, Parquet and Arrow nulls (imputed by a job's preprocessing)
    """
    na_values: list[str] | None = None
    """
    CSV: the cells its upload read as missing besides the empty one; its models read a CSV sent to /predict with the same markers (null: another format)
    """
    description: str | None = None
    tags: list[str] | None = field(default_factory=list)


@dataclass(kw_only=True)
class FitWarning:
    code: Literal["zero_weights", "majority_class", "no_better_than_mean"]
    """
    zero_weights: every weight is (near) zero; majority_class: the test accuracy is no better than always predicting the majority class; no_better_than_mean: test R^2 <= 0
    """
    message: str


@dataclass(kw_only=True)
class Health:
    status: Literal["ok"]
    version: str
    """
    The service's version (of the pgs-solver distribution)
    """


@dataclass(kw_only=True)
class ImportRequest:
    source: str
    """
    An absolute path, a file:// URL or an http(s) URL under one of the operator's PGS_IMPORT_ROOTS
    """
    name: str | None = None
    format: Literal["auto", "svmlight", "csv", "parquet", "arrow"] | None = "auto"
    labelled: bool | None = True
    """
    false: the rows have no labels (new rows to predict in a batch): every CSV, Parquet or Arrow column is a feature, an svmlight line's leading label is read and not kept; no job trains on or evaluates the data set
    """
    label_column: str | None = None
    """
    CSV: column number (0-based, negative from the end) or name; Parquet and Arrow: the column's name (default: the last column)
    """
    header: Literal["auto", "true", "false"] | None = "auto"
    zero_based: Literal["auto", "true", "false"] | None = "auto"
    task: Literal["auto", "classification", "regression"] | None = "auto"
    n_features: int | None = None
    """
    The data set's width (e.g. a test set's: the training set's n_features); the file's largest feature index may not exceed it
    """
    na_values: str | None = "NA,N/A,NaN,nan,null,NULL,None"
    """
    CSV: the cells that are missing values, comma-separated; an empty cell always is one
    """
    description: str | None = None
    tags: str | None = None
    """
    Comma-separated tags
    """


@dataclass(kw_only=True)
class JobPatch:
    description: str | None = None
    tags: list[str] | None = None
    name: str | None = None


@dataclass(kw_only=True)
class JobProgress:
    iteration: int | None
    n_iter: int | None
    fraction: float | None
    """
    iteration / n_iter while it runs (with sigma "auto", while its path runs: the path's fits done over its fits planned, then the refit's iterations); 1 once it succeeded (a fit that converged or reached its target before n_iter is complete)
    """
    samples_seen: int | None
    phase: Literal["select_sigma", "choose_threshold", "fit"] | None = None
    """
    What a running job's counts count: "select_sigma" (sigma "auto" or a study's sigma search: the fits of its path done over planned), "choose_threshold" (the validation fit that picks a decision threshold) or "fit" (the model's own fit: iterations over n_iter); null unless it runs
    """
    elapsed_s: float | None = None
    """
    Wall seconds since it started (until it finished); null while queued
    """
    eta_s: float | None = None
    """
    Estimated wall seconds left in the current phase at that phase's rate so far (never beyond its time limit; an upper bound for a fit that may converge early; the fit follows a select_sigma or choose_threshold phase); null unless it runs and has progressed
    """


@dataclass(kw_only=True)
class MetricTargets:
    metric: str
    """
    Classification: accuracy, balanced_accuracy, log_loss, roc_auc, average_precision, precision, recall, f1; regression: rmse, mae, r2
    """
    values: list[float]
    """
    The metric's values to reach
    """


@dataclass(kw_only=True)
class ModelPatch:
    description: str | None = None
    tags: list[str] | None = None
    name: str | None = None
    """
    Register as the next version of this name (null: no name)
    """


@dataclass(kw_only=True)
class OutputCoefficients:
    class_: int | float | str | None
    """
    The class these weights score (a binary classifier's second class: a positive score predicts it); null for a regressor
    """
    intercept: float
    """
    Per unit of the raw columns (the centring of standard scaling moved in)
    """
    nonzero: int
    """
    Non-zero weights of this class
    """
    positive: list[Coefficient]
    """
    The largest positive weights, largest first
    """
    negative: list[Coefficient]
    """
    The most negative weights, most negative first
    """


@dataclass(kw_only=True)
class PathPoint:
    sigma: float
    mean: float | None
    """
    Mean score over the splits; null when every fit diverged
    """
    std: float | None
    """
    Standard deviation of the score over the splits
    """
    seconds: float
    """
    Wall seconds of this sigma's fits
    """
    solver_seconds: float
    scores: list[float | None]
    """
    Score per split; null: that fit diverged
    """


@dataclass(kw_only=True)
class PredictResponse:
    predictions: list[int | float | str]
    scores: list[float] | list[list[float]]
    """
    Decision values: one per row (binary, regression) or one per class
    """
    probabilities: list[list[float]] | None = None
    """
    Class probabilities (logistic models only), columns = classes
    """


@dataclass(kw_only=True)
class Preprocessing:
    scaling: Literal["auto", "standard", "maxabs", "none"] | None = "auto"
    """
    auto: standard (zero mean, unit variance) for CSV data, maxabs (keeps sparsity) for svmlight data
    """
    impute: bool | None = True
    """
    Missing numeric CSV values become the training mean
    """
    ignore: list[int | str] | None = None
    """
    Columns left out (an id column): CSV header names or 0-based feature indices
    """


@dataclass(kw_only=True)
class SelectSigma:
    grid: list[float]
    """
    Candidate sigmas (> 0)
    """
    validation_fraction: float | None = 0.2
    """
    Part of each job's m training rows held out to score the grid
    """


@dataclass(kw_only=True)
class Selection:
    folds: int | Literal["auto", "validation"] | None = "auto"
    """
    Cross-validation folds (stratified for classification); validation: one validation split; auto (default): 5 folds when the training rows are at most 100,000, else a validation split. A classifier's folds must not pass its smallest class
    """
    validation_fraction: float | None = 0.2
    """
    Share of the training rows (after any test split) held out by a validation split, drawn (as the folds) with params.random_state (drawn and recorded when params leave it out); default 0.2
    """
    grid: list[float] | None = None
    """
    The sigmas of the path (positive, finite); null (default): n_sigmas log-spaced sigmas from sigma_max down to sigma_min
    """
    n_sigmas: int | None = None
    """
    Sigmas of the default grid; null: 13 (half a decade apart)
    """
    sigma_min: float | None = None
    """
    Smallest sigma of the default grid; null: sigma_max * 1e-6
    """
    sigma_max: float | None = None
    """
    Largest sigma of the default grid; null: from the data, the gradient of the mean loss at w = 0 (the largest sigma worth trying)
    """
    patience: int | None = 3
    """
    The path stops after this many sigmas without a better score; default 3; null: the whole grid
    """
    metric: Literal["auto", "accuracy", "rmse"] | None = "auto"
    """
    Score of the path: accuracy (classification) or rmse (regression); auto (default): the one of the job's task
    """


@dataclass(kw_only=True)
class SelectionResult:
    sigma: float
    """
    The chosen sigma: the best mean score, ties to the larger
    """
    metric: Literal["accuracy", "rmse"]
    splits: str
    """
    How the training rows were split: "5-fold", "validation"
    """
    stop_reason: str
    """
    completed: the whole grid; patience: no better score for that many sigmas; stopped: cancelled or out of time, the best sigma of the points fitted so far
    """
    path: list[PathPoint]
    """
    The sigmas fitted, largest first
    """


@dataclass(kw_only=True)
class SolverChoiceRead:
    requested: Literal["auto"]
    chosen: str
    """
    The solver the job trains with (its solver)
    """
    reason: str
    """
    Why, from the rows, features, stored values and sigma
    """


@dataclass(kw_only=True)
class SolverParamRange:
    min: float
    """
    Lower bound
    """
    max: float
    """
    Upper bound
    """
    min_inclusive: bool
    max_inclusive: bool


@dataclass(kw_only=True)
class SolverParamRead:
    name: str
    type: Literal["number", "integer", "boolean", "string", "array", "object"]
    """
    JSON type of its values (besides null and the choices); object: a mapping (class_weight: label to weight)
    """
    nullable: bool
    """
    Whether null is accepted (the description says what it means)
    """
    default: Any
    """
    The value when params leaves it out
    """
    range: SolverParamRange | None
    """
    Interval of its numbers: the solver's own, within the service's bounds
    """
    choices: list[str] | None
    """
    The strings it accepts: all its values, or keywords beside its numbers
    """
    description: str


@dataclass(kw_only=True)
class SolverTaskRead:
    task: Literal["classification", "regression"]
    """
    classification: binary and multiclass data sets
    """
    estimator: str
    """
    The estimator class that trains it
    """
    losses: list[str]
    """
    The values of params.loss
    """
    params: list[SolverParamRead]
    """
    Everything a job's params may set
    """


@dataclass(kw_only=True)
class StudyProgress:
    total: int
    """
    Jobs of the study
    """
    done: int
    """
    Jobs in a terminal state
    """
    fraction: float
    queued: int
    running: int
    succeeded: int
    failed: int
    cancelled: int


@dataclass(kw_only=True)
class StudyRow:
    run: int
    """
    Index into runs
    """
    solver: str
    label: str
    m: int
    """
    Training-set size
    """
    target: float
    repeats: int
    """
    Succeeded jobs of this run and size (the sample)
    """
    reached: int
    """
    How many of them reached the target
    """
    median_seconds: float | None
    """
    Median solver seconds to the target; a run that never reached it counts as infinitely slow, so this is null when half or more did not
    """
    min_seconds: float | None
    """
    Fastest run that reached the target
    """
    max_seconds: float | None
    """
    Slowest run that reached the target
    """
    median_iterations: float | None
    """
    Same rule as median_seconds
    """
    min_iterations: int | None
    max_iterations: int | None
    selected_sigmas: list[float] | None
    """
    Sigma chosen by each repeat's validation split (select_sigma only)
    """


@dataclass(kw_only=True)
class ThresholdOptions:
    value: float | None = None
    """
    The threshold: a probability strictly between 0 and 1 for a logistic model, any finite decision value otherwise
    """
    metric: Literal["accuracy", "balanced_accuracy", "precision", "recall", "f1"] | None = None
    """
    Choose the threshold that maximises this metric (precision, recall and f1 of the positive class) on validation rows: a seeded split of the training rows, held out from a first fit; the model is then fitted on all the training rows
    """
    validation_fraction: float | None = 0.2
    """
    Share of the training rows (after any test split) the metric's validation split holds out, stratified, drawn with the job's split_seed; default 0.2
    """


@dataclass(kw_only=True)
class ThresholdRead:
    value: float
    applies_to: Literal["probability", "decision_value"]
    """
    probability: of the positive class (logistic models); decision_value: the model's score (models without probabilities)
    """
    source: Literal["default", "given", "validation"]
    metric: str | None = None
    """
    The metric it was chosen for (source validation)
    """
    validation_score: float | None = None
    """
    That metric on the validation rows at this threshold
    """


@dataclass(kw_only=True)
class TracePointRead:
    iteration: int
    samples_seen: int
    solver_seconds: float
    objective: float | None
    test_score: float | None
    nnz_weights: int | None = None
    data_accesses: int | None = None
    duality_gap: float | None = None
    """
    P(w) - D(alpha), a bound on objective - optimum, for the solvers that keep a dual point (sdca); null for the others
    """


@dataclass(kw_only=True)
class TraceRead:
    job_id: int
    score_name: str | None
    """
    accuracy, rmse, or the metric targets name
    """
    points: list[TracePointRead]


@dataclass(kw_only=True)
class UploadError:
    status: int
    """
    The HTTP status the failure would have had
    """
    detail: str


@dataclass(kw_only=True)
class UploadRead:
    id: str
    state: Literal["receiving", "parsing", "done", "failed"]
    """
    receiving: taking bytes (tus PATCH); parsing: being fetched, parsed and stored; done: dataset_id is the data set; failed: error says why (a failed upload can be finished again)
    """
    length: int
    """
    Bytes declared (tus Upload-Length); for an import, its size once done (a URL's cap while it is fetched)
    """
    offset: int
    """
    Bytes received so far
    """
    filename: str
    created_at: datetime
    expires_at: datetime
    """
    When an unfinished upload is deleted
    """
    source: str | None = None
    """
    An import's path or URL
    """
    dataset_id: int | None = None
    error: UploadError | None = None


@dataclass(kw_only=True)
class FieldError:
    loc: list[str | int]
    """
    Where: body, query, path or header, then the names
    """
    field: str
    """
    loc joined with dots, e.g. body.params.sigma
    """
    msg: str
    type: str
    """
    Machine-readable kind, e.g. missing, value_error
    """
    rule: str | None = None
    """
    For a solver parameter (body.params.<name>): the values it accepts, in words, e.g. float in [1.01, 2]; for an unknown one, the parameters there are
    """
    input: Any | None = None
    """
    For a solver parameter: the value received (a number that is not finite as "nan", "inf" or "-inf")
    """


@dataclass(kw_only=True)
class Problem:
    type: str
    """
    urn:pgs:problem:<kind>, or about:blank
    """
    title: str
    """
    The status's reason phrase
    """
    status: int
    detail: str | None
    """
    What went wrong and what to do, for a human
    """
    instance: str
    """
    The request's path
    """


@dataclass(kw_only=True)
class ValidationProblem:
    type: str
    """
    urn:pgs:problem:<kind>, or about:blank
    """
    title: str
    """
    The status's reason phrase
    """
    status: int
    detail: str | None
    """
    What went wrong and what to do, for a human
    """
    instance: str
    """
    The request's path
    """
    errors: list[FieldError] | None = None
    """
    One entry per field at fault (absent when no field is)
    """


@dataclass(kw_only=True)
class PGSParams:
    loss: Literal["hinge", "logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: The loss l(z; y), y in {-1, +1} (Section IV). Default "logistic". regression: The loss l(z; y): "squared", (z - y)^2 (Section IV), or "huber". Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    Regularisation weight; "auto": chosen by cross-validation (the options below).
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    T, the number of iterations; None: 5 epochs, ceil(5 m / batch_size).
    """
    early_stopping: bool | None = False
    """
    Stop once the score on validation_fraction of the training rows stops improving.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn a bias, the weight of a constant extra feature regularised like the others.
    """
    random_state: int | None = None
    """
    Seeds the minibatch draws and the random output.
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    p: float | None = 2.0
    """
    The norm of the regulariser r(w) = ||w||_p^2 / (2 (p - 1)), eq. (3).
    """
    batch_size: int | None = 1
    """
    k = |A_t|, the minibatch size.
    """
    radius: float | Literal["auto"] | None = "auto"
    """
    The domain S: None is R^n, a number B the ball ||w||_p <= B (Figure 2, lines 5-6).
    """
    output: Literal["average", "last", "random"] | None = "average"
    """
    The returned predictor: the average of w_1..w_T, w_T, or a random iterate.
    """
    t0: float | Literal["auto"] | None = "auto"
    """
    w_t = grad r*(lambda / ((t + t0) sigma)); t0 = 1 is the paper's (t + 1) sigma.
    """
    sampling: Literal["permutation", "replacement"] | None = "permutation"
    """
    How A_t is drawn: a fresh random permutation per epoch, or i.i.d. with replacement.
    """
    intercept_scaling: float | Literal["auto"] | None = "auto"
    """
    s, the value of the constant feature; the intercept is b = s w_b.
    """
    average_power: float | None = 2.0
    """
    output="average" returns sum_t t^a w_t / sum_t t^a with a = average_power.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class SCDParams:
    loss: Literal["logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: A smooth loss l(z; y), y in {-1, +1}: its curvature bound sets the step. Default "logistic". regression: A smooth loss l(z; y): its curvature bound sets the step. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    The L1 weight (the paper's lambda); "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Coordinate updates; None: 20 sweeps of (n_features + fit_intercept) updates.
    """
    early_stopping: bool | None = False
    """
    Stop once the score on validation_fraction of the training rows stops improving.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn an unpenalised intercept (a constant column, updated like the other coordinates).
    """
    random_state: int | None = None
    """
    Seeds the coordinate draws.
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    beta: Literal["column", "uniform"] | None = "column"
    """
    The curvature bound behind the step 1 / beta: per coordinate, or one for all.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class GCDParams:
    loss: Literal["logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: A smooth loss l(z; y), y in {-1, +1}: its curvature bound sets the step. Default "logistic". regression: A smooth loss l(z; y): its curvature bound sets the step. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    The L1 weight (the paper's lambda); "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Coordinate updates; None: 5 sweeps of (n_features + fit_intercept) updates.
    """
    early_stopping: Literal[False] = False
    """
    Always False: gcd picks its coordinates deterministically; set n_iter.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn an unpenalised intercept (a constant column, updated like the other coordinates).
    """
    random_state: int | None = None
    """
    Unused: GCD is deterministic (kept for the parameters every solver shares).
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    beta: Literal["column", "uniform"] | None = "column"
    """
    The curvature bound behind the step 1 / beta: per coordinate, or one for all.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class SMIDASParams:
    loss: Literal["hinge", "logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: The loss l(z; y), y in {-1, +1}. Default "logistic". regression: The loss l(z; y): squared or huber. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    The L1 weight (the paper's lambda); "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Iterations; None: 5 epochs, ceil(5 m / batch_size).
    """
    early_stopping: bool | None = False
    """
    Stop once the score on validation_fraction of the training rows stops improving.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn an unpenalised intercept (a constant feature that is never truncated).
    """
    random_state: int | None = None
    """
    Seeds the sample draws (uniform, with replacement).
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    eta: float | Literal["auto"] | None = "auto"
    """
    The constant learning rate; the value used is eta_.
    """
    batch_size: int | None = 1
    """
    Samples per iteration; their sub-gradients are averaged (the paper uses 1).
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class TruncGradParams:
    loss: Literal["hinge", "logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: The loss l(z; y), y in {-1, +1}. Default "logistic". regression: The loss l(z; y): squared or huber. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    The L1 weight (the paper's lambda); "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Iterations; None: 5 epochs, ceil(5 m / batch_size).
    """
    early_stopping: bool | None = False
    """
    Stop once the score on validation_fraction of the training rows stops improving.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn an unpenalised intercept (a constant feature that is never truncated).
    """
    random_state: int | None = None
    """
    Seeds the sample draws (uniform, with replacement).
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    eta: float | Literal["auto"] | None = "auto"
    """
    The constant learning rate; the value used is eta_.
    """
    batch_size: int | None = 1
    """
    Samples per iteration; their sub-gradients are averaged (the paper uses 1).
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class LBFGSParams:
    loss: Literal["logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: A smooth loss l(z; y), y in {-1, +1}. Default "logistic". regression: A smooth loss l(z; y): squared or huber. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    Regularisation weight; "auto": chosen by cross-validation (the options below).
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    The most L-BFGS iterations (scipy's maxiter); None: 1000.
    """
    early_stopping: Literal[False] = False
    """
    Always False: lbfgs is deterministic and stops by its own tol on the training objective.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 1e-10
    """
    scipy's gtol (largest gradient component) and ftol (relative decrease per iteration).
    """
    fit_intercept: bool | None = True
    """
    Learn a bias as the weight of a constant feature 1, regularised like the others.
    """
    random_state: int | None = None
    """
    Unused: L-BFGS is deterministic (kept for the parameters every solver shares).
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    p: float | None = 2.0
    """
    The norm of the regulariser, as for PGS.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class SDCAParams:
    loss: Literal["hinge", "logistic", "squared", "squared_hinge"] | None = None
    """
    classification: A loss l(z; y), y in {-1, +1}, with an SDCA step. Default "logistic". regression: The squared loss (z - y)^2. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    Regularisation weight; "auto": chosen by cross-validation (the options below).
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    The most epochs (passes over a fresh random permutation of the rows); None: 1000.
    """
    early_stopping: Literal[False] = False
    """
    Always False: sdca stops by its own duality gap on the training objective.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.0001
    """
    Stop once the duality gap P(w) - D(alpha), checked after every epoch, is at most tol times P(0) (the zero model's objective).
    """
    fit_intercept: bool | None = True
    """
    Learn a bias as the weight of a constant feature 1, regularised like the others.
    """
    random_state: int | None = None
    """
    Seeds the permutation of the rows drawn for each epoch.
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    intercept_scaling: float | Literal["auto"] | None = "auto"
    """
    s, the value of the constant feature; the intercept is b = s w_b.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class GDParams:
    loss: Literal["hinge", "logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: The loss l(z; y), y in {-1, +1}. Default "logistic". regression: The loss l(z; y): squared or huber. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    Regularisation weight (the lecture's lambda): F(w) = mean loss + sigma/2 ||w||^2; "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Iterations T; None: 100.
    """
    early_stopping: Literal[False] = False
    """
    Always False: gd takes deterministic full-gradient steps; set n_iter.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn a bias as the weight of a constant feature 1, regularised like the others.
    """
    random_state: int | None = None
    """
    Accepted for a uniform interface; gd is deterministic.
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    output: Literal["average", "last"] | None = "average"
    """
    The average (1/T) sum_{t=1}^T w_t (w_1 = 0), as the lecture's algorithms output, or the last iterate w_{T+1}.
    """
    eta: float | Literal["auto"] | None = "auto"
    """
    The step; eta * sigma must be at most 1.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class SGDParams:
    loss: Literal["hinge", "logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: The loss l(z; y), y in {-1, +1}. Default "logistic". regression: The loss l(z; y): squared or huber. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    Regularisation weight (the lecture's lambda): F(w) = mean loss + sigma/2 ||w||^2; "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Iterations T; None: 5 epochs, ceil(5 m / batch_size).
    """
    early_stopping: bool | None = False
    """
    Stop once the score on validation_fraction of the training rows stops improving.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn a bias as the weight of a constant feature 1, regularised like the others.
    """
    random_state: int | None = None
    """
    Seeds the sample draws (uniform, with replacement; the same draws as PGS with sampling="replacement" for one seed).
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    output: Literal["average", "last"] | None = "average"
    """
    The average (1/T) sum_{t=1}^T w_t (w_1 = 0), as the lecture's algorithms output, or the last iterate w_{T+1}.
    """
    eta: float | Literal["auto"] | None = "auto"
    """
    The constant step; eta * sigma must be at most 1.
    """
    batch_size: int | None = 1
    """
    k, the samples per iteration.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class OGDParams:
    loss: Literal["hinge", "logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: The loss l(z; y), y in {-1, +1}. Default "logistic". regression: The loss l(z; y): squared or huber. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    Regularisation weight (the lecture's lambda): F(w) = mean loss + sigma/2 ||w||^2; "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Iterations T; None: 5 epochs, ceil(5 m / batch_size).
    """
    early_stopping: bool | None = False
    """
    Stop once the score on validation_fraction of the training rows stops improving.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    Learn a bias as the weight of a constant feature 1, regularised like the others.
    """
    random_state: int | None = None
    """
    Seeds the sample draws (uniform, with replacement; the same draws as PGS with sampling="replacement" for one seed).
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    output: Literal["average", "last"] | None = "average"
    """
    The average (1/T) sum_{t=1}^T w_t (w_1 = 0), as the lecture's algorithms output, or the last iterate w_{T+1}.
    """
    t0: float | Literal["auto"] | None = "auto"
    """
    eta_t = 1 / (sigma (t + t0)); t0=0 is Algorithm 3 verbatim, eta_t = 1 / (lambda t).
    """
    batch_size: int | None = 1
    """
    k, the samples per iteration.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class KernelPGSParams:
    loss: Literal["hinge", "logistic", "smooth_hinge", "squared", "squared_hinge", "huber"] | None = None
    """
    classification: The loss l(z; y), y in {-1, +1}. Default "logistic". regression: The loss l(z; y): squared or huber. Default "squared".
    """
    sigma: float | Literal["auto"] | None = 1e-05
    """
    Regularisation weight: F = sigma/2 ||w||^2 + mean loss, ||w||^2 = alpha^T K alpha; "auto": chosen by cross-validation.
    """
    validation_fraction: float | None = 0.2
    """
    sigma="auto" and early_stopping: the share of the training rows held out by a validation split.
    """
    n_iter: int | None = None
    """
    Iterations T; None: 5 epochs, ceil(5 m / batch_size).
    """
    early_stopping: bool | None = False
    """
    Stop once the score on validation_fraction of the training rows stops improving.
    """
    n_iter_no_change: int | None = 5
    """
    early_stopping: the checkpoints in a row without improvement that stop the fit.
    """
    tol: float | None = 0.001
    """
    early_stopping: the least gain of the validation score (accuracy, or RMSE) that counts as an improvement.
    """
    fit_intercept: bool | None = True
    """
    A constant feature 1 in the feature space (K + 1), regularised like the others.
    """
    random_state: int | None = None
    """
    Seeds the sample draws (the same draws as PGS for one seed).
    """
    epsilon: float | None = 1.0
    """
    Width of the quadratic part of the huber loss (unused by the others).
    """
    target_score: float | None = None
    """
    Stop at the first checkpoint whose test score (fit's eval_set) reaches this value.
    """
    time_budget: float | None = None
    """
    Stop once the solver clock reaches this many seconds.
    """
    checkpoint_growth: float | None = 1.25
    """
    Trace checkpoints are taken at samples seen growing by this factor (from 1,000)...
    """
    checkpoint_interval: float | None = 1.0
    """
    ...and at least every this many solver seconds.
    """
    objective_rows: int | None = 20000
    """
    The trace's training objective is computed on this many rows, evenly spread, when the data has more; None: on every row.
    """
    eval_rows: int | None = 20000
    """
    The trace's test score is computed on this many rows of fit's eval_set, evenly spread, when it has more; None: on every row.
    """
    kernel: Literal["linear", "poly", "rbf"] | None = "rbf"
    """
    K(x, z) = <x, z>, exp(-gamma ||x - z||^2) or (gamma <x, z> + coef0)^degree.
    """
    gamma: float | Literal["scale"] | None = "scale"
    """
    rbf width and poly scale; "scale" is 1 / (n_features * X.var()), as scikit-learn's SVC.
    """
    degree: int | None = 3
    """
    The poly kernel's degree.
    """
    coef0: float | None = 1.0
    """
    The poly kernel's constant (the lecture's (1 + <x, z>)^l is gamma=1, coef0=1).
    """
    batch_size: int | None = 1
    """
    k, the samples per iteration (Section VII: for p = 2, k = 1 is the best choice).
    """
    t0: float | Literal["auto"] | None = "auto"
    """
    w_t = lambda / ((t + t0) sigma), as PGS; "auto" is PGS's rule with E K(x, x) for E ||x||^2.
    """
    output: Literal["average", "last"] | None = "average"
    """
    The average of w_1..w_T or w_T.
    """
    cache_size: float | None = 200.0
    """
    Megabytes of the kernel-row cache (solver.kernel_pgs); 0 recomputes every row.
    """
    class_weight: Literal["balanced"] | dict[str, float] | None = None
    """
    Weights of the classes in the loss: "balanced" (n_samples / (n_classes * n_samples of the class)), a mapping from label to weight (1 for a label it omits), or None (all 1).
    """


@dataclass(kw_only=True)
class AliasList:
    items: list[AliasRead]


@dataclass(kw_only=True)
class BatchPredictionRead:
    id: int
    model_id: int | None
    dataset_id: int | None
    extra_features: Literal["fail", "ignore"]
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    progress: BatchProgress
    outputs: list[str] | None
    """
    What the result holds: predictions, scores, probabilities
    """
    error: str | None
    attempts: int
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    metrics: dict[str, Any] | None = None
    """
    Once succeeded: the predictions' metrics against the data set's labels, the same set as a job's metrics.test (at the model's decision threshold); null when the labels are not of the model's kind, or there are none (metrics_note says which)
    """
    metrics_note: str | None = None
    """
    Once succeeded without metrics: why (the data set has no labels, or labels of another kind than the model's)
    """


@dataclass(kw_only=True)
class CoefficientSummary:
    top_k: int
    """
    At most this many weights each side, per class
    """
    outputs: list[OutputCoefficients]
    """
    One per class (multiclass), else one
    """


@dataclass(kw_only=True)
class ColumnPage:
    items: list[ColumnStatsRead]
    total: int
    """
    Columns listed: every column, or for svmlight those that occur
    """
    offset: int
    limit: int
    listed: Literal["all", "occurring"]
    """
    'occurring' (svmlight): only the columns with a value in some row are listed, every other column is all zeros; 'all': every column, in order
    """


@dataclass(kw_only=True)
class DatasetDetail:
    id: int
    name: str
    format: Literal["svmlight", "csv", "parquet", "arrow"]
    compressed: bool
    n_samples: int
    n_features: int
    nnz: int
    task: Literal["binary", "multiclass", "regression"] | None
    """
    binary, multiclass or regression; null without labels
    """
    classes: list[int | float | str] | None
    """
    Sorted distinct labels (classification)
    """
    index_base: int
    """
    1 if svmlight feature indices in the file were 1-based
    """
    sha256: str
    """
    SHA-256 of the file as uploaded
    """
    size_bytes: int
    """
    Size of the file as uploaded
    """
    created_at: datetime
    task_source: Literal["guessed", "declared"]
    """
    Whether the task was guessed from the labels or declared (upload or PATCH)
    """
    columns: ColumnPage | None
    """
    The first columns' statistics (GET /v1/datasets/{id}/columns pages through all of them); null unless columns_status is 'ready'
    """
    columns_status: Literal["ready", "pending", "unavailable"]
    """
    'ready': columns holds the statistics; 'pending': the data set was stored before the service kept column statistics and they are being computed in the background (ask again shortly); 'unavailable': the data set's files cannot be read from the store
    """
    task_note: str
    """
    How the task was chosen, and how to change it
    """
    warnings: list[str]
    """
    What the data set cannot be used for (stored all the same)
    """
    labelled: bool | None = True
    """
    false: rows without labels (uploaded with labelled=false) to predict in a batch; no job trains on or evaluates them
    """
    feature_names: list[str] | None = None
    """
    The feature columns' names: a CSV header's, a Parquet or Arrow file's (null for CSV without a header)
    """
    label_name: str | None = None
    """
    The label column's name (CSV header, Parquet, Arrow)
    """
    text_columns: list[int] | None = None
    """
    0-based feature columns holding text (CSV, Parquet, Arrow; one-hot encoded by a job's preprocessing)
    """
    n_missing: int | None = 0
    """
    Missing numeric cells: CSV cells that are empty or a na_values marker, Parquet and Arrow nulls (imputed by a job's preprocessing)
    """
    na_values: list[str] | None = None
    """
    CSV: the cells its upload read as missing besides the empty one; its models read a CSV sent to /predict with the same markers (null: another format)
    """
    description: str | None = None
    tags: list[str] | None = field(default_factory=list)


@dataclass(kw_only=True)
class DatasetList:
    items: list[DatasetRead]
    next_cursor: str | None
    """
    Pass as ?cursor= for the next page; null at the end
    """


@dataclass(kw_only=True)
class JobCreate:
    dataset_id: int
    """
    Training data set
    """
    test_dataset_id: int | None = None
    """
    Evaluation data set
    """
    test_fraction: float | None = None
    """
    Hold out this fraction of the training set
    """
    split_seed: int | None = 0
    """
    Seed of the test_fraction split
    """
    solver: (
        Literal[
            "pgs",
            "scd",
            "gcd",
            "smidas",
            "truncgrad",
            "lbfgs",
            "sdca",
            "gd",
            "sgd",
            "ogd",
            "kernel_pgs",
            "auto",
        ]
        | None
    ) = "pgs"
    """
    Training algorithm: a name of GET /v1/solvers, or "auto": pgs, sdca or lbfgs, chosen from the training rows, features, stored values and the (smallest) sigma; the job's solver is then the chosen one and its solver_choice says why
    """
    params: (
        PGSParams
        | SCDParams
        | GCDParams
        | SMIDASParams
        | TruncGradParams
        | LBFGSParams
        | SDCAParams
        | GDParams
        | SGDParams
        | OGDParams
        | KernelPGSParams
        | None
    ) = None
    """
    The solver's parameters, validated before queueing. Without random_state, the service draws one and records it in the job's params: sending those params back repeats the run exactly; the schema of its solver's: PGSParams for pgs, SCDParams for scd, GCDParams for gcd, SMIDASParams for smidas, TruncGradParams for truncgrad, LBFGSParams for lbfgs, SDCAParams for sdca, GDParams for gd, SGDParams for sgd, OGDParams for ogd, KernelPGSParams for kernel_pgs
    """
    selection: Selection | None = None
    """
    How params.sigma "auto" chooses sigma (only with it); null: the defaults
    """
    threshold: ThresholdOptions | None = None
    """
    A binary classifier's decision threshold, given or chosen for a metric on validation rows; null: 0.5 on the probability (0 on the decision value without one)
    """
    targets: list[float] | MetricTargets | None = None
    """
    Test accuracies (or RMSEs for regression) whose time-to-target is recorded; or {"metric": name, "values": [...]}: values of that metric, which the trace then records as its test score
    """
    time_budget_s: float | None = None
    """
    Stop after this many solver seconds, or as many seconds of wall-clock time
    """
    preprocessing: Preprocessing | None = None
    """
    Scaling, imputation, one-hot encoding of text columns and ignored columns, fitted on the training rows; null: the raw features as they are
    """
    weight_column: str | None = None
    """
    A numeric column of the CSV/Parquet data set (its header name) whose values weigh each row in the loss and in the test score; finite, >= 0, none missing. It is not a feature: preprocessing ignores it
    """
    name: str | None = None
    description: str | None = None
    tags: list[str] | None = field(default_factory=list)
    model_name: str | None = None
    """
    Register the trained model as the next version of this name
    """
    init_model: int | str | None = None
    """
    Start the fit from this stored model's weights (a warm start: refresh a model on new rows): its id or name@alias. It must have the job's task, loss, fit_intercept, features (n_features), classes and preprocessing; the fit then uses its fitted preprocessing, so that its weights mean the same. Every solver but kernel_pgs
    """


@dataclass(kw_only=True)
class JobRead:
    id: int
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    solver: str
    task: Literal["binary", "multiclass", "regression"]
    dataset_id: int | None
    test_dataset_id: int | None
    test_fraction: float | None
    split_seed: int
    params: dict[str, Any]
    """
    The request's params, with the random_state the service drew when they left it out
    """
    targets: list[float]
    time_budget_s: float | None
    progress: JobProgress
    metrics: dict[str, Any] | None
    """
    solver_seconds, compile_seconds (kernels loaded or compiled before the solver clock started), objective, test_accuracy (classification) or test_rmse (regression) of the model on every evaluation row, time_to_target: {target: solver seconds or null} on the trace's eval_rows sample; once finished with a model, overhead_seconds (the run's wall time minus solver_seconds) and its parts, which sum to it: load_seconds, preprocessing_seconds, compile_seconds, checkpoint_seconds, progress_seconds, final_metrics_seconds, model_write_seconds, other_seconds; for a job that trained from its shards (data over PGS_WORKER_MEMORY_BYTES), shard_window: how many shards the sampler kept open and interleaved; with params.sigma "auto", sigma (the sigma the regularisation path chose) and selection: {sigma, metric, splits ("5-fold", "validation"), stop_reason, path: [{sigma, mean, std, seconds, solver_seconds, scores}], largest sigma first}; for a binary classifier, threshold (as the job's threshold); test: the metrics of the model on every evaluation row (the test split or test set), equal to scikit-learn's sklearn.metrics on the same predictions. Classification: rows, unknown_label_rows (rows whose label the training rows lacked, left out), weight_sum, accuracy, balanced_accuracy, log_loss (null without probabilities), roc_auc (one-vs-rest macro for multiclass), average_precision (macro for multiclass), precision, recall and f1 (of the positive class for a binary model, macro otherwise), per_class: [{label, precision, recall, f1, support}], macro: {precision, recall, f1}, confusion_matrix: {labels, matrix (rows: true label, columns: predicted)}, roc_curves: [{label, auc, fpr, tpr}] (the positive class for a binary model, each class against the rest otherwise), calibration: {bins, mean_predicted, fraction_positive, weight} (binary logistic models), threshold (a binary classifier's, as the job's threshold; null otherwise), absent: {metric: why it is null}. Regression: rows, weight_sum, rmse, mae, r2
    """
    stop_reason: str | None
    """
    completed | converged | target_score | no_improvement (params.early_stopping: the validation score stopped improving) | time_budget (the job's own budget ran out) | time_limit (the server's PGS_MAX_JOB_SECONDS ran out; the model is partial) | cancelled
    """
    error: str | None
    model_id: int | None
    attempts: int
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    target_metric: str | None = None
    """
    The metric of targets and of the trace's test score; null: accuracy or rmse
    """
    preprocessing: dict[str, Any] | None = None
    """
    The resolved preprocessing: scaling, impute, categorical (one-hot encoded columns), ignore (column indices), sparse; null: raw features
    """
    selection_options: dict[str, Any] | None = None
    """
    The request's selection with its defaults filled in (params.sigma "auto" only)
    """
    weight_column: str | None = None
    """
    The column whose values weigh the rows; null: every row weighs 1
    """
    selection: SelectionResult | None = None
    """
    Once a params.sigma "auto" job has a model: the chosen sigma, the metric, the splits and the path (mean and std of the score, seconds, per sigma)
    """
    threshold_options: dict[str, Any] | None = None
    """
    The request's threshold with its defaults filled in
    """
    threshold: ThresholdRead | None = None
    """
    Once a binary classifier has a model: its decision threshold (from metrics.threshold)
    """
    coefficients: CoefficientSummary | None = None
    """
    What a linear model learned, by name: per class, the intercept and the top_k largest positive and most negative weights per unit of the raw columns (GET /v1/models/{id}/coefficients pages through all); null for a kernel model or one stored before coefficients were kept
    """
    warnings: list[FitWarning] | None = None
    """
    Warnings for a degenerate model found at the end of its fit: every weight (near) zero, or a test score no better than the majority class (R^2 <= 0 for regression); empty for a sound model, null before the fit ends
    """
    time_limit_s: float | None = None
    """
    Wall-clock seconds the run may take: time_budget_s, or the server's PGS_MAX_JOB_SECONDS when the job gave none
    """
    waiting_reason: str | None = None
    """
    Why a queued job has not started: the worker processes are starting, or every worker is busy (null once it runs)
    """
    study_id: int | None = None
    study_run: int | None = None
    """
    Index of the study's run
    """
    study_repeat: int | None = None
    train_size: int | None = None
    """
    Trained on a seeded subsample of this many training rows
    """
    subsample_seed: int | None = None
    select_sigma: dict[str, Any] | None = None
    """
    Sigma grid searched on a validation split of the training rows
    """
    name: str | None = None
    description: str | None = None
    tags: list[str] | None = field(default_factory=list)
    model_name: str | None = None
    init_model_id: int | None = None
    """
    The model the fit started from (the request's init_model); null: a cold start
    """
    solver_choice: SolverChoiceRead | None = None
    """
    When the request named solver "auto": what it chose (the job's solver) and why; null when the request named the solver
    """


@dataclass(kw_only=True)
class ModelRead:
    id: int
    solver: str
    task: Literal["binary", "multiclass", "regression"]
    estimator: str
    params: dict[str, Any]
    n_features: int
    classes: list[int | float | str] | None
    job_id: int | None
    dataset_id: int | None
    metrics: dict[str, Any] | None
    """
    The job's final metrics (see JobRead.metrics), test among them
    """
    size_bytes: int
    created_at: datetime
    nnz_weights: int | None = None
    """
    Non-zero weights (support vectors for a kernel model)
    """
    n_weights: int | None = None
    """
    The linear predictor's weight count (features after one-hot encoding x outputs), the denominator of its density nnz_weights / n_weights; null for a kernel model
    """
    threshold: ThresholdRead | None = None
    """
    A binary classifier's decision threshold, used by /predict and batch predictions
    """
    coefficients: CoefficientSummary | None = None
    """
    What a linear model learned, by name: per class, the intercept and the top_k largest positive and most negative weights per unit of the raw columns (GET /v1/models/{id}/coefficients pages through all); null for a kernel model or one stored before coefficients were kept
    """
    warnings: list[FitWarning] | None = None
    """
    Warnings for a degenerate model found at the end of its fit: every weight (near) zero, or a test score no better than the majority class (R^2 <= 0 for regression); empty for a sound model, null before the fit ends
    """
    partial: bool | None = False
    """
    The last iterate of a run that was cancelled or reached the server's time limit, not a finished fit
    """
    partial_reason: Literal["cancelled", "time_limit"] | None = None
    preprocessing: dict[str, Any] | None = None
    """
    The fitted preprocessing's settings (as the job's); applied to every prediction
    """
    feature_names: list[str] | None = None
    """
    Names a prediction row may be keyed by (the CSV header)
    """
    name: str | None = None
    """
    The model name this is a version of
    """
    version: int | None = None
    """
    Version number within the name
    """
    description: str | None = None
    tags: list[str] | None = field(default_factory=list)
    training_dataset: dict[str, Any] | None = None
    """
    The training data set as it was, kept when it was deleted
    """
    init_model_id: int | None = None
    """
    The model its fit started from (its job's init_model); null: a cold start
    """


@dataclass(kw_only=True)
class SolverRead:
    name: str
    """
    The value of a job's solver
    """
    title: str
    paper: str
    """
    The paper it implements
    """
    algorithm: str
    """
    Where in the paper
    """
    streams: bool
    """
    Whether it trains from a data set's shards one at a time, so on data larger than a worker's memory budget (PGS_WORKER_MEMORY_BYTES)
    """
    warm_starts: bool
    """
    Whether a job of this solver may start from a stored model's weights (init_model)
    """
    tasks: list[SolverTaskRead]
    """
    Per task it trains: its losses and parameters
    """


@dataclass(kw_only=True)
class StudyRun:
    solver: (
        Literal[
            "pgs",
            "scd",
            "gcd",
            "smidas",
            "truncgrad",
            "lbfgs",
            "sdca",
            "gd",
            "sgd",
            "ogd",
            "kernel_pgs",
        ]
        | None
    ) = "pgs"
    """
    Training algorithm: a name of GET /v1/solvers
    """
    params: (
        PGSParams
        | SCDParams
        | GCDParams
        | SMIDASParams
        | TruncGradParams
        | LBFGSParams
        | SDCAParams
        | GDParams
        | SGDParams
        | OGDParams
        | KernelPGSParams
        | None
    ) = None
    """
    The solver's parameters, validated as for a job; the schema of its solver's: PGSParams for pgs, SCDParams for scd, GCDParams for gcd, SMIDASParams for smidas, TruncGradParams for truncgrad, LBFGSParams for lbfgs, SDCAParams for sdca, GDParams for gd, SGDParams for sgd, OGDParams for ogd, KernelPGSParams for kernel_pgs
    """
    label: str | None = None
    """
    Legend text; default: solver and loss/p
    """


@dataclass(kw_only=True)
class BatchPredictionList:
    items: list[BatchPredictionRead]
    next_cursor: str | None


@dataclass(kw_only=True)
class JobList:
    items: list[JobRead]
    next_cursor: str | None


@dataclass(kw_only=True)
class ModelList:
    items: list[ModelRead]
    next_cursor: str | None


@dataclass(kw_only=True)
class SolverList:
    solvers: list[SolverRead]


@dataclass(kw_only=True)
class StudyCreate:
    dataset_id: int
    """
    Training data set; sizes are subsamples of it
    """
    runs: list[StudyRun]
    sizes: list[int]
    """
    Training-set sizes m (distinct, >= 2)
    """
    targets: list[float]
    """
    Test accuracies (or RMSEs for regression) whose time-to-target is measured
    """
    name: str | None = None
    test_dataset_id: int | None = None
    """
    Evaluation data set
    """
    test_fraction: float | None = None
    """
    Hold out this fraction of the data set (seeded by seed) for evaluation
    """
    repeats: int | None = 3
    """
    Subsamples (and runs) per size
    """
    seed: int | None = 0
    """
    Seed of the split and subsamples
    """
    time_budget_s: float | None = None
    """
    Per job: stop after this many solver seconds, or as many of wall-clock time
    """
    select_sigma: SelectSigma | None = None
    """
    Choose sigma per job on a validation split of its m rows
    """


@dataclass(kw_only=True)
class StudyRead:
    id: int
    name: str | None
    status: Literal["queued", "running", "succeeded", "failed", "cancelled", "partial"]
    """
    From its jobs: queued, running, succeeded, failed, cancelled, or partial (all finished, in more than one way)
    """
    task: Literal["binary", "multiclass", "regression"]
    score_name: Literal["accuracy", "rmse"]
    dataset_id: int | None
    test_dataset_id: int | None
    test_fraction: float | None
    seed: int
    n_train: int
    """
    Rows of the training part the sizes are drawn from
    """
    runs: list[StudyRun]
    sizes: list[int]
    repeats: int
    targets: list[float]
    time_budget_s: float | None
    select_sigma: SelectSigma | None
    cancel_requested: bool
    progress: StudyProgress
    created_at: datetime
    finished_at: datetime | None
    """
    When its last job ended, once all have
    """
    table: list[StudyRow] | None = None
    """
    One row per (run, m, target); left out of listings
    """


@dataclass(kw_only=True)
class StudyList:
    items: list[StudyRead]
    next_cursor: str | None
