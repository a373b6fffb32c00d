"""Objective and density against data accesses for SCD, GCD, SMIDAS and TRUNCGRAD: the L1 paper's
Figures 1-8 (Shalev-Shwartz & Tewari, JMLR 2011, Section 4) on its four data sets.

    .venv/bin/python -m bench.l1_paths [--datasets duke arcene magic04s magic04d] [--seeds 3]
                                       [--eta paper|tune] [--passes 1.0] [--out docs/figures]

For each data set and the paper's lambda in {1e-6, 1e-2} (``sigma`` here), every method minimises
the logistic loss plus sigma ||w||_1 without intercept (objective (1) of the paper) within the same
budget of data accesses, ``passes`` times the data set's default (``PASSES``, in passes over X).
SMIDAS and TRUNCGRAD take the paper's learning rates of Table 1 (``--eta paper``) or the best of a
x3 grid walked from ``eta="auto"`` (``--eta tune``, the paper's protocol: see ``tune_eta``). SCD
runs twice: with the per-coordinate beta_j of the solver (default) and with the paper's single
beta (``beta="uniform"``). The stochastic methods run ``--seeds`` times (seeds 0, 1, ...): the
figures draw the median and the min-max band; GCD is deterministic and runs once. The reference
optimum P* comes from L-BFGS-B on the split w = u - v (or is the lowest objective a method
reached, if that is lower).

Data, as the paper describes them: ARCENE is the challenge's 100 training rows, DUKE the 49 rows of
West et al. (the paper used LIBSVM's 44-row cut), both scaled column by column to [-1, 1] by the
largest |x_ij| (zeros stay zeros); MAGIC04S / MAGIC04D are the 10 MAGIC features (scaled to
[-1, 1]) plus 1,000 random features, 0/1 with P(1) = 0.05 (sparse) or +-1 (dense), seed 0.

Beside the curves, each (data set, lambda) records why the SMIDAS and TRUNCGRAD iterates are dense
or sparse (``zero_survival``): Algorithm 3 leaves theta_j exactly 0 through a step on sample i only
if |theta_j - eta l'(z_i) x_ij| <= eta lambda, i.e. from theta_j = 0 only if |l'(z_i) x_ij| <=
lambda, whatever eta. At the optimum w*, it records how often the features with w*_j = 0 pass this
test, and how many of their duals the truncation recursion leaves non-zero at w*.

``--speed-set NAME`` (default rt_polarity, "" to skip) also times SMIDAS and TRUNCGRAD with their
defaults on that text set: iterations per second and the non-zeros of theta they visit.

Draws one PNG per (data set, lambda) into ``--out`` and records everything, the curves included,
in docs/results/l1_paths.json.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import scipy.optimize  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402

from solver import (  # noqa: E402
    GCDClassifier,
    SCDClassifier,
    SMIDASClassifier,
    TruncGradClassifier,
)

from . import tables  # noqa: E402
from .datasets import DATA_DIR, load_real  # noqa: E402
from .results import add_results_dir, record  # noqa: E402

LAMBDAS = (1e-6, 1e-2)
# The paper's figure for each (data set, lambda) (Section 4.3).
FIGURES = {
    ("duke", 1e-6): 1,
    ("arcene", 1e-6): 2,
    ("magic04s", 1e-6): 3,
    ("magic04d", 1e-6): 4,
    ("duke", 1e-2): 5,
    ("arcene", 1e-2): 6,
    ("magic04s", 1e-2): 7,
    ("magic04d", 1e-2): 8,
}
# Table 1: eta of (SMIDAS, TRUNCGRAD) per (data set, lambda).
PAPER_ETA = {
    ("duke", 1e-6): (50.0, 1e-1),
    ("duke", 1e-2): (1e-1, 1e-2),
    ("arcene", 1e-6): (50.0, 1e-1),
    ("arcene", 1e-2): (1e-2, 5e-5),
    ("magic04s", 1e-6): (1e-2, 5e-4),
    ("magic04s", 1e-2): (1e-4, 5e-5),
    ("magic04d", 1e-6): (5e-3, 1e-4),
    ("magic04d", 1e-2): (1e-3, 1e-5),
}
# label -> (estimator, fixed parameters)
METHODS = {
    "SCD": (SCDClassifier, {}),
    "SCD, paper beta": (SCDClassifier, {"beta": "uniform"}),
    "GCD": (GCDClassifier, {}),
    "SMIDAS": (SMIDASClassifier, {}),
    "TRUNCGRAD": (TruncGradClassifier, {}),
}
COLORS = {
    "SCD": "tab:blue",
    "SCD, paper beta": "tab:cyan",
    "GCD": "tab:orange",
    "SMIDAS": "tab:green",
    "TRUNCGRAD": "tab:red",
}
# Budget in passes over X (non-zeros of X, every entry for dense X) per data set.
PASSES = {"duke": 50, "arcene": 50, "magic04s": 20, "magic04d": 10, "a9a": 20, "reuters_moneyfx": 10}
ETA_STEP = 3.0
MAX_ETA_STEPS = 6  # eta within auto * 3^[-6, 6], a 5e5-fold range (the paper's Table 1 spans 1e6)
GRID_POINTS = 60  # points of the common access grid the bands are drawn on


# -- data -----------------------------------------------------------------------------------------


def magic04(kind: str, seed: int = 0):
    """MAGIC04S ("sparse") or MAGIC04D ("dense"): 10 scaled features + 1,000 random ones."""
    raw = np.loadtxt(DATA_DIR / "magic04.csv", delimiter=",", dtype=str)
    features = raw[:, :10].astype(np.float64)
    y = np.where(raw[:, 10] == "g", 1.0, -1.0)
    low, high = features.min(axis=0), features.max(axis=0)
    features = 2.0 * (features - low) / (high - low) - 1.0
    rng = np.random.default_rng(seed)
    m = features.shape[0]
    if kind == "sparse":
        noise = sp.csr_matrix((rng.random((m, 1000)) < 0.05).astype(np.float64))
        return sp.hstack([sp.csr_matrix(features), noise], format="csr"), y
    return np.hstack([features, rng.choice([-1.0, 1.0], size=(m, 1000))]), y


def unit_box(file: str):
    """An svmlight file scaled column by column into [-1, 1] by its largest |x_ij| (the paper's
    assumption x in [-1, 1]^d); dense, labels in {-1, +1}."""
    X, y = load_svmlight_file(str(DATA_DIR / file))
    X = X.toarray()
    scale = np.abs(X).max(axis=0)
    X = X / np.where(scale > 0.0, scale, 1.0)
    return X, np.where(y > 0, 1.0, -1.0)


def load(name: str):
    if name == "magic04s":
        return magic04("sparse")
    if name == "magic04d":
        return magic04("dense")
    if name == "duke":
        return unit_box("duke_west_breast.svm")
    if name == "arcene":
        return unit_box("arcene.train.svm")
    X, y, _, _ = load_real(name)
    return X, y


def nnz_of(X) -> int:
    return int(X.nnz) if sp.issparse(X) else int(X.size)


# -- the reference optimum, and why exact zeros survive or not ------------------------------------


def logistic_derivative(X, y, w):
    """l'(z_i; y_i) = -y_i / (1 + exp(y_i z_i)) at z = Xw, computed without overflow."""
    return -y * np.exp(-np.logaddexp(0.0, y * (X @ w)))


