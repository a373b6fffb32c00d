"""Data sets for the benchmarks: the real ones of ../shared/data and a synthetic RCV1-like set."""

from __future__ import annotations

from collections.abc import Iterator
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
    return (
        X.tocsr(),
        np.where(y == classes[1], 1.0, -1.0),
        X_test.tocsr(),
        np.where(y_test == classes[1], 1.0, -1.0),
    )


def _zipf_terms(n_features: int) -> np.ndarray:
    """Term frequencies of the RCV1-like sets: a Zipf law (a few common terms, a long tail)."""
    freq = 1.0 / np.arange(1, n_features + 1) ** 1.1
    return freq / freq.sum()


def _text_rows(
    rng: np.random.Generator, m: int, freq: np.ndarray, perm: np.ndarray, nnz_per_row: int
) -> sp.csr_matrix:
    """``m`` L2-normalised tf-idf-like rows: terms drawn by ``freq`` (column ``perm[k]`` for the
    k-th commonest), values positive and heavier for rare terms."""
    n_features = len(freq)
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
    return (sp.diags(1.0 / norms) @ X).tocsr()


def rcv1_like(n_samples=200_000, n_features=47_236, nnz_per_row=75, n_test=20_000, seed=0):
    """A synthetic stand-in for RCV1/CCAT: sparse, text-like, L2-normalised rows.

    Feature frequencies follow a Zipf law (a few common terms, a long tail), values are
    tf-idf-like (positive, heavier for rare terms), and labels come from a sparse linear "truth"
    with 5% label noise, so the Bayes accuracy is about 95% like CCAT's.
    Returns (X_train, y_train, X_test, y_test), float64 CSR, labels in {-1, +1}.
    """
    rng = np.random.default_rng(seed)
    m = n_samples + n_test
    freq = _zipf_terms(n_features)
    perm = rng.permutation(n_features)  # common terms are not the first columns
    X = _text_rows(rng, m, freq, perm, nnz_per_row)
    truth = rng.normal(size=n_features) * (rng.random(n_features) < 0.2)
    score = X @ truth
    y = np.where(score > np.median(score), 1.0, -1.0)
    flip = rng.random(m) < 0.05
    y[flip] = -y[flip]
    return X[:n_samples], y[:n_samples], X[n_samples:], y[n_samples:]


class RCV1LikeStream:
    """The RCV1-like set of :func:`rcv1_like` drawn block by block, for sets larger than memory.

    The terms, the truth and the label threshold come from ``seed`` alone; block ``b`` of the
    ``part`` "train" or "test" from ``SeedSequence([seed, part, b])``. So any number of rows is
    generated in bounded memory (one block), the first m rows of a larger set are the set of m
    rows (m a multiple of ``block_rows``: a shorter last block draws other rows), and the test
    rows are never training rows. The threshold is the median score of a
    calibration block of its own (the whole set's median is not known before it is drawn), so
    the classes are balanced within sampling noise.
    """

    PARTS = {"train": 0, "test": 1, "calibration": 2}

    def __init__(
        self, seed: int = 0, n_features: int = 47_236, nnz_per_row: int = 75, block_rows: int = 100_000
    ) -> None:
        self.seed, self.nnz_per_row, self.block_rows = seed, nnz_per_row, block_rows
        rng = np.random.default_rng(np.random.SeedSequence([seed]))
        self.freq = _zipf_terms(n_features)
        self.perm = rng.permutation(n_features)
        self.truth = rng.normal(size=n_features) * (rng.random(n_features) < 0.2)
        calibration = self._rows(self.PARTS["calibration"], 0, block_rows)[0]
        self.threshold = float(np.median(calibration @ self.truth))

    def _rows(self, part: int, block: int, m: int) -> tuple[sp.csr_matrix, np.random.Generator]:
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, part, block]))
        return _text_rows(rng, m, self.freq, self.perm, self.nnz_per_row), rng

    def blocks(self, n_rows: int, part: str = "train") -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
        """(X, y) blocks of ``block_rows`` rows (the last one shorter), ``n_rows`` in all."""
        for block, start in enumerate(range(0, n_rows, self.block_rows)):
            X, rng = self._rows(self.PARTS[part], block, min(self.block_rows, n_rows - start))
            y = np.where(X @ self.truth > self.threshold, 1.0, -1.0)
            flip = rng.random(X.shape[0]) < 0.05
            y[flip] = -y[flip]
            yield X, y


