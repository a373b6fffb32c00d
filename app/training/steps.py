"""The training path of one job, as small steps a worker runs top to bottom.

1. :func:`load_job` reads the job and its data sets into a :class:`TrainingJob`; its estimator is an
   :class:`app.services.solvers.estimators.EstimatorSpec`, the one typed form of a job's ``params``
   from request to fit (built by ``EstimatorSpec.build``, as the API built it to check the request).
2. :func:`load_data` selects the rows (the evaluation split or the test set, a study's
   subsample; :mod:`app.services.jobs.rows`), fits the preprocessing from the training rows'
   column statistics and encodes the labels. A solver that streams gets
   them as a ``solver.ShardedMatrix`` read a shard at a time; the others as one CSR matrix.
3. :func:`fit` chooses sigma first when a study asks for it, then fits with a :class:`Reporter`,
   the fit's callback that writes progress and notices a cancel, a shutdown or a lost claim.
   A binary classifier's decision threshold is chosen first when the job names a metric for it
   (:func:`decision_threshold`).
4. :func:`package_model` exports the fitted estimator; :func:`final_metrics` and
   :func:`final_progress` are the job's result; :func:`store_model` writes the model files.

:func:`train` joins 2-4. Everything here is independent of the process it runs in: the worker
(app/training/worker.py) claims the job, supplies how to notice a shutdown, and writes the outcome.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.core.storage.base import Store
from app.db.engine import SessionFactory, transaction
from app.db.tables import Dataset, Job, Model
from app.services.datasets.dataset_stats import dataset_stats
from app.services.datasets.parse_base import json_label
from app.services.datasets.shards import open_dataset
from app.services.jobs import state as jobs
from app.services.jobs.fitted_preprocessing import fitted_preprocessor
from app.services.jobs.limits import data_bytes
from app.services.jobs.preprocessing import raw_matrix
from app.services.jobs.rows import RowSelection, codes_of, distinct_labels, evaluate, split
from app.services.jobs.selection import estimator_params as selection_params
from app.services.jobs.threshold import needs_validation_fit
from app.services.jobs.weights import with_class_codes
from app.services.metrics import names as metric_names
from app.services.metrics import threshold as thresholds
from app.services.metrics.evaluation import has_proba, model_metrics
from app.services.metrics.trace_metric import eval_metric
from app.services.model_registry.artifacts import save_model_files
from app.services.solvers.estimators import EstimatorSpec
from app.services.studies.phases import select_sigma, subsample_rows
from app.training.learned import learned_metrics
from app.training.reporter import KEEPS_MODEL, Reporter, Stop, running_metrics
from app.training.starting_point import InitModel, StartingPoint, load_start
from app.training.timing import JobClock
from solver import SOLVERS, ShardedMatrix
from solver.selection import make_splits

log = logging.getLogger(__name__)


# -- the job, typed ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataSpec:
    """Where a job's rows come from (store keys) and which of them it trains on."""

    train_key: str
    test_key: str | None
    test_fraction: float | None
    split_seed: int
    n_features: int
    # A study's job: a seeded subsample of the training part (app/services/studies/phases.py).
    train_size: int | None = None
    subsample_seed: int | None = None
    # What its data sets take in memory as CSR matrices (app/services/jobs/limits.data_bytes).
    data_bytes: int = 0
    # The resolved preprocessing (app/services/jobs/preprocessing.py), None for raw features, and
    # the data set's text columns (their values are stored beside X).
    preprocessing: dict[str, Any] | None = None
    text_columns: list[int] = field(default_factory=list)
    # The column whose values weigh the rows (app/services/jobs/weights.py), None: unweighted.
    weight_column: int | None = None


@dataclass(frozen=True)
class SigmaSearch:
    """A study's sigma selection on a validation split of the job's own training rows."""

    grid: list[float]
    validation_fraction: float
    seed: int


