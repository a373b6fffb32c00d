"""scikit-learn estimators for L1-regularised losses (Shalev-Shwartz & Tewari, JMLR 2011).

All four minimise objective (1) of that paper, with its lambda called ``sigma`` as everywhere here::

    P(w, b) = sigma ||w||_1 + (1/m) sum_i l(<w, x_i> + b; y_i)

The intercept b (``fit_intercept=True``) is NOT penalised: an L1 penalty on it would shrink the
prediction towards 0 for no modelling reason, and leaving it out is what glmnet and scikit-learn do.
(PGS instead regularises its bias, because its r must stay strongly convex.) Our squared loss is
(z - y)^2, twice the paper's (1/2)(a - y)^2, so sigma = 2 lambda gives the paper's Lasso solution.

========================  ============================================  ==========================
estimator                 method                                        kernel
========================  ============================================  ==========================
SCDClassifier/Regressor   stochastic coordinate descent (Algorithm 2)   ``solver.scd.scd_chunk``
GCDClassifier/Regressor   greedy coordinate descent (Section 4.2)       ``solver.scd.gcd_chunk``
SMIDASClassifier/...      p-norm mirror descent made sparse (Alg. 3)    ``solver.smidas``
TruncGradClassifier/...   truncated gradient (Langford et al. 2009)     ``solver.smidas`` (p = 2)
========================  ============================================  ==========================

Coordinate descent needs a smooth loss (its step is 1/beta, beta bounding l''); the two stochastic
methods take sub-gradients and accept the hinge loss too. Every trace records data accesses (the
paper's x-axis) and the number of non-zero weights (its density plots).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import COMMON_CONSTRAINTS, LinearClassifierMixin, LinearModelBase, LinearRegressorMixin
from .losses import CLASSIFICATION_LOSSES, LOSSES, REGRESSION_LOSSES
from .scd import CoordinateEngine, default_coordinate_iterations
from .smidas import MirrorEngine, dual_exponent, max_row_norm_sq

SMOOTH_CLASSIFICATION = tuple(name for name in CLASSIFICATION_LOSSES if LOSSES[name].smooth)
SMOOTH_REGRESSION = tuple(name for name in REGRESSION_LOSSES if LOSSES[name].smooth)


def loss_options(names) -> str:
    """Loss names as a docstring set: {"a", "b"}."""
    return "{" + ", ".join(f'"{name}"' for name in names) + "}"

_L1_CONSTRAINTS = {**COMMON_CONSTRAINTS, "epsilon": [Interval(Real, 0.0, None, closed="neither")]}


class _L1Base(LinearModelBase):
    """Objective (1) of the L1 paper: sigma ||w||_1 + mean loss, the intercept unpenalised."""

    def _penalty(self, w: np.ndarray) -> float:
        coef = w[:-1] if self.fit_intercept else w
        return float(self.sigma * np.abs(coef).sum())


# -- coordinate descent ---------------------------------------------------------------------------


class _CoordinateBase(_L1Base):
    _greedy = False

    _parameter_constraints: dict = dict(_L1_CONSTRAINTS)

    def __init__(
        self,
        loss="logistic",
        *,
        sigma=1e-5,
        n_iter=None,
        fit_intercept=True,
        random_state=None,
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        self._store_params(locals())

    def _default_n_iter(self, m: int) -> int:
        # A sweep of n_weights updates reads the data about once: 20 sweeps for SCD; a greedy step
        # costs far more (it updates the gradient on every row it touches), so 5 for GCD.
        n_weights = self.n_features_in_ + int(self.fit_intercept)
        return default_coordinate_iterations(n_weights, 5 if self._greedy else 20)

    def _make_engine(self, data, targets, rng):
        loss = LOSSES[self.loss]
        return CoordinateEngine(
            data, targets, loss_code=loss.code, epsilon=float(self.epsilon), sigma=float(self.sigma),
            curvature=loss.curvature, fit_intercept=bool(self.fit_intercept), greedy=self._greedy,
            rng=rng,
        )


_COORDINATE_DOC = """

    Minimises sigma ||w||_1 + (1/m) sum_i l(<w, x_i> + b; y_i) (objective (1) of the L1 paper), the
    intercept unpenalised. An iteration updates one coordinate j by Algorithm 2's step
    w_j <- s_{{sigma/beta_j}}(w_j - g_j / beta_j), with beta_j = sup l'' * mean_i x_ij^2 (the
    paper's beta on +-1 features; smaller, hence faster, on sparser ones; see ``solver.scd``).
    {rule}

    Parameters
    ----------
    loss : {losses}, default="{default}"
        A smooth loss: its second-derivative bound sets the step.
    sigma : float > 0, default=1e-5
        The L1 weight (the paper's lambda).
    n_iter : int >= 1 or None, default=None
        Coordinate updates; None means {sweeps} sweeps of (n_features + fit_intercept) updates.
    fit_intercept : bool, default=True
        Learn an unpenalised intercept (a constant column, updated like the other coordinates).
    random_state : int, RandomState or None, default=None
        {seed}
    epsilon : float > 0, default=1.0
        Width of the quadratic part of the huber loss (unused by the other losses).
    target_score, time_budget, checkpoint_growth, checkpoint_interval
        As for ``PGSClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
        ``stop_reason_`` can be "converged"{converged}.
    """

_SCD_TEXT = dict(
    rule="The coordinate is drawn uniformly at random (Algorithm 2); the method is parameter-free.",
    sweeps=20,
    seed="Seeds the coordinate draws.",
    converged=" (never for SCD: it has no stopping test)",
)
_GCD_TEXT = dict(
    rule="The coordinate is the one with the largest guaranteed decrease of the objective (the greedy\n"
         "    rule of Section 4.2), for which the full gradient is maintained; deterministic.",
    sweeps=5,
    seed="Unused: GCD is deterministic (kept for the parameters every solver shares).",
    converged=" (no coordinate step changes w any more)",
)


class SCDClassifier(LinearClassifierMixin, _CoordinateBase):
    __doc__ = "L1-regularised linear classifier by stochastic coordinate descent (SCD)." + (
        _COORDINATE_DOC.format(losses=loss_options(SMOOTH_CLASSIFICATION), default="logistic", **_SCD_TEXT))

    _parameter_constraints = {
        **_CoordinateBase._parameter_constraints,
        "loss": [StrOptions(set(SMOOTH_CLASSIFICATION))],
    }


class SCDRegressor(LinearRegressorMixin, _CoordinateBase):
    __doc__ = "L1-regularised linear regression (the Lasso) by stochastic coordinate descent." + (
        _COORDINATE_DOC.format(losses=loss_options(SMOOTH_REGRESSION), default="squared", **_SCD_TEXT))

    _parameter_constraints = {
        **_CoordinateBase._parameter_constraints,
        "loss": [StrOptions(set(SMOOTH_REGRESSION))],
    }

    def __init__(
        self,
        loss="squared",
        *,
        sigma=1e-5,
        n_iter=None,
        fit_intercept=True,
        random_state=None,
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        self._store_params(locals())


class GCDClassifier(SCDClassifier):
    __doc__ = "L1-regularised linear classifier by greedy coordinate descent (GCD)." + (
        _COORDINATE_DOC.format(losses=loss_options(SMOOTH_CLASSIFICATION), default="logistic", **_GCD_TEXT))
    _greedy = True


class GCDRegressor(SCDRegressor):
    __doc__ = "L1-regularised linear regression by greedy coordinate descent (GCD)." + (
        _COORDINATE_DOC.format(losses=loss_options(SMOOTH_REGRESSION), default="squared", **_GCD_TEXT))
    _greedy = True


# -- mirror descent -------------------------------------------------------------------------------


class _MirrorBase(_L1Base):
    _identity_link = False  # True: truncated gradient

    _parameter_constraints: dict = {
        **_L1_CONSTRAINTS,
        "eta": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        loss="logistic",
        *,
        sigma=1e-5,
        eta="auto",
        batch_size=1,
        n_iter=None,
        fit_intercept=True,
        random_state=None,
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        self._store_params(locals())

    def _default_n_iter(self, m: int) -> int:
        return math.ceil(5 * m / self.batch_size)  # 5 epochs, as PGS

    def _make_engine(self, data, targets, rng):
        loss = LOSSES[self.loss]
        p = 2 if self._identity_link else dual_exponent(data.n_features)
        if self.eta == "auto":
            # Proposition 4: eta = 2K / ((1 + K)(p - 1) rho X^2) for losses with l'^2 <= rho l,
            # where X^2 bounds ||x_i||_p^2 (the paper's e ||x_i||_inf^2 for p = 2 ln d); K = 1.
            # A non-negative loss whose second derivative is at most beta has rho = 2 beta.
            bias = 1.0 if self.fit_intercept else 0.0
            x_sq = max_row_norm_sq(data, p, bias)
            eta = 1.0 / (2.0 * (p - 1) * loss.curvature * x_sq) if x_sq > 0.0 else 1.0
        else:
            eta = float(self.eta)
        self.dual_exponent_ = p
        self.eta_ = eta
        return MirrorEngine(
            data, targets, loss_code=loss.code, epsilon=float(self.epsilon),
            sigma=float(self.sigma), eta=eta, p=p, batch_size=int(self.batch_size),
            fit_intercept=bool(self.fit_intercept), rng=rng,
        )


_MIRROR_DOC = """

    Minimises sigma ||w||_1 + (1/m) sum_i l(<w, x_i> + b; y_i) (objective (1) of the L1 paper), the
    intercept unpenalised. {method}

    Parameters
    ----------
    loss : {losses}, default="{default}"
    sigma : float > 0, default=1e-5
        The L1 weight (the paper's lambda).
    eta : float > 0 or "auto", default="auto"
        The constant learning rate. The paper tunes it per data set (its Table 1 spans 5e-5 to 50);
        "auto" is the step of the paper's Proposition 4 with K = 1,
        ``1 / (2 (p - 1) sup l'' max_i ||x_i||_p^2)`` ({p_text}): a scale from the theory, not a
        tuned value. In docs/benchmarks_l1.md the best rate lay between auto / 243 and auto * 729
        depending on data set and sigma (mostly below auto); tune it as the paper did. The value
        used is ``eta_``.
    batch_size : int >= 1, default=1
        Samples per iteration; their sub-gradients are averaged (the paper uses 1).
    n_iter : int >= 1 or None, default=None
        Iterations; None means 5 epochs, ``ceil(5 m / batch_size)``.
    fit_intercept : bool, default=True
        Learn an unpenalised intercept (a constant feature that is never truncated).
    random_state : int, RandomState or None, default=None
        Seeds the sample draws (uniform, with replacement).
    epsilon : float > 0, default=1.0
        Width of the quadratic part of the huber loss (unused by the other losses).
    target_score, time_budget, checkpoint_growth, checkpoint_interval
        As for ``PGSClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
        The model is the last iterate.
    eta_ : float
        The learning rate used.
    dual_exponent_ : int
        The exponent p of the link f^-1 ({p_text}).
    """

_SMIDAS_TEXT = dict(
    method="Algorithm 3 (SMIDAS): a stochastic mirror-descent step on the dual vector theta with\n"
           "    the p-norm link, then truncation of theta by eta * sigma, which keeps w sparse.",
    p_text="p = ceil(2 ln n_features), at least 2",
)
_TRUNCGRAD_TEXT = dict(
    method="Truncated gradient (Langford et al. 2009, the variant of the L1 paper's Section 4.2): a\n"
           "    stochastic gradient step, then every weight shrinks by eta * sigma without crossing 0.\n"
           "    It is SMIDAS with the identity link (p = 2); untouched weights are shrunk lazily.",
    p_text="always 2: the identity link",
)


class SMIDASClassifier(LinearClassifierMixin, _MirrorBase):
    __doc__ = "L1-regularised linear classifier by SMIDAS (stochastic mirror descent made sparse)." + (
        _MIRROR_DOC.format(losses=loss_options(CLASSIFICATION_LOSSES), default="logistic", **_SMIDAS_TEXT))

    _parameter_constraints = {
        **_MirrorBase._parameter_constraints,
        "loss": [StrOptions(set(CLASSIFICATION_LOSSES))],
    }


class SMIDASRegressor(LinearRegressorMixin, _MirrorBase):
    __doc__ = "L1-regularised linear regression by SMIDAS (stochastic mirror descent made sparse)." + (
        _MIRROR_DOC.format(losses=loss_options(REGRESSION_LOSSES), default="squared", **_SMIDAS_TEXT))

    _parameter_constraints = {
        **_MirrorBase._parameter_constraints,
        "loss": [StrOptions(set(REGRESSION_LOSSES))],
    }

    def __init__(
        self,
        loss="squared",
        *,
        sigma=1e-5,
        eta="auto",
        batch_size=1,
        n_iter=None,
        fit_intercept=True,
        random_state=None,
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        self._store_params(locals())


class TruncGradClassifier(SMIDASClassifier):
    __doc__ = "L1-regularised linear classifier by truncated gradient." + _MIRROR_DOC.format(
        losses=loss_options(CLASSIFICATION_LOSSES), default="logistic", **_TRUNCGRAD_TEXT)
    _identity_link = True


class TruncGradRegressor(SMIDASRegressor):
    __doc__ = "L1-regularised linear regression by truncated gradient." + _MIRROR_DOC.format(
        losses=loss_options(REGRESSION_LOSSES), default="squared", **_TRUNCGRAD_TEXT)
    _identity_link = True
