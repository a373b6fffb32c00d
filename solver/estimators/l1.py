"""The L1-regularised estimators (Shalev-Shwartz & Tewari, JMLR 2011): stochastic and greedy
coordinate descent (SCD, GCD; ``solver.coordinate_descent``), SMIDAS and truncated gradient
(``solver.mirror_descent``).

All four minimise objective (1) of that paper, with its lambda called ``sigma`` as everywhere here::

    P(w, b) = sigma ||w||_1 + (1/m) sum_i l(<w, x_i> + b; y_i)

The intercept b (``fit_intercept=True``) is NOT penalised: an L1 penalty on it would shrink the
prediction towards 0 for no modelling reason, and leaving it out is what glmnet and scikit-learn do.
(PGS instead regularises its bias, because its r must stay strongly convex.) Our squared loss is
(z - y)^2, twice the paper's (1/2)(a - y)^2, so sigma = 2 lambda gives the paper's Lasso solution.

Coordinate descent needs a smooth loss: its step is 1 / beta_j, beta_j bounding the curvature along
coordinate j. The two stochastic methods take sub-gradients and accept the hinge loss too. Every
trace records data accesses (the paper's x-axis) and the number of non-zero weights (its density
plots).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import ClassVar

from sklearn.utils._param_validation import Interval, StrOptions

from ..coordinate_descent import (
    BETA_RULES,
    CoordinateEngine,
    GreedyCoordinateEngine,
    StochasticCoordinateEngine,
    default_coordinate_iterations,
)
from ..losses import (
    LOSSES,
    SMOOTH_CLASSIFICATION_LOSSES,
    SMOOTH_REGRESSION_LOSSES,
)
from ..mirror_descent import MirrorEngine, dual_exponent
from ..parameters import declare_parameters, param
from ..penalties import l1_penalty
from ..sampling import InMemoryRows, TrainingRows
from ..step_sizes import mirror_descent_step
from .base import LinearModelBase
from .constraints import AT_LEAST_ONE, classifier_loss, regressor_loss
from .early_stopping import no_early_stopping
from .sigma_search import SIGMA
from .tasks import LinearClassifierMixin, LinearRegressorMixin

_CLASSIFIER_LOSS_DOC = "A smooth loss l(z; y), y in {-1, +1}: its curvature bound sets the step."
_REGRESSOR_LOSS_DOC = "A smooth loss l(z; y): its curvature bound sets the step."


@declare_parameters
class _L1Base(LinearModelBase):
    """Objective (1) of the L1 paper: sigma ||w||_1 + mean loss, the intercept unpenalised."""

    # Coordinate descent starts from w and its margins X w; mirror descent from theta = f(w)
    # (solver.mirror_descent.MirrorEngine.start_from).
    warm_starts = True

    sigma: float | str = param(
        default=1e-5,
        allowed=SIGMA,
        doc='The L1 weight (the paper\'s lambda); "auto": chosen by cross-validation.',
    )

    def _penalty(self, w):
        return l1_penalty(w, float(self.sigma), bool(self.fit_intercept))


# -- coordinate descent ---------------------------------------------------------------------------


@declare_parameters
class _CoordinateDescentBase(_L1Base):
    """Objective (1) of the L1 paper by coordinate descent. A subclass says how the coordinates are
    chosen (``_engine``) and how many sweeps of n_weights updates ``n_iter=None`` means."""

    _engine: ClassVar[type[CoordinateEngine]]
    _default_sweeps: ClassVar[int]

    fit_intercept: bool = param(
        default=True,
        allowed=["boolean"],
        doc="Learn an unpenalised intercept (a constant column, updated like the other coordinates).",
    )
    beta: str = param(
        default="column",
        allowed=[StrOptions(set(BETA_RULES))],
        doc="The curvature bound behind the step 1 / beta: per coordinate, or one for all.",
        details=""""column": beta_j = sup l'' * mean_i x_ij^2, the tightest bound condition (9) of
        the L1 paper allows per coordinate (a longer step on sparse columns). "uniform": the
        paper's single beta, sup l'' * max_ij x_ij^2 for every coordinate (eq. (7), sup l'' on data
        in [-1, 1]^d).""",
    )

    def _default_n_iter(self, m: int) -> int:
        # A sweep of n_weights updates reads the data about once.
        n_weights = self.n_features_in_ + int(self.fit_intercept)
        return default_coordinate_iterations(n_weights, self._default_sweeps)

    def _make_engine(self, data, stats, targets, rng):
        return self._engine(
            data,
            targets,
            loss=LOSSES[self.loss],
            epsilon=float(self.epsilon),
            sigma=float(self.sigma),
            fit_intercept=bool(self.fit_intercept),
            rng=rng,
            beta=str(self.beta),
            initial=self._initial_weights,
            sample_weight=self._sample_weight,
        )


@declare_parameters
class _SCDBase(_CoordinateDescentBase):
    """Stochastic coordinate descent: the coordinate is drawn uniformly at random (Algorithm 2)."""

    solver_name = "scd"
    _engine = StochasticCoordinateEngine
    _default_sweeps = 20

    n_iter: int | None = param(
        default=None,
        allowed=[AT_LEAST_ONE, None],
        doc="Coordinate updates; None: 20 sweeps of (n_features + fit_intercept) updates.",
    )
    random_state: object = param(default=None, allowed=["random_state"], doc="Seeds the coordinate draws.")


@declare_parameters
class _GCDBase(_CoordinateDescentBase):
    """Greedy coordinate descent: the coordinate with the largest guaranteed decrease of the
    objective (the greedy rule of Section 4.2), for which the full gradient is maintained."""

    solver_name = "gcd"
    _engine = GreedyCoordinateEngine
    # A greedy step costs far more than a random one (it updates the gradient on every row it
    # touches), hence fewer sweeps.
    _default_sweeps = 5

    n_iter: int | None = param(
        default=None,
        allowed=[AT_LEAST_ONE, None],
        doc="Coordinate updates; None: 5 sweeps of (n_features + fit_intercept) updates.",
    )
    random_state: object = param(
        default=None,
        allowed=["random_state"],
        doc="Unused: GCD is deterministic (kept for the parameters every solver shares).",
    )
    early_stopping: bool = no_early_stopping("gcd picks its coordinates deterministically; set n_iter")


@declare_parameters
class SCDClassifier(LinearClassifierMixin, _SCDBase):
    """L1-regularised linear classifier by stochastic coordinate descent (SCD).

    Minimises sigma ||w||_1 + (1/m) sum_i l(<w, x_i> + b; y_i) (objective (1) of the L1 paper), the
    intercept unpenalised. An iteration updates one coordinate j, drawn uniformly at random, by
    Algorithm 2's step w_j <- s_{sigma/beta_j}(w_j - g_j / beta_j), with beta_j = sup l'' * mean_i
    x_ij^2 (the paper's beta on +-1 features; smaller, hence faster, on sparser ones; ``beta=
    "uniform"`` takes the paper's single beta); the method is parameter-free.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
    """

    loss: str = classifier_loss(SMOOTH_CLASSIFICATION_LOSSES, doc=_CLASSIFIER_LOSS_DOC)


@declare_parameters
class SCDRegressor(LinearRegressorMixin, _SCDBase):
    """L1-regularised linear regression (the Lasso) by stochastic coordinate descent; see
    ``SCDClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSRegressor``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
    """

    loss: str = regressor_loss(SMOOTH_REGRESSION_LOSSES, doc=_REGRESSOR_LOSS_DOC)


@declare_parameters
class GCDClassifier(LinearClassifierMixin, _GCDBase):
    """L1-regularised linear classifier by greedy coordinate descent (GCD).

    SCD's step (see ``SCDClassifier``) on the coordinate with the largest guaranteed decrease of the
    objective (the greedy rule of the L1 paper's Section 4.2), for which the full gradient is
    maintained; deterministic.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
        ``stop_reason_`` can be "converged" (no coordinate step changes w any more).
    """

    loss: str = classifier_loss(SMOOTH_CLASSIFICATION_LOSSES, doc=_CLASSIFIER_LOSS_DOC)


@declare_parameters
class GCDRegressor(LinearRegressorMixin, _GCDBase):
    """L1-regularised linear regression by greedy coordinate descent (GCD); see ``GCDClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSRegressor``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
        ``stop_reason_`` can be "converged" (no coordinate step changes w any more).
    """

    loss: str = regressor_loss(SMOOTH_REGRESSION_LOSSES, doc=_REGRESSOR_LOSS_DOC)


# -- mirror descent -------------------------------------------------------------------------------


@declare_parameters
class _MirrorDescentBase(_L1Base):
    """Algorithm 3 with the link of exponent ``_link_exponent`` (2: the identity, truncated
    gradient)."""

    streams = True

    eta: float | str = param(
        default="auto",
        allowed=[Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
        doc="The constant learning rate; the value used is eta_.",
        details="""The paper tunes it per data set (its Table 1 spans 5e-5 to 50); "auto" is the step
        of the paper's Proposition 4 with K = 1, 1 / (2 (p - 1) sup l'' max_i ||x_i||_p^2) with p the
        link's exponent (``dual_exponent_``): a scale from the theory, not a tuned value; tune it per
        data set as the paper did.""",
    )
    batch_size: int = param(
        default=1,
        allowed=[AT_LEAST_ONE],
        doc="Samples per iteration; their sub-gradients are averaged (the paper uses 1).",
    )
    n_iter: int | None = param(
        default=None, allowed=[AT_LEAST_ONE, None], doc="Iterations; None: 5 epochs, ceil(5 m / batch_size)."
    )
    fit_intercept: bool = param(
        default=True,
        allowed=["boolean"],
        doc="Learn an unpenalised intercept (a constant feature that is never truncated).",
    )
    random_state: object = param(
        default=None, allowed=["random_state"], doc="Seeds the sample draws (uniform, with replacement)."
    )

    def _link_exponent(self, n_features: int) -> int:
        raise NotImplementedError

    def _default_n_iter(self, m: int) -> int:
        return math.ceil(5 * m / self.batch_size)  # 5 epochs, as PGS

    def _make_engine(self, data, stats, targets, rng):
        return self._engine_over(InMemoryRows(data, stats, targets, self._sample_weight), rng)

    def _engine_over(self, rows: TrainingRows, rng) -> MirrorEngine:
        loss = self._stepping_loss()
        p = self._link_exponent(rows.n_features)
        if self.eta == "auto":
            # Proposition 4 bounds ||x_i||_p over every row: the smallest step over the blocks.
            eta = min(
                mirror_descent_step(loss, data, p, bool(self.fit_intercept))
                for data, _ in rows.kernel_blocks()
            )
        else:
            eta = float(self.eta)
        self.dual_exponent_ = p
        self.eta_ = eta
        data, targets = rows.template()
        return MirrorEngine(
            data,
            targets,
            loss=loss,
            epsilon=float(self.epsilon),
            sigma=float(self.sigma),
            eta=eta,
            p=p,
            batch_size=int(self.batch_size),
            fit_intercept=bool(self.fit_intercept),
            rng=rng,
            sampler=rows.sampler(int(self.batch_size), "replacement", rng),
            initial=self._initial_weights,
        )


@declare_parameters
class _SMIDASBase(_MirrorDescentBase):
    solver_name = "smidas"

    def _link_exponent(self, n_features: int) -> int:
        return dual_exponent(n_features)


@declare_parameters
class _TruncGradBase(_MirrorDescentBase):
    solver_name = "truncgrad"

    def _link_exponent(self, n_features: int) -> int:
        return 2  # the identity link


@declare_parameters
class SMIDASClassifier(LinearClassifierMixin, _SMIDASBase):
    """L1-regularised linear classifier by SMIDAS (stochastic mirror descent made sparse).

    Algorithm 3 of the L1 paper: a stochastic mirror-descent step on the dual vector theta with the
    p-norm link of eq. (12), p = ceil(2 ln n_features) (at least 2), then truncation of theta by
    eta * sigma, which keeps w sparse. The model is the last iterate.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
    eta_ : float
        The learning rate used.
    dual_exponent_ : int
        The exponent p of the link f^-1.
    """

    loss: str = classifier_loss()


@declare_parameters
class SMIDASRegressor(LinearRegressorMixin, _SMIDASBase):
    """L1-regularised linear regression by SMIDAS; see ``SMIDASClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_, eta_, dual_exponent_
        As for ``SMIDASClassifier``, with one output.
    """

    loss: str = regressor_loss()


@declare_parameters
class TruncGradClassifier(LinearClassifierMixin, _TruncGradBase):
    """L1-regularised linear classifier by truncated gradient.

    Langford et al. 2009, in the variant the L1 paper compares with in Section 4.2: a stochastic
    gradient step, then every weight shrinks by eta * sigma without crossing 0. It is SMIDAS with the
    identity link (p = 2); untouched weights are shrunk lazily. The model is the last iterate.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
    eta_ : float
        The learning rate used.
    dual_exponent_ : int
        Always 2: the identity link.
    """

    loss: str = classifier_loss()


@declare_parameters
class TruncGradRegressor(LinearRegressorMixin, _TruncGradBase):
    """L1-regularised linear regression by truncated gradient; see ``TruncGradClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_, eta_, dual_exponent_
        As for ``TruncGradClassifier``, with one output.
    """

    loss: str = regressor_loss()
