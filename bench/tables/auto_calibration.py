"""bench.auto_calibration's record: the measurements solver="auto"'s rule (solver/auto.py) rests
on. Epochs to the target for SDCA and PGS p=2, their costs per epoch as a ratio, and L-BFGS's
seconds against PGS's on small sets."""

from __future__ import annotations

from .format import md_table, sig3


def _epochs(value: float | None, cap: int) -> str:
    return f"more than {cap}" if value is None else f"{value:.2f}"


def _ratio(case: dict) -> str:
    return f"{case['sdca_epoch'] / case['pgs_epoch']:.2f}" if case["pgs_epoch"] else "-"


def auto_calibration(r: dict) -> str:
    """The peers bench's 16 cases, logistic loss."""
    return md_table(
        ["set", "sigma", "m", "d", "sigma m", "PGS p=2 epochs", "SDCA epochs", "SDCA epoch / PGS epoch"],
        [
            [
                c["set"],
                f"{c['sigma']:g}",
                f"{c['m']:,}",
                f"{c['n']:,}",
                f"{c['sigma'] * c['m']:.3g}",
                _epochs(c["pgs_epochs"], r["max_epochs"]),
                _epochs(c["sdca_epochs"], r["max_epochs"]),
                _ratio(c),
            ]
            for c in r["cases"]
        ],
    )


def auto_calibration_hinge(r: dict) -> str:
    """The hinge loss on the real sets."""
    return md_table(
        ["set", "sigma", "PGS p=2 epochs", "SDCA epochs", "SDCA epoch / PGS epoch"],
        [
            [
                c["set"],
                f"{c['sigma']:g}",
                _epochs(c["pgs_epochs"], r["max_epochs"]),
                _epochs(c["sdca_epochs"], r["max_epochs"]),
                _ratio(c),
            ]
            for c in r["hinge_cases"]
        ],
    )


def auto_calibration_small(r: dict) -> str:
    """L-BFGS against PGS on small sets (cases the zero model already meets are left out)."""
    return md_table(
        ["set", "sigma", "m", "d", "PGS iterations", "L-BFGS iterations", "PGS fit() s", "L-BFGS fit() s"],
        [
            [
                c["set"],
                f"{c['sigma']:g}",
                f"{c['m']:,}",
                f"{c['n']:,}",
                f"{c['pgs_iterations']:,}",
                c["lbfgs_iterations"],
                sig3(c["pgs_seconds"]),
                sig3(c["lbfgs_seconds"]),
            ]
            for c in r["small_cases"]
            if "pgs_seconds" in c and "lbfgs_seconds" in c
        ],
    )