@dataclass(frozen=True)
class TrainingJob:
    job_id: int
    dataset_id: int
    index_base: int
    estimator: EstimatorSpec
    data: DataSpec
    targets: list[float]
    sigma_search: SigmaSearch | None = None
    feature_names: list[str] | None = None
    label_name: str | None = None
    # The training CSV's missing markers besides the empty cell (datasets.na_values).
    na_values: list[str] | None = None
    # The run's wall-clock limit (jobs.time_limit_s; None for a job queued before it existed).
    time_limit_s: float | None = None
    # The stored model the fit starts from (init_model); None for a cold start.
    init_model: InitModel | None = None
    # The request's decision threshold options (app/services/jobs/threshold.py); None: default.
    threshold_options: dict[str, Any] | None = None
    # The metric the targets name, the trace's test score; None: accuracy or RMSE.
    target_metric: str | None = None

    @property
    def higher_is_better(self) -> bool:
        """Of the trace's test score (its targets)."""
        if self.target_metric is not None:
            return metric_names.higher_is_better(self.target_metric)
        return self.estimator.classification


def load_job(factory: SessionFactory, job_id: int) -> TrainingJob:
    with transaction(factory) as s:
        job = s.get(Job, job_id)
        assert job is not None
        train = s.get(Dataset, job.dataset_id) if job.dataset_id is not None else None
        test = s.get(Dataset, job.test_dataset_id) if job.test_dataset_id is not None else None
        if train is None or (job.test_dataset_id is not None and test is None):
            raise RuntimeError("the job's data set was deleted before the job ran")
        init_model = None
        if job.init_model_id is not None:
            start = s.get(Model, job.init_model_id)
            if start is None:
                raise RuntimeError(f"model {job.init_model_id} (init_model) was deleted before the job ran")
            init_model = InitModel(start.id, start.file_stem)
        search = None
        if job.select_sigma is not None:
            seed = job.subsample_seed if job.subsample_seed is not None else job.split_seed
            search = SigmaSearch(
                grid=list(job.select_sigma["grid"]),
                validation_fraction=job.select_sigma["validation_fraction"],
                seed=seed,
            )
        return TrainingJob(
            job_id=job.id,
            dataset_id=train.id,
            index_base=train.index_base,
            estimator=EstimatorSpec(
                job.solver,
                job.task,
                dict(job.params) | selection_params(job.selection_options),
                job.time_budget_s,
            ),
            data=DataSpec(
                train_key=train.file_name,
                test_key=test.file_name if test is not None else None,
                test_fraction=job.test_fraction,
                split_seed=job.split_seed,
                n_features=train.n_features,
                train_size=job.train_size,
                subsample_seed=job.subsample_seed,
                preprocessing=job.preprocessing,
                text_columns=list(train.text_columns or []),
                data_bytes=sum(data_bytes(d) for d in (train, test) if d is not None),
                weight_column=(
                    None
                    if job.weight_column is None
                    else (train.feature_names or []).index(job.weight_column)
                ),
            ),
            targets=list(job.targets),
            sigma_search=search,
            feature_names=train.feature_names,
            label_name=train.label_name,
            na_values=train.na_values,
            time_limit_s=job.time_limit_s,
            init_model=init_model,
            threshold_options=job.threshold_options,
            target_metric=job.target_metric,
        )


# -- the data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingData:
    """The rows a fit gets: for a solver that streams, ShardedMatrix objects whose shards carry
    the encoded labels (``y`` and ``y_eval`` are None); for the others, a CSR matrix and ``y``
    as the estimator takes it (class codes for classification), the evaluation rows likewise.
    ``classes`` are the labels the codes stand for."""

    X: Any
    y: np.ndarray | None
    X_eval: Any | None
    y_eval: np.ndarray | None
    classes: np.ndarray | None
    # The fitted preprocessing X and X_eval went through (None: raw features).
    preprocessor: Any = None
    # The rows' weights from the job's weight column (None: unweighted), for the fit and the
    # evaluation rows' scores.
    sample_weight: np.ndarray | None = None
    eval_sample_weight: np.ndarray | None = None

    @property
    def eval_set(self) -> Any:
        if isinstance(self.X_eval, ShardedMatrix):
            return self.X_eval
        if self.X_eval is None or self.y_eval is None:
            return None
        # The evaluation rows' weights weigh the trace's test score as they weigh the final one.
        return (self.X_eval, self.y_eval, self.eval_sample_weight)


