"""The evidence behind ``solver="auto"``: SDCA's epochs to the peers bench's targets, and the
per-epoch cost of SDCA against PGS's, on the peers bench's sets and sigmas; and, on small data
sets, L-BFGS's time to the same kind of target against PGS's.

    NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.auto_calibration \
        [--sets a9a,...] [--small-sets heart_scale,...] [--sigmas 1e-5,1e-6] [--max-epochs 30] \
        [--results-dir DIR]

The targets (the exact optimum's test accuracy minus 0.5 points) and PGS p=2's epochs to them
are read from the recorded peers bench (docs/results/peers.json), so no optimum is recomputed.
SDCA's epochs to the target come from one fit with ``target_score`` and ``eval_set`` (epochs do
not depend on the machine's load). The costs are medians of interleaved fit() calls: one epoch's
cost is the difference between a longer and a shorter fit divided by the epochs between them, so
the set-up cancels; the set-up is the shorter fit's time minus its epochs. On a loaded machine the
seconds drift, their ratios (SDCA / PGS) much less: the rule in solver/auto.py uses ratios.

The small sets (75/25 split, seed 0, where the file has no test set) have as target the test
accuracy of L-BFGS's optimum (tol 1e-10) minus 0.5 points. Each solver's budget (PGS: iterations,
L-BFGS: its iterations) is the first that reaches it, found with ``target_score`` untimed; then
fresh fits at that budget, without evaluation, are timed (median of 15, interleaved).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from solver import LBFGSClassifier, PGSClassifier, SDCAClassifier, warm_up

from .datasets import load_pair
from .peers import load_set
from .results import add_results_dir, record
from .time_to_accuracy import TO_TARGET

PEERS_RECORD = Path(__file__).resolve().parent.parent / "docs" / "results" / "peers.json"
REPEATS = 3
# Small data sets for L-BFGS against PGS: training file and test file (None: a 75/25 split).
SMALL_SETS = {
    "heart_scale": ("heart_scale.svm", None),
    "duke_west_breast": ("duke_west_breast.svm", None),
    "arcene": ("arcene.train.svm", "arcene.valid.svm"),
    "agaricus": ("agaricus.train.svm", "agaricus.test.svm"),
    "ijcnn1": ("ijcnn1.train.svm", "ijcnn1.test.svm"),
}
SMALL_SIGMAS = (1e-3, 1e-5)


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def _time(fit) -> float:
    started = time.perf_counter()
    fit()
    return time.perf_counter() - started


def per_epoch_costs(X, y, sigma: float, loss: str = "logistic") -> dict[str, float]:
    """Seconds per epoch and of set-up, SDCA's and PGS p=2's, medians of interleaved fits."""
    m = X.shape[0]
    runs: dict[str, list[float]] = {"sdca_1": [], "sdca_3": [], "pgs_1": [], "pgs_3": []}
    for _ in range(REPEATS):
        for epochs in (1, 3):
            runs[f"sdca_{epochs}"].append(
                _time(
                    lambda e=epochs: SDCAClassifier(
                        loss=loss, sigma=sigma, n_iter=e, tol=0.0, random_state=0
                    ).fit(X, y)
                )
            )
            runs[f"pgs_{epochs}"].append(
                _time(
                    lambda e=epochs: PGSClassifier(loss=loss, sigma=sigma, n_iter=e * m, random_state=0).fit(
                        X, y
                    )
                )
            )
    med = {key: statistics.median(values) for key, values in runs.items()}
    sdca_epoch = max(med["sdca_3"] - med["sdca_1"], 0.0) / 2
    pgs_epoch = max(med["pgs_3"] - med["pgs_1"], 0.0) / 2
    return {
        "sdca_epoch": sdca_epoch,
        "pgs_epoch": pgs_epoch,
        "sdca_setup": max(med["sdca_1"] - sdca_epoch, 0.0),
        "pgs_setup": max(med["pgs_1"] - pgs_epoch, 0.0),
    }


def sdca_epochs_to(X, y, Xt, yt, sigma: float, target: float, max_epochs: int) -> int | None:
    # eval_rows=None: the target is the whole test set's accuracy, as in bench.peers.
    clf = SDCAClassifier(
        sigma=sigma, n_iter=max_epochs, tol=0.0, target_score=target, eval_rows=None, random_state=0
    )
    clf.fit(X, y, eval_set=(Xt, yt))
    return clf.n_iter_ if clf.stop_reason_ == "target_score" else None


def load_small(name: str):
    return load_pair(*SMALL_SETS[name])


SMALL_REPEATS = 15


def small_case(name: str, sigma: float) -> dict:
    """Seconds of PGS p=2 and of L-BFGS to the L-BFGS optimum's test accuracy minus 0.5 points."""
    X, y, Xt, yt = load_small(name)
    optimum = LBFGSClassifier(sigma=sigma, tol=1e-10, n_iter=10_000).fit(X, y)
    target = float(np.mean(optimum.predict(Xt) == yt)) - 0.005
    fits = {
        "pgs": lambda budget, **kw: PGSClassifier(sigma=sigma, n_iter=budget, random_state=0, **kw),
        "lbfgs": lambda budget, **kw: LBFGSClassifier(sigma=sigma, n_iter=budget, tol=0.0, **kw),
    }
    caps = {"pgs": 100 * X.shape[0], "lbfgs": 1000}
    budgets = {}
    for solver, make in fits.items():
        traced = make(caps[solver], target_score=target, **TO_TARGET)
        traced.fit(X, y, eval_set=(Xt, yt))
        budgets[solver] = traced.n_iter_ if traced.stop_reason_ == "target_score" else None
    runs: dict[str, list[float]] = {solver: [] for solver, budget in budgets.items() if budget}
    # 15: these fits take 1-30 ms, and with 5 one stall of the machine (a 27 ms L-BFGS fit among
    # 2 ms ones on heart_scale) moved a median past the other solver's.
    for _ in range(SMALL_REPEATS):
        for solver in runs:
            runs[solver].append(_time(lambda s=solver: fits[s](budgets[s]).fit(X, y)))
    return {
        "set": name,
        "sigma": sigma,
        "m": X.shape[0],
        "n": X.shape[1],
        "nnz": int(X.nnz),
        "target": target,
        "pgs_iterations": budgets["pgs"],
        "lbfgs_iterations": budgets["lbfgs"],
        **{f"{solver}_seconds": statistics.median(times) for solver, times in runs.items()},
    }


