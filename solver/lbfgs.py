"""L-BFGS (scipy.optimize, method "L-BFGS-B") on PGS's smooth objectives: the PGS paper's baseline.

Objective, eq. (7) of the PGS paper, the same one PGS minimises (the intercept, when fitted, is the
weight of a constant feature 1 and sits inside the norm, as in PGS)::

    F(w) = sigma / (2 (p - 1)) * ||w||_p^2 + (1/m) * sum_i l(<w, x_i>; y_i),   p in (1, 2]

with a smooth loss l (logistic, squared, ...). grad F = sigma/(p-1) ||w||_p^(2-p) sgn(w)|w|^(p-1)
+ (1/m) X^T l'(Xw), continuous for every p in (1, 2], which is all L-BFGS needs. One function and
gradient evaluation is one pass over the data (``smooth_loss_gradient``, the shared loss table).

Tracing. The driver advances an engine in chunks of iterations, while scipy runs its loop to the
end. ``PausableLBFGS`` runs ``scipy.optimize.minimize`` in a worker thread whose iteration callback
waits for permission to go on, so ``run(n)`` performs exactly n more iterations of ONE L-BFGS run:
the iterates do not depend on where the checkpoints fall (the tests check this against a direct
scipy call), and the solver clock counts the iterations only. The thread ends when the optimizer
stops or, through a finaliser, when the engine is dropped.

Data accesses count the non-zeros of X once per function evaluation (the line search may need more
than one per iteration); ``samples_per_iteration`` is m.
"""

from __future__ import annotations

import threading
import weakref
from numbers import Real

import numpy as np
import scipy.optimize
from numba import njit
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import COMMON_CONSTRAINTS, LinearClassifierMixin, LinearModelBase, LinearRegressorMixin
from ._sparse import KernelData, row_extent
from .l1 import SMOOTH_CLASSIFICATION, SMOOTH_REGRESSION, loss_options
from .losses import LOSSES, loss_derivative, loss_value


@njit(cache=True)
def smooth_loss_gradient(X, y, w, code, eps, bias_value, grad):
    """(1/m) sum_i l(z_i; y_i) for z = Xw (+ bias_value * w[-1]), and its gradient into ``grad``."""
    data, indices = X[0], X[1]
    m = y.shape[0]
    bias_j = w.shape[0] - 1
    grad[:] = 0.0
    total = 0.0
    for i in range(m):
        start, end, base = row_extent(X, i)
        z = 0.0
        for pos in range(start, end):
            z += data[pos] * w[indices[pos - base]]
        if bias_value != 0.0:
            z += bias_value * w[bias_j]
        total += loss_value(code, z, y[i], eps)
        d = loss_derivative(code, z, y[i], eps)
        if d != 0.0:
            for pos in range(start, end):
                grad[indices[pos - base]] += d * data[pos]
            if bias_value != 0.0:
                grad[bias_j] += d * bias_value
    grad /= m
    return total / m


def pnorm_penalty(w: np.ndarray, p: float, sigma: float) -> tuple[float, np.ndarray]:
    """sigma / (2 (p - 1)) ||w||_p^2 and its gradient sigma / (p - 1) ||w||_p^(2-p) sgn(w) |w|^(p-1)."""
    if p == 2.0:
        return 0.5 * sigma * float(w @ w), sigma * w
    a = np.abs(w)
    amax = float(a.max(initial=0.0))
    if amax == 0.0:
        return 0.0, np.zeros_like(w)
    r = a / amax  # relative to the largest weight, so |w|^p cannot overflow
    norm = amax * float(np.sum(r**p)) ** (1.0 / p)
    value = sigma / (2.0 * (p - 1.0)) * norm**2
    grad = sigma / (p - 1.0) * norm * np.sign(w) * (a / norm) ** (p - 1.0)
    return value, grad


class _Counter:
    def __init__(self):
        self.evaluations = 0


