"""Small data sets and helpers the solver tests share."""

from __future__ import annotations

import io

import numpy as np
from sklearn.datasets import make_classification

from solver import load_model
from solver.losses import LOSSES


def binary_problem(seed=0, n=300):
    """A binary classification problem with 8 dense features."""
    return make_classification(n_samples=n, n_features=8, random_state=seed)


def sparse_problem(loss, seed=0, m=40, n=12):
    """(X, y, rng): X about 40% non-zero, y in {-1, +1} for classification losses, else real."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.4)
    if LOSSES[loss].classification:
        y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    else:
        y = rng.normal(size=m)
    return X, y, rng


def kernel_problem(seed=0, m=40, n=6):
    """(X, y): about 60% non-zero, labels the sign of x_0 x_1 plus noise (no line separates them)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.6)
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=m) > 0, 1.0, -1.0)
    return X, y


def l1_problem(loss, seed=0, m=40, n=12):
    """``sparse_problem`` with an all-zero column (index 3), whose weight must stay 0."""
    X, y, rng = sparse_problem(loss, seed, m, n)
    X[:, 3] = 0.0
    return X, y, rng


def rel_err(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


class ScriptedDraws:
    """Stands in for the engine's Generator: ``integers`` returns a fixed sequence, in order."""

    def __init__(self, values):
        self.values = np.asarray(values)
        self.used = 0

    def integers(self, low, high, size):
        out = self.values[self.used : self.used + size]
        assert len(out) == size and out.min() >= low and out.max() < high
        self.used += size
        return out


def objective_gap(est, X, y, fopt):
    """(F(w) - F*) / F* for a fitted linear estimator's training objective F on (X, y)."""
    w = np.r_[np.ravel(est.coef_), np.ravel(est.intercept_)]
    return (est._objective(X, y, w) - fopt) / fopt


def saved_and_loaded(meta, arrays):
    """``load_model`` on an export stored by np.savez and read back with allow_pickle=False."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as stored:
        return load_model(meta, dict(stored))


def run_in_chunks(engine, chunks):
    """Advance ``engine`` by each number of ``chunks`` in turn; the first output's weights."""
    for n in chunks:
        engine.run(n)
    return engine.output_weights()[0]