def l1_optimum(X, y, sigma):
    """(P*, w*): min sigma ||w||_1 + mean log(1 + exp(-y <w, x>)), by L-BFGS-B on w = u - v."""
    n = X.shape[1]

    def objective(uv):
        w = uv[:n] - uv[n:]
        value = np.logaddexp(0.0, -y * (X @ w)).mean() + sigma * uv.sum()
        gw = X.T @ logistic_derivative(X, y, w) / X.shape[0]
        return value, np.r_[gw + sigma, sigma - gw]

    res = scipy.optimize.minimize(
        objective,
        np.zeros(2 * n),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * (2 * n),
        options={"maxiter": 5000, "maxfun": 10000, "gtol": 1e-12, "ftol": 1e-14},
    )
    print(f"  L-BFGS-B: {res.nit} iterations, {res.message}")
    return float(res.fun), res.x[:n] - res.x[n:]


def support(w) -> np.ndarray:
    return np.abs(w) > 1e-9 * max(float(np.abs(w).max()), 1e-300)


def zero_survival(X, y, w_star, sigma, steps: int = 20_000, seed: int = 0) -> dict:
    """How Algorithm 3's truncation treats the features with w*_j = 0 when w sits at w*.

    In units of eta sigma a step on sample i moves such a dual theta_j by k_ij = -l'(z*_i) x_ij /
    sigma and then truncates by 1: u_j <- s_1(u_j + k_ij). From u_j = 0 the step keeps it at 0
    exactly when |k_ij| <= 1, whatever eta. Returns, over these features: the share of their
    non-zeros x_ij with |k_ij| <= 1 and the median |k_ij|; and the mean number of them whose dual
    is not 0 when this recursion runs on uniformly drawn samples, averaged over the second half
    of ``steps`` steps (from u = 0): the density SMIDAS and TRUNCGRAD would keep at the optimum.
    """
    zero_cols = np.flatnonzero(~support(w_star))
    if zero_cols.size == 0:
        return {"irrelevant_features": 0, "fraction": None, "median_ratio": None, "stationary_nonzero": None}
    derivative = logistic_derivative(X, y, w_star)
    block = X[:, zero_cols]
    block = block.toarray() if sp.issparse(block) else np.asarray(block)
    kicks = (-derivative[:, None] * block / sigma).astype(np.float32)
    touched = np.abs(kicks[block != 0.0])
    u = np.zeros(zero_cols.size, dtype=np.float32)
    nonzero = 0
    for t, i in enumerate(np.random.default_rng(seed).integers(0, X.shape[0], size=steps)):
        u += kicks[i]
        u = np.sign(u) * np.maximum(np.abs(u) - 1.0, 0.0)
        if 2 * t >= steps:
            nonzero += np.count_nonzero(u)
    return {
        "irrelevant_features": int(zero_cols.size),
        "fraction": float(np.mean(touched <= 1.0)),
        "median_ratio": float(np.median(touched)),
        "stationary_nonzero": float(nonzero / (steps - (steps + 1) // 2)),
    }


# -- runs -----------------------------------------------------------------------------------------


def estimator(cls, sigma, n_iter, seed, **params):
    return cls(
        sigma=sigma,
        n_iter=n_iter,
        fit_intercept=False,
        random_state=seed,
        checkpoint_growth=1.25,
        checkpoint_interval=None,
        objective_rows=None,
        **params,
    )


def late_objective(cls, X, y, sigma, n_iter, **params) -> float:
    """The mean objective over the checkpoints in the last third of a run of n_iter iterations.

    The paper picks the eta whose final objective is lowest. With a constant step the last iterate
    is noisy, and on our runs that rule kept picking rates at the edge of stability whose final
    point happened to be good; averaging the last checkpoints rewards rates that are good and stay
    good.
    """
    trace = estimator(cls, sigma, n_iter, 0, **params).fit(X, y, trace=True).trace_
    return float(np.mean([pt.objective for pt in trace if 3 * pt.iteration >= n_iter]))


def traced_run(cls, X, y, sigma, budget, n_iter, seed, **params):
    """A run with checkpoints at iterations growing by 1.25x, stopped at the first checkpoint that
    has made ``budget`` data accesses (``n_iter`` only bounds it)."""

    def until_budget(progress):
        return not any(pt.data_accesses >= budget for pt in progress.new_points)

    est = estimator(cls, sigma, n_iter, seed, **params)
    return est.fit(X, y, trace=True, callback=until_budget)


def tune_eta(cls, X, y, sigma, n_iter):
    """The paper's protocol: the best eta on a x3 grid walked from "auto" (see late_objective)."""
    eta0 = cls(sigma=sigma, n_iter=1, fit_intercept=False).fit(X, y).eta_
    tried: dict[int, float] = {}

    def objective(k):
        if k not in tried:
            try:
                tried[k] = late_objective(cls, X, y, sigma, n_iter, eta=eta0 * ETA_STEP**k)
            except FloatingPointError:  # diverged
                tried[k] = math.inf
        return tried[k]

    direction = -1 if objective(-1) <= objective(0) else 1
    k = -1 if direction < 0 else 0
    while abs(k + direction) <= MAX_ETA_STEPS and objective(k + direction) < objective(k):
        k += direction
    return eta0 * ETA_STEP**k


def band(traces, grid, value) -> dict:
    """Median, min and max over the runs of ``value(point)`` on the access grid (each run
    interpolated in log accesses, held at its last value beyond its end, None before its start)."""
    rows = []
    for trace in traces:
        points = [pt for pt in trace if pt.data_accesses > 0]
        x = np.log([pt.data_accesses for pt in points])
        v = np.array([value(pt) for pt in points], dtype=float)
        row = np.interp(np.log(grid), x, v)
        row[np.log(grid) < x[0]] = np.nan
        rows.append(row)
    stack = np.array(rows)
    defined = ~np.isnan(stack).any(axis=0)
    out = {}
    for name, reduce in (("median", np.median), ("min", np.min), ("max", np.max)):
        values = np.full(grid.shape, np.nan)
        values[defined] = reduce(stack[:, defined], axis=0)
        out[name] = [None if np.isnan(v) else float(v) for v in values]
    return out


def run_method(label, X, y, sigma, budget, seeds, eta):
    """Every seed's traced run of one method; returns (traces, summary row)."""
    cls, fixed = METHODS[label]
    m, d = X.shape
    params = dict(fixed)
    if label.startswith("SCD"):
        n_iter = math.ceil(budget / nnz_of(X) * d)  # a sweep of d steps reads X once
    elif label == "GCD":
        n_iter = 10**9  # a greedy step's cost varies; the budget stops the run
        seeds = seeds[:1]  # deterministic
    else:
        n_iter = math.ceil(budget / nnz_of(X) * m)  # the budget is n_iter samples
        params["eta"] = eta
    traces, finals, nnz_big, speeds = [], [], [], []
    started = time.perf_counter()
    for seed in seeds:
        est = traced_run(cls, X, y, sigma, budget if label == "GCD" else math.inf, n_iter, seed, **params)
        # GCD's last checkpoint overshoots the budget by at most one 1.25x step of iterations:
        # the plot shows it, the table reports the last checkpoint within the budget.
        within = [pt for pt in est.trace_ if pt.data_accesses <= budget] or est.trace_[:1]
        finals.append(within[-1] if label == "GCD" else est.trace_[-1])
        traces.append(est.trace_)
        coef = est.coef_[0]
        nnz_big.append(int((np.abs(coef) > 1e-3 * max(np.abs(coef).max(), 1e-300)).sum()))
        speeds.append(est.n_iter_ / max(est.solver_seconds_, 1e-9))
    row = {
        "method": label,
        "eta": params.get("eta"),
        "seeds": len(seeds),
        "objective": [pt.objective for pt in finals],
        "nnz": [pt.nnz_weights for pt in finals],
        "nnz_above_1e-3_max": nnz_big,
        "accesses": float(np.median([pt.data_accesses for pt in finals])),
        "iterations": int(np.median([pt.iteration for pt in finals])),
        "iterations_per_s": float(np.median(speeds)),
        "seconds": time.perf_counter() - started,
    }
    return traces, row


def run_dataset(name: str, passes: float, seeds: list[int], eta_rule: str, out: Path) -> list[dict]:
    X, y = load(name)
    m, d = X.shape
    budget = passes * PASSES.get(name, 10) * nnz_of(X)
    panels = []
    for sigma in LAMBDAS:
        started = time.perf_counter()
        p_lbfgs, w_star = l1_optimum(X, y, sigma)
        nnz_star = int(support(w_star).sum())
        survival = zero_survival(X, y, w_star, sigma)
        print(
            f"{name} lambda={sigma:g}: L-BFGS-B P = {p_lbfgs:.10f} ({nnz_star} non-zeros), "
            f"{time.perf_counter() - started:.1f} s; budget {budget:.3g} data accesses; "
            f"zero survival {survival}",
            flush=True,
        )
        traces, rows = {}, []
        for label, (cls, _) in METHODS.items():
            eta = None
            if label in ("SMIDAS", "TRUNCGRAD"):
                if eta_rule == "paper" and (name, sigma) in PAPER_ETA:
                    eta = PAPER_ETA[name, sigma][label == "TRUNCGRAD"]
                else:
                    eta = tune_eta(cls, X, y, sigma, math.ceil(budget / nnz_of(X) * m))
            try:
                traces[label], row = run_method(label, X, y, sigma, budget, seeds, eta)
            except FloatingPointError as exc:  # a rate of Table 1 can be too long for our scaling
                print(f"  {label:15s} diverged: {exc}")
                rows.append({"method": label, "eta": eta, "diverged": str(exc)})
                continue
            rows.append(row)
            print(
                f"  {label:15s} P {np.median(row['objective']):.10f}  nnz {row['nnz']}  "
                f"eta {eta}  {row['iterations_per_s']:.0f} it/s  {row['seconds']:.1f} s",
                flush=True,
            )
        # P*: the L-BFGS-B value, or a lower value a method reached.
        p_star = min([p_lbfgs] + [pt.objective for runs in traces.values() for trace in runs for pt in trace])
        grid = np.geomspace(max(1.0, budget / 1e5), budget, GRID_POINTS)

        def gap(pt, p_star=p_star):
            return max((pt.objective - p_star) / p_star, 1e-12)

        curves = {
            label: {"gap": band(runs, grid, gap), "nnz": band(runs, grid, lambda pt: pt.nnz_weights)}
            for label, runs in traces.items()
        }
        for row in rows:
            if "objective" in row:
                row["gap"] = [(v - p_star) / p_star for v in row["objective"]]
        panel = {
            "dataset": name,
            "lambda": sigma,
            "figure": FIGURES.get((name, sigma)),
            "m": m,
            "d": d,
            "budget": budget,
            "p_star": p_star,
            "nnz_star": nnz_star,
            "zero_survival": survival,
            "rows": rows,
            "curves": {"accesses": grid.tolist(), **curves},
        }
        panel["image"] = plot(panel, out)
        panels.append(panel)
    return panels


def plot(panel: dict, out: Path) -> str:
    name, sigma, curves = panel["dataset"], panel["lambda"], panel["curves"]
    grid = np.array(curves["accesses"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for label in METHODS:
        if label not in curves:
            continue
        for ax, key in ((left, "gap"), (right, "nnz")):
            lines = {
                k: np.array([np.nan if v is None else v for v in curves[label][key][k]])
                for k in ("median", "min", "max")
            }
            ax.plot(grid, lines["median"], label=label, color=COLORS[label])
            ax.fill_between(grid, lines["min"], lines["max"], color=COLORS[label], alpha=0.2, linewidth=0)
    figure = panel["figure"]
    title = f"{name}, lambda = {sigma:g}" + (f" (paper Fig. {figure})" if figure else "")
    left.set(
        xscale="log",
        yscale="log",
        xlabel="data accesses",
        ylabel="(P(w) - P*) / P*",
        title=f"{title}: objective",
    )
    right.axhline(panel["nnz_star"], color="black", linestyle=":", linewidth=1, label="optimum")
    right.set_yscale("symlog", linthresh=1.0)
    right.set(
        xscale="log",
        xlabel="data accesses",
        ylabel="non-zero weights (exact)",
        title=f"density (d = {panel['d']:,})",
        ylim=(0, panel["d"] * 1.5),
    )
    for ax in (left, right):
        ax.grid(True, which="major", alpha=0.3)
    right.legend(loc="best", fontsize=7)
    fig.tight_layout()
    path = out / f"l1_paths_{name}_lambda{sigma:g}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


# -- SMIDAS's speed -------------------------------------------------------------------------------


def speed(name: str, n_iter: int) -> list[dict]:
    """Iterations per second of SMIDAS and TRUNCGRAD with their defaults (sigma 1e-5, eta "auto"),
    and the non-zeros of the weights (for SMIDAS, of theta: the coordinates an iteration visits)."""
    X, y, X_test, y_test = load_real(name)
    rows = []
    for label, cls in (("SMIDAS", SMIDASClassifier), ("TRUNCGRAD", TruncGradClassifier)):
        est = cls(n_iter=n_iter, random_state=0, checkpoint_growth=2.0, checkpoint_interval=None).fit(
            X, y, trace=True
        )
        rows.append(
            {
                "dataset": name,
                "m": X.shape[0],
                "d": X.shape[1],
                "row_nnz": X.nnz / X.shape[0],
                "method": label,
                "eta": est.eta_,
                "dual_exponent": est.dual_exponent_,
                "iterations": est.n_iter_,
                "iterations_per_s": est.n_iter_ / est.solver_seconds_,
                "nnz_weights": [(pt.iteration, pt.nnz_weights) for pt in est.trace_],
                "test_accuracy": float(est.score(X_test, y_test)),
            }
        )
        print(
            f"  {label}: {rows[-1]['iterations_per_s']:.0f} it/s, nnz {est.trace_[-1].nnz_weights}"
            f", test accuracy {rows[-1]['test_accuracy']:.3f}",
            flush=True,
        )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["duke", "arcene", "magic04s", "magic04d"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--eta", choices=("paper", "tune"), default="paper")
    parser.add_argument(
        "--passes",
        type=float,
        default=1.0,
        help="scale of every data set's access budget (1.0: the defaults)",
    )
    parser.add_argument("--speed-set", default="rt_polarity")
    parser.add_argument("--speed-iterations", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("l1_paths", argv)
    args.out.mkdir(parents=True, exist_ok=True)
    panels = []
    for name in args.datasets:
        panels += run_dataset(name, args.passes, list(range(args.seeds)), args.eta, args.out)
    result = {
        "passes": args.passes,
        "seeds": args.seeds,
        "eta_rule": args.eta,
        "panels": panels,
        "speed": speed(args.speed_set, args.speed_iterations) if args.speed_set else [],
    }
    path = recording.save(result, args.results_dir)
    print(tables.l1_paths(result))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
