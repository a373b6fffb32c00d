"""Training from shards against training in memory: test accuracy and objective at the same samples.

    NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.sharded \
        [--sets a9a,w8a] [--shards 8] [--windows 1,4] [--seeds 5] [--epochs 0.25,1,3]

Each data set's training rows are written as memory-mapped ``.npy`` shards (CSR arrays and labels,
``--shards`` of equal size, in a temporary directory) in two orders: as the file stores them, and
sorted by label, the worst case for shard-order sampling (each shard then holds one class, or
two at a boundary). PGS (p = 2 and p = 1.8, sigma 1e-5, ``sampling="permutation"``) and SMIDAS
(sigma 1e-5) then fit the same rows twice per seed: in memory (one permutation of all rows per
epoch; SMIDAS: i.i.d. draws) and from the shards (shards in a random order per epoch, a permutation
or i.i.d. draws within each; ``solver.sampling``), once per ``--windows`` value: the shards open
at once, drawn from in runs of ``solver.sampling.RUN_ROWS`` rows. Checkpoints follow the samples seen alone
(``checkpoint_interval=None``), so both fits are read at the same samples; the table gives the
median over the seeds at the first checkpoint at or after each number of epochs, and the ratio of
the median solver seconds of the whole fit (``max(epochs)`` epochs) from the shards to in memory.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from solver import PGSClassifier, ShardedMatrix, SMIDASClassifier

from .datasets import load_real

SOLVERS = {
    "PGS p=2": lambda seed: PGSClassifier(p=2.0, sigma=1e-5, random_state=seed),
    "PGS p=1.8": lambda seed: PGSClassifier(p=1.8, sigma=1e-5, random_state=seed),
    "SMIDAS": lambda seed: SMIDASClassifier(sigma=1e-5, random_state=seed),
}


def write_shards(
    root: Path, X: sp.csr_matrix, y: np.ndarray, n_shards: int, windows: list[int]
) -> list[ShardedMatrix]:
    """``X``, ``y`` as ``n_shards`` memory-mapped shards under ``root``, read with each window."""
    bounds = np.linspace(0, X.shape[0], n_shards + 1).astype(int)
    for i in range(n_shards):
        part = X[bounds[i] : bounds[i + 1]]
        for name, array in (
            ("indptr", part.indptr.astype(np.int64)),
            ("indices", part.indices.astype(np.int32)),
            ("data", part.data.astype(np.float64)),
            ("y", y[bounds[i] : bounds[i + 1]]),
        ):
            np.save(root / f"shard-{i:05d}.{name}.npy", array)
    rows = np.diff(bounds).tolist()

    def open_shard(i: int):
        def load(name):
            return np.load(root / f"shard-{i:05d}.{name}.npy", mmap_mode="r")

        return sp.csr_matrix(
            (load("data"), load("indices"), load("indptr")), shape=(rows[i], X.shape[1])
        ), load("y")

    return [ShardedMatrix(X.shape[1], rows, open_shard, w) for w in windows]


def at_epochs(trace, m: int, epochs: list[float]) -> list[tuple[float, float]]:
    """(test accuracy, objective) at the first checkpoint at or after each number of epochs."""
    out = []
    for e in epochs:
        point = next((p for p in trace if p.samples_seen >= e * m), trace[-1])
        out.append((point.test_score, point.objective))
    return out


def compare(
    name: str,
    order: str,
    X,
    y,
    X_test,
    y_test,
    n_shards: int,
    windows: list[int],
    seeds: int,
    epochs: list[float],
) -> list[str]:
    m = X.shape[0]
    if order == "sorted by label":
        idx = np.argsort(y, kind="stable")
        X, y = X[idx], y[idx]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sharded = write_shards(Path(tmp), X, y, n_shards, windows)
        for solver, make in SOLVERS.items():
            modes = {"memory": (X, y), **{w: (s, None) for w, s in zip(windows, sharded, strict=True)}}
            results: dict[object, list[list[tuple[float, float]]]] = {k: [] for k in modes}
            solver_s: dict[object, list[float]] = {k: [] for k in modes}
            for seed in range(seeds):
                for mode, data in modes.items():
                    est = make(seed).set_params(
                        n_iter=int(max(epochs) * m) + 1, checkpoint_interval=None, objective_rows=None
                    )
                    est.fit(*data, eval_set=(X_test, y_test))
                    results[mode].append(at_epochs(est.trace_, m, epochs))
                    solver_s[mode].append(est.trace_[-1].solver_seconds)
            secs = {k: statistics.median(v) for k, v in solver_s.items()}
            for j, e in enumerate(epochs):
                acc = {k: statistics.median(r[j][0] for r in v) for k, v in results.items()}
                obj = {k: statistics.median(r[j][1] for r in v) for k, v in results.items()}
                for w in windows:
                    rows.append(
                        f"| {name} | {order} | {solver} | {w} | {e:g} | {acc['memory']:.4f} | "
                        f"{acc[w]:.4f} | {obj['memory']:.5f} | {obj[w]:.5f} | "
                        f"{(obj[w] - obj['memory']) / obj['memory']:+.2%} | "
                        f"{secs[w] / secs['memory']:.2f} |"
                    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="a9a,w8a")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--windows", default="1,4")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", default="0.25,1,3")
    args = parser.parse_args()
    epochs = [float(e) for e in args.epochs.split(",")]
    windows = [int(w) for w in args.windows.split(",")]
    print(
        "| set | row order | solver | window | epochs | accuracy, memory | accuracy, shards | "
        "objective, memory | objective, shards | objective, shards vs memory | "
        "solver seconds, shards / memory |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        X, y, X_test, y_test = load_real(name)
        for order in ("as stored", "sorted by label"):
            for row in compare(name, order, X, y, X_test, y_test, args.shards, windows, args.seeds, epochs):
                print(row, flush=True)


if __name__ == "__main__":
    main()
