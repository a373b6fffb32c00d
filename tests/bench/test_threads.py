"""bench.threads: the parallel PGS minibatch reproduces its weights for a given random_state and
thread count, and with one part is the serial kernel. Tiny problems, no timing."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from bench.threads import fit, part_bounds
from solver._sparse import prepare


@pytest.fixture(params=["csr", "dense"])
def problem(request):
    rng = np.random.default_rng(0)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=1)
    y = np.where(X @ rng.normal(size=40) > 0, 1, -1)
    return (X if request.param == "csr" else X.toarray()), y


def weights(est) -> np.ndarray:
    return np.concatenate([est.coef_.ravel(), est.intercept_])


@pytest.mark.parametrize("p", [2.0, 1.8])
def test_threaded_runs_repeat_and_one_part_is_the_serial_kernel(problem, p):
    X, y = problem
    params = {"p": p, "batch_size": 16, "sigma": 1e-3, "n_iter": 60, "random_state": 3}
    serial = weights(fit(None, X, y, **params))
    one_part = weights(fit(1, X, y, **params))
    first, second = (weights(fit(2, X, y, **params)) for _ in range(2))
    np.testing.assert_array_equal(one_part, serial)
    np.testing.assert_array_equal(first, second)
    # Two parts change only the order of the sum S = sum |lambda_j|^q: rounding.
    np.testing.assert_allclose(first, serial, rtol=1e-9, atol=1e-12)
    assert np.any(serial != 0.0)


def test_bounds_cover_every_coordinate_once_and_split_the_work(problem):
    X, _ = problem
    data, _ = prepare(X)
    bounds = part_bounds(data, 41, 2)
    assert bounds[0] == 0 and bounds[-1] == 41
    assert np.all(np.diff(bounds.astype(np.int64)) > 0)
    # The kernel's work per coordinate: its stored values (every row's, dense), and the constant
    # feature in every row.
    work = np.full(41, float(X.shape[0]))
    if sp.issparse(X):
        work[:40] = np.bincount(X.indices, minlength=40)
    assert 0.3 < work[: bounds[1]].sum() / work.sum() < 0.7
