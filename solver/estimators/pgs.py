"""PGSClassifier and PGSRegressor: scikit-learn estimators over the PGS kernel (``solver.pgs``)."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import LOSSES, loss_at_zero
from ..parameters import declare_parameters, param
from ..penalties import conjugate_exponent, pnorm_penalty
from ..pgs import PGSEngine, PGSState
from ..sampling import InMemoryRows, TrainingRows
from ..step_sizes import first_step_t0, mean_sq_dual_norm, pnorm_margin_gain
from .base import ConstantFeatureIntercept, LinearModelBase
from .constraints import AT_LEAST_ONE, POSITIVE, choice, classifier_loss, regressor_loss
from .tasks import LinearClassifierMixin, LinearRegressorMixin

# The smallest p PGS accepts: eq. (7) holds for p in (1, 2], but below 1.01 q = p / (p - 1) passes
# 101 and the first steps' |lambda_j / ref|^q already overflow a double on scaled data.
P_MIN = 1.01
# A run whose ||w||_p times the rows' RMS q-norm passes this has diverged (PGSState's max_norm).
_DIVERGED_MARGIN = 1e100


@declare_parameters
class _PGSBase(ConstantFeatureIntercept, LinearModelBase):
    """The PGS parameters and how they become the kernel's settings."""

    solver_name = "pgs"
    streams = True
    warm_starts = True  # PGSState.start_from

    p: float = param(
        default=2.0,
        allowed=[Interval(Real, P_MIN, 2.0, closed="both")],
        doc="The norm of the regulariser r(w) = ||w||_p^2 / (2 (p - 1)), eq. (3).",
        details="""Eq. (7) is defined for p in (1, 2]; below 1.01 the dual exponent q = p / (p - 1)
        exceeds 101 and the powers |lambda_j|^q leave the range of a double (for sparse, L1-like
        models use SMIDAS or SCD). From p = 1.05 (q = 21) up, features up to about 1e14 are handled;
        between 1.01 and 1.05, scale the features.""",
    )
    batch_size: int = param(default=1, allowed=[AT_LEAST_ONE], doc="k = |A_t|, the minibatch size.")
    n_iter: int | None = param(
        default=None,
        allowed=[AT_LEAST_ONE, None],
        doc="T, the number of iterations; None: 5 epochs, ceil(5 m / batch_size).",
        details="""A fit of sigma="auto"'s path runs 1 epoch by default: from the previous sigma's
        model, or at the path's first, largest sigma from w = 0, whose optimum is nearly 0 there and
        reached fastest (the error falls like 1 / (sigma T)). The path only scores these models, and
        on a9a and w8a it chooses a model as accurate as with 5 epochs in less than half the time.
        A refresh from a stored model (``coef_init``) runs 1 epoch too: it starts near its optimum.
        Any other fit (sigma="auto"'s refit too) runs 5 epochs.""",
    )
    radius: float | str | None = param(
        default="auto",
        allowed=[POSITIVE, StrOptions({"auto"}), None],
        doc="The domain S: None is R^n, a number B the ball ||w||_p <= B (Figure 2, lines 5-6).",
        details=""""auto" is the smallest ball the optimum is known to lie in: sigma r(w*) <= F(w*) <=
        F(0), so B = sqrt(2 (p - 1) F(0) / sigma); it costs nothing in accuracy and tames the first
        steps.""",
    )
    output: str = param(
        default="average",
        allowed=choice(("average", "last", "random")),
        doc="The returned predictor: the average of w_1..w_T, w_T, or a random iterate.",
        details="""The average is weighted as ``average_power`` says; "random" is the paper's line 9
        (a uniformly random iterate).""",
    )
    fit_intercept: bool = param(
        default=True,
        allowed=["boolean"],
        doc="Learn a bias, the weight of a constant extra feature regularised like the others.",
        details="""The feature's value is ``intercept_scaling``. Section VII: the bias is part of
        ||w||_p, which keeps r strongly convex.""",
    )
    random_state: object = param(
        default=None, allowed=["random_state"], doc="Seeds the minibatch draws and the random output."
    )
    t0: float | str = param(
        default="auto",
        allowed=[Interval(Real, 1.0, None, closed="left"), StrOptions({"auto"})],
        doc="w_t = grad r*(lambda / ((t + t0) sigma)); t0 = 1 is the paper's (t + 1) sigma.",
        details="""A larger t0 adds regulariser-only rounds, which damps the first steps and keeps
        the objective and its guarantees. "auto" picks t0 so that the first step is about
        1 / (curvature of the loss * (p - 1) * mean ||x||_q^2), q = p / (p - 1), which moves a
        sample's margin by about 1 / curvature (for p = 2 it is 1 / (curvature * mean ||x||^2),
        SGD's "optimal" schedule; for p < 2 the q-norm is estimated on up to 4,096 rows;
        ``solver.step_sizes``).""",
    )
    sampling: str = param(
        default="permutation",
        allowed=choice(("permutation", "replacement")),
        doc="How A_t is drawn: a fresh random permutation per epoch, or i.i.d. with replacement.",
        details="Replacement is Figure 1 and its analysis.",
    )
    intercept_scaling: float | str = param(
        default="auto",
        allowed=[POSITIVE, StrOptions({"auto"})],
        doc="s, the value of the constant feature; the intercept is b = s w_b.",
        details="""The intercept is thus regularised as sigma / (2 (p - 1)) |b / s|^p inside the
        norm (LIBLINEAR's convention); s = 1 is the paper's extra feature 1. "auto" takes the root
        mean square of the non-zero feature values (1 for binary features, about 0.1 for
        L2-normalised text), so that the bias steps like a typical weight: with s = 1 on normalised
        text, the bias, present in every row, would move ~10x more than any other weight per step.
        ``intercept_scaling_`` holds the value used.""",
    )
    average_power: float = param(
        default=2.0,
        allowed=[Interval(Real, 0.0, None, closed="left")],
        doc='output="average" returns sum_t t^a w_t / sum_t t^a with a = average_power.',
        details="""0 is the plain mean of w_1..w_T; 1 weighs iterate t by t, which discounts the
        early iterates (Lacoste-Julien, Schmidt and Bach, 2012, prove the O(1 / (sigma T)) rate of
        this average for step sizes ~ 1 / (sigma t)); 2 discounts them more, like the
        polynomial-decay averages of Shamir and Zhang (2013), which keep that rate. 2 is the
        default because, in the small-m ablation of docs/benchmarks.md, it reached a target
        accuracy in fewer epochs than 1 in most cases and in more epochs in none.""",
    )

    def _default_n_iter(self, m: int) -> int:
        # 5 epochs; 1 on a sigma path or when warm-started (the parameter's details say why).
        epochs = 1 if self._on_path or self._initial_weights is not None else 5
        return math.ceil(epochs * m / self.batch_size)

    def _make_engine(self, data, stats, targets, rng):
        return self._engine_over(InMemoryRows(data, stats, targets, self._sample_weight), rng)

    def _engine_over(self, rows: TrainingRows, rng) -> PGSEngine:
        # E||x||^2 over the data's own features, from prepare's one pass, gives s and (p = 2) t0
        # and the divergence bound; p < 2 uses sampled q-norms instead (and, for t0="auto" with a
        # Lipschitz loss, one more pass: pnorm_margin_gain), read from the first block of rows.
        mean_sq = rows.stats.mean_sq
        # With "auto", the bias then steps and is regularised like a typical weight.
        self._set_constant_feature(rows.stats)
        first, first_targets = rows.first_block()
        dual_sq = self._mean_sq_dual_norm(first, mean_sq)
        self.t0_ = t0 = self._t0_for(first, first_targets, dual_sq)
        del first, first_targets  # a shard, when training streams: not kept
        data, targets = rows.template()
        states = [
            PGSState(
                data,
                y,
                loss=LOSSES[self.loss],
                p=float(self.p),
                sigma=float(self.sigma),
                radius=self._radius_for(f0),
                fit_intercept=bool(self.fit_intercept),
                batch_size=int(self.batch_size),
                t0=t0,
                epsilon=float(self.epsilon),
                average=self.output == "average",
                intercept_scaling=self.intercept_scaling_,
                average_power=float(self.average_power),
                max_norm=_DIVERGED_MARGIN / math.sqrt(dual_sq) if dual_sq > 0.0 else math.inf,
                mean_nnz=rows.mean_row_nnz,
            )
            for y, f0 in zip(targets, self._losses_at_zero(rows), strict=True)
        ]
        if self._initial_weights is not None:
            for state, w in zip(states, self._initial_weights, strict=True):
                state.start_from(w)
        sampler = rows.sampler(int(self.batch_size), self.sampling, rng)
        return PGSEngine(states, sampler, int(self.batch_size), self.output, rng)

    def _penalty(self, w: np.ndarray) -> float:
        """sigma / (2 (p - 1)) ||(coef, b / s)||_p^2 of eq. (7): the intercept b is the weight b / s
        of the constant feature s, regularised like any weight."""
        return pnorm_penalty(self._regularised_weights(w), float(self.p), float(self.sigma))[0]

    def _losses_at_zero(self, rows: TrainingRows) -> list[float]:
        """F(0) of eq. (7) per output: the mean loss of the zero predictor over every block of
        rows (one at a time when training streams)."""
        means, sizes = [], []
        for targets in rows.target_blocks():
            means.append([loss_at_zero(self.loss, y, self.epsilon, rows.sample_weight) for y in targets])
            sizes.append(targets.shape[1])
        if len(means) == 1:
            return means[0]
        return [float(v) for v in np.average(np.array(means), axis=0, weights=sizes)]

    def _radius_for(self, f0: float) -> float:
        """B for the mean loss F(0) of the zero predictor."""
        if self.radius is None:
            return math.inf
        if self.radius == "auto":
            # Section IV made exact: sigma r(w*) <= F(w*) <= F(0), so ||w*||_p <= sqrt(2(p-1)F(0)/sigma).
            return math.sqrt(2.0 * (self.p - 1.0) * f0 / float(self.sigma)) if f0 > 0 else math.inf
        return float(self.radius)

    def _mean_sq_dual_norm(self, data, mean_sq: float) -> float:
        """E||(x, s)||_q^2 with the constant feature s; for p = 2 from ``mean_sq`` (E||x||^2)."""
        s = self.intercept_scaling_
        if self.p == 2.0:
            return mean_sq + s * s
        return mean_sq_dual_norm(data, conjugate_exponent(self.p), s)

    def _t0_for(self, data, targets, dual_sq: float) -> float:
        """t0 as given, or for t0="auto" the rule of ``solver.step_sizes`` (only computed then: for
        p < 2 it can cost a pass over X)."""
        if self.t0 != "auto":
            return float(self.t0)
        gain = pnorm_margin_gain(
            data,
            targets,
            self._stepping_loss(),
            float(self.p),
            float(self.epsilon),
            self.intercept_scaling_,
            dual_sq,
        )
        return first_step_t0(self._stepping_loss().curvature, gain, float(self.sigma))


