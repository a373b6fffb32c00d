"""scikit-learn estimators over the PGS kernel: PGSClassifier and PGSRegressor."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._sparse import as_kernel_data
from .losses import CLASSIFICATION_LOSSES, LOSSES, REGRESSION_LOSSES, loss_at_zero, mean_loss
from .pgs import PGSState
from .tracing import CheckpointSchedule, drive

OUTPUTS = ("average", "last", "random")


class _PGSEngine:
    """Advances one PGSState per output column (one-vs-rest for multiclass) on shared minibatches.

    ``output="random"`` is Figure 1, line 9: a uniformly random iterate among w_1..w_t, kept by
    reservoir sampling so that it stays uniform however early the run stops. Iterate s replaces the
    kept one with probability 1/s; the next replacement time after t is floor(t / u) + 1 for
    u ~ U(0, 1], which costs one O(n) snapshot per replacement, about ln(T) in all.
    """

    def __init__(self, states: list[PGSState], m: int, batch_size: int, output: str, rng):
        self.states = states
        self.m = m
        self.batch_size = batch_size
        self.samples_per_iteration = batch_size
        self.output = output
        self.rng = rng
        self.t = 0
        self._next_pick = 1
        self._picked: np.ndarray | None = None

    def run(self, n: int) -> None:
        target = self.t + n
        while self.t < target:
            stop = min(target, self._next_pick) if self.output == "random" else target
            batches = self.rng.integers(0, self.m, size=(stop - self.t) * self.batch_size)
            for state in self.states:
                state.run(batches)
            self.t = stop
            if self.output == "random" and self.t == self._next_pick:
                self._picked = np.stack([state.current() for state in self.states])
                u = 1.0 - self.rng.random()
                self._next_pick = math.floor(self.t / u) + 1

    def output_weights(self) -> np.ndarray:
        """Shape (n_outputs, n_weights): the predictor ``output`` asks for, at iteration t."""
        if self.output == "random" and self._picked is not None:
            return self._picked
        if self.output == "average":
            return np.stack([state.average() for state in self.states])
        return np.stack([state.current() for state in self.states])


class _PGSBase(BaseEstimator):
    """Shared parameters, validation, fitting and prediction of the PGS estimators."""

    _parameter_constraints: dict = {
        "p": [Interval(Real, 1.0, 2.0, closed="right")],
        "sigma": [Interval(Real, 0.0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_iter": [Interval(Integral, 1, None, closed="left"), None],
        "radius": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"}), None],
        "output": [StrOptions(set(OUTPUTS))],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
        "t0": [Interval(Real, 1.0, None, closed="left"), StrOptions({"auto"})],
        "epsilon": [Interval(Real, 0.0, None, closed="neither")],
        "target_score": [Real, None],
        "time_budget": [Interval(Real, 0.0, None, closed="neither"), None],
        "checkpoint_growth": [Interval(Real, 1.0, None, closed="neither")],
        "checkpoint_interval": [Interval(Real, 0.0, None, closed="neither"), None],
    }

    def __init__(
        self,
        loss,
        *,
        p=2.0,
        sigma=1e-5,
        batch_size=1,
        n_iter=None,
        radius="auto",
        output="average",
        fit_intercept=True,
        random_state=None,
        t0="auto",
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        self.loss = loss
        self.p = p
        self.sigma = sigma
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.radius = radius
        self.output = output
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.t0 = t0
        self.epsilon = epsilon
        self.target_score = target_score
        self.time_budget = time_budget
        self.checkpoint_growth = checkpoint_growth
        self.checkpoint_interval = checkpoint_interval

    def validate_params(self) -> None:
        """Raise ``ValueError``/``TypeError`` naming the parameter, its allowed values and the value given."""
        self._validate_params()
        if self.target_score is not None and not math.isfinite(self.target_score):
            raise ValueError(
                f"The 'target_score' parameter of {type(self).__name__} must be a finite number or "
                f"None. Got {self.target_score!r} instead."
            )

    # -- fitting -------------------------------------------------------------------------------

    def _fit_targets(
        self, X, targets: np.ndarray, eval_fn, score_name, higher_is_better, callback, trace
    ):
        """Fit one PGS problem per row of ``targets`` (shape (n_outputs, m))."""
        m = X.shape[0]
        data = as_kernel_data(X)
        n_iter = self.n_iter if self.n_iter is not None else math.ceil(5 * m / self.batch_size)
        rng = _generator(self.random_state)
        code = LOSSES[self.loss].code
        t0 = self._t0_for(data)
        states = []
        for y in targets:
            states.append(
                PGSState(
                    data, y, loss_code=code, p=float(self.p), sigma=float(self.sigma),
                    radius=self._radius_for(y), fit_intercept=bool(self.fit_intercept),
                    batch_size=int(self.batch_size), t0=t0,
                    epsilon=float(self.epsilon), average=self.output == "average",
                )
            )
        engine = _PGSEngine(states, m, int(self.batch_size), self.output, rng)

        def evaluate(weights):
            objective = sum(self._objective(X, y, w) for y, w in zip(targets, weights, strict=True))
            return objective, (eval_fn(weights) if eval_fn is not None else None)

        tracing = eval_fn is not None or bool(trace)
        result = drive(
            engine,
            n_iter,
            evaluate=evaluate if tracing else None,
            score_name=score_name if eval_fn is not None else None,
            higher_is_better=higher_is_better,
            schedule=CheckpointSchedule(self.checkpoint_growth, self.checkpoint_interval),
            target_score=self.target_score,
            time_budget=self.time_budget,
            callback=callback,
        )
        weights = engine.output_weights()
        self._set_weights(weights)
        self.n_iter_ = engine.t
        self.trace_ = result.trace
        self.stop_reason_ = result.stop_reason
        self.solver_seconds_ = result.solver_seconds
        return self

    def _radius_for(self, y: np.ndarray) -> float:
        if self.radius is None:
            return math.inf
        if self.radius == "auto":
            # Section IV made exact: sigma r(w*) <= F(w*) <= F(0), so ||w*||_p <= sqrt(2(p-1)F(0)/sigma).
            f0 = loss_at_zero(self.loss, y, self.epsilon)
            return math.sqrt(2.0 * (self.p - 1.0) * f0 / self.sigma) if f0 > 0 else math.inf
        return float(self.radius)

    def _t0_for(self, data) -> float:
        if self.t0 != "auto":
            return float(self.t0)
        # The first step 1 / ((1 + t0) sigma) becomes about 1 / (curvature * E||x||^2), the largest
        # step that is stable for a smooth loss; then steps decay like 1 / (sigma t). For p = 2
        # this makes PGS the same iteration as SGD with the "optimal" 1 / (sigma (t + t0))
        # schedule of Bottou (the lecture's eq. (6) closed form).
        m = data.indptr.shape[0] - 1
        sq_norm = float(np.dot(data.data, data.data)) / max(m, 1) + float(self.fit_intercept)
        first_step = 1.0 / (LOSSES[self.loss].curvature * max(sq_norm, 1e-12))
        return max(1.0, 1.0 / (self.sigma * first_step) - 1.0)

    def _objective(self, X, y: np.ndarray, w: np.ndarray) -> float:
        """Eq. (7) on the training set; the intercept is regularised like any other weight."""
        z = _margins(X, w[None, :], self.fit_intercept)[:, 0]
        reg = self.sigma / (2.0 * (self.p - 1.0)) * np.sum(np.abs(w) ** self.p) ** (2.0 / self.p)
        return float(reg + mean_loss(LOSSES[self.loss].code, z, y, float(self.epsilon)))

    def _set_weights(self, weights: np.ndarray) -> None:
        if self.fit_intercept:
            self.coef_, self.intercept_ = weights[:, :-1].copy(), weights[:, -1].copy()
        else:
            self.coef_, self.intercept_ = weights.copy(), np.zeros(weights.shape[0])

    def _check_eval_set(self, eval_set):
        if eval_set is None:
            return None
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 2:
            raise ValueError("eval_set must be a pair (X_test, y_test)")
        X_test, y_test = eval_set
        X_test = check_array(X_test, accept_sparse="csr", dtype=[np.float64, np.float32])
        if X_test.shape[1] != self.n_features_in_:
            raise ValueError(
                f"eval_set X has {X_test.shape[1]} features, but {type(self).__name__} was given "
                f"{self.n_features_in_} features to fit"
            )
        y_test = np.asarray(y_test)
        if y_test.shape != (X_test.shape[0],):
            raise ValueError(
                f"eval_set y must have shape ({X_test.shape[0]},), got {y_test.shape}"
            )
        return X_test, y_test

    # -- prediction ----------------------------------------------------------------------------

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return _margins(X, self.coef_, False) + self.intercept_

    # -- persistence without pickle --------------------------------------------------------------

    def export_model(self) -> tuple[dict, dict[str, np.ndarray]]:
        """A JSON-serialisable description and plain arrays; ``solver.load_model`` reverses it."""
        check_is_fitted(self)
        params = {k: _jsonable(v) for k, v in self.get_params().items()}
        meta = {
            "format": 1,
            "estimator": type(self).__name__,
            "params": params,
            "n_features_in": int(self.n_features_in_),
            "n_iter": int(self.n_iter_),
            "classes": self.classes_.tolist() if hasattr(self, "classes_") else None,
        }
        arrays = {"coef": np.asarray(self.coef_), "intercept": np.atleast_1d(self.intercept_)}
        return meta, arrays

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class PGSClassifier(ClassifierMixin, _PGSBase):
    """Linear classifier trained by the Primal Gradient Solver (Zhu et al., ICDM 2009, Figure 1).

    Minimises eq. (7), ``sigma / (2 (p-1)) ||w||_p^2 + (1/m) sum_i l(y_i <w, x_i>)``, for p in (1, 2].
    Binary problems use labels -1/+1 internally; multiclass problems are one-vs-rest, one PGS run per
    class on the same minibatches.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "squared_hinge", "smooth_hinge"}, default="logistic"
        ``"squared"`` is the least-squares classifier of the paper's Table II: (<w, x> - y)^2 with
        y in {-1, +1}, predicting by sign.
    p : float in (1, 2], default=2.0
        The norm of the regulariser r(w) = ||w||_p^2 / (2 (p - 1)), eq. (3).
    sigma : float > 0, default=1e-5
        Regularisation weight.
    batch_size : int >= 1, default=1
        k = |A_t|, the minibatch size.
    n_iter : int >= 1 or None, default=None
        T, the number of iterations; None means 5 epochs, ``ceil(5 m / batch_size)``.
    radius : float > 0, "auto" or None, default="auto"
        The domain S. None is R^n. A number B is the ball ||w||_p <= B (Figure 2, lines 5-6).
        "auto" is the smallest ball the optimum is known to lie in: sigma r(w*) <= F(w*) <= F(0), so
        B = sqrt(2 (p - 1) F(0) / sigma); it costs nothing in accuracy and tames the first steps.
    output : {"average", "last", "random"}, default="average"
        The returned predictor: the mean of w_1..w_T, w_T, or the paper's line 9 (a uniformly random
        iterate).
    fit_intercept : bool, default=True
        Learn a bias as the weight of a constant extra feature 1 that is regularised like the others
        (Section VII; the bias is part of ||w||_p), which keeps r strongly convex.
    random_state : int, RandomState or None, default=None
        Seeds the minibatch draws (uniform, with replacement) and the random output.
    t0 : float >= 1 or "auto", default="auto"
        w_t = grad r*(lambda / ((t + t0) sigma)). t0 = 1 is the paper's (t + 1) sigma exactly; a
        larger t0 adds regulariser-only rounds, which damps the first steps and keeps the objective
        and its guarantees. "auto" picks t0 so that the first step is about
        1 / (curvature of the loss * mean ||x||^2) (for p = 2 this is SGD's "optimal" schedule);
        it reaches a given accuracy fastest in docs/benchmarks.md, especially at small sigma.
        The paper's exact algorithm is ``t0=1, output="random"``.
    epsilon : float > 0, default=1.0
        Width of the quadratic part of the huber loss (unused by the other losses).
    target_score : float or None, default=None
        Stop at the first checkpoint whose test accuracy (``eval_set``) reaches this value.
    time_budget : float or None, default=None
        Stop once the solver clock reaches this many seconds.
    checkpoint_growth : float > 1, default=1.25
        Trace checkpoints are taken at iterations growing by this factor...
    checkpoint_interval : float or None, default=1.0
        ...and at least every this many solver seconds.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Iterations run (fewer than ``n_iter`` if a stop criterion fired).
    trace_ : list of TracePoint
        Checkpoints (iteration, samples seen, solver seconds, objective, test accuracy); recorded
        when ``fit`` gets an ``eval_set`` or ``trace=True``.
    stop_reason_ : {"completed", "callback", "target_score", "time_budget"}
    solver_seconds_ : float
        Time spent in the solver, excluding evaluation at checkpoints.
    """

    _parameter_constraints = {
        **_PGSBase._parameter_constraints,
        "loss": [StrOptions(set(CLASSIFICATION_LOSSES))],
    }

    def __init__(
        self,
        loss="logistic",
        *,
        p=2.0,
        sigma=1e-5,
        batch_size=1,
        n_iter=None,
        radius="auto",
        output="average",
        fit_intercept=True,
        random_state=None,
        t0="auto",
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        super().__init__(
            loss, p=p, sigma=sigma, batch_size=batch_size, n_iter=n_iter, radius=radius,
            output=output, fit_intercept=fit_intercept, random_state=random_state, t0=t0,
            epsilon=epsilon, target_score=target_score, time_budget=time_budget,
            checkpoint_growth=checkpoint_growth, checkpoint_interval=checkpoint_interval,
        )

    def fit(self, X, y, eval_set=None, callback=None, trace=None):
        """Fit on X (dense or sparse, float32/float64) and labels y of two or more classes.

        ``eval_set=(X_test, y_test)`` records test accuracy at each checkpoint in ``trace_``.
        ``callback(progress)`` is called after every chunk of iterations (at most ~0.1 s of solver
        time apart); returning False stops the fit, leaving a fitted model.
        """
        self.validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in y; got 1 class: "
                f"{self.classes_.tolist()}"
            )
        targets = _one_vs_rest(y, self.classes_)
        eval_data = self._check_eval_set(eval_set)
        eval_fn = None
        if eval_data is not None:
            X_test, y_test = eval_data

            def eval_fn(weights):
                scores = self._scores_from(X_test, weights)
                return float(np.mean(self._labels_from(scores) == y_test))

        return self._fit_targets(X, targets, eval_fn, "accuracy", True, callback, trace)

    def _scores_from(self, X, weights):
        z = _margins(X, weights, self.fit_intercept)
        return z[:, 0] if z.shape[1] == 1 else z

    def _labels_from(self, scores):
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X):
        """Signed scores: shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        return self._labels_from(self.decision_function(X))

    def _is_logistic(self):
        return self.loss == "logistic"

    @available_if(_is_logistic)
    def predict_proba(self, X):
        """Class probabilities of the logistic model.

        Two classes: the sigmoid of the score. More classes: each one-vs-rest score is a log-odds,
        and the odds are normalised (a softmax of the scores). Unlike normalising the sigmoids,
        this never ties two saturated classes, so its argmax is always ``predict``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            pos = expit(scores)
            return np.column_stack([1.0 - pos, pos])
        return softmax(scores, axis=1)

    @available_if(_is_logistic)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class PGSRegressor(RegressorMixin, _PGSBase):
    """Linear regression trained by the Primal Gradient Solver; see ``PGSClassifier`` for parameters.

    ``loss`` is "squared" ((<w, x> - y)^2, Section IV) or "huber". ``trace_`` records the test RMSE.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_, trace_, stop_reason_, solver_seconds_ : as for PGSClassifier
    """

    _parameter_constraints = {
        **_PGSBase._parameter_constraints,
        "loss": [StrOptions(set(REGRESSION_LOSSES))],
    }

    def __init__(
        self,
        loss="squared",
        *,
        p=2.0,
        sigma=1e-5,
        batch_size=1,
        n_iter=None,
        radius="auto",
        output="average",
        fit_intercept=True,
        random_state=None,
        t0="auto",
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        super().__init__(
            loss, p=p, sigma=sigma, batch_size=batch_size, n_iter=n_iter, radius=radius,
            output=output, fit_intercept=fit_intercept, random_state=random_state, t0=t0,
            epsilon=epsilon, target_score=target_score, time_budget=time_budget,
            checkpoint_growth=checkpoint_growth, checkpoint_interval=checkpoint_interval,
        )

    def fit(self, X, y, eval_set=None, callback=None, trace=None):
        """Fit on X (dense or sparse) and real targets y; see ``PGSClassifier.fit``.

        ``target_score`` is an RMSE here: the fit stops once the test RMSE falls to it.
        """
        self.validate_params()
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], y_numeric=True
        )
        y = np.ascontiguousarray(y, dtype=np.float64)
        eval_data = self._check_eval_set(eval_set)
        eval_fn = None
        if eval_data is not None:
            X_test, y_test = eval_data
            y_test = y_test.astype(np.float64)

            def eval_fn(weights):
                z = _margins(X_test, weights, self.fit_intercept)[:, 0]
                return float(np.sqrt(np.mean((z - y_test) ** 2)))

        return self._fit_targets(X, y[None, :], eval_fn, "rmse", False, callback, trace)

    def _set_weights(self, weights):
        super()._set_weights(weights)
        self.coef_ = self.coef_[0]
        self.intercept_ = float(self.intercept_[0])

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return _margins(X, self.coef_[None, :], False)[:, 0] + self.intercept_


def load_model(meta: dict, arrays: dict[str, np.ndarray]) -> PGSClassifier | PGSRegressor:
    """Rebuild a fitted estimator from ``export_model()`` output; runs no code from the data."""
    classes = {"PGSClassifier": PGSClassifier, "PGSRegressor": PGSRegressor}
    if meta.get("format") != 1 or meta.get("estimator") not in classes:
        raise ValueError(f"not a model this version can load: {meta.get('estimator')!r}")
    est = classes[meta["estimator"]](**meta["params"])
    est.n_features_in_ = int(meta["n_features_in"])
    est.n_iter_ = int(meta["n_iter"])
    coef = np.asarray(arrays["coef"], dtype=np.float64)
    intercept = np.asarray(arrays["intercept"], dtype=np.float64)
    if coef.shape[-1] != est.n_features_in_:
        raise ValueError("coef does not match n_features_in")
    if isinstance(est, PGSClassifier):
        est.classes_ = np.asarray(meta["classes"])
        est.coef_, est.intercept_ = coef.reshape(-1, est.n_features_in_), intercept
    else:
        est.coef_, est.intercept_ = coef.reshape(-1), float(intercept[0])
    est.trace_ = []
    est.stop_reason_ = "loaded"
    return est


# -- helpers -------------------------------------------------------------------------------------


def _margins(X, weights: np.ndarray, with_intercept: bool) -> np.ndarray:
    """X @ W.T (+ the intercept column when ``weights`` carries it last): shape (m, n_outputs)."""
    coef = weights[:, :-1] if with_intercept else weights
    z = X @ coef.T
    z = np.asarray(z.todense() if sp.issparse(z) else z, dtype=np.float64)
    if with_intercept:
        z = z + weights[:, -1]
    return z


def _one_vs_rest(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Targets in {-1, +1}: one row for two classes (positive = classes[1]), else one per class."""
    if classes.shape[0] == 2:
        return np.where(y == classes[1], 1.0, -1.0)[None, :]
    return np.stack([np.where(y == c, 1.0, -1.0) for c in classes])


def _generator(random_state) -> np.random.Generator:
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    return np.random.default_rng(check_random_state(random_state).randint(0, 2**32 - 1))


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.random.RandomState):
        return None
    return value
