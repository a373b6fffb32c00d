"""A training job through the service against the same work in one process (bench.end_to_end)."""

from __future__ import annotations

from .figures import Figure, count, ratio_span
from .format import md_table, median_of, span
from .goals import Goal, ratio_goal

# The job's wall time (POST to succeeded) at most this multiple of the in-process fit plus one read.
GOAL_END_TO_END = 1.3
# The worker's steps of a job in the order it runs them (bench.end_to_end's replay).
WORKER_STEPS = ("load_job", "load_data", "fit_traced", "package", "metrics", "store_model")


def end_to_end_ratio(sample: dict, clock: str = "client_s") -> float:
    """One repeat's job time (the client's, or the job's own ``server_s``) over the same work in
    one process: one read, the job's preprocessing (if any) and the fit."""
    return sample[clock] / (sample["read_s"] + sample.get("prep_s", 0.0) + sample["fit_s"])


def _e2e_case(case: dict) -> str:
    prep = "raw features" if case["preprocessing"] == "none" else "default preprocessing"
    return f"PGS p={case['p']:g}, {prep}"


def end_to_end(r: dict) -> str:
    def ms(x: float) -> str:
        return f"{x * 1000:.0f}"

    rows = []
    for case in r["cases"]:
        med, first = case["median"], case["first_job"]
        rows.append(
            [
                _e2e_case(case),
                ms(med["client_s"]),
                ms(med["server_s"]),
                ms(med["dispatch_s"]),
                ms(med["run_s"]),
                ms(med["solver_s"]),
                ms(med["read_s"]),
                ms(med["prep_s"]),
                ms(med["fit_s"]),
                f"{median_of([end_to_end_ratio(s) for s in case['samples']]):.2f}",
                f"{median_of([end_to_end_ratio(s, 'server_s') for s in case['samples']]):.2f}",
                ms(first["client_s"]),
            ]
        )
    lines = [
        f"{r['set']}: {r['m']:,} x {r['n']} ({r['nnz']:,} non-zeros) stored by one upload "
        f"({r['upload_s']:.0f} s); sigma {r['sigma']:g}, {r['n_iter']:,} iterations, every row "
        f"trained on; medians of {r['repeats']} interleaved repeats, in milliseconds. The ratio "
        "is the job's time over read + preprocessing + fit (median of the repeats' ratios).",
        "",
        md_table(
            [
                "case",
                "POST to succeeded (client)",
                "created to finished (job)",
                "dispatch",
                "worker run",
                "solver",
                "one read",
                "preprocessing",
                "fit()",
                "ratio (client)",
                "ratio (job)",
                "first job (client)",
            ],
            rows,
        ),
    ]
    profiled = [c for c in r["cases"] if c.get("worker_steps")]
    if profiled:

        def step_row(case: dict) -> list[str]:
            steps = case["worker_steps"]
            rest = case["median"]["run_s"] - sum(steps[k] for k in WORKER_STEPS)
            return [
                _e2e_case(case),
                *(ms(steps[k]) for k in WORKER_STEPS),
                ms(steps["fit_traced"] - steps["fit"]),
                ms(rest),
            ]

        lines += [
            "",
            f"The worker's steps replayed in the benchmark's process with the server "
            f"stopped (median of {r['profile_repeats']}), in milliseconds; the last "
            "columns are the trace's share of the traced fit, and the job's median worker "
            "run minus the replayed steps (its database writes, progress and heartbeats, "
            "and the load the server's other processes add):",
            "",
            md_table(
                [
                    "case",
                    "load job",
                    "load data (read + preprocessing)",
                    "fit, traced (as the worker)",
                    "export",
                    "metrics",
                    "model files",
                    "of which the trace",
                    "worker run not in the replay",
                ],
                [step_row(c) for c in profiled],
            ),
        ]
    return "\n".join([*lines, "", *(f"- {line}" for line in _goal_lines(r))])


def case_ratio(case: dict) -> float:
    """The case's verdict ratio: the median over its repeats of the client's ratio."""
    return median_of([end_to_end_ratio(s) for s in case["samples"]])


def _goal_lines(r: dict) -> list[str]:
    lines = []
    for case in r["cases"]:
        ratio = case_ratio(case)
        lines.append(
            f"End to end ({_e2e_case(case)}, {r['m']:,} rows): POST to succeeded "
            f"{ratio:.2f}x the in-process fit() plus one read, goal at most "
            f"{GOAL_END_TO_END}x, {'met' if ratio <= GOAL_END_TO_END else 'missed'}"
        )
    return lines


