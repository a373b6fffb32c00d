"""OGD with step 1/(lambda t) and PGS at p = 2 compute the same iterates (lecture eq. (6)): a figure.

    .venv/bin/python -m bench.lecture_eq6 [--iterations 2000] [--sigma 0.01] [--t0 1]
                                          [--out docs/figures]

On heart_scale (270 x 13, logistic loss, no intercept) both run on the same sample draws (k = 1,
uniform with replacement, seed 0): OGD (lecture Algorithm 3, ``solver.gradient_descent``) with
eta_t = 1 / (sigma (t + t0)), and PGS (PGS paper Figure 1, ``solver.pgs``) at p = 2 with the same
t0 (t0 = 1 is the PGS paper's (t + 1) sigma; t0 = 0 the lecture's 1 / (lambda t)). By eq. (6) the
PGS iterate w^PGS_t equals the OGD iterate w^OGD_{t+1} (docs/explanation/solvers-lecture.md). The figure draws
three coordinates of both iterates against t and the largest relative difference of the two
vectors at every t; docs/figures/lecture_eq6.svg and docs/results/lecture_eq6.json (every iterate
of the three coordinates and the difference at every t).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402

from solver._sparse import as_kernel_data  # noqa: E402
from solver.gradient_descent import SGDState  # noqa: E402
from solver.losses import LOSSES  # noqa: E402
from solver.pgs import PGSState  # noqa: E402

from .datasets import DATA_DIR  # noqa: E402
from .results import add_results_dir, record  # noqa: E402

COORDINATES = (0, 2, 11)  # age, chest pain type, thal: three weights of different sizes


def iterates(X, y, *, sigma: float, t0: float, n: int, seed: int = 0):
    """(OGD's w_2..w_{n+1}, PGS's w_1..w_n) on the same draws, shape (n, n_features) each."""
    data = as_kernel_data(X)
    loss = LOSSES["logistic"]
    ogd = SGDState(
        data,
        y,
        loss=loss,
        sigma=sigma,
        eta=0.0,
        t0=t0,
        schedule="inverse_time",
        fit_intercept=False,
        batch_size=1,
        epsilon=1.0,
        average=False,
    )
    pgs = PGSState(
        data,
        y,
        loss=loss,
        p=2.0,
        sigma=sigma,
        radius=math.inf,
        fit_intercept=False,
        batch_size=1,
        t0=t0,
        epsilon=1.0,
        average=False,
    )
    samples = np.random.default_rng(seed).integers(0, X.shape[0], size=n)
    ogd_path, pgs_path = [], []
    for t in range(n):
        ogd.run(samples[t : t + 1], 1)
        pgs.run(samples[t : t + 1])
        ogd_path.append(ogd.current().copy())
        pgs_path.append(pgs.current().copy())
    return np.array(ogd_path), np.array(pgs_path)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--sigma", type=float, default=0.01)
    parser.add_argument("--t0", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("lecture_eq6", argv)
    X, y = load_svmlight_file(str(DATA_DIR / "heart_scale.svm"))
    X = X.toarray()
    y = np.where(y > 0, 1.0, -1.0)
    ogd, pgs = iterates(X, y, sigma=args.sigma, t0=args.t0, n=args.iterations)
    scale = np.maximum(np.abs(ogd).max(axis=1), 1e-300)
    difference = np.abs(ogd - pgs).max(axis=1) / scale
    t = np.arange(1, args.iterations + 1)

    args.out.mkdir(parents=True, exist_ok=True)
    figure = args.out / "lecture_eq6.svg"
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    marks = np.unique(np.geomspace(1, args.iterations, 25).astype(int)) - 1
    for color, j in zip(("tab:blue", "tab:orange", "tab:green"), COORDINATES, strict=True):
        left.plot(t, ogd[:, j], color=color, label=f"OGD w_(t+1), coordinate {j}")
        left.plot(
            t[marks], pgs[marks, j], "o", color=color, fillstyle="none", label=f"PGS p=2 w_t, coordinate {j}"
        )
    left.set_yscale("symlog", linthresh=0.1)  # the first steps (1/(2 sigma)) dwarf the limit
    left.set(
        xscale="log",
        xlabel="iteration t",
        ylabel="weight",
        title=f"heart_scale, logistic, sigma = {args.sigma:g}, t0 = {args.t0:g}",
    )
    left.legend(fontsize=7)
    right.plot(t, np.maximum(difference, 1e-18), color="black")
    right.set(
        xscale="log",
        yscale="log",
        xlabel="iteration t",
        ylim=(1e-18, 1e-10),
        ylabel="max_j |w^OGD_(t+1),j - w^PGS_t,j| / max_j |w^OGD_(t+1),j|",
        title="relative difference (0 drawn at 1e-18)",
    )
    for ax in (left, right):
        ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(figure)
    plt.close(fig)

    result = {
        "dataset": "heart_scale",
        "loss": "logistic",
        "sigma": args.sigma,
        "t0": args.t0,
        "iterations": args.iterations,
        "figure": str(figure),
        "coordinates": list(COORDINATES),
        "ogd": {str(j): ogd[:, j].tolist() for j in COORDINATES},
        "pgs": {str(j): pgs[:, j].tolist() for j in COORDINATES},
        "relative_difference": difference.tolist(),
        "max_relative_difference": float(difference.max()),
    }
    path = recording.save(result, args.results_dir)
    print(f"largest relative difference over {args.iterations} iterations: {difference.max():.2e}")
    print(f"wrote {figure} and {path}")


if __name__ == "__main__":
    main()