def _objective(data: KernelData, y, *, code, eps, bias_value, p, sigma, counter: _Counter):
    """F and grad F for scipy; knows nothing of the engine (so the engine can be collected)."""
    buffer = np.empty(data.n_features + int(bias_value != 0.0))

    def fun(w):
        counter.evaluations += 1
        loss = smooth_loss_gradient(data, y, w, code, eps, bias_value, buffer)
        reg, reg_grad = pnorm_penalty(w, p, sigma)
        value, grad = loss + reg, buffer + reg_grad
        if not (np.isfinite(value) and np.isfinite(grad).all()):
            raise FloatingPointError(
                f"L-BFGS: the objective or its gradient overflowed at evaluation "
                f"{counter.evaluations}. Scale the features (e.g. StandardScaler) or the targets."
            )
        return value, grad

    return fun


class _Stop(Exception):
    pass


class PausableLBFGS:
    """``scipy.optimize.minimize(method="L-BFGS-B")`` in a thread that pauses between iterations.

    ``advance(n)`` lets it perform n more iterations and waits until it has (one thread handoff per
    call, not per iteration); it returns how many it did, fewer once the optimizer has stopped by
    itself (converged, line-search failure, maxiter), ``x`` being its last iterate. ``close()``
    ends a paused run.
    """

    def __init__(self, fun, x0: np.ndarray, options: dict):
        self.x = x0.copy()
        self.nit = 0
        self.message = ""
        self.finished = False
        self._budget = 0
        self._error: BaseException | None = None
        self._abort = False
        self._go = threading.Semaphore(0)
        self._done = threading.Semaphore(0)
        self._thread = threading.Thread(target=self._main, args=(fun, x0, options), daemon=True)
        self._started = False

    def _main(self, fun, x0, options):
        self._go.acquire()
        try:
            if not self._abort:
                result = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
                                                 callback=self._callback, options=options)
                self.x = result.x
                self.message = str(result.message)
        except _Stop:
            pass
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread by advance()
            self._error = exc
        finally:
            self.finished = True
            self._done.release()

    def _callback(self, intermediate_result):
        self.x = np.array(intermediate_result.x)  # scipy overwrites its array in place
        self.nit += 1
        if self.nit >= self._budget:
            self._done.release()
            self._go.acquire()
            if self._abort:
                raise _Stop

    def advance(self, n: int) -> int:
        if self.finished:
            return 0
        before = self.nit
        self._budget += n
        if not self._started:
            self._started = True
            self._thread.start()
        self._go.release()
        self._done.acquire()
        if self._error is not None:
            raise self._error
        return self.nit - before

    def close(self) -> None:
        if self._started and not self.finished:
            self._abort = True
            self._go.release()


def _close_all(steppers):
    for stepper in steppers:
        stepper.close()


class LBFGSEngine:
    """One L-BFGS run per output column (one-vs-rest), advanced in lockstep, one iteration at a time.

    ``converged`` becomes true when every run has stopped by itself.
    """

    def __init__(self, data: KernelData, targets: np.ndarray, *, loss_code: int, epsilon: float,
                 p: float, sigma: float, fit_intercept: bool, tol: float, max_iter: int):
        m = targets.shape[1]
        n_weights = data.n_features + int(fit_intercept)
        self._counter = _Counter()
        options = {"maxiter": max_iter, "maxfun": max(15000, 50 * max_iter), "gtol": tol,
                   "ftol": tol}
        self._steppers = [
            PausableLBFGS(
                _objective(data, np.ascontiguousarray(y, dtype=np.float64), code=loss_code,
                           eps=epsilon, bias_value=1.0 if fit_intercept else 0.0, p=p, sigma=sigma,
                           counter=self._counter),
                np.zeros(n_weights), options,
            )
            for y in targets
        ]
        weakref.finalize(self, _close_all, self._steppers)
        self._pass_cost = int(data.indptr[-1])
        self.samples_per_iteration = m
        self.t = 0
        self.converged = False

    @property
    def data_accesses(self) -> int:
        return self._counter.evaluations * self._pass_cost

    def run(self, n: int) -> None:
        done = [stepper.advance(n) for stepper in self._steppers if not stepper.finished]
        self.t += max(done, default=0)
        self.converged = all(stepper.finished for stepper in self._steppers)

    def output_weights(self) -> np.ndarray:
        return np.stack([stepper.x for stepper in self._steppers])

    def messages(self) -> list[str]:
        return [stepper.message for stepper in self._steppers]