def streams(job: TrainingJob, memory_bytes: int) -> bool:
    """Whether the job trains from shards: its data sets do not fit in ``memory_bytes``
    (PGS_WORKER_MEMORY_BYTES), its solver streams, and neither a sigma selection, a threshold
    choice nor early stopping (which fit on in-memory splits of the rows) asks for its rows in
    memory. Data that fits is read into one CSR matrix: the solver then samples uniformly from all
    rows, as its paper's guarantee assumes, and faster."""
    return (
        job.data.data_bytes > memory_bytes
        and SOLVERS[job.estimator.solver].streams
        and job.sigma_search is None
        and not job.estimator.params.get("early_stopping", False)
        and not needs_validation_fit(job.threshold_options)
        and job.data.weight_column is None  # shards carry no weights (the request checked the size)
    )


# The share of the worker's memory budget given to the shards a streaming fit interleaves. The
# rest is for the process itself (about 350 MiB: Python, NumPy, SciPy, Numba and the app) and the
# few shards a streaming job holds besides (one read by the evaluation, rows of a minibatch across
# shard ends, the one being replaced); tests/app/training/test_larger_than_memory.py checks the peak.
WINDOW_SHARE = 8


def shard_window(memory_bytes: int, shard_bytes: int) -> int:
    """How many shards a streaming fit keeps open and interleaves: as many as fit in
    1/WINDOW_SHARE of ``memory_bytes``, at least one. More open shards mix the rows of a data set
    stored in an order that matters (sorted by label) over a wider span of it."""
    return max(1, memory_bytes // (WINDOW_SHARE * max(shard_bytes, 1)))


def load_data(
    store: Store,
    spec: DataSpec,
    classification: bool,
    stream_memory: int | None = None,
    clock: JobClock | None = None,
    fitted: Any = None,
) -> TrainingData:
    """The job's rows: in memory, or with ``stream_memory`` (the worker's memory budget) as
    shards read one window at a time (:func:`shard_window`). ``clock`` times the preprocessing.
    ``fitted``: a fitted preprocessing to use instead of fitting one (a warm start's)."""
    clock = clock or JobClock()
    train, evaluation = _rows(store, spec)
    window = None if stream_memory is None else shard_window(stream_memory, train.largest_shard_bytes)
    # A study's largest size is every row: no subsample then, whose row indices and per-shard
    # masks would take 16 bytes a row (1.6 GB at 100 million rows) and copy each shard it opens.
    if spec.train_size is not None and spec.train_size < train.n_samples:
        # Never a subsample of the evaluation rows: they were set apart above.
        train = train.subsample(subsample_rows(train.n_samples, spec.train_size, spec.subsample_seed or 0))
    classes = None
    if classification:
        classes = distinct_labels(train)
        if len(classes) < 2:
            raise ValueError(f"the training data has a single class ({classes[0]!r}); need two")

    def encode(y: np.ndarray) -> np.ndarray:
        return np.asarray(y, dtype=np.float64) if classes is None else codes_of(classes, y)

    with clock.part("preprocessing"):
        preprocessor = fitted if fitted is not None else _preprocessor(store, spec, train)
    if window is not None:
        return _streamed(spec, train, evaluation, encode, classes, window, preprocessor)
    X, y = train.in_memory()
    weights = _row_weights(spec, X)
    with clock.part("preprocessing"):
        X = _preprocess(spec, preprocessor, X, train.text())
    if evaluation is None:
        return TrainingData(X, encode(y), None, None, classes, preprocessor, weights)
    X_eval, y_eval = evaluation.in_memory()
    eval_weights = _row_weights(spec, X_eval)
    with clock.part("preprocessing"):
        X_eval = _preprocess(spec, preprocessor, X_eval, evaluation.text())
    return TrainingData(X, encode(y), X_eval, encode(y_eval), classes, preprocessor, weights, eval_weights)


def _row_weights(spec: DataSpec, X: Any) -> np.ndarray | None:
    """The job's weight column of the raw rows X (before the preprocessing, which ignores it)."""
    if spec.weight_column is None:
        return None
    return np.asarray(X[:, spec.weight_column].toarray(), dtype=np.float64).ravel()


def _streamed(
    spec: DataSpec,
    train: RowSelection,
    evaluation: RowSelection | None,
    encode: Callable[[np.ndarray], np.ndarray],
    classes: np.ndarray | None,
    window: int,
    preprocessor: Any,
) -> TrainingData:
    """Shards as the solver samples them, each through the fitted preprocessing when the job has
    one (fitted from the statistics of all the training rows: :func:`_preprocessor`)."""
    if preprocessor is None:
        X_eval = None if evaluation is None else evaluation.matrix(encode)
        return TrainingData(train.matrix(encode, window=window), None, X_eval, None, classes)
    from solver.preprocessing import output_width

    def transform(X: Any, text: np.ndarray | None) -> Any:
        return _preprocess(spec, preprocessor, X, text)

    width = output_width(preprocessor)
    X_eval = None if evaluation is None else evaluation.matrix(encode, transform, width)
    return TrainingData(
        train.matrix(encode, transform, width, window), None, X_eval, None, classes, preprocessor
    )


def _rows(store: Store, spec: DataSpec) -> tuple[RowSelection, RowSelection | None]:
    """(training rows, evaluation rows): the test set, or the seeded ``test_fraction`` split
    (:class:`app.services.datasets.splits.ShardSplit`), or no evaluation."""
    train = open_dataset(store, spec.train_key)
    if spec.test_key is not None:
        test = open_dataset(store, spec.test_key)
        return RowSelection(train, spec.n_features), RowSelection(test, spec.n_features)
    if spec.test_fraction is not None:
        return split(train, spec.n_features, spec.test_fraction, spec.split_seed)
    return RowSelection(train, spec.n_features), None


def _preprocessor(store: Store, spec: DataSpec, train: RowSelection) -> Any:
    """The job's preprocessing fitted on the training rows ``train`` (None without one), from
    their column statistics: those stored with the data set when the rows are all of it (a job
    with a test set or without evaluation reads no row here), else those of one pass over the
    selected rows' shards, so that no held-out row moves a mean, a scale or a category. A text
    column with more categories than the statistics keep has them read from the rows."""
    resolved = spec.preprocessing
    if resolved is None:
        return None
    stats = dataset_stats(store, spec.train_key) if train.whole else train.column_stats()
    categories = {
        j: train.categories(k)
        for k, j in enumerate(spec.text_columns)
        if j in resolved["categorical"] and stats.text[k].truncated
    }
    return fitted_preprocessor(resolved, spec.n_features, stats, spec.text_columns, categories)


def _preprocess(spec: DataSpec, preprocessor: Any, X: Any, text: np.ndarray | None) -> Any:
    """Rows (training or evaluation) through the fitted preprocessing; as they are without."""
    if preprocessor is None or spec.preprocessing is None:
        return X
    return preprocessor.transform(raw_matrix(X, text, spec.text_columns, spec.preprocessing))


def choose_sigma(job: TrainingJob, data: TrainingData, reporter: Reporter) -> float | None:
    """A study's sigma, chosen on a validation split of the training rows (the reporter sees
    cancel and shutdown in between) and recorded in ``reporter.extra``; None without a sigma
    search or when the job was stopped meanwhile."""
    search = job.sigma_search
    if search is None:
        return None
    # A sigma search never streams (see streams()): its rows are in memory.
    assert data.y is not None
    reporter.extra = {"phase": "select_sigma"}
    selection = select_sigma(
        lambda sigma: with_class_codes(job.estimator.build(sigma), data.classes),
        data.X,
        data.y,
        classification=job.estimator.classification,
        grid=search.grid,
        validation_fraction=search.validation_fraction,
        seed=search.seed,
        callback=reporter,
        stopped=reporter.stopped,
    )
    if selection is None:
        return None
    reporter.extra = selection.metrics()
    return selection.sigma


def decision_threshold(
    job: TrainingJob, data: TrainingData, reporter: Reporter | None = None
) -> thresholds.Threshold | None:
    """A binary classifier's decision threshold (None for the other models): the job's value,
    or the one that maximises its metric on a stratified validation split of the training rows
    (drawn with the job's split seed, as sigma "auto" draws its own), scored by a model fitted
    on the rest of them; else the default. The ``reporter`` sees that fit (untraced, as a sigma
    search's), so a cancel, a shutdown or the time limit stops it; the job's fit then does not
    begin."""
    classes = data.classes
    if classes is None or len(classes) != 2:
        return None
    estimator = with_class_codes(job.estimator.build(), classes)
    proba = has_proba(estimator)
    options = job.threshold_options
    if options is None:
        return thresholds.Threshold.default(proba)
    if options.get("value") is not None:
        default = thresholds.Threshold.default(proba)
        return thresholds.Threshold(float(options["value"]), default.applies_to, "given")
    # needs_validation_fit keeps such a job's rows in memory (see streams()).
    assert data.y is not None
    [(fit_rows, validation_rows)], _ = make_splits(
        data.y,
        classification=True,
        folds=None,
        validation_fraction=options["validation_fraction"],
        seed=job.data.split_seed,
    )
    if reporter is not None:
        reporter.extra = {"phase": "choose_threshold"}
    weights = None if data.sample_weight is None else data.sample_weight[fit_rows]
    estimator.fit(data.X[fit_rows], data.y[fit_rows], sample_weight=weights, callback=reporter, trace=False)
    if reporter is not None:
        reporter.extra = {}
    scores = estimator.decision_function(data.X[validation_rows])
    return thresholds.choose(scores, data.y[validation_rows], options["metric"], proba)


def fit(
    job: TrainingJob,
    data: TrainingData,
    reporter: Reporter,
    threshold: thresholds.Threshold | None = None,
    start: StartingPoint | None = None,
) -> Any:
    """The fitted estimator, started from ``start``'s weights when given; unfitted when the
    reporter stopped the run before the fit began. Its trace scores the metric the job's targets
    name, at ``threshold``."""
    estimator = with_class_codes(job.estimator.build(sigma=choose_sigma(job, data, reporter)), data.classes)
    reporter.start_fit()
    if start is not None:
        start.check_classes(data.classes)
    if not reporter.stopped():
        named = {}
        if job.target_metric is not None and data.eval_set is not None:
            n_classes = None if data.classes is None else len(data.classes)
            named["eval_metric"] = eval_metric(job.target_metric, n_classes, has_proba(estimator), threshold)
        estimator.fit(
            data.X,
            data.y,
            sample_weight=data.sample_weight,
            eval_set=data.eval_set,
            callback=reporter,
            trace=True,
            coef_init=None if start is None else start.coef,
            intercept_init=None if start is None else start.intercept,
            **named,
        )
    return estimator


# -- the result ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelPackage:
    """A fitted model as the store keeps it: the estimator's export and the service's metadata."""

    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]
    service: dict[str, Any]


