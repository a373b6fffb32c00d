"""SDCAClassifier and SDCARegressor: stochastic dual coordinate ascent (Shalev-Shwartz & Zhang,
JMLR 2013) on the L2-regularised objective PGS minimises at p = 2 (``solver.sdca``)."""

from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import LOSSES
from ..parameters import declare_parameters, param
from ..penalties import l2_penalty
from ..sdca import SDCA_LOSSES, SDCAEngine
from .base import ConstantFeatureIntercept, LinearModelBase
from .constraints import AT_LEAST_ONE, POSITIVE, classifier_loss, regressor_loss
from .early_stopping import no_early_stopping
from .tasks import LinearClassifierMixin, LinearRegressorMixin


@declare_parameters
class _SDCABase(ConstantFeatureIntercept, LinearModelBase):
    """``sigma/2 ||w||^2 + (1/m) sum_i c_i l(<w, x_i>; y_i)`` (the bias's weight included in the
    norm): eq. (1) of the SDCA paper with its lambda = sigma, and eq. (7) of the PGS paper at p = 2."""

    solver_name = "sdca"
    # A warm start begins at the dual point the weights imply (solver.sdca.dual_start).
    warm_starts = True

    n_iter: int | None = param(
        default=None,
        allowed=[AT_LEAST_ONE, None],
        doc="The most epochs (passes over a fresh random permutation of the rows); None: 1000.",
        details='A cap, not a schedule: the run stops earlier (stop_reason_ == "converged") once '
        "the duality gap is at most tol * P(0). The epochs that takes grow like 1 + R^2 / (sigma m) "
        "(R the largest row norm): a few where sigma m is large, hundreds where it is far below 1.",
    )
    tol: float = param(
        default=1e-4,
        allowed=[Interval(Real, 0.0, None, closed="left")],
        doc="Stop once the duality gap P(w) - D(alpha), checked after every epoch, is at most tol "
        "times P(0) (the zero model's objective).",
        details="The gap bounds P(w) - P(w*), so the fitted objective is within tol * P(0) of the "
        "optimum. SDCA's own stop on the training objective, not early stopping's least gain.",
    )
    early_stopping: bool = no_early_stopping("sdca stops by its own duality gap on the training objective")
    random_state: object = param(
        default=None, allowed=["random_state"], doc="Seeds the permutation of the rows drawn for each epoch."
    )
    intercept_scaling: float | str = param(
        default="auto",
        allowed=[POSITIVE, StrOptions({"auto"})],
        doc="s, the value of the constant feature; the intercept is b = s w_b.",
        details="""The intercept is thus regularised as sigma / 2 (b / s)^2 (LIBLINEAR's convention;
        s = 1 is LIBLINEAR's default). "auto" takes the root mean square of the non-zero feature
        values, as PGS does: 1 for binary features, about 0.15 for L2-normalised text, where s = 1
        would double R^2 = max ||x_i||^2, on which the epochs SDCA needs depend (the SDCA paper's
        rates). ``intercept_scaling_`` holds the value used.""",
    )

    def _default_n_iter(self, m: int) -> int:
        # Enough for the gap rule to end the run at sigma m ~ 1e-3 on scaled data (the smooth
        # losses' linear rate); the hinge's sublinear rate may still end it here, near the optimum.
        return 1000

    def _make_engine(self, data, stats, targets, rng):
        self._set_constant_feature(stats)
        return SDCAEngine(
            data,
            targets,
            loss=LOSSES[self.loss],
            sigma=float(self.sigma),
            fit_intercept=bool(self.fit_intercept),
            tol=float(self.tol),
            intercept_scaling=self.intercept_scaling_,
            rng=rng,
            initial=self._initial_weights,
            sample_weight=self._sample_weight,
        )

    def _penalty(self, w):
        """sigma/2 ||(coef, b / s)||^2: the intercept b is the weight b / s of the constant
        feature s, regularised like any weight."""
        return l2_penalty(self._regularised_weights(w), float(self.sigma))


_CLASSIFICATION = tuple(name for name in SDCA_LOSSES if LOSSES[name].classification)
_REGRESSION = tuple(name for name in SDCA_LOSSES if LOSSES[name].regression)


@declare_parameters
class SDCAClassifier(LinearClassifierMixin, _SDCABase):
    """Linear classifier trained by stochastic dual coordinate ascent (Shalev-Shwartz & Zhang, 2013).

    Minimises ``sigma/2 ||w||^2 + (1/m) sum_i c_i l(<w, x_i>; y_i)``, the objective of
    ``PGSClassifier(p=2)`` and ``LBFGSClassifier(p=2)`` (the bias's weight included in the norm), by exact
    maximisation of the dual along one row at a time, every row once per epoch in a random order;
    stops at a duality gap of ``tol`` times P(0). Multiclass problems are one-vs-rest.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``n_iter_`` counts epochs, and ``trace_`` also records
        ``duality_gap``, ``data_accesses`` and ``nnz_weights``.
    intercept_scaling_ : float
        The value of the constant feature used (0.0 without an intercept).
    """

    loss: str = classifier_loss(_CLASSIFICATION, doc="A loss l(z; y), y in {-1, +1}, with an SDCA step.")


@declare_parameters
class SDCARegressor(LinearRegressorMixin, _SDCABase):
    """Linear regression (ridge) trained by stochastic dual coordinate ascent; see ``SDCAClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_, intercept_scaling_
        As for ``PGSRegressor``; ``trace_`` also records ``duality_gap``.
    """

    loss: str = regressor_loss(_REGRESSION, doc="The squared loss (z - y)^2.")
