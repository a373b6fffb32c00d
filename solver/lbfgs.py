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

import numpy as np
import scipy.optimize
from numba import njit

from ._sparse import KernelData, row_extent
from .compiling import compile_for
from .losses import UNWEIGHTED, Loss, loss_derivative, loss_value, row_weight
from .penalties import pnorm_penalty


@njit(cache=True)
def smooth_loss_gradient(X, y, sample_weight, w, code, eps, bias_value, grad):
    """(1/m) sum_i c_i l(z_i; y_i) for z = Xw (+ bias_value * w[-1]), and its gradient into
    ``grad`` (c_i = ``row_weight``: 1 for an unweighted fit)."""
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
        c = row_weight(sample_weight, i)
        total += c * loss_value(code, z, y[i], eps)
        d = c * loss_derivative(code, z, y[i], eps)
        if d != 0.0:
            for pos in range(start, end):
                grad[indices[pos - base]] += d * data[pos]
            if bias_value != 0.0:
                grad[bias_j] += d * bias_value
    grad /= m
    return total / m


class _Counter:
    def __init__(self):
        self.evaluations = 0


def _objective(data: KernelData, y, sample_weight, *, code, eps, bias_value, p, sigma, counter: _Counter):
    """F and grad F for scipy; knows nothing of the engine (so the engine can be collected)."""
    buffer = np.empty(data.n_features + int(bias_value != 0.0))

    def fun(w):
        counter.evaluations += 1
        loss = smooth_loss_gradient(data, y, sample_weight, w, code, eps, bias_value, buffer)
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
                result = scipy.optimize.minimize(
                    fun, x0, jac=True, method="L-BFGS-B", callback=self._callback, options=options
                )
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

    def __init__(
        self,
        data: KernelData,
        targets: np.ndarray,
        *,
        loss: Loss,
        epsilon: float,
        p: float,
        sigma: float,
        fit_intercept: bool,
        tol: float,
        max_iter: int,
        initial: np.ndarray | None = None,
        sample_weight: np.ndarray = UNWEIGHTED,
    ):
        """``initial``: the weights to start from, one row per output (a warm start); None: 0.
        ``sample_weight``: the rows' weights in the loss (empty: unweighted)."""
        m = targets.shape[1]
        n_weights = data.n_features + int(fit_intercept)
        self._counter = _Counter()
        options = {"maxiter": max_iter, "maxfun": max(15000, 50 * max_iter), "gtol": tol, "ftol": tol}
        self._steppers = [
            PausableLBFGS(
                _objective(
                    data,
                    np.ascontiguousarray(y, dtype=np.float64),
                    sample_weight,
                    code=loss.code,
                    eps=epsilon,
                    bias_value=1.0 if fit_intercept else 0.0,
                    p=p,
                    sigma=sigma,
                    counter=self._counter,
                ),
                np.zeros(n_weights) if initial is None else np.array(initial[o], dtype=np.float64),
                options,
            )
            for o, y in enumerate(targets)
        ]
        weakref.finalize(self, _close_all, self._steppers)
        # What compile() needs: the types smooth_loss_gradient is called with.
        self._kernel_args = (
            data,
            np.ascontiguousarray(targets[0], dtype=np.float64),
            UNWEIGHTED,
            np.zeros(n_weights),
            loss.code,
            float(epsilon),
            1.0 if fit_intercept else 0.0,
            np.zeros(n_weights),
        )
        self._pass_cost = int(data.indptr[-1])
        self.samples_per_iteration = m
        self.t = 0
        self.converged = False

    @property
    def data_accesses(self) -> int:
        return self._counter.evaluations * self._pass_cost

    def compile(self) -> None:
        compile_for(smooth_loss_gradient, *self._kernel_args)

    def run(self, n: int) -> None:
        done = [stepper.advance(n) for stepper in self._steppers if not stepper.finished]
        self.t += max(done, default=0)
        self.converged = all(stepper.finished for stepper in self._steppers)

    def output_weights(self) -> np.ndarray:
        return np.stack([stepper.x for stepper in self._steppers])

    def messages(self) -> list[str]:
        return [stepper.message for stepper in self._steppers]