def package_model(
    estimator: Any, job: TrainingJob, data: TrainingData, threshold: thresholds.Threshold | None = None
) -> ModelPackage:
    """The estimator's export, and the fitted preprocessing's (its arrays prefixed
    ``preprocessing.``, its settings under ``service["preprocessing"]``), and a binary
    classifier's decision threshold (``service["threshold"]``), which predictions use."""
    from solver import export_preprocessor

    meta, arrays = estimator.export_model()
    classes = data.classes
    preprocessing = None
    if data.preprocessor is not None:
        preprocessing, prep_arrays = export_preprocessor(data.preprocessor)
        arrays = {**arrays, **{f"preprocessing.{k}": v for k, v in prep_arrays.items()}}
    service = {
        "preprocessing": preprocessing,
        "feature_names": job.feature_names,
        "label_name": job.label_name,
        "na_values": job.na_values,
        "solver": job.estimator.solver,
        "task": job.estimator.task,
        "n_features": job.data.n_features,
        "index_base": job.index_base,
        "classes": None if classes is None else [json_label(c) for c in classes],
        "job_id": job.job_id,
        "threshold": None if threshold is None else threshold.as_dict(),
    }
    return ModelPackage(meta, arrays, service)


def final_metrics(
    estimator: Any,
    job: TrainingJob,
    data: TrainingData,
    package: ModelPackage,
    extra: dict[str, Any],
    threshold: thresholds.Threshold | None = None,
) -> dict[str, Any]:
    """From the returned model itself, not from the last checkpoint: the trace's metrics, and
    ``test``, every metric of the model on the evaluation rows (app/services/metrics)."""
    classification = job.estimator.classification
    metrics = running_metrics(list(estimator.trace_), job.targets, job.higher_is_better, job.target_metric)
    metrics |= extra
    metrics["solver_seconds"] = float(estimator.solver_seconds_)
    # Loading (or, on a cold cache, compiling) the kernels: never part of solver_seconds.
    metrics["compile_seconds"] = float(estimator.compile_seconds_)
    if data.X_eval is not None:
        eval_rows = (
            data.X_eval
            if isinstance(data.X_eval, ShardedMatrix)
            else ShardedMatrix.from_arrays(data.X_eval, data.y_eval, [data.X_eval.shape[0]])
        )
        predict = estimator.predict
        if threshold is not None:  # a binary classifier predicts at its decision threshold

            def predict(X: Any) -> np.ndarray:
                return estimator.classes_[threshold.predict(estimator.decision_function(X))]

        score = evaluate(predict, eval_rows, classification, data.eval_sample_weight)
        metrics["test_accuracy" if classification else "test_rmse"] = score
        metrics["test"] = model_metrics(
            estimator, eval_rows, package.service["classes"], threshold, data.eval_sample_weight
        )
        if job.target_metric is not None:  # the named metric on every evaluation row
            metrics[f"test_{job.target_metric}"] = metrics["test"].get(job.target_metric)
    if threshold is not None:
        metrics["threshold"] = threshold.as_dict()
    selection = getattr(estimator, "selection_", None)
    if selection is not None:
        # sigma="auto": the chosen sigma and the path that chose it (solver.selection).
        metrics["sigma"] = float(estimator.sigma_)
        metrics["selection"] = selection.as_dict()
    if package.meta.get("nnz_weights") is not None:
        metrics["nnz_weights"] = int(package.meta["nnz_weights"])
    if not hasattr(estimator, "dual_coef_") and hasattr(estimator, "coef_"):
        # The predictor's own weight count, the denominator of its density: after one-hot
        # encoding it is not n_features (the raw columns) x classes.
        metrics["n_weights"] = int(np.asarray(estimator.coef_).size)
    if isinstance(data.X, ShardedMatrix):
        metrics["shard_window"] = data.X.window
    # The named coefficients and the warnings for a degenerate model (app/training/learned.py).
    metrics |= learned_metrics(package.meta, package.arrays, package.service, metrics)
    return metrics


