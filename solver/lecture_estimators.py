"""scikit-learn estimators for the solvers of lecture 22: gd, sgd, ogd (``solver.ogd``) and kernel PGS
(``solver.kernel_pgs``), each a classifier (binary or one-vs-rest) and a regressor.

They share with PGS the fit machinery of ``solver._base`` (validation, one-vs-rest, tracing,
callbacks, time budgets, export without pickle) and its parameter names: ``sigma`` is the
regularisation weight (the lecture's lambda), and ``loss``, ``n_iter``, ``batch_size``, ``t0``,
``output``, ``fit_intercept``, ``random_state`` and ``epsilon`` mean what they mean for PGS.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import (
    COMMON_CONSTRAINTS,
    LinearClassifierMixin,
    LinearModelBase,
    LinearRegressorMixin,
    _jsonable,
    first_step_t0,
)
from ._sparse import KernelData, mean_sq_row_norm
from .kernel_pgs import KERNELS, KernelPGSEngine, kernel_scores, row_norms, rows_of
from .losses import CLASSIFICATION_LOSSES, LOSSES, REGRESSION_LOSSES, mean_loss
from .ogd import SGDEngine, SGDState, largest_curvature

_OUTPUTS = ("average", "last")
# sgd's eta="auto" as a fraction of the largest stable step (see _SGDBase._schedule).
_SGD_AUTO_FRACTION = 0.1


def _loss_constraint(losses) -> dict:
    return {"loss": [StrOptions(set(losses))]}


# ---------------------------------------------------------------------------------------------
# gd, sgd, ogd


class _L2GradientBase(LinearModelBase):
    """What gd, sgd and ogd share: objective (1) of the lecture and the ``sgd_chunk`` engine.

    A subclass says which samples an iteration uses (``_full_batch``) and which step it takes
    (``_schedule``).
    """

    _full_batch = False
    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "output": [StrOptions(set(_OUTPUTS))],
        "epsilon": [Interval(Real, 0.0, None, closed="neither")],
    }

    def _schedule(self, data: KernelData) -> tuple[str, float, float]:
        """(schedule, eta, t0) for ``SGDState``."""
        raise NotImplementedError

    def _penalty(self, w: np.ndarray) -> float:
        """sigma/2 ||w||_2^2 of eq. (1); the intercept is regularised like any weight (as in PGS)."""
        return float(0.5 * self.sigma * np.dot(w, w))

    def _batch(self) -> int:
        return int(getattr(self, "batch_size", 1))

    def _default_n_iter(self, m: int) -> int:
        return math.ceil(5 * m / self._batch())  # 5 epochs

    def _make_engine(self, data, targets, rng):
        m = data.indptr.shape[0] - 1
        schedule, eta, t0 = self._schedule(data)
        batch = m if self._full_batch else self._batch()
        states = [
            SGDState(data, y, loss_code=LOSSES[self.loss].code, sigma=float(self.sigma), eta=eta,
                     t0=t0, schedule=schedule, fit_intercept=bool(self.fit_intercept),
                     batch_size=batch, epsilon=float(self.epsilon),
                     average=self.output == "average")
            for y in targets
        ]
        return SGDEngine(states, m, batch, self._full_batch, self.output, rng)

    def _check_step(self) -> None:
        eta = getattr(self, "eta", "auto")
        if eta != "auto" and eta * self.sigma > 1.0:
            raise ValueError(
                f"The 'eta' parameter of {type(self).__name__} times 'sigma' must be at most 1 (the "
                f"step (1 - eta sigma) w of the regulariser must not overshoot 0). Got eta={eta!r} "
                f"and sigma={self.sigma!r} (product {eta * self.sigma:g})."
            )

    def validate_params(self) -> None:
        super().validate_params()
        self._check_step()


class _GDBase(_L2GradientBase):
    """Algorithm 1: full gradient, constant step ``eta``."""

    _full_batch = True
    _parameter_constraints: dict = {
        **_L2GradientBase._parameter_constraints,
        "eta": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
    }

    def _default_n_iter(self, m: int) -> int:
        return 100

    def _schedule(self, data):
        if self.eta != "auto":
            return "constant", float(self.eta), 0.0
        # 1 / L, L = curvature * lambda_max(X^T X) / m + sigma: the Lipschitz constant of grad F.
        lipschitz = LOSSES[self.loss].curvature * largest_curvature(data, bool(self.fit_intercept))
        return "constant", 1.0 / (lipschitz + self.sigma), 0.0


class _SGDBase(_L2GradientBase):
    """Algorithm 2: random minibatches, constant step ``eta``."""

    _parameter_constraints: dict = {
        **_L2GradientBase._parameter_constraints,
        "eta": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
    }

    def _schedule(self, data):
        if self.eta != "auto":
            return "constant", float(self.eta), 0.0
        # A tenth of PGS's first step 1 / (curvature E||x||^2): averaged constant-step SGD keeps a
        # bias growing like eta^2 for non-quadratic losses (Bach & Moulines, 2013). On a9a the full
        # step left the logistic objective 6% above the optimum, a tenth 0.04% (docs/solvers_lecture.md).
        sq = mean_sq_row_norm(data, float(self.fit_intercept))
        return "constant", _SGD_AUTO_FRACTION / (LOSSES[self.loss].curvature * sq + self.sigma), 0.0


class _OGDBase(_L2GradientBase):
    """Algorithm 3: random minibatches, step 1 / (sigma (t + t0))."""

    _parameter_constraints: dict = {
        **_L2GradientBase._parameter_constraints,
        "t0": [Interval(Real, 0.0, None, closed="left"), StrOptions({"auto"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
    }

    def _schedule(self, data):
        if self.t0 != "auto":
            return "inverse_time", 0.0, float(self.t0)
        sq = mean_sq_row_norm(data, float(self.fit_intercept))
        return "inverse_time", 0.0, first_step_t0(LOSSES[self.loss].curvature, sq, self.sigma)


_COMMON_DOC = """
    sigma : float > 0, default=1e-5
        Regularisation weight (the lecture's lambda): F(w) = mean loss + sigma/2 ||w||^2.
    n_iter : int >= 1 or None
        Iterations T; None means {default_iter}.
    output : {{"average", "last"}}, default="average"
        The average (1/T) sum_{{t=1}}^T w_t (w_1 = 0), as the lecture's algorithms output, or the
        last iterate w_{{T+1}}.
    fit_intercept : bool, default=True
        Learn a bias as the weight of a constant feature 1, regularised like the others (as PGS).
    random_state : int, RandomState or None, default=None
        Seeds the sample draws (uniform, with replacement; the same draws as PGS with
        ``sampling="replacement"`` for one seed).
    epsilon : float > 0, default=1.0
        Width of the quadratic part of the huber loss.
    target_score, time_budget, checkpoint_growth, checkpoint_interval
        Stopping and tracing, as for ``PGSClassifier``.

    Attributes
    ----------
    coef_, intercept_, classes_ (classifiers), n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier`` / ``PGSRegressor``.
"""


class GDClassifier(LinearClassifierMixin, _GDBase):
    __doc__ = """Linear classifier by full gradient descent (lecture 22, Algorithm 1).

    w_{t+1} = w_t - eta (sigma w_t + (1/m) sum_i l'(<w_t, x_i>; y_i) x_i); one iteration reads the
    whole data set (O(nnz(X))), and ``samples_per_iteration`` in the trace is m.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "squared_hinge", "smooth_hinge"}, default="logistic"
    eta : float > 0 or "auto", default="auto"
        The step. "auto" is 1 / L with L = curvature(loss) * lambda_max(X^T X) / m + sigma (power
        iteration), the Lipschitz constant of the gradient. eta * sigma must be at most 1.
    """ + _COMMON_DOC.format(default_iter="100") + """
    ``random_state`` is accepted for a uniform interface; gd is deterministic.
    """

    _parameter_constraints = {**_GDBase._parameter_constraints,
                              **_loss_constraint(CLASSIFICATION_LOSSES)}

    def __init__(self, loss="logistic", *, sigma=1e-5, eta="auto", n_iter=None, output="average",
                 fit_intercept=True, random_state=None, epsilon=1.0, target_score=None,
                 time_budget=None, checkpoint_growth=1.25, checkpoint_interval=1.0):
        self._store_params(locals())


class GDRegressor(LinearRegressorMixin, _GDBase):
    """Linear regression by full gradient descent (Algorithm 1); see ``GDClassifier``.

    ``loss`` is "squared" or "huber".
    """

    _parameter_constraints = {**_GDBase._parameter_constraints,
                              **_loss_constraint(REGRESSION_LOSSES)}

    def __init__(self, loss="squared", *, sigma=1e-5, eta="auto", n_iter=None, output="average",
                 fit_intercept=True, random_state=None, epsilon=1.0, target_score=None,
                 time_budget=None, checkpoint_growth=1.25, checkpoint_interval=1.0):
        self._store_params(locals())


class SGDClassifier(LinearClassifierMixin, _SGDBase):
    __doc__ = """Linear classifier by stochastic gradient descent, constant step (lecture 22, Algorithm 2).

    w_{t+1} = (1 - eta sigma) w_t - (eta / k) sum_{i in A_t} l'(<w_t, x_i>; y_i) x_i, with A_t
    k samples drawn uniformly; O(k d) per iteration (w is kept as a scale times a vector).
    Not scikit-learn's SGDClassifier: this one is the lecture's algorithm on objective (1).

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "squared_hinge", "smooth_hinge"}, default="logistic"
    eta : float > 0 or "auto", default="auto"
        The constant step. "auto" is 0.1 / (curvature(loss) * mean ||x||^2 + sigma), a tenth of
        the largest stable step, since the average of constant-step SGD is biased by O(eta^2) for
        non-quadratic losses. eta * sigma must be at most 1.
    batch_size : int >= 1, default=1
        k, the samples per iteration.
    """ + _COMMON_DOC.format(default_iter="5 epochs, ceil(5 m / batch_size)")

    _parameter_constraints = {**_SGDBase._parameter_constraints,
                              **_loss_constraint(CLASSIFICATION_LOSSES)}

    def __init__(self, loss="logistic", *, sigma=1e-5, eta="auto", batch_size=1, n_iter=None,
                 output="average", fit_intercept=True, random_state=None, epsilon=1.0,
                 target_score=None, time_budget=None, checkpoint_growth=1.25,
                 checkpoint_interval=1.0):
        self._store_params(locals())


class SGDRegressor(LinearRegressorMixin, _SGDBase):
    """Linear regression by SGD with a constant step (Algorithm 2); see ``SGDClassifier``.

    ``loss`` is "squared" or "huber".
    """

    _parameter_constraints = {**_SGDBase._parameter_constraints,
                              **_loss_constraint(REGRESSION_LOSSES)}

    def __init__(self, loss="squared", *, sigma=1e-5, eta="auto", batch_size=1, n_iter=None,
                 output="average", fit_intercept=True, random_state=None, epsilon=1.0,
                 target_score=None, time_budget=None, checkpoint_growth=1.25,
                 checkpoint_interval=1.0):
        self._store_params(locals())


class OGDClassifier(LinearClassifierMixin, _OGDBase):
    __doc__ = """Linear classifier by OGD, step 1 / (sigma t), averaged output (lecture 22, Algorithm 3).

    w_{t+1} = (1 - eta_t sigma) w_t - (eta_t / k) sum_{i in A_t} l'(<w_t, x_i>; y_i) x_i with
    eta_t = 1 / (sigma (t + t0)); by eq. (6), w_{t+1} = -1/(sigma (t + t0)) sum_{s<=t} g_s. For the
    same samples this is PGS with p = 2 and the same t0, shifted by one index (``solver.ogd``).

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "squared_hinge", "smooth_hinge"}, default="logistic"
    t0 : float >= 0 or "auto", default="auto"
        eta_t = 1 / (sigma (t + t0)). ``t0=0`` is Algorithm 3 verbatim, eta_t = 1 / (lambda t); its
        first step 1 / sigma is huge for a small sigma: the logistic and hinge losses recover slowly
        (on a9a at sigma 1e-3: 67% above the optimum after 1e4 iterations, against 2% with "auto")
        and the squared loss, which is not Lipschitz, diverges. "auto" is PGS's rule (a first step
        of about 1 / (curvature * mean ||x||^2), then 1 / (sigma t) asymptotically): the default,
        as for PGS, so that default parameters never diverge.
    batch_size : int >= 1, default=1
        k, the samples per iteration.
    """ + _COMMON_DOC.format(default_iter="5 epochs, ceil(5 m / batch_size)")

    _parameter_constraints = {**_OGDBase._parameter_constraints,
                              **_loss_constraint(CLASSIFICATION_LOSSES)}

    def __init__(self, loss="logistic", *, sigma=1e-5, t0="auto", batch_size=1, n_iter=None,
                 output="average", fit_intercept=True, random_state=None, epsilon=1.0,
                 target_score=None, time_budget=None, checkpoint_growth=1.25,
                 checkpoint_interval=1.0):
        self._store_params(locals())


class OGDRegressor(LinearRegressorMixin, _OGDBase):
    """Linear regression by OGD with step 1 / (sigma (t + t0)) (Algorithm 3); see ``OGDClassifier``.

    ``loss`` is "squared" or "huber". The squared loss is not Lipschitz: with t0 = 0 (the lecture's
    step) and a small sigma the first steps overshoot and the fit raises FloatingPointError.
    """

    _parameter_constraints = {**_OGDBase._parameter_constraints,
                              **_loss_constraint(REGRESSION_LOSSES)}

    def __init__(self, loss="squared", *, sigma=1e-5, t0="auto", batch_size=1, n_iter=None,
                 output="average", fit_intercept=True, random_state=None, epsilon=1.0,
                 target_score=None, time_budget=None, checkpoint_growth=1.25,
                 checkpoint_interval=1.0):
        self._store_params(locals())


# ---------------------------------------------------------------------------------------------
# kernel PGS


class _KernelPGSBase(LinearModelBase):
    """Kernel PGS (p = 2): dual coefficients over support vectors instead of a weight vector.

    The engine's output "weights" are alpha over the training samples (shape (n_outputs, m)), so
    the trace's ``nnz_weights`` counts support vectors. After fit the model keeps only the support
    vectors (``support_vectors_``, CSR), ``dual_coef_`` and ``intercept_`` = sum_j alpha_j (the
    weight of the constant feature, regularised like the others, when ``fit_intercept``).
    """

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"scale"})],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "t0": [Interval(Real, 1.0, None, closed="left"), StrOptions({"auto"})],
        "output": [StrOptions(set(_OUTPUTS))],
        "epsilon": [Interval(Real, 0.0, None, closed="neither")],
        "cache_size": [Interval(Real, 0.0, None, closed="left")],
    }

    # -- fit -------------------------------------------------------------------------------------

    def _default_n_iter(self, m: int) -> int:
        return math.ceil(5 * m / self.batch_size)

    def _gamma_for(self, data: KernelData) -> float:
        if self.gamma != "scale":
            return float(self.gamma)
        # As scikit-learn's SVC: 1 / (n_features * X.var()), the variance over all m * n entries.
        m, n = data.indptr.shape[0] - 1, data.n_features
        size = max(m * n, 1)
        mean = float(np.sum(data.data, dtype=np.float64)) / size
        var = float(np.dot(data.data, data.data)) / size - mean * mean
        return 1.0 / (n * var) if var > 0.0 else 1.0

    def _mean_diag(self, data: KernelData) -> float:
        """Mean of K(x_i, x_i) (+ 1 for the intercept): the E||phi(x)||^2 behind t0="auto"."""
        bias = float(self.fit_intercept)
        if self.kernel == "rbf":
            return 1.0 + bias
        sq = mean_sq_row_norm(data, 0.0)
        if self.kernel == "linear":
            return sq + bias
        # (gamma ||x||^2 + coef0)^degree averaged over the rows.
        norms = row_norms(data)
        return float(np.mean((self.gamma_ * norms + self.coef0) ** self.degree)) + bias

    def _make_engine(self, data, targets, rng):
        self.gamma_ = self._gamma_for(data)
        if self.t0 == "auto":
            t0 = first_step_t0(LOSSES[self.loss].curvature, self._mean_diag(data), self.sigma)
        else:
            t0 = float(self.t0)
        engine = KernelPGSEngine(
            data, targets, loss_code=LOSSES[self.loss].code, sigma=float(self.sigma), t0=t0,
            fit_intercept=bool(self.fit_intercept), batch_size=int(self.batch_size),
            epsilon=float(self.epsilon), average=self.output == "average", kernel=self.kernel,
            gamma=self.gamma_, degree=int(self.degree), coef0=float(self.coef0),
            cache_bytes=float(self.cache_size) * 1e6, rng=rng,
        )
        self._engine = engine  # read by _scores/_set_weights during this fit, then dropped
        return engine

    def _training_support(self, alpha: np.ndarray):
        support = np.flatnonzero(np.any(alpha != 0.0, axis=0))
        return support, rows_of(self._engine.X, support)

    def _scores(self, X, weights):
        """Scores of X for alpha over the training samples (during fit)."""
        support, vectors = self._training_support(weights)
        coef = weights[:, support]
        scores = kernel_scores(X, vectors, coef, self.kernel, self.gamma_, self.degree, self.coef0)
        if self.fit_intercept:
            scores += coef.sum(axis=1)
        return scores

    def _objective(self, X, y, w):
        """Eq. (7) of the lecture: sigma/2 alpha^T K alpha + mean loss, from one kernel product."""
        z = self._scores(X, w[None, :])[:, 0]
        # ||w||^2 = sum_j alpha_j <w, phi(x_j)>, and X is the training set here.
        penalty = 0.5 * self.sigma * float(np.dot(w, z))
        return penalty + float(mean_loss(LOSSES[self.loss].code, z, y, float(self.epsilon)))

    def _set_weights(self, weights):
        engine = self._engine
        support, vectors = self._training_support(weights)
        self.support_ = support
        self.support_vectors_ = sp.csr_matrix(vectors, dtype=np.float64)
        self.dual_coef_ = np.ascontiguousarray(weights[:, support])
        self.intercept_ = (self.dual_coef_.sum(axis=1) if self.fit_intercept
                           else np.zeros(weights.shape[0]))
        self.n_support_ = int(support.shape[0])
        self.kernel_evaluations_ = engine.kernel_evaluations
        self.cache_hits_ = engine.cache_hits
        self._set_linear_coef()
        del self._engine

    def _set_linear_coef(self):
        # With the linear kernel the model is a weight vector too: w = sum_j alpha_j x_j.
        if self.kernel == "linear":
            self.coef_ = np.asarray(self.support_vectors_.T @ self.dual_coef_.T).T
        elif hasattr(self, "coef_"):
            del self.coef_

    # -- predict ---------------------------------------------------------------------------------

    def _kernel_decision(self, X) -> np.ndarray:
        """Shape (n_samples, n_outputs)."""
        X = self._validated(X)
        scores = kernel_scores(X, self.support_vectors_, self.dual_coef_, self.kernel, self.gamma_,
                               self.degree, self.coef0)
        return scores + self.intercept_

    # -- persistence -----------------------------------------------------------------------------

    def export_model(self):
        """Support vectors as CSR arrays, dual coefficients and intercepts; no pickle."""
        check_is_fitted(self)
        sv = self.support_vectors_
        meta = {
            "format": 1,
            "estimator": type(self).__name__,
            "params": {k: _jsonable(v) for k, v in self.get_params().items()},
            "n_features_in": int(self.n_features_in_),
            "n_iter": int(self.n_iter_),
            "classes": self.classes_.tolist() if hasattr(self, "classes_") else None,
            "nnz_weights": int(self.n_support_),
            "n_support": int(self.n_support_),
            "gamma": float(self.gamma_),
        }
        arrays = {
            "sv_data": np.asarray(sv.data, dtype=np.float64),
            "sv_indices": np.asarray(sv.indices, dtype=np.int64),
            "sv_indptr": np.asarray(sv.indptr, dtype=np.int64),
            "sv_shape": np.asarray(sv.shape, dtype=np.int64),
            "support": np.asarray(self.support_, dtype=np.int64),
            "dual_coef": self.dual_coef_,
            "intercept": np.atleast_1d(np.asarray(self.intercept_, dtype=np.float64)),
        }
        return meta, arrays

    @classmethod
    def _from_export(cls, meta, arrays):
        est = cls(**meta["params"])
        est.n_features_in_ = int(meta["n_features_in"])
        est.n_iter_ = int(meta["n_iter"])
        est.gamma_ = float(meta["gamma"])
        shape = tuple(int(v) for v in arrays["sv_shape"])
        if len(shape) != 2 or shape[1] != est.n_features_in_:
            raise ValueError("support vectors do not match n_features_in")
        est.support_vectors_ = sp.csr_matrix(
            (np.asarray(arrays["sv_data"], dtype=np.float64),
             np.asarray(arrays["sv_indices"], dtype=np.int32),
             np.asarray(arrays["sv_indptr"], dtype=np.int64)), shape=shape)
        est.dual_coef_ = np.asarray(arrays["dual_coef"], dtype=np.float64).reshape(-1, shape[0])
        est.support_ = np.asarray(arrays["support"], dtype=np.int64)
        est.n_support_ = int(shape[0])
        intercept = np.asarray(arrays["intercept"], dtype=np.float64)
        est.intercept_ = intercept
        if meta.get("classes") is not None:
            est.classes_ = np.asarray(meta["classes"])
        est._set_linear_coef()
        est._finish_load()
        est.trace_ = []
        est.stop_reason_ = "loaded"
        return est

    def _finish_load(self):
        pass


_KERNEL_DOC = """
    Parameters
    ----------
    loss : str, default={loss!r}
        One of {losses}.
    sigma : float > 0, default=1e-5
        Regularisation weight: F = sigma/2 ||w||^2 + mean loss, ||w||^2 = alpha^T K alpha.
    kernel : {{"linear", "rbf", "poly"}}, default="rbf"
        K(x, z) = <x, z>, exp(-gamma ||x - z||^2) or (gamma <x, z> + coef0)^degree.
    gamma : float > 0 or "scale", default="scale"
        rbf width and poly scale; "scale" is 1 / (n_features * X.var()), as scikit-learn's SVC.
    degree : int >= 1, default=3
    coef0 : float, default=1.0
        The poly kernel's constant (the lecture's (1 + <x, z>)^l is gamma=1, coef0=1).
    batch_size : int >= 1, default=1
        k, the samples per iteration (Section VII: for p = 2, k = 1 is the best choice).
    n_iter : int >= 1 or None
        Iterations T; None means 5 epochs, ceil(5 m / batch_size).
    t0 : float >= 1 or "auto", default="auto"
        w_t = lambda / ((t + t0) sigma), as PGS; "auto" is PGS's rule with E K(x, x) for E ||x||^2.
    output : {{"average", "last"}}, default="average"
        The average of w_1..w_T or w_T.
    fit_intercept : bool, default=True
        A constant feature 1 in the feature space (K + 1), regularised like the others.
    random_state : int, RandomState or None
        Seeds the sample draws (the same draws as PGS for one seed).
    epsilon : float > 0, default=1.0
        Width of the quadratic part of the huber loss.
    cache_size : float >= 0, default=200
        Megabytes of the kernel-row cache (``solver.kernel_pgs``); 0 recomputes every row.
    target_score, time_budget, checkpoint_growth, checkpoint_interval
        As for ``PGSClassifier``.

    Attributes
    ----------
    support_ : ndarray of shape (n_support,)
        Indices of the support vectors in the training set.
    support_vectors_ : scipy.sparse.csr_matrix of shape (n_support, n_features)
    dual_coef_ : ndarray of shape (n_outputs, n_support)
        alpha: <w, phi(x)> = sum_j dual_coef_[c, j] K(support_vectors_[j], x) + intercept_[c].
    intercept_ : {intercept_shape}
    n_support_ : int
    gamma_ : float
        The gamma used.
    coef_ : only for kernel="linear", sum_j alpha_j x_j; absent for the other kernels.
    kernel_evaluations_, cache_hits_ : int
        Kernel values computed / read from the row cache during fit.
    n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_[i].nnz_weights`` counts non-zero dual coefficients.