def hinge_case(name: str, data, sigma: float, max_epochs: int) -> dict:
    """The hinge loss (SDCA's closed-form step, a subgradient for PGS): SDCA's and PGS p=2's
    epochs to the test accuracy of SDCA's own optimum (duality gap 1e-9 P(0)) minus 0.5 points,
    and their costs per epoch."""
    X, y, Xt, yt = data
    m = X.shape[0]
    optimum = SDCAClassifier(loss="hinge", sigma=sigma, tol=1e-9, n_iter=2000, random_state=0).fit(X, y)
    target = float(np.mean(optimum.predict(Xt) == yt)) - 0.005
    sdca = SDCAClassifier(
        loss="hinge",
        sigma=sigma,
        n_iter=max_epochs,
        tol=0.0,
        target_score=target,
        eval_rows=None,
        random_state=0,
    ).fit(X, y, eval_set=(Xt, yt))
    pgs = PGSClassifier(
        loss="hinge",
        sigma=sigma,
        n_iter=max_epochs * m,
        target_score=target,
        **TO_TARGET,
        random_state=0,
    ).fit(X, y, eval_set=(Xt, yt))
    return {
        "set": name,
        "sigma": sigma,
        "loss": "hinge",
        "m": m,
        "n": X.shape[1],
        "nnz": int(X.nnz),
        "target": target,
        "optimum_stop": optimum.stop_reason_,
        "pgs_epochs": pgs.n_iter_ / m if pgs.stop_reason_ == "target_score" else None,
        "sdca_epochs": sdca.n_iter_ if sdca.stop_reason_ == "target_score" else None,
        **per_epoch_costs(X, y, sigma, loss="hinge"),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=None, help="default: every set of the peers record")
    parser.add_argument("--small-sets", default=",".join(SMALL_SETS))
    parser.add_argument("--hinge-sets", default="", help="sets to measure with the hinge loss too")
    parser.add_argument("--sigmas", default="1e-5,1e-6")
    parser.add_argument("--max-epochs", type=int, default=30)
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("auto_calibration", argv)
    peers = json.loads(PEERS_RECORD.read_text())["results"]["cases"]
    sets = (
        list(dict.fromkeys(c["set"] for c in peers))
        if args.sets is None
        else [s for s in args.sets.split(",") if s]
    )
    sigmas = [float(s) for s in args.sigmas.split(",") if s]
    warnings.simplefilter("ignore", ConvergenceWarning)
    warm_up()
    cases: list[dict] = []
    small: list[dict] = []
    hinge: list[dict] = []
    hinge_sets = {s for s in args.hinge_sets.split(",") if s}
    results = {
        "max_epochs": args.max_epochs,
        "peers_record": PEERS_RECORD.name,
        "cases": cases,
        "small_cases": small,
        "hinge_cases": hinge,
    }
    for name in sets:
        log(f"loading {name} ...")
        X, y, Xt, yt = load_set(name)
        for sigma in sigmas:
            peer_case = next(c for c in peers if c["set"] == name and c["sigma"] == sigma)
            pgs = next(r for r in peer_case["rows"] if r["solver"] == "PGS p=2")
            target = peer_case["target"]
            epochs = sdca_epochs_to(X, y, Xt, yt, sigma, target, args.max_epochs)
            costs = per_epoch_costs(X, y, sigma)
            cases.append(
                {
                    "set": name,
                    "sigma": sigma,
                    "m": X.shape[0],
                    "n": X.shape[1],
                    "nnz": int(X.nnz),
                    "target": target,
                    "pgs_epochs": pgs["epochs"],
                    "sdca_epochs": epochs,
                    **costs,
                }
            )
            log(json.dumps(cases[-1]))
            if name in hinge_sets:
                hinge.append(hinge_case(name, (X, y, Xt, yt), sigma, args.max_epochs))
                log(json.dumps(hinge[-1]))
            path = recording.save(results, args.results_dir)
    for name in [s for s in args.small_sets.split(",") if s]:
        for sigma in SMALL_SIGMAS:
            small.append(small_case(name, sigma))
            log(json.dumps(small[-1]))
            path = recording.save(results, args.results_dir)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
