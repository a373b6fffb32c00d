"""KernelPGSClassifier and KernelPGSRegressor: PGS for p = 2 in a kernel's feature space (PGS paper,
Section VII; lecture 22, Section 3), over the kernel of ``solver.kernel_pgs``.

The model is dual coefficients over support vectors instead of a weight vector: the engine's output
"weights" are alpha over the training samples (shape (n_outputs, m)), so the trace's
``nnz_weights`` counts support vectors. After fit the model keeps only the support vectors
(``support_vectors_``, CSR), ``dual_coef_`` and ``intercept_`` = sum_j alpha_j (the weight of the
constant feature, regularised like the others, when ``fit_intercept``).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._sparse import DataStats, KernelData
from ..kernel_pgs import KERNELS, KernelPGSEngine, kernel_scores, row_norms, rows_of
from ..losses import LOSSES, UNWEIGHTED
from ..parameters import declare_parameters, param
from ..step_sizes import first_step_t0
from .base import LinearModelBase
from .constraints import AT_LEAST_ONE, POSITIVE, choice, classifier_loss, regressor_loss
from .sigma_search import SIGMA
from .tasks import LinearClassifierMixin, LinearRegressorMixin


@declare_parameters
class _KernelPGSBase(LinearModelBase):
    """Kernel PGS (p = 2): the parameters, and a model of support vectors and dual coefficients."""

    cold_only_reason = (
        "its model is a weighted sum of kernels at its own training rows, not weights over the "
        "features, so another model's weights give it no starting point"
    )

    solver_name = "kernel_pgs"

    sigma: float | str = param(
        default=1e-5,
        allowed=SIGMA,
        doc="Regularisation weight: F = sigma/2 ||w||^2 + mean loss, ||w||^2 = alpha^T K alpha; "
        '"auto": chosen by cross-validation.',
    )
    kernel: str = param(
        default="rbf",
        allowed=choice(KERNELS),
        doc="K(x, z) = <x, z>, exp(-gamma ||x - z||^2) or (gamma <x, z> + coef0)^degree.",
    )
    gamma: float | str = param(
        default="scale",
        allowed=[POSITIVE, StrOptions({"scale"})],
        doc='rbf width and poly scale; "scale" is 1 / (n_features * X.var()), as scikit-learn\'s SVC.',
    )
    degree: int = param(default=3, allowed=[AT_LEAST_ONE], doc="The poly kernel's degree.")
    coef0: float = param(
        default=1.0,
        allowed=[Real],
        doc="The poly kernel's constant (the lecture's (1 + <x, z>)^l is gamma=1, coef0=1).",
    )
    batch_size: int = param(
        default=1,
        allowed=[AT_LEAST_ONE],
        doc="k, the samples per iteration (Section VII: for p = 2, k = 1 is the best choice).",
    )
    n_iter: int | None = param(
        default=None,
        allowed=[AT_LEAST_ONE, None],
        doc="Iterations T; None: 5 epochs, ceil(5 m / batch_size).",
    )
    t0: float | str = param(
        default="auto",
        allowed=[Interval(Real, 1.0, None, closed="left"), StrOptions({"auto"})],
        doc='w_t = lambda / ((t + t0) sigma), as PGS; "auto" is PGS\'s rule with E K(x, x) for E ||x||^2.',
    )
    output: str = param(
        default="average", allowed=choice(("average", "last")), doc="The average of w_1..w_T or w_T."
    )
    fit_intercept: bool = param(
        default=True,
        allowed=["boolean"],
        doc="A constant feature 1 in the feature space (K + 1), regularised like the others.",
    )
    random_state: object = param(
        default=None,
        allowed=["random_state"],
        doc="Seeds the sample draws (the same draws as PGS for one seed).",
    )
    cache_size: float = param(
        default=200.0,
        allowed=[Interval(Real, 0.0, None, closed="left")],
        doc="Megabytes of the kernel-row cache (solver.kernel_pgs); 0 recomputes every row.",
    )

    # -- fit --------------------------------------------------------------------------------------

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

    def _mean_diag(self, data: KernelData, stats: DataStats) -> float:
        """Mean of K(x_i, x_i) (+ 1 for the intercept): the E||phi(x)||^2 behind t0="auto"."""
        bias = float(self.fit_intercept)
        if self.kernel == "rbf":
            return 1.0 + bias
        sq = stats.mean_sq
        if self.kernel == "linear":
            return sq + bias
        # (gamma ||x||^2 + coef0)^degree averaged over the rows.
        norms = row_norms(data)
        return float(np.mean((self.gamma_ * norms + self.coef0) ** self.degree)) + bias

    def _make_engine(self, data, stats, targets, rng):
        self.gamma_ = self._gamma_for(data)
        if self.t0 == "auto":
            t0 = first_step_t0(
                self._stepping_loss().curvature, self._mean_diag(data, stats), float(self.sigma)
            )
        else:
            t0 = float(self.t0)
        return KernelPGSEngine(
            data,
            targets,
            loss=LOSSES[self.loss],
            sigma=float(self.sigma),
            t0=t0,
            fit_intercept=bool(self.fit_intercept),
            batch_size=int(self.batch_size),
            epsilon=float(self.epsilon),
            average=self.output == "average",
            kernel=self.kernel,
            gamma=self.gamma_,
            degree=int(self.degree),
            coef0=float(self.coef0),
            cache_bytes=float(self.cache_size) * 1e6,
            rng=rng,
            sample_weight=self._sample_weight,
        )

    def _finish_fit(self, engine, data):
        super()._finish_fit(engine, data)
        self.kernel_evaluations_ = engine.kernel_evaluations
        self.cache_hits_ = engine.cache_hits

    def _scores(self, X, weights, data=None):
        """Scores of X for alpha over the training samples ``data`` (during fit)."""
        support = _support(weights)
        coef = weights[:, support]
        scores = kernel_scores(
            X, rows_of(data, support), coef, self.kernel, self.gamma_, self.degree, self.coef0
        )
        if self.fit_intercept:
            scores += coef.sum(axis=1)
        return scores

    def _objective(self, X, y, w, data=None, sample_weight=UNWEIGHTED):
        """Eq. (7) of the lecture: sigma/2 alpha^T K alpha + mean loss on (X, y)."""
        z = self._scores(X, w[None, :], data)[:, 0]
        # ||w||^2 = sum_j alpha_j <w, phi(x_j)>: when X is the training set, its own scores give
        # it in the same kernel product; X is otherwise the trace's sample of it (a strict
        # subset: objective_rows), and the support vectors' scores give it.
        if X.shape[0] == data.indptr.shape[0] - 1:
            norm_sq = float(np.dot(w, z))
        else:
            support = _support(w[None, :])
            z_support = self._scores(rows_of(data, support), w[None, :], data)[:, 0]
            norm_sq = float(np.dot(w[support], z_support))
        return 0.5 * float(self.sigma) * norm_sq + self._mean_loss(z, y, sample_weight)

    def _set_weights(self, weights, data):
        support = _support(weights)
        self.support_ = support
        self.support_vectors_ = sp.csr_matrix(rows_of(data, support), dtype=np.float64)
        self.dual_coef_ = np.ascontiguousarray(weights[:, support])
        self.intercept_ = self.dual_coef_.sum(axis=1) if self.fit_intercept else np.zeros(weights.shape[0])
        self.n_support_ = int(support.shape[0])
        self._set_linear_coef()
        self._as_task_outputs()

    def _set_linear_coef(self):
        # With the linear kernel the model is a weight vector too: w = sum_j alpha_j x_j.
        if self.kernel == "linear":
            self.coef_ = np.asarray(self.support_vectors_.T @ self.dual_coef_.T).T
        elif hasattr(self, "coef_"):
            del self.coef_

    # -- predict ----------------------------------------------------------------------------------

    def _decision_scores(self, X) -> np.ndarray:
        """Shape (n_samples, n_outputs)."""
        X = self._validated(X)
        scores = kernel_scores(
            X, self.support_vectors_, self.dual_coef_, self.kernel, self.gamma_, self.degree, self.coef0
        )
        return scores + self.intercept_

    # -- persistence ------------------------------------------------------------------------------

    def export_model(self):
        """Support vectors as CSR arrays, dual coefficients and intercepts; no pickle."""
        check_is_fitted(self)
        sv = self.support_vectors_
        meta = {
            **self._export_meta(int(self.n_support_)),
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
        est = cls._unfitted_from(meta)
        est.gamma_ = float(meta["gamma"])
        shape = tuple(int(v) for v in arrays["sv_shape"])
        if len(shape) != 2 or shape[1] != est.n_features_in_:
            raise ValueError("support vectors do not match n_features_in")
        est.support_vectors_ = sp.csr_matrix(
            (
                np.asarray(arrays["sv_data"], dtype=np.float64),
                np.asarray(arrays["sv_indices"], dtype=np.int32),
                np.asarray(arrays["sv_indptr"], dtype=np.int64),
            ),
            shape=shape,
        )
        # The arrays come from a file, and scipy's routines trust a CSR matrix's indices.
        est.support_vectors_.check_format(full_check=True)
        if not est.support_vectors_.has_canonical_format:
            raise ValueError("support vectors need sorted, distinct column indices in each row")
        est.dual_coef_ = np.asarray(arrays["dual_coef"], dtype=np.float64).reshape(-1, shape[0])
        est.support_ = np.asarray(arrays["support"], dtype=np.int64)
        est.n_support_ = int(shape[0])
        est.intercept_ = np.asarray(arrays["intercept"], dtype=np.float64)
        est._set_linear_coef()
        est._as_task_outputs()
        return est


def _support(alpha: np.ndarray) -> np.ndarray:
    """The training samples with a non-zero coefficient for some output."""
    return np.flatnonzero(np.any(alpha != 0.0, axis=0))


@declare_parameters
class KernelPGSClassifier(LinearClassifierMixin, _KernelPGSBase):
    """Kernel PGS classifier (PGS paper Section VII, lecture 22 Section 3), p = 2.

    Binary, or one-vs-rest for more classes (all classes share the kernel rows).

    Attributes
    ----------
    support_ : ndarray of shape (n_support,)
        Indices of the support vectors in the training set.
    support_vectors_ : scipy.sparse.csr_matrix of shape (n_support, n_features)
    dual_coef_ : ndarray of shape (n_outputs, n_support)
        alpha: <w, phi(x)> = sum_j dual_coef_[c, j] K(support_vectors_[j], x) + intercept_[c].
    intercept_ : ndarray of shape (n_outputs,)
    n_support_ : int
    gamma_ : float
        The gamma used.
    coef_ : only for kernel="linear", sum_j alpha_j x_j; absent for the other kernels.
    kernel_evaluations_, cache_hits_ : int
        Kernel values computed / read from the row cache during fit.
    classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_[i].nnz_weights`` counts non-zero dual coefficients.
    """

    loss: str = classifier_loss()


@declare_parameters
class KernelPGSRegressor(LinearRegressorMixin, _KernelPGSBase):
    """Kernel PGS regression (p = 2); ``trace_`` records the test RMSE.

    Attributes
    ----------
    support_, support_vectors_, dual_coef_, n_support_, gamma_, coef_, kernel_evaluations_, cache_hits_
        As for ``KernelPGSClassifier``, with one output.
    intercept_ : float
    n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSRegressor``.
    """

    loss: str = regressor_loss()
