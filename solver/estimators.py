"""scikit-learn estimators over the PGS kernel: PGSClassifier and PGSRegressor."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    COMMON_CONSTRAINTS,
    LinearClassifierMixin,
    LinearModelBase,
    LinearRegressorMixin,
    first_step_t0,
)
from ._sparse import mean_dual_curvature, mean_sq_dual_norm, mean_sq_row_norm
from .losses import (
    CLASSIFICATION_LOSSES,
    LOSSES,
    REGRESSION_LOSSES,
    derivatives_at_zero,
    loss_at_zero,
)
from .pgs import PGSEngine, PGSState

OUTPUTS = ("average", "last", "random")


# The smallest p PGS accepts (see the "p" constraint below).
P_MIN = 1.01
# A run whose ||w||_p times the rows' RMS q-norm passes this has diverged (PGSState's max_norm).
_DIVERGED_MARGIN = 1e100


class _PGSBase(LinearModelBase):
    """The PGS parameters and how they become engine settings."""

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        # Eq. (7) holds for p in (1, 2], but below 1.01 q = p / (p - 1) passes 101 and the first
        # steps' |lambda_j / ref|^q already overflow a double on scaled data (solver/pgs.py).
        "p": [Interval(Real, P_MIN, 2.0, closed="both")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "radius": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"}), None],
        "output": [StrOptions(set(OUTPUTS))],
        "t0": [Interval(Real, 1.0, None, closed="left"), StrOptions({"auto"})],
        "epsilon": [Interval(Real, 0.0, None, closed="neither")],
        "sampling": [StrOptions({"replacement", "permutation"})],
        "intercept_scaling": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
        "average_power": [Interval(Real, 0.0, None, closed="left")],
    }

    def _default_n_iter(self, m: int) -> int:
        return math.ceil(5 * m / self.batch_size)  # 5 epochs

    def _make_engine(self, data, targets, rng):
        m = data.indptr.shape[0] - 1
        # E||x||^2 over the data's own features, computed once for s and (p = 2) t0 and the
        # divergence bound: one pass over X; p < 2 uses sampled q-norms instead (and, for t0="auto"
        # with a Lipschitz loss, one more pass: _margin_gain).
        mean_sq = mean_sq_row_norm(data, 0.0)
        self.intercept_scaling_ = self._intercept_value_for(data, mean_sq)
        dual_sq = self._mean_sq_dual_norm(data, mean_sq)
        self.t0_ = t0 = self._t0_for(data, targets, dual_sq)
        states = [
            PGSState(
                data, y, loss_code=LOSSES[self.loss].code, p=float(self.p),
                sigma=float(self.sigma), radius=self._radius_for(y),
                fit_intercept=bool(self.fit_intercept), batch_size=int(self.batch_size), t0=t0,
                epsilon=float(self.epsilon), average=self.output == "average",
                intercept_scaling=self.intercept_scaling_, average_power=float(self.average_power),
                max_norm=_DIVERGED_MARGIN / math.sqrt(dual_sq) if dual_sq > 0.0 else math.inf,
            )
            for y in targets
        ]
        return PGSEngine(states, m, int(self.batch_size), self.output, rng, self.sampling)

    def _intercept_value_for(self, data, mean_sq: float) -> float:
        """s, the value of the constant feature that carries the intercept (``mean_sq``: E||x||^2)."""
        if not self.fit_intercept:
            return 0.0
        if self.intercept_scaling != "auto":
            return float(self.intercept_scaling)
        # The root mean square of the stored non-zero feature values: the bias then steps and is
        # regularised like a typical weight (1 for binary features, ~0.1 for L2-normalised text).
        nnz = np.count_nonzero(data.data)
        m = data.indptr.shape[0] - 1
        return math.sqrt(mean_sq * m / nnz) if nnz else 1.0

    def _penalty(self, w: np.ndarray) -> float:
        """sigma / (2 (p - 1)) ||(coef, b / s)||_p^2 of eq. (7): the intercept b is the weight b / s
        of the constant feature s, regularised like any weight."""
        if self.fit_intercept:
            s = self.intercept_scaling
            s = self.intercept_scaling_ if s == "auto" else float(s)
            w = np.concatenate([w[:-1], w[-1:] / s])
        norm = np.sum(np.abs(w) ** self.p) ** (1.0 / self.p)
        return float(self.sigma / (2.0 * (self.p - 1.0)) * norm**2)

    def _radius_for(self, y: np.ndarray) -> float:
        if self.radius is None:
            return math.inf
        if self.radius == "auto":
            # Section IV made exact: sigma r(w*) <= F(w*) <= F(0), so ||w*||_p <= sqrt(2(p-1)F(0)/sigma).
            f0 = loss_at_zero(self.loss, y, self.epsilon)
            return math.sqrt(2.0 * (self.p - 1.0) * f0 / self.sigma) if f0 > 0 else math.inf
        return float(self.radius)

    def _margin_gain(self, data, targets, dual_sq: float) -> float:
        """How far a step of size eta moves a sample's own margin, per eta and unit of sub-gradient.

        The move is eta times the curvature of r* along x at the current dual point theta =
        lambda / ((t + t0) sigma). For p = 2 it is ||x||^2 everywhere: E||(x, s)||^2
        (``dual_sq``: E||(x, s)||_q^2). For p < 2, r*(theta) = (p - 1) / 2 ||theta||_q^2 has
        curvature ||theta||_q^(2-q) sum_j |theta_j|^(q-2) x_j^2 less a term that is never positive
        ((p - 1)(q - 1) = 1), which depends on where lambda has its mass:
        - at theta along x, as for the very first step, it is (p - 1) ||x||_q^2 (the identities of
          tests/solver/test_properties.py give <w_1, x> = -(p - 1) g ||x||_q^2 / ((1 + t0) sigma));
        - it never exceeds ||x||_q^2 (r* is 1-smooth in the q-norm, r being 1-strongly convex in
          the p-norm), 1 / (p - 1) times more, reached once lambda concentrates on x's coordinates;
        - on sparse data lambda spreads over many coordinates, and for q > 2 a coordinate that
          holds little of it weighs little: (|theta_j| / ||theta||_q)^(q-2).
        Lipschitz losses, where a step that is too long only adds noise (which the average
        smooths), get the curvature at the dual point the first steps build, theta ~ sum_i
        l'(0; y_i) (x_i, s) with w still about 0 (``mean_dual_curvature``, the dropped term making
        it an upper estimate). On a9a, w8a and ijcnn1 that is within 10% of the first move; on the
        text sets the first move overestimates it 1.7-2.5x, and steps 2-4x longer than the first
        move's took p = 1.8 to its targets in 1.3-2.9x fewer epochs (one-off, docs/solver.md).
        The squared losses get the bound, since steps too long for it make their iterates oscillate
        ever wider (p = 1.05: R^2 of -60 after 5 epochs with the first move,
        tests/solver/test_estimators.py).
        """
        if self.p == 2.0 or not LOSSES[self.loss].lipschitz:
            return dual_sq
        q = self.p / (self.p - 1.0)
        code = LOSSES[self.loss].code
        gains = [
            mean_dual_curvature(data, derivatives_at_zero(code, y, float(self.epsilon)), q,
                                self.intercept_scaling_)
            for y in targets
        ]
        gain = float(np.mean(gains))
        # No dual mass at w = 0 (every l'(0; y) zero, or X^T l'(0) = 0): the first move instead.
        return gain if gain > 0.0 else (self.p - 1.0) * dual_sq

    def _mean_sq_dual_norm(self, data, mean_sq: float) -> float:
        """E||(x, s)||_q^2 with the constant feature s; for p = 2 from ``mean_sq`` (E||x||^2)."""
        s = self.intercept_scaling_
        if self.p == 2.0:
            return mean_sq + s * s
        return mean_sq_dual_norm(data, self.p / (self.p - 1.0), s)

    def _t0_for(self, data, targets, dual_sq: float) -> float:
        """t0 as given, or for t0="auto" from ``_margin_gain`` (only computed then: for p < 2 it
        can cost a pass over X)."""
        if self.t0 != "auto":
            return float(self.t0)
        # The first step 1 / ((1 + t0) sigma) becomes about 1 / (curvature * margin gain): it moves
        # a sample's margin by about 1 / curvature per unit of sub-gradient, the largest move that is
        # stable for a smooth loss; then steps decay like 1 / (sigma t). For p = 2 this makes PGS
        # the same iteration as SGD with the "optimal" 1 / (sigma (t + t0)) schedule of Bottou (the
        # lecture's eq. (6) closed form).
        margin_gain = self._margin_gain(data, targets, dual_sq)
        return first_step_t0(LOSSES[self.loss].curvature, margin_gain, float(self.sigma))


class PGSClassifier(LinearClassifierMixin, _PGSBase):
    """Linear classifier trained by the Primal Gradient Solver (Zhu et al., ICDM 2009, Figure 1).

    Minimises eq. (7), ``sigma / (2 (p-1)) ||w||_p^2 + (1/m) sum_i l(y_i <w, x_i>)``, for p in
    [1.01, 2] (eq. (7) is defined on (1, 2]; the parameter ``p`` says why PGS stops at 1.01).
    Binary problems use labels -1/+1 internally; multiclass problems are one-vs-rest, one PGS run per
    class on the same minibatches.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "squared_hinge", "smooth_hinge"}, default="logistic"
        ``"squared"`` is the least-squares classifier of the paper's Table II: (<w, x> - y)^2 with
        y in {-1, +1}, predicting by sign.
    p : float in [1.01, 2], default=2.0
        The norm of the regulariser r(w) = ||w||_p^2 / (2 (p - 1)), eq. (3). Eq. (7) is defined
        for p in (1, 2]; below 1.01 the dual exponent q = p / (p - 1) exceeds 101 and the powers
        |lambda_j|^q leave the range of a double (for sparse, L1-like models use SMIDAS or SCD).
        From p = 1.05 (q = 21) up, features up to about 1e14 are handled; between 1.01 and 1.05,
        scale the features.
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
        The returned predictor: the average of w_1..w_T (weighted as ``average_power`` says), w_T,
        or the paper's line 9 (a uniformly random iterate).
    fit_intercept : bool, default=True
        Learn a bias as the weight of a constant extra feature of value ``intercept_scaling`` that
        is regularised like the others (Section VII: the bias is part of ||w||_p, which keeps r
        strongly convex).
    random_state : int, RandomState or None, default=None
        Seeds the minibatch draws and the random output.
    t0 : float >= 1 or "auto", default="auto"
        w_t = grad r*(lambda / ((t + t0) sigma)). t0 = 1 is the paper's (t + 1) sigma exactly; a
        larger t0 adds regulariser-only rounds, which damps the first steps and keeps the objective
        and its guarantees. "auto" picks t0 so that the first step is about
        1 / (curvature of the loss * (p - 1) * mean ||x||_q^2), q = p / (p - 1), which moves a
        sample's margin by about 1 / curvature (for p = 2 it is 1 / (curvature * mean ||x||^2),
        SGD's "optimal" schedule; for p < 2 the q-norm is estimated on up to 4,096 rows); it
        reaches a given accuracy fastest in docs/benchmarks.md, especially at small sigma.
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
    sampling : {"permutation", "replacement"}, default="permutation"
        How A_t is drawn: by walking a fresh random permutation of the samples each epoch, or
        i.i.d. uniform with replacement (Figure 1 and its analysis). Permutations reached the
        targets of docs/benchmarks.md (section 2) in 1.8-2.4x fewer epochs on the RCV1-like set;
        on the small sets, whose runs last hundredths of an epoch, between 25% fewer and 57% more.
    intercept_scaling : float > 0 or "auto", default="auto"
        s, the value of the constant feature; the intercept is b = s w_b, so it is regularised as
        sigma / (2 (p - 1)) |b / s|^p inside the norm (LIBLINEAR's convention). s = 1 is the paper's
        extra feature 1. "auto" takes the root mean square of the non-zero feature values (1 for
        binary features, about 0.1 for L2-normalised text), so that the bias steps like a typical
        weight: with s = 1 on normalised text, the bias, present in every row, moves ~10x more
        than any other weight per step, and the runs took 2-3x the epochs on the text sets of
        docs/benchmarks.md. ``intercept_scaling_`` holds the value used.
    average_power : float >= 0, default=1.0
        ``output="average"`` returns sum_t t^a w_t / sum_t t^a with a = average_power: 0 is the
        plain mean of w_1..w_T; 1 weighs iterate t by t, which discounts the early iterates
        (Lacoste-Julien, Schmidt and Bach, 2012, prove the O(1 / (sigma T)) rate of this average
        for step sizes ~ 1 / (sigma t)); it reached the targets of docs/benchmarks.md in 17-57%
        fewer epochs in 10 of 12 cases (on a9a, whose runs end within 0.1 epoch, 14-38% more).

    The paper's exact algorithm is ``t0=1, output="random", sampling="replacement",
    intercept_scaling=1`` with ``radius=None`` (Figure 1, S = R^n) or a numeric radius (Figure 2's
    ball).

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
    intercept_scaling_ : float
        The value of the constant feature used (0.0 without an intercept).
    t0_ : float
        The offset t0 used (``t0="auto"`` resolved).
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
        sampling="permutation",
        intercept_scaling="auto",
        average_power=1.0,
    ):
        self._store_params(locals())


class PGSRegressor(LinearRegressorMixin, _PGSBase):
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
        sampling="permutation",
        intercept_scaling="auto",
        average_power=1.0,
    ):
        self._store_params(locals())
