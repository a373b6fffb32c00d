"""Which PGS settings reach a target test accuracy in the fewest epochs: the evidence for the defaults.

    NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.pgs_ablation \
        [--sets a9a,w8a,ijcnn1,rt_polarity,reuters_moneyfx,rcv1_like] [--sigmas 1e-5,1e-6] \
        [--seeds 5] [--epochs 30]

Each row changes one setting, starting from the paper's Figure 1 and ending at the default;
the last rows try larger first steps than ``t0="auto"`` picks. The target is that of
``bench.time_to_accuracy``: the exact p = 2 optimum's test accuracy (LIBLINEAR, same objective,
same intercept scaling as the default) minus 0.5 points. A cell is the median over the seeds of the
epochs (samples seen / m) at the first checkpoint (growth 1.1) whose test accuracy reaches the
target, with the runs that reached it in 30 epochs; epochs do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import math

from solver import PGSClassifier

from . import tables
from .results import add_results_dir, record
from .time_to_accuracy import DEFAULT_SETS, TARGET_DROP, exact_optimum_p2, load, log

PAPER = {"t0": 1.0, "sampling": "replacement", "intercept_scaling": 1.0, "output": "random"}
PLAIN = {"sampling": "replacement", "intercept_scaling": 1.0, "average_power": 0.0}
# label -> (parameters, factor by which the first step exceeds t0="auto"'s)
VARIANTS = {
    "paper's Figure 1 (t0=1, replacement, s=1, random iterate)": (PAPER, 1.0),
    "t0=auto, replacement, s=1, plain average": (PLAIN, 1.0),
    "+ sampling=permutation": (PLAIN | {"sampling": "permutation"}, 1.0),
    "+ intercept_scaling=auto": (PLAIN | {"sampling": "permutation", "intercept_scaling": "auto"}, 1.0),
    "+ average_power=1 (the default)": ({}, 1.0),
    "default, first step 4x t0=auto's": ({}, 4.0),
    "default, first step 16x t0=auto's": ({}, 16.0),
}


def epochs_to_target(X, y, Xt, yt, sigma, target, params, seed, epochs) -> float:
    m = X.shape[0]
    clf = PGSClassifier(
        sigma=sigma,
        n_iter=epochs * m,
        target_score=target,
        checkpoint_growth=1.1,
        random_state=seed,
        **params,
    )
    clf.fit(X, y, eval_set=(Xt, yt))
    return clf.n_iter_ / m if clf.stop_reason_ == "target_score" else math.inf


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS))
    parser.add_argument("--sigmas", default="1e-5,1e-6")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=30)
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("pgs_ablation", argv)
    sigmas = [float(s) for s in args.sigmas.split(",")]
    cases = []
    for name in args.sets.split(","):
        log(f"loading {name} ...")
        X, y, Xt, yt = load(name)
        for sigma in sigmas:
            probe = PGSClassifier(sigma=sigma, n_iter=1, random_state=0).fit(X, y)
            target = exact_optimum_p2(X, y, Xt, yt, sigma, probe.intercept_scaling_).accuracy
            target -= TARGET_DROP
            epochs: dict[str, list[float | None]] = {}
            for label, (params, step_factor) in VARIANTS.items():
                if step_factor != 1.0:  # first step 1 / ((1 + t0) sigma) times step_factor
                    params = params | {"t0": max(1.0, (1.0 + probe.t0_) / step_factor - 1.0)}
                runs = [
                    epochs_to_target(X, y, Xt, yt, sigma, target, params, seed, args.epochs)
                    for seed in range(args.seeds)
                ]
                epochs[label] = [r if math.isfinite(r) else None for r in runs]
                log(f"  {name} {sigma:g} {label}: {epochs[label]}")
            cases.append({"set": name, "sigma": sigma, "target": target, "epochs": epochs})
    results = {"seeds": args.seeds, "epoch_cap": args.epochs, "variants": list(VARIANTS), "cases": cases}
    path = recording.save(results, args.results_dir)
    print(tables.pgs_ablation(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
