"""Data sets for the benchmarks: the real ones of ../shared/data and a synthetic RCV1-like set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# name -> (train file, test file or None); without a test file the set is split 75/25 (seed 0).
REAL_SETS = {
    "a9a": ("a9a.train.svm", "a9a.test.svm"),
    "w8a": ("w8a.svm", None),
    "ijcnn1": ("ijcnn1.train.svm", "ijcnn1.test.svm"),
    "rt_polarity": ("rt_polarity_unibi_tfidf.svm", None),
    "reuters_moneyfx": ("reuters_moneyfx.train.svm", "reuters_moneyfx.test.svm"),
    "agaricus": ("agaricus.train.svm", "agaricus.test.svm"),
}


def load_real(name: str):
    """(X_train, y_train, X_test, y_test) with labels in {-1, +1}."""
    train, test = REAL_SETS[name]
    X, y = load_svmlight_file(str(DATA_DIR / train))
    if test is None:
        idx = np.random.default_rng(0).permutation(X.shape[0])
        cut = int(0.75 * X.shape[0])
        X_test, y_test = X[idx[cut:]], y[idx[cut:]]
        X, y = X[idx[:cut]], y[idx[:cut]]
    else:
        X_test, y_test = load_svmlight_file(str(DATA_DIR / test), n_features=X.shape[1])
    classes = np.unique(y)
    return X.tocsr(), np.where(y == classes[1], 1.0, -1.0), X_test.tocsr(), np.where(
        y_test == classes[1], 1.0, -1.0
    )


def rcv1_like(n_samples=200_000, n_features=47_236, nnz_per_row=75, n_test=20_000, seed=0):
    """A synthetic stand-in for RCV1/CCAT: sparse, text-like, L2-normalised rows.

    Feature frequencies follow a Zipf law (a few common terms, a long tail), values are
    tf-idf-like (positive, heavier for rare terms), and labels come from a sparse linear "truth"
    with 5% label noise, so the Bayes accuracy is about 95% like CCAT's.
    Returns (X_train, y_train, X_test, y_test), float64 CSR, labels in {-1, +1}.
    """
    rng = np.random.default_rng(seed)
    m = n_samples + n_test
    freq = 1.0 / np.arange(1, n_features + 1) ** 1.1
    freq /= freq.sum()
    perm = rng.permutation(n_features)  # common terms are not the first columns
    # Draws collide on the common terms (summed below): 1.6 draws per distinct term gives about
    # nnz_per_row distinct terms per row at these sizes (measured: 75.6 for 75).
    row_nnz = np.clip(rng.poisson(1.6 * nnz_per_row, size=m), 5, None)
    indptr = np.concatenate([[0], np.cumsum(row_nnz)])
    cols = perm[rng.choice(n_features, size=indptr[-1], p=freq)]
    idf = np.log(1.0 / (freq[np.argsort(perm)] * nnz_per_row) + 1.0)
    vals = rng.exponential(1.0, size=indptr[-1]) * idf[cols]
    X = sp.csr_matrix((vals, cols, indptr), shape=(m, n_features))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / norms) @ X
    truth = rng.normal(size=n_features) * (rng.random(n_features) < 0.2)
    score = X @ truth
    y = np.where(score > np.median(score), 1.0, -1.0)
    flip = rng.random(m) < 0.05
    y[flip] = -y[flip]
    X = X.tocsr()
    return X[:n_samples], y[:n_samples], X[n_samples:], y[n_samples:]


def kdd_like(m: int = 494_021, n: int = 119, nnz_per_row: int = 20, seed: int = 0):
    """A synthetic set shaped like KDD Cup 99's 10% (494k rows, 119 one-hot and scaled features):
    ``nnz_per_row`` values in [0, 1) per row, labels from a linear rule with 5% noise; 20% of the
    rows held out as the test set. Canonical CSR, labels in {-1, +1}."""
    rng = np.random.default_rng(seed)
    cols = np.sort(np.argsort(rng.random((m, n)), axis=1)[:, :nnz_per_row], axis=1)
    X = sp.csr_matrix((rng.random(m * nnz_per_row), cols.ravel().astype(np.int32),
                       np.arange(0, m * nnz_per_row + 1, nnz_per_row)), shape=(m, n))
    score = X @ rng.normal(size=n)
    y = np.where(score > np.median(score), 1.0, -1.0)
    flip = rng.random(m) < 0.05
    y[flip] = -y[flip]
    cut = int(0.8 * m)
    return X[:cut], y[:cut], X[cut:], y[cut:]