def svmlight_text(X: sp.csr_matrix, y: np.ndarray, decimals: int = 7) -> bytes:
    """Rows as svmlight text (1-based sorted indices, values in [0, 10) with ``decimals`` fixed
    decimals, labels +1/-1), formatted by NumPy a character at a time: scikit-learn's
    dump_svmlight_file writes every value with 17 digits at about 0.35 ms a row, which makes
    the text of 100 million rows a matter of days.
    """
    X = X.sorted_indices()
    if X.nnz and (X.data.min() < 0 or X.data.max() >= 10):
        raise ValueError("values must lie in [0, 10)")
    n, nnz = X.shape[0], X.nnz
    digits = len(str(X.shape[1]))
    width = 1 + digits + 3 + decimals  # " <index>:<d>.<decimals>"
    # One fixed-width token per non-zero; the index's leading zeros are cut out at the end.
    index = (X.indices + 1).astype(np.int32)
    powers = (10 ** np.arange(digits - 1, -1, -1)).astype(np.int32)
    tokens = np.empty((nnz, width), dtype=np.uint8)
    tokens[:, 0] = ord(" ")
    tokens[:, 1 : 1 + digits] = (index[:, None] // powers) % 10 + ord("0")
    tokens[:, 1 + digits] = ord(":")
    fixed = np.rint(X.data * 10**decimals).astype(np.int64)
    tokens[:, 2 + digits] = fixed // 10**decimals + ord("0")
    tokens[:, 3 + digits] = ord(".")
    tokens[:, 4 + digits :] = (fixed[:, None] // 10 ** np.arange(decimals - 1, -1, -1)) % 10 + ord("0")
    kept = np.ones((nnz, width), dtype=bool)
    kept[:, 1:digits] = index[:, None] >= powers[:-1]
    # Each row: a label slot ("+1"/"-1"), its tokens, an end-of-line slot; padding cut out.
    slots = np.zeros((nnz + 2 * n, width), dtype=np.uint8)
    keep = np.zeros(slots.shape, dtype=bool)
    rows = np.arange(n)
    label, end = X.indptr[:-1] + 2 * rows, X.indptr[1:] + 2 * rows + 1
    at = np.ones(len(slots), dtype=bool)
    at[label] = at[end] = False
    slots[at], keep[at] = tokens, kept
    slots[label, 0] = np.where(y > 0, ord("+"), ord("-"))
    slots[label, 1] = ord("1")
    keep[label, :2] = True
    slots[end, 0] = ord("\n")
    keep[end, 0] = True
    return slots[keep].tobytes()


def kdd_like(m: int = 494_021, n: int = 119, nnz_per_row: int = 20, seed: int = 0):
    """A synthetic set shaped like KDD Cup 99's 10% (494k rows, 119 one-hot and scaled features):
    ``nnz_per_row`` values in [0, 1) per row, labels from a linear rule with 5% noise; 20% of the
    rows held out as the test set. Canonical CSR, labels in {-1, +1}."""
    rng = np.random.default_rng(seed)
    cols = np.sort(np.argsort(rng.random((m, n)), axis=1)[:, :nnz_per_row], axis=1)
    X = sp.csr_matrix(
        (
            rng.random(m * nnz_per_row),
            cols.ravel().astype(np.int32),
            np.arange(0, m * nnz_per_row + 1, nnz_per_row),
        ),
        shape=(m, n),
    )
    score = X @ rng.normal(size=n)
    y = np.where(score > np.median(score), 1.0, -1.0)
    flip = rng.random(m) < 0.05
    y[flip] = -y[flip]
    cut = int(0.8 * m)
    return X[:cut], y[:cut], X[cut:], y[cut:]