def final_progress(estimator: Any, reporter: Reporter, metrics: dict[str, Any]) -> jobs.Progress:
    # The estimator's own trace has the points the reporter did not see (a fit that stops at its
    # very first checkpoint never calls back); the last point is kept whatever the thinning.
    reporter.add_points(estimator.trace_[reporter.fit_points :])
    reporter.trace.finish()
    progress = reporter.progress()
    progress.iteration = int(estimator.n_iter_)
    final = estimator.trace_[-1] if estimator.trace_ else None
    if final is not None and final.iteration == estimator.n_iter_:
        progress.samples_seen = int(final.samples_seen)
    progress.metrics = metrics
    return progress


@dataclass(frozen=True)
class Trained:
    """A fit that ended with a model: what the job's final write records. ``stop`` is the
    reporter's when it stopped the fit (a cancel or a time limit: the model is the last
    iterate), None when the fit ended by itself."""

    estimator: Any
    package: ModelPackage
    metrics: dict[str, Any]
    progress: jobs.Progress
    stop: Stop | None = None

    @property
    def stop_reason(self) -> str:
        if self.stop is Stop.CANCEL:
            return "cancelled"
        return self.stop.value if self.stop is not None else str(self.estimator.stop_reason_)

    @property
    def partial_reason(self) -> str | None:
        """Why the model is not a finished fit: cancelled, or the server's time limit (a job's
        own time budget is a finish it asked for)."""
        if self.stop is None:
            return None
        return {Stop.CANCEL: "cancelled", Stop.TIME_LIMIT: "time_limit"}.get(self.stop)


