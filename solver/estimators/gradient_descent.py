"""GD, SGD and OGD estimators: the lecture's Algorithms 1-3 on its objective (1), over the one kernel
of ``solver.gradient_descent``, each a classifier (binary or one-vs-rest) and a regressor.

``sigma`` is the regularisation weight (the lecture's lambda), and ``loss``, ``n_iter``,
``batch_size``, ``t0``, ``output``, ``fit_intercept``, ``random_state`` and ``epsilon`` mean what they
mean for PGS.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import ClassVar

from sklearn.utils._param_validation import Interval, StrOptions

from ..gradient_descent import SGDEngine, SGDState
from ..losses import LOSSES
from ..parameters import JointRule, declare_parameters, param
from ..penalties import l2_penalty
from ..sampling import InMemoryRows, TrainingRows
from ..step_sizes import constant_sgd_step, first_step_t0, gradient_descent_step
from .base import LinearModelBase
from .constraints import AT_LEAST_ONE, choice, classifier_loss, regressor_loss
from .early_stopping import no_early_stopping
from .sigma_search import SIGMA
from .tasks import LinearClassifierMixin, LinearRegressorMixin

_STEP = [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"})]
# A constant step eta: the regulariser's part of a step, (1 - eta sigma) w, must not overshoot 0.
_STEP_WITHIN_REGULARISER = JointRule(
    ("eta", "sigma"),
    "eta * sigma at most 1 (the step (1 - eta sigma) w of the regulariser must not overshoot 0)",
    # sigma="auto" is checked at each sigma of its path.
    lambda eta, sigma: isinstance(eta, str) or isinstance(sigma, str) or eta * sigma <= 1.0,
)


@declare_parameters
class _GradientDescentBase(LinearModelBase):
    """What gd, sgd and ogd share: objective (1) of the lecture and the ``sgd_chunk`` engine.

    A subclass says which step it takes (``_schedule``) and whether an iteration reads every sample
    (``_full_batch``, Algorithm 1) or a minibatch (``batch_size``, Algorithms 2-3).
    """

    _full_batch: ClassVar[bool] = False
    streams = True  # sgd and ogd: one minibatch per step (gd sets it False)
    warm_starts = True  # SGDState.start_from

    sigma: float | str = param(
        default=1e-5,
        allowed=SIGMA,
        doc="Regularisation weight (the lecture's lambda): F(w) = mean loss + sigma/2 ||w||^2; "
        '"auto": chosen by cross-validation.',
    )
    n_iter: int | None = param(
        default=None,
        allowed=[AT_LEAST_ONE, None],
        doc="Iterations T; None: 5 epochs, ceil(5 m / batch_size).",
    )
    output: str = param(
        default="average",
        allowed=choice(("average", "last")),
        doc="The average (1/T) sum_{t=1}^T w_t (w_1 = 0), as the lecture's algorithms output, or "
        "the last iterate w_{T+1}.",
    )
    random_state: object = param(
        default=None,
        allowed=["random_state"],
        doc="Seeds the sample draws (uniform, with replacement; the same draws as PGS with "
        'sampling="replacement" for one seed).',
    )

    def _schedule(self, data, stats) -> tuple[str, float, float]:
        """(schedule, eta, t0) for ``SGDState``."""
        raise NotImplementedError

    def _penalty(self, w):
        """sigma/2 ||w||_2^2 of eq. (1); the intercept is regularised like any weight (as in PGS)."""
        return l2_penalty(w, float(self.sigma))

    def _batch(self) -> int:
        return int(getattr(self, "batch_size", 1))

    def _default_n_iter(self, m: int) -> int:
        return math.ceil(5 * m / self._batch())  # 5 epochs

    def _make_engine(self, data, stats, targets, rng):
        return self._engine_over(InMemoryRows(data, stats, targets, self._sample_weight), rng)

    def _engine_over(self, rows: TrainingRows, rng) -> SGDEngine:
        schedule, eta, t0 = self._schedule(rows.first_block()[0], rows.stats)
        batch = rows.m if self._full_batch else self._batch()
        data, targets = rows.template()
        states = [
            SGDState(
                data,
                y,
                loss=LOSSES[self.loss],
                sigma=float(self.sigma),
                eta=eta,
                t0=t0,
                schedule=schedule,
                fit_intercept=bool(self.fit_intercept),
                batch_size=batch,
                epsilon=float(self.epsilon),
                average=self.output == "average",
                mean_nnz=rows.mean_row_nnz,
                sample_weight=rows.sample_weight,
            )
            for y in targets
        ]
        if self._initial_weights is not None:
            for state, w in zip(states, self._initial_weights, strict=True):
                state.start_from(w)
        # Uniform draws with replacement: the lecture's Algorithms 2-3 (gd reads every row).
        sampler = None if self._full_batch else rows.sampler(batch, "replacement", rng)
        return SGDEngine(states, batch, self.output, sampler)


@declare_parameters
class _GDBase(_GradientDescentBase):
    """Algorithm 1: full gradient, constant step ``eta``."""

    solver_name = "gd"
    _full_batch = True
    streams = False
    _parameter_rules = (_STEP_WITHIN_REGULARISER,)

    n_iter: int | None = param(default=None, allowed=[AT_LEAST_ONE, None], doc="Iterations T; None: 100.")
    early_stopping: bool = no_early_stopping("gd takes deterministic full-gradient steps; set n_iter")
    random_state: object = param(
        default=None, allowed=["random_state"], doc="Accepted for a uniform interface; gd is deterministic."
    )
    eta: float | str = param(
        default="auto",
        allowed=_STEP,
        doc="The step; eta * sigma must be at most 1.",
        details='"auto" is 1 / L with L = curvature(loss) * lambda_max(X^T X) / m + sigma (power '
        "iteration), the Lipschitz constant of the gradient.",
    )

    def _default_n_iter(self, m: int) -> int:
        return 100

    def _schedule(self, data, stats):
        if self.eta != "auto":
            return "constant", float(self.eta), 0.0
        return (
            "constant",
            gradient_descent_step(self._stepping_loss(), data, bool(self.fit_intercept), float(self.sigma)),
            0.0,
        )


@declare_parameters
class _SGDBase(_GradientDescentBase):
    """Algorithm 2: random minibatches, constant step ``eta``."""

    solver_name = "sgd"
    _parameter_rules = (_STEP_WITHIN_REGULARISER,)

    eta: float | str = param(
        default="auto",
        allowed=_STEP,
        doc="The constant step; eta * sigma must be at most 1.",
        details='"auto" is 0.1 / (curvature(loss) * mean ||x||^2 + sigma), a tenth of the largest '
        "stable step, since the average of constant-step SGD is biased by O(eta^2) for "
        "non-quadratic losses.",
    )
    batch_size: int = param(default=1, allowed=[AT_LEAST_ONE], doc="k, the samples per iteration.")

    def _schedule(self, data, stats):
        if self.eta != "auto":
            return "constant", float(self.eta), 0.0
        return (
            "constant",
            constant_sgd_step(self._stepping_loss(), stats, bool(self.fit_intercept), float(self.sigma)),
            0.0,
        )


@declare_parameters
class _OGDBase(_GradientDescentBase):
    """Algorithm 3: random minibatches, step 1 / (sigma (t + t0))."""

    solver_name = "ogd"

    t0: float | str = param(
        default="auto",
        allowed=[Interval(Real, 0.0, None, closed="left"), StrOptions({"auto"})],
        doc="eta_t = 1 / (sigma (t + t0)); t0=0 is Algorithm 3 verbatim, eta_t = 1 / (lambda t).",
        details="""Its first step 1 / sigma is huge for a small sigma: the logistic and hinge losses
        recover slowly and the squared loss, which is not Lipschitz, diverges. "auto" is PGS's rule
        (a first step of about 1 / (curvature * mean ||x||^2), then 1 / (sigma t) asymptotically):
        the default, as for PGS, so that default parameters never diverge.""",
    )
    batch_size: int = param(default=1, allowed=[AT_LEAST_ONE], doc="k, the samples per iteration.")

    def _schedule(self, data, stats):
        if self.t0 != "auto":
            return "inverse_time", 0.0, float(self.t0)
        sq = stats.mean_sq + float(self.fit_intercept)
        return "inverse_time", 0.0, first_step_t0(self._stepping_loss().curvature, sq, float(self.sigma))


@declare_parameters
class GDClassifier(LinearClassifierMixin, _GDBase):
    """Linear classifier by full gradient descent (lecture 22, Algorithm 1).

    w_{t+1} = w_t - eta (sigma w_t + (1/m) sum_i l'(<w_t, x_i>; y_i) x_i); one iteration reads the
    whole data set (O(nnz(X))), and ``samples_per_iteration`` in the trace is m.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``.
    """

    loss: str = classifier_loss()


@declare_parameters
class GDRegressor(LinearRegressorMixin, _GDBase):
    """Linear regression by full gradient descent (lecture 22, Algorithm 1); see ``GDClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSRegressor``.
    """

    loss: str = regressor_loss()


@declare_parameters
class SGDClassifier(LinearClassifierMixin, _SGDBase):
    """Linear classifier by stochastic gradient descent, constant step (lecture 22, Algorithm 2).

    w_{t+1} = (1 - eta sigma) w_t - (eta / k) sum_{i in A_t} l'(<w_t, x_i>; y_i) x_i, with A_t
    k samples drawn uniformly; O(k d) per iteration (w is kept as a scale times a vector).
    Not scikit-learn's SGDClassifier: this one is the lecture's algorithm on objective (1).

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``.
    """

    loss: str = classifier_loss()


@declare_parameters
class SGDRegressor(LinearRegressorMixin, _SGDBase):
    """Linear regression by SGD with a constant step (lecture 22, Algorithm 2); see
    ``SGDClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSRegressor``.
    """

    loss: str = regressor_loss()


@declare_parameters
class OGDClassifier(LinearClassifierMixin, _OGDBase):
    """Linear classifier by OGD, step 1 / (sigma t), averaged output (lecture 22, Algorithm 3).

    w_{t+1} = (1 - eta_t sigma) w_t - (eta_t / k) sum_{i in A_t} l'(<w_t, x_i>; y_i) x_i with
    eta_t = 1 / (sigma (t + t0)); by eq. (6), w_{t+1} = -1/(sigma (t + t0)) sum_{s<=t} g_s. For the
    same samples this is PGS with p = 2 and the same t0, shifted by one index
    (``solver.gradient_descent``).

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``.
    """

    loss: str = classifier_loss()


@declare_parameters
class OGDRegressor(LinearRegressorMixin, _OGDBase):
    """Linear regression by OGD with step 1 / (sigma (t + t0)) (lecture 22, Algorithm 3); see
    ``OGDClassifier``.

    The squared loss is not Lipschitz: with t0 = 0 (the lecture's step) and a small sigma the first
    steps overshoot and the fit raises FloatingPointError.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSRegressor``.
    """

    loss: str = regressor_loss()