class _LBFGSBase(LinearModelBase):
    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "p": [Interval(Real, 1.0, 2.0, closed="right")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "epsilon": [Interval(Real, 0.0, None, closed="neither")],
    }

    def __init__(
        self,
        loss="logistic",
        *,
        p=2.0,
        sigma=1e-5,
        n_iter=None,
        tol=1e-10,
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
        return 1000

    def _make_engine(self, data, targets, rng):
        n_iter = self.n_iter if self.n_iter is not None else self._default_n_iter(targets.shape[1])
        return LBFGSEngine(
            data, targets, loss_code=LOSSES[self.loss].code, epsilon=float(self.epsilon),
            p=float(self.p), sigma=float(self.sigma), fit_intercept=bool(self.fit_intercept),
            tol=float(self.tol), max_iter=int(n_iter),
        )

    def _penalty(self, w: np.ndarray) -> float:
        """sigma / (2 (p - 1)) ||w||_p^2 of eq. (7); the intercept is regularised like any weight."""
        return pnorm_penalty(w, float(self.p), float(self.sigma))[0]


_LBFGS_DOC = """

    The PGS paper's baseline (its Figure 5 and Table II): scipy's L-BFGS-B on eq. (7),
    ``sigma / (2 (p-1)) ||w||_p^2 + (1/m) sum_i l(<w, x_i>; y_i)``, for p in (1, 2], the same
    objective as ``{pgs}`` (bias included in the norm), so their traces compare directly.
    Multiclass problems are one-vs-rest.

    Parameters
    ----------
    loss : {losses}, default="{default}"
        A smooth loss.
    p : float in (1, 2], default=2.0
        The norm of the regulariser, as for PGS.
    sigma : float > 0, default=1e-5
        Regularisation weight.
    n_iter : int >= 1 or None, default=None
        The most L-BFGS iterations (scipy's maxiter); None means 1000. The run stops earlier
        (``stop_reason_ == "converged"``) when scipy's tests ``tol`` are met.
    tol : float >= 0, default=1e-10
        scipy's ``gtol`` (largest gradient component) and ``ftol`` (relative decrease per
        iteration).
    fit_intercept : bool, default=True
        Learn a bias as the weight of a constant feature 1, regularised like the others (as PGS).
    random_state : None, int or RandomState, default=None
        Unused: L-BFGS is deterministic (kept for the parameters every solver shares).
    epsilon : float > 0, default=1.0
        Width of the quadratic part of the huber loss (unused by the other losses).
    target_score, time_budget, checkpoint_growth, checkpoint_interval
        As for ``PGSClassifier``.

    Attributes
    ----------
    coef_, intercept_, n_iter_, trace_, stop_reason_, solver_seconds_
        As for ``PGSClassifier``; ``trace_`` also records ``data_accesses`` (non-zeros of X times
        function evaluations) and ``nnz_weights``.
    """


class LBFGSClassifier(LinearClassifierMixin, _LBFGSBase):
    __doc__ = "Linear classifier trained by L-BFGS on PGS's objective." + _LBFGS_DOC.format(
        pgs="PGSClassifier", losses=loss_options(SMOOTH_CLASSIFICATION), default="logistic")

    _parameter_constraints = {
        **_LBFGSBase._parameter_constraints,
        "loss": [StrOptions(set(SMOOTH_CLASSIFICATION))],
    }


class LBFGSRegressor(LinearRegressorMixin, _LBFGSBase):
    __doc__ = "Linear regression trained by L-BFGS on PGS's objective." + _LBFGS_DOC.format(
        pgs="PGSRegressor", losses=loss_options(SMOOTH_REGRESSION), default="squared")

    _parameter_constraints = {
        **_LBFGSBase._parameter_constraints,
        "loss": [StrOptions(set(SMOOTH_REGRESSION))],
    }

    def __init__(
        self,
        loss="squared",
        *,
        p=2.0,
        sigma=1e-5,
        n_iter=None,
        tol=1e-10,
        fit_intercept=True,
        random_state=None,
        epsilon=1.0,
        target_score=None,
        time_budget=None,
        checkpoint_growth=1.25,
        checkpoint_interval=1.0,
    ):
        self._store_params(locals())