def train(
    job: TrainingJob, store: Store, reporter: Reporter, memory_bytes: int, clock: JobClock | None = None
) -> Trained | None:
    """Steps 2-4 for one claimed job (its data read in one piece when it fits in
    ``memory_bytes``, else a shard at a time); None when the reporter stopped it without a
    model to keep (see ``reporter.stop``): before the fit began, or for a stop that hands the
    job on. ``clock`` (app/training/timing.py) times the steps."""
    clock = clock or JobClock()
    with clock.part("load"):
        start = None if job.init_model is None else load_start(store, job.init_model)
        data = load_data(
            store,
            job.data,
            job.estimator.classification,
            memory_bytes if streams(job, memory_bytes) else None,
            clock,
            fitted=None if start is None else start.preprocessor,
        )
    threshold = decision_threshold(job, data, reporter)
    estimator = fit(job, data, reporter, threshold, start)
    if reporter.stopped() and (reporter.stop not in KEEPS_MODEL or not _fitted(estimator)):
        return None
    clock.fitted(estimator, reporter.seconds)
    package = package_model(estimator, job, data, threshold)
    with clock.part("final_metrics"):
        metrics = final_metrics(estimator, job, data, package, reporter.extra, threshold)
    return Trained(
        estimator, package, metrics, final_progress(estimator, reporter, metrics), stop=reporter.stop
    )