"""


class KernelPGSClassifier(LinearClassifierMixin, _KernelPGSBase):
    __doc__ = """Kernel PGS classifier (PGS paper Section VII, lecture 22 Section 3), p = 2.

    Binary, or one-vs-rest for more classes (all classes share the kernel rows).
    """ + _KERNEL_DOC.format(loss="logistic", losses=", ".join(CLASSIFICATION_LOSSES),
                             intercept_shape="ndarray of shape (n_outputs,)")

    _parameter_constraints = {**_KernelPGSBase._parameter_constraints,
                              **_loss_constraint(CLASSIFICATION_LOSSES)}

    def __init__(self, loss="logistic", *, sigma=1e-5, kernel="rbf", gamma="scale", degree=3,
                 coef0=1.0, batch_size=1, n_iter=None, t0="auto", output="average",
                 fit_intercept=True, random_state=None, epsilon=1.0, cache_size=200.0,
                 target_score=None, time_budget=None, checkpoint_growth=1.25,
                 checkpoint_interval=1.0):
        self._store_params(locals())

    def decision_function(self, X):
        """Signed scores: shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        scores = self._kernel_decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores


class KernelPGSRegressor(LinearRegressorMixin, _KernelPGSBase):
    __doc__ = """Kernel PGS regression (p = 2); ``trace_`` records the test RMSE.
    """ + _KERNEL_DOC.format(loss="squared", losses=", ".join(REGRESSION_LOSSES),
                             intercept_shape="float")

    _parameter_constraints = {**_KernelPGSBase._parameter_constraints,
                              **_loss_constraint(REGRESSION_LOSSES)}

    def __init__(self, loss="squared", *, sigma=1e-5, kernel="rbf", gamma="scale", degree=3,
                 coef0=1.0, batch_size=1, n_iter=None, t0="auto", output="average",
                 fit_intercept=True, random_state=None, epsilon=1.0, cache_size=200.0,
                 target_score=None, time_budget=None, checkpoint_growth=1.25,
                 checkpoint_interval=1.0):
        self._store_params(locals())

    def _set_weights(self, weights):
        # Not LinearRegressorMixin's: there is no coef_ row to unwrap for a non-linear kernel.
        _KernelPGSBase._set_weights(self, weights)
        self._finish_load()

    def _finish_load(self):
        self.intercept_ = float(np.ravel(self.intercept_)[0])
        if hasattr(self, "coef_"):
            self.coef_ = np.ravel(self.coef_)

    def predict(self, X):
        return self._kernel_decision(X)[:, 0]
