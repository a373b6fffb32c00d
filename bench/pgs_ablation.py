"""Which PGS settings reach a target test accuracy in the fewest epochs: the evidence for the defaults.

    NUMBA_CACHE_DIR=var/numba-cache .venv/bin/python -m bench.pgs_ablation \
        [--variants defaults|small_m] [--sets a9a,w8a,ijcnn1,rt_polarity,reuters_moneyfx,rcv1_like] \
        [--sigmas 1e-5,1e-6] [--seeds 5] [--epochs 30] [--name NAME] [--results-dir DIR]

Two families of variants:

* ``defaults``: each row changes one setting, starting from the paper's Figure 1 and ending at the
  default; the last rows try larger first steps than ``t0="auto"`` picks.
* ``small_m``: how far PGS itself goes where sigma m is small (the paper's slow regime, Theorem 1):
  the default against one change each: the first step (t0) 1/4, 2, 4 and 16 times ``t0="auto"``'s,
  the average's weights t^a (a = 0, 1, 3), the minibatch k = 4, 16, 64 at p = 2 and k = 1, 4, 16,
  64 at p = 1.8 (Section VII: k > 1 is "worthless" at p = 2, while for p < 2 the paper takes
  k = O(n / d) because its O(T (d k + n)) iteration makes a larger minibatch free; this solver's
  iteration costs O(k d) at every p, so k trades samples for nothing), i.i.d. sampling instead of
  permutations, and a decreasing-sigma continuation: a geometric sequence of sigmas ending at the
  target sigma, each stage warm-started from the previous model (``coef_init``); the earlier
  stages run a fixed number of epochs and every epoch of every stage is counted.

The target is that of ``bench.time_to_accuracy``: the exact p = 2 optimum's test accuracy
(LIBLINEAR, same objective, same intercept scaling as the default) minus 0.5 points, for every
row (p = 1.8's rows too, whose own optimum can be less accurate). A cell is the median over the
seeds of the epochs (samples seen / m) at the first checkpoint (growth 1.1) whose test accuracy
reaches the target, with the runs that reached it in ``--epochs`` epochs; epochs do not depend on
the machine's load. The record also keeps each run's ``solver_seconds_`` (the traced run's, all
stages of a continuation): comparable only within one run, as ratios, and only on a quiet machine.

With ``--peers`` (default: the published bench.peers record, when it exists), each case also
carries that record's epochs and fit() seconds for Snap ML (1 thread) and PGS p=2 on the same set
and sigma, so the table can set the epochs found here against Snap ML's.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from solver import PGSClassifier

from . import tables
from .results import RESULTS_DIR, add_results_dir, record
from .time_to_accuracy import DEFAULT_SETS, TARGET_DROP, TO_TARGET, exact_optimum_p2, load, log

SMALL_M_SETS = ("rt_polarity", "reuters_moneyfx", "w8a", "a9a")
PEERS_RECORD = RESULTS_DIR / "peers.json"
SNAPML = "Snap ML 1 thread"


@dataclass(frozen=True)
class Variant:
    """One row: PGSClassifier parameters over the default's, and how the run is staged."""

    params: dict = field(default_factory=dict)
    first_step: float = 1.0  # the first step's factor over t0="auto"'s
    # Continuation: the earlier stages' sigmas as multiples of the target sigma, largest first,
    # each run for ``stage_epochs`` epochs from the previous stage's model.
    stages: tuple[float, ...] = ()
    stage_epochs: float = 1.0


PAPER = {"t0": 1.0, "sampling": "replacement", "intercept_scaling": 1.0, "output": "random"}
PLAIN = {"sampling": "replacement", "intercept_scaling": 1.0, "average_power": 0.0}
DEFAULT = "default (t0=auto, permutation, k=1, average_power=2)"
VARIANTS = {
    "defaults": {
        "paper's Figure 1 (t0=1, replacement, s=1, random iterate)": Variant(PAPER),
        "t0=auto, replacement, s=1, plain average": Variant(PLAIN),
        "+ sampling=permutation": Variant(PLAIN | {"sampling": "permutation"}),
        "+ intercept_scaling=auto": Variant(PLAIN | {"sampling": "permutation", "intercept_scaling": "auto"}),
        "+ average_power=1": Variant({"average_power": 1.0}),
        "+ average_power=2 (the default)": Variant(),
        "default, first step 4x t0=auto's": Variant(first_step=4.0),
        "default, first step 16x t0=auto's": Variant(first_step=16.0),
    },
    "small_m": {
        DEFAULT: Variant(),
        "first step 1/4x t0=auto's": Variant(first_step=0.25),
        "first step 2x t0=auto's": Variant(first_step=2.0),
        "first step 4x t0=auto's": Variant(first_step=4.0),
        "first step 16x t0=auto's": Variant(first_step=16.0),
        "average_power=0 (plain mean)": Variant({"average_power": 0.0}),
        "average_power=1": Variant({"average_power": 1.0}),
        "average_power=3": Variant({"average_power": 3.0}),
        "k=4": Variant({"batch_size": 4}),
        "k=16": Variant({"batch_size": 16}),
        "k=64": Variant({"batch_size": 64}),
        "k=16, first step 16x t0=auto's (k=1's step per sample)": Variant(
            {"batch_size": 16}, first_step=16.0
        ),
        "p=1.8, k=1": Variant({"p": 1.8}),
        "p=1.8, k=4": Variant({"p": 1.8, "batch_size": 4}),
        "p=1.8, k=16": Variant({"p": 1.8, "batch_size": 16}),
        "p=1.8, k=64": Variant({"p": 1.8, "batch_size": 64}),
        "sampling=replacement": Variant({"sampling": "replacement"}),
        "continuation 10 sigma (1 epoch) -> sigma": Variant(stages=(10.0,)),
        "continuation 10 sigma (1/4 epoch) -> sigma": Variant(stages=(10.0,), stage_epochs=0.25),
        "continuation 100, 10 sigma (1/4 epoch each) -> sigma": Variant(
            stages=(100.0, 10.0), stage_epochs=0.25
        ),
    },
}


