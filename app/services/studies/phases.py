"""What a study adds to a job inside the worker: the seeded subsample and the sigma selection.

Both are plain functions of arrays, called by ``app.training.worker`` after the evaluation split, so the
evaluation rows are out of reach by construction:

- :func:`subsample_rows`: the job trains on ``train_size`` rows of its training part, drawn with
  ``subsample_seed`` (from the study seed and the repeat index, :func:`subsample_seed`). For one
  repeat the subsamples of the different sizes are nested (the first m of one permutation), so a
  curve over m compares like with like; different repeats draw different permutations.
- :func:`select_sigma`: the m rows are split again into an inner-train and a validation part;
  every sigma of the grid is fitted on the inner-train part and scored on the validation part; the
  best one is used for the real fit on all m rows. The PGS paper picked sigma on the test data and
  says so; this is the sound version of that step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.services.datasets.splits import split_indices
from solver.selection import regularisation_path


def subsample_seed(seed: int, repeat: int) -> int:
    """The subsample seed of one repeat: independent streams for (seed, repeat), below 2**31 (a
    signed 32-bit column on every database)."""
    state = np.random.SeedSequence([seed, repeat]).generate_state(1, dtype=np.uint32)[0]
    return int(state >> 1)


def subsample_rows(n: int, m: int, seed: int) -> np.ndarray:
    """Sorted indices of ``m`` of ``n`` rows; nested in ``m`` for a fixed ``seed``."""
    if not 1 <= m <= n:
        raise ValueError(f"cannot draw a subsample of {m} rows from {n}")
    return np.sort(np.random.default_rng(seed).permutation(n)[:m])


@dataclass
class SigmaSelection:
    sigma: float
    score_name: str
    n_fit: int
    n_validation: int
    grid: list[dict[str, float | None]] = field(default_factory=list)

    def metrics(self) -> dict[str, Any]:
        """What the job records in its metrics (the selection is part of its result)."""
        return {
            "selected_sigma": self.sigma,
            "sigma_selection": {
                "score_name": self.score_name,
                "n_fit": self.n_fit,
                "n_validation": self.n_validation,
                "solver_seconds": float(sum(g["solver_seconds"] or 0.0 for g in self.grid)),
                "grid": self.grid,
            },
        }


def select_sigma(
    build: Callable[[float], Any],
    X: Any,
    y: np.ndarray,
    *,
    classification: bool,
    grid: Sequence[float],
    validation_fraction: float,
    seed: int,
    callback: Callable[[Any], bool | None] | None = None,
    stopped: Callable[[], bool] = lambda: False,
) -> SigmaSelection | None:
    """Fit ``build(sigma)`` for each sigma on an inner-train part of (X, y), score each on the
    validation part, and return the best (accuracy up, RMSE down; ties go to the larger sigma,
    the simpler model): ``solver.selection.regularisation_path`` over one split. ``None`` when
    ``stopped()`` turned true (cancel, shutdown) on the way.

    ``y`` holds the labels the estimator is fitted with (class codes for classification).
    """
    fit_rows, val_rows = split_indices(X.shape[0], validation_fraction, seed)
    if classification and np.unique(y[fit_rows]).shape[0] < 2:
        raise ValueError(
            f"sigma selection: the inner training part ({len(fit_rows)} of {X.shape[0]} rows) "
            "has a single class; use larger sizes or a smaller validation_fraction"
        )
    selection = SigmaSelection(
        sigma=float("nan"),
        score_name="accuracy" if classification else "rmse",
        n_fit=len(fit_rows),
        n_validation=len(val_rows),
    )
    # The library's path over the given grid, cold fits and no early stop: every sigma of a
    # study's grid is scored, on the study's own seeded split (split_indices).
    begun = 0

    def counted_build(sigma: float) -> Any:
        nonlocal begun
        begun += 1
        return build(sigma)

    def path_progress(progress: Any) -> bool | None:
        # The path's fits done over planned (one split: one fit a sigma), as sigma "auto"
        # reports its path; a fit's own iterations restart at every sigma and would say nothing.
        if callback is None:
            return None
        return callback(
            dataclasses.replace(progress, iteration=begun - 1, n_iter=len(grid), phase="select_sigma")
        )

    path = regularisation_path(
        counted_build,
        X,
        y,
        grid=grid,
        splits=[(fit_rows, val_rows)],
        splits_name="validation",
        metric=selection.score_name,
        warm_start=False,
        callback=path_progress,
        stopped=stopped,
    )
    if path is None:
        return None
    points = {point.sigma: point for point in path.path}
    selection.grid = [
        {
            "sigma": float(sigma),
            "score": points[float(sigma)].mean,
            "solver_seconds": points[float(sigma)].solver_seconds,
        }
        for sigma in grid
    ]
    selection.sigma = path.sigma
    return selection