def end_to_end_goals(r: dict) -> list[Goal]:
    return [
        ratio_goal(
            f"A training job through the service, `POST` to succeeded ({r['m']:,} rows), against "
            "one read and fit() in one process (each p and preprocessing)",
            [case_ratio(case) for case in r["cases"]],
            GOAL_END_TO_END,
        )
    ]


# -- figures for the prose ---------------------------------------------------------------------------

# The cases by their preprocessing, as the template names them; without one, every case.
PREPROCESSING = {"raw": "none", "default": "default"}


def _cases(r: dict, preprocessing: tuple[str, ...]) -> list[dict]:
    wanted = {PREPROCESSING[p] for p in preprocessing} or set(PREPROCESSING.values())
    return [case for case in r["cases"] if case["preprocessing"] in wanted]


def _ms(seconds: list[float]) -> str:
    return span([1e3 * s for s in seconds], ".0f") + " ms"


def _in_process(case: dict) -> float:
    """The median seconds of the same work in one process: one read, preprocessing, fit()."""
    med = case["median"]
    return med["read_s"] + med["prep_s"] + med["fit_s"]


def _goal(r: dict) -> str:
    return f"{GOAL_END_TO_END:g}x"


def _goal_margin(r: dict) -> str:
    """What the goal lets the service add, as a share of the in-process time."""
    return f"{GOAL_END_TO_END - 1:.1f}"


def _missed(r: dict) -> str:
    ratios = [case_ratio(case) for case in r["cases"]]
    return count(sum(q > GOAL_END_TO_END for q in ratios), len(ratios))


def _ratio(r: dict, *preprocessing: str) -> str:
    return ratio_span([case_ratio(case) for case in _cases(r, preprocessing)])


def _client_s(r: dict, *preprocessing: str) -> str:
    """POST to succeeded, seen by the client."""
    return span([case["median"]["client_s"] for case in _cases(r, preprocessing)], ".2f") + " s"


def _job_s(r: dict, *preprocessing: str) -> str:
    """Created to finished, on the job's own clock."""
    return span([case["median"]["server_s"] for case in _cases(r, preprocessing)], ".2f") + " s"


def _in_process_s(r: dict, *preprocessing: str) -> str:
    return span([_in_process(case) for case in _cases(r, preprocessing)], ".2f") + " s"


def _allowed_ms(r: dict, *preprocessing: str) -> str:
    """What the goal lets the service add to the in-process time."""
    return _ms([(GOAL_END_TO_END - 1) * _in_process(case) for case in _cases(r, preprocessing)])


def _dispatch_ms(r: dict, *preprocessing: str) -> str:
    return _ms([case["median"]["dispatch_s"] for case in _cases(r, preprocessing)])


def _answer_ms(r: dict, *preprocessing: str) -> str:
    """The client's time beyond the job's: POST to created, and finished to the answer."""
    return _ms([case["median"]["client_s"] - case["median"]["server_s"] for case in _cases(r, preprocessing)])


def _prep_share(r: dict, *preprocessing: str) -> str:
    """The preprocessing's share of the job's time."""
    cases = _cases(r, preprocessing)
    return span([case["median"]["prep_s"] / case["median"]["server_s"] for case in cases], ".2f")


def _steps(r: dict, preprocessing: tuple[str, ...]) -> list[dict]:
    """The replayed worker steps of the cases that were profiled."""
    return [case["worker_steps"] for case in _cases(r, preprocessing) if case.get("worker_steps")]


def _trace_ms(r: dict, *preprocessing: str) -> str:
    """The trace's share of the replayed fit: traced less untraced."""
    return _ms([steps["fit_traced"] - steps["fit"] for steps in _steps(r, preprocessing)])


def _model_files_ms(r: dict, *preprocessing: str) -> str:
    return _ms([steps["store_model"] for steps in _steps(r, preprocessing)])


FIGURES: dict[tuple[str, str], Figure] = {
    ("end_to_end", "goal"): _goal,
    ("end_to_end", "goal_margin"): _goal_margin,
    ("end_to_end", "missed"): _missed,
    ("end_to_end", "ratio"): _ratio,
    ("end_to_end", "client_s"): _client_s,
    ("end_to_end", "job_s"): _job_s,
    ("end_to_end", "in_process_s"): _in_process_s,
    ("end_to_end", "allowed_ms"): _allowed_ms,
    ("end_to_end", "dispatch_ms"): _dispatch_ms,
    ("end_to_end", "answer_ms"): _answer_ms,
    ("end_to_end", "prep_share"): _prep_share,
    ("end_to_end", "trace_ms"): _trace_ms,
    ("end_to_end", "model_files_ms"): _model_files_ms,
}