@dataclass
class Outcome:
    epochs: float | None  # None: the target was not reached
    seconds: float


def run_variant(X, y, Xt, yt, sigma, target, variant: Variant, t0_auto: float, seed, epochs) -> Outcome:
    """One seeded run of a variant to the target; epochs and solver seconds over all its stages."""
    m = X.shape[0]
    params = dict(variant.params)
    if variant.first_step != 1.0:  # the first step is 1 / ((1 + t0) sigma)
        params["t0"] = max(1.0, (1.0 + t0_auto) / variant.first_step - 1.0)
    k = params.get("batch_size", 1)
    spent, seconds, start = 0.0, 0.0, {}
    for factor in variant.stages:
        stage = PGSClassifier(
            sigma=sigma * factor,
            n_iter=math.ceil(variant.stage_epochs * m / k),
            random_state=seed,
            **params,
        ).fit(X, y, **start)
        spent += stage.n_iter_ * k / m
        seconds += stage.solver_seconds_
        start = {"coef_init": stage.coef_, "intercept_init": stage.intercept_}
    clf = PGSClassifier(
        sigma=sigma,
        n_iter=math.ceil(epochs * m / k),
        target_score=target,
        **TO_TARGET,
        random_state=seed,
        **params,
    )
    clf.fit(X, y, eval_set=(Xt, yt), **start)
    seconds += clf.solver_seconds_
    if clf.stop_reason_ != "target_score":
        return Outcome(None, seconds)
    return Outcome(spent + clf.n_iter_ * k / m, seconds)


def peers_reference(path: Path | None) -> dict[tuple[str, float], dict]:
    """Snap ML's (1 thread) and PGS p=2's epochs and seconds per (set, sigma) in a bench.peers record."""
    if path is None or not path.exists():
        return {}
    rec = json.loads(path.read_text())
    found = {}
    for case in rec["results"]["cases"]:
        rows = {row["solver"]: row for row in case["rows"]}
        if SNAPML not in rows:
            continue
        found[case["set"], case["sigma"]] = {
            "record": f"{rec['command']} (commit {rec['commit']}, {rec['started_at'][:10]})",
            "target": case["target"],
            "max_epochs": rec["results"]["max_epochs"],
            **{
                f"{key}_{what}": rows[label][what]
                for key, label in (("snapml", SNAPML), ("pgs", "PGS p=2"))
                for what in ("epochs", "seconds")
            },
        }
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", choices=list(VARIANTS), default="defaults")
    parser.add_argument("--sets", default=None, help="default: the family's sets")
    parser.add_argument("--sigmas", default="1e-5,1e-6")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--name", default=None, help="the record's name (default: the benchmark's)")
    parser.add_argument(
        "--peers", type=Path, default=PEERS_RECORD, help="a bench.peers record to compare with"
    )
    add_results_dir(parser)
    args = parser.parse_args(argv)
    recording = record("pgs_ablation", argv)
    variants = VARIANTS[args.variants]
    family_sets = SMALL_M_SETS if args.variants == "small_m" else DEFAULT_SETS
    sets = args.sets.split(",") if args.sets else list(family_sets)
    sigmas = [float(s) for s in args.sigmas.split(",")]
    reference = peers_reference(args.peers)
    cases = []
    for name in sets:
        log(f"loading {name} ...")
        X, y, Xt, yt = load(name)
        for sigma in sigmas:
            probe = PGSClassifier(sigma=sigma, n_iter=1, random_state=0).fit(X, y)
            target = exact_optimum_p2(X, y, Xt, yt, sigma, probe.intercept_scaling_).accuracy
            target -= TARGET_DROP
            epochs: dict[str, list[float | None]] = {}
            seconds: dict[str, list[float]] = {}
            for label, variant in variants.items():
                runs = [
                    run_variant(X, y, Xt, yt, sigma, target, variant, probe.t0_, seed, args.epochs)
                    for seed in range(args.seeds)
                ]
                epochs[label] = [r.epochs for r in runs]
                seconds[label] = [r.seconds for r in runs]
                log(f"  {name} {sigma:g} {label}: {epochs[label]}")
            case = {
                "set": name,
                "sigma": sigma,
                "m": X.shape[0],
                "target": target,
                "epochs": epochs,
                "seconds": seconds,
            }
            if (name, sigma) in reference:
                case["peers"] = reference[name, sigma]
            cases.append(case)
    results = {
        "family": args.variants,
        "seeds": args.seeds,
        "epoch_cap": args.epochs,
        "variants": list(variants),
        "cases": cases,
    }
    path = recording.save(results, args.results_dir, args.name)
    print(tables.pgs_ablation(results))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
