"""Data sets for the benchmarks: the real ones of ../shared/data and a synthetic RCV1-like set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numba
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


def load_pair(train: str, test: str | None):
    """(X_train, y_train, X_test, y_test) of the shared data's files, labels as stored: the test
    file's rows, or without one a seeded 25 % of the training file's."""
    X, y = load_svmlight_file(str(DATA_DIR / train))
    if test is None:
        idx = np.random.default_rng(0).permutation(X.shape[0])
        cut = int(0.75 * X.shape[0])
        X_test, y_test = X[idx[cut:]], y[idx[cut:]]
        X, y = X[idx[:cut]], y[idx[:cut]]
    else:
        X_test, y_test = load_svmlight_file(str(DATA_DIR / test), n_features=X.shape[1])
    return X.tocsr(), y, X_test.tocsr(), y_test


def load_real(name: str):
    """(X_train, y_train, X_test, y_test) with labels in {-1, +1}."""
    X, y, X_test, y_test = load_pair(*REAL_SETS[name])
    classes = np.unique(y)
    return X, np.where(y == classes[1], 1.0, -1.0), X_test, np.where(y_test == classes[1], 1.0, -1.0)


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
    """RCV1-like rows (the distribution of :func:`rcv1_like`) drawn block by block by a compiled
    kernel, for sets larger than memory: 100 million rows in minutes.

    The terms, the truth and the label threshold come from ``seed`` alone; block ``b`` of the
    ``part`` "train" or "test" from ``SeedSequence([seed, part, b])``. So any number of rows is
    generated in bounded memory (one block), the first m rows of a larger set are the set of m
    rows (m a multiple of ``block_rows``: a shorter last block draws other rows), and the test
    rows are never training rows. The threshold is the median score of a calibration block of
    its own (the whole set's median is not known before it is drawn), so the classes are
    balanced within sampling noise.

    Each row draws Poisson(``draws_per_nnz`` x ``nnz_per_row``) terms (at least 5) by the Zipf
    frequencies (Walker's alias table: one uniform a draw, where ``rng.choice(p=...)`` costs a
    binary search), sums repeated terms, and is L2-normalised; ``draws_per_nnz`` is what makes
    the mean of distinct terms about ``nnz_per_row`` (1.6 at 75, 1.25 at 20: common terms
    collide less often in a shorter row).
    """

    PARTS = {"train": 0, "test": 1, "calibration": 2}

    def __init__(
        self,
        seed: int = 0,
        n_features: int = 47_236,
        nnz_per_row: int = 75,
        block_rows: int = 100_000,
        draws_per_nnz: float = 1.6,
    ) -> None:
        self.seed, self.nnz_per_row, self.block_rows = seed, nnz_per_row, block_rows
        self.n_features, self.draws = n_features, draws_per_nnz * nnz_per_row
        rng = np.random.default_rng(np.random.SeedSequence([seed]))
        freq = _zipf_terms(n_features)
        self.prob, self.alias = _alias_table(freq)
        self.perm = rng.permutation(n_features).astype(np.int32)
        # idf by term rank (the k-th commonest term is column perm[k]), truth by column.
        self.idf = np.log(1.0 / (freq * nnz_per_row) + 1.0)
        self.truth = rng.normal(size=n_features) * (rng.random(n_features) < 0.2)
        self.threshold = 0.0
        self.threshold = float(np.median(self._draw(self.PARTS["calibration"], 0, block_rows)[1]))

    def _draw(self, part: int, block: int, m: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """Block ``block`` of ``part``: its rows, their scores, and which labels are flipped."""
        state = int(np.random.SeedSequence([self.seed, part, block]).generate_state(1)[0])
        indptr, indices, data, score, flip = _draw_rows(
            state, m, self.draws, self.prob, self.alias, self.perm, self.idf, self.truth
        )
        return sp.csr_matrix((data, indices, indptr), shape=(m, self.n_features)), score, flip

    def blocks(self, n_rows: int, part: str = "train") -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
        """(X, y) blocks of ``block_rows`` rows (the last one shorter), ``n_rows`` in all."""
        for block, start in enumerate(range(0, n_rows, self.block_rows)):
            X, score, flip = self._draw(self.PARTS[part], block, min(self.block_rows, n_rows - start))
            y = np.where(score > self.threshold, 1.0, -1.0)
            y[flip] = -y[flip]
            yield X, y


def _alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table of the distribution ``p``: draw k uniform in [0, n) and u in [0, 1);
    the draw is k if u < prob[k], else alias[k]."""
    n = len(p)
    prob, alias = p * n, np.arange(n, dtype=np.int32)
    small = [k for k in range(n) if prob[k] < 1.0]
    large = [k for k in range(n) if prob[k] >= 1.0]
    while small and large:
        s, g = small.pop(), large[-1]
        alias[s] = g
        prob[g] -= 1.0 - prob[s]
        if prob[g] < 1.0:
            small.append(large.pop())
    prob[large + small] = 1.0  # rounding leftovers are their own alias
    return prob, alias


@numba.njit(cache=True)
def _draw_rows(state, m, draws, prob, alias, perm, idf, truth):  # pragma: no cover - compiled
    """``m`` rows from Numba's generator seeded with ``state``: CSR arrays (sorted, distinct
    columns, unit rows), the rows' scores against ``truth`` and the 5% of labels to flip."""
    np.random.seed(state)
    n = len(prob)
    counts = np.empty(m, np.int64)
    for i in range(m):
        counts[i] = max(np.random.poisson(draws), 5)
    indptr = np.zeros(m + 1, np.int64)
    indices = np.empty(counts.sum(), np.int32)
    data = np.empty(counts.sum(), np.float64)
    score = np.empty(m)
    flip = np.empty(m, np.bool_)
    cols = np.empty(counts.max(), np.int32)
    vals = np.empty(counts.max())
    at = 0
    for i in range(m):
        k = 0
        for _ in range(counts[i]):
            u = np.random.random() * n
            t = int(u)
            if u - t >= prob[t]:  # the fraction is a second uniform
                t = alias[t]
            c, v = perm[t], np.random.exponential(1.0) * idf[t]
            j = k  # insertion into the sorted distinct terms so far; a repeat adds up
            while j > 0 and cols[j - 1] > c:
                j -= 1
            if j > 0 and cols[j - 1] == c:
                vals[j - 1] += v
                continue
            for q in range(k, j, -1):
                cols[q], vals[q] = cols[q - 1], vals[q - 1]
            cols[j], vals[j] = c, v
            k += 1
        norm = np.sqrt(np.sum(vals[:k] ** 2))
        s = 0.0
        for j in range(k):
            indices[at + j] = cols[j]
            data[at + j] = vals[j] / norm
            s += data[at + j] * truth[cols[j]]
        at += k
        indptr[i + 1] = at
        score[i] = s
        flip[i] = np.random.random() < 0.05
    return indptr, indices[:at].copy(), data[:at].copy(), score, flip


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
