"""LBFGSClassifier and LBFGSRegressor: scipy's L-BFGS-B on PGS's objective, the PGS paper's baseline
(its Figure 5 and Table II), over the pausable run of ``solver.lbfgs``."""

from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval

from ..lbfgs import LBFGSEngine
from ..losses import LOSSES, SMOOTH_CLASSIFICATION_LOSSES, SMOOTH_REGRESSION_LOSSES
from ..parameters import declare_parameters, param
from ..penalties import pnorm_penalty
from .base import LinearModelBase
from .constraints import AT_LEAST_ONE, classifier_loss, regressor_loss
from .early_stopping import no_early_stopping
from .tasks import LinearClassifierMixin, LinearRegressorMixin


@declare_parameters
class _LBFGSBase(LinearModelBase):
    """Eq. (7) of the PGS paper, ``sigma / (2 (p-1)) ||w||_p^2 + (1/m) sum_i l(<w, x_i>; y_i)``, the
    objective PGS minimises (bias included in the norm), so that their traces compare directly."""

    solver_name = "lbfgs"
    warm_starts = True

    p: float = param(
        default=2.0,
        allowed=[Interval(Real, 1.0, 2.0, closed="right")],
        doc="The norm of the regulariser, as for PGS.",
    )
    n_iter: int | None = param(
        default=None,
        allowed=[AT_LEAST_ONE, None],
        doc="The most L-BFGS iterations (scipy's maxiter); None: 1000.",
        details='The run stops earlier (stop_reason_ == "converged") when scipy\'s tests ``tol`` are met.',
    )
    tol: float = param(
        default=1e-10,
        allowed=[Interval(Real, 0.0, None, closed="left")],
        doc="scipy's gtol (largest gradient component) and ftol (relative decrease per iteration).",
        details="L-BFGS's own stop on the training objective, not early stopping's least gain.",
    )
    early_stopping: bool = no_early_stopping(
        "lbfgs is deterministic and stops by its own tol on the training objective"
    )
    random_state: object = param(
        default=None,
        allowed=["random_state"],
        doc="Unused: L-BFGS is deterministic (kept for the parameters every solver shares).",
    )

    def _default_n_iter(self, m: int) -> int:
        return 1000

    def _make_engine(self, data, stats, targets, rng):
        n_iter = self.n_iter if self.n_iter is not None else self._default_n_iter(targets.shape[1])
        return LBFGSEngine(
            data,
            targets,
            loss=LOSSES[self.loss],
            epsilon=float(self.epsilon),
            p=float(self.p),
            sigma=float(self.sigma),
            fit_intercept=bool(self.fit_intercept),
            tol=float(self.tol),
            max_iter=int(n_iter),
            initial=self._initial_weights,
            sample_weight=self._sample_weight,
        )

    def _penalty(self, w):
        """sigma / (2 (p - 1)) ||w||_p^2 of eq. (7); the intercept is regularised like any weight."""
        return pnorm_penalty(w, float(self.p), float(self.sigma))[0]


@declare_parameters
class LBFGSClassifier(LinearClassifierMixin, _LBFGSBase):
    """Linear classifier trained by L-BFGS on PGS's objective, eq. (7) of the PGS paper.

    The PGS paper's baseline (its Figure 5 and Table II): scipy's L-BFGS-B on
    ``sigma / (2 (p-1)) ||w||_p^2 + (1/m) sum_i l(<w, x_i>; y_i)``, for p in (1, 2], the same
    objective as ``PGSClassifier`` (bias included in the norm), so their traces compare directly.
    Multiclass problems are one-vs-rest.

    Attributes
    ----------
    coef_, intercept_, classes_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` (non-zeros of X times
        function evaluations) and ``nnz_weights``.
    """

    loss: str = classifier_loss(SMOOTH_CLASSIFICATION_LOSSES, doc="A smooth loss l(z; y), y in {-1, +1}.")


@declare_parameters
class LBFGSRegressor(LinearRegressorMixin, _LBFGSBase):
    """Linear regression trained by L-BFGS on PGS's objective; see ``LBFGSClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSRegressor``; ``trace_`` also records ``data_accesses`` and ``nnz_weights``.
    """

    loss: str = regressor_loss(SMOOTH_REGRESSION_LOSSES, doc="A smooth loss l(z; y): squared or huber.")