@declare_parameters
class PGSClassifier(LinearClassifierMixin, _PGSBase):
    """Linear classifier trained by the Primal Gradient Solver (Zhu et al., ICDM 2009, Figure 1).

    Minimises eq. (7), ``sigma / (2 (p-1)) ||w||_p^2 + (1/m) sum_i l(y_i <w, x_i>)``, for p in
    [1.01, 2] (eq. (7) is defined on (1, 2]; the parameter ``p`` says why PGS stops at 1.01).
    Binary problems use labels -1/+1 internally; multiclass problems are one-vs-rest, one PGS run per
    class on the same minibatches.

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
        Checkpoints (iteration, samples seen, solver seconds, objective, test score); recorded
        when ``fit`` gets an ``eval_set`` or ``trace=True``.
    stop_reason_ : {"completed", "callback", "target_score", "time_budget", "no_improvement"}
    validation_scores_ : list of float or None
        With ``early_stopping``: the validation score at each checkpoint after the first.
    solver_seconds_ : float
        Time spent in the solver, excluding evaluation at checkpoints and Numba compilation.
    compile_seconds_ : float
        Time spent loading (or, the first time, compiling) the Numba kernels before the solver
        clock started.
    checkpoint_seconds_ : float
        Time spent recording the trace's checkpoints (the objective on ``objective_rows``, the
        test score on ``eval_rows``): off the solver clock.
    intercept_scaling_ : float
        The value of the constant feature used (0.0 without an intercept).
    t0_ : float
        The offset t0 used (``t0="auto"`` resolved).
    """

    loss: str = classifier_loss(
        doc="The loss l(z; y), y in {-1, +1} (Section IV).",
        details='"squared" is the least-squares classifier of the paper\'s Table II: '
        "(<w, x> - y)^2 with y in {-1, +1}, predicting by sign.",
    )


@declare_parameters
class PGSRegressor(LinearRegressorMixin, _PGSBase):
    """Linear regression trained by the Primal Gradient Solver (Zhu et al., ICDM 2009, Figure 1).

    Minimises eq. (7) with a regression loss; ``trace_`` records the test RMSE.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_, trace_, stop_reason_, validation_scores_, solver_seconds_, compile_seconds_,
    checkpoint_seconds_, intercept_scaling_, t0_
        As for ``PGSClassifier``.
    """

    loss: str = regressor_loss(doc='The loss l(z; y): "squared", (z - y)^2 (Section IV), or "huber".')