def _fitted(estimator: Any) -> bool:
    """Whether the fit began (a stop returns its last iterate as a fitted estimator)."""
    return hasattr(estimator, "n_iter_")


def store_model(store: Store, job: TrainingJob, trained: Trained, clock: JobClock | None = None) -> Model:
    """Write the model files; returns the (unsaved) row that makes them a model. With the run's
    ``clock``, the metrics (the model's and the job's final progress's) get the run's
    ``overhead_seconds`` and its parts, the write of these files included."""
    package, metrics, partial_reason = trained.package, trained.metrics, trained.partial_reason
    service = {**package.service, "partial": partial_reason is not None, "partial_reason": partial_reason}
    with (clock or JobClock()).part("model_write"):
        stem, size = save_model_files(store, {"estimator": package.meta, "service": service}, package.arrays)
    if clock is not None:
        metrics = metrics | clock.overhead()
        trained.progress.metrics = metrics
    return Model(
        job_id=job.job_id,
        dataset_id=job.dataset_id,
        solver=job.estimator.solver,
        task=job.estimator.task,
        estimator=package.meta["estimator"],
        params=package.meta["params"],
        n_features=job.data.n_features,
        classes=package.service["classes"],
        index_base=job.index_base,
        metrics=metrics,
        file_stem=stem,
        size_bytes=size,
        partial_reason=partial_reason,
        preprocessing=package.service["preprocessing"],
        feature_names=job.feature_names,
        init_model_id=None if job.init_model is None else job.init_model.model_id,
    )
