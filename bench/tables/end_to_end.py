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


# -- files on disk to a stored model (bench.end_to_end --measure files) -----------------------------

# The service path's time at most this multiple of the notebook path's (stretch: FILES_STRETCH).
GOAL_FILES = 1.0
FILES_STRETCH = 0.5
# Where the service path's time goes, in its order: the uploads (each parsed and stored before
# its answer), dispatch, the job's run by its metrics' parts (app/training/timing.py), and the rest.
FILES_PARTS = (
    ("upload_train_s", "upload + parse train"),
    ("upload_test_s", "upload + parse test"),
    ("dispatch_s", "dispatch"),
    ("load_seconds", "load"),
    ("preprocessing_seconds", "preprocessing"),
    ("compile_seconds", "compile"),
    ("solver_seconds", "solver"),
    ("checkpoint_seconds", "checkpoints"),
    ("progress_seconds", "progress"),
    ("final_metrics_seconds", "final metrics"),
    ("model_write_seconds", "model write"),
    ("other_seconds", "other"),
)


def files_ratio(case: dict) -> float:
    """The case's verdict: the median over its repeats of service / notebook."""
    pairs = zip(case["service"], case["notebook"], strict=True)
    return median_of([service["total_s"] / notebook["total_s"] for service, notebook in pairs])


def _unaccounted(case: dict) -> float:
    """The job's time the parts do not cover (POST to created, the final database write, the
    answer to the client's long poll): the median over the repeats, each its own difference
    (differences of the columns' medians need not be one of them)."""
    return median_of(
        [s["job_s"] - s["dispatch_s"] - s["solver_seconds"] - s["overhead_seconds"] for s in case["service"]]
    )


def end_to_end_files(r: dict) -> str:
    def s(x: float) -> str:
        return f"{x:.2f}"

    rows, parts = [], []
    for case in r["cases"]:
        nb, sv = case["median_notebook"], case["median_service"]
        reached = sum(x["reached"] for x in case["notebook"] + case["service"])
        rows.append(
            [
                case["set"],
                f"{case['m']:,} / {case['m_test']:,} x {case['n']:,}",
                f"{case['train_mb'] + case['test_mb']:.0f}",
                f"{case['target']:g}",
                s(nb["read_train_s"] + nb["read_test_s"]),
                s(nb["scale_s"]),
                s(nb["fit_s"]),
                s(nb["total_s"]),
                s(sv["upload_train_s"] + sv["upload_test_s"]),
                s(sv["job_s"]),
                s(sv["total_s"]),
                f"{files_ratio(case):.2f}",
                f"{reached} of {2 * len(case['service'])}",
            ]
        )
        parts.append(
            [case["set"], *(s(sv[key]) for key, _ in FILES_PARTS), s(_unaccounted(case)), s(nb["solver_s"])]
        )
    lines = [
        f"Files on disk to a model at the target test accuracy; sigma {r['sigma']:g}, medians of "
        f"{r['repeats']} interleaved repeats (after one warm-up of each path), in seconds. The "
        "ratio is the service path's time over the notebook's (median of the repeats' ratios).",
        "",
        md_table(
            [
                "set",
                "train / test rows x features",
                "files (MB)",
                "target",
                "notebook: read",
                "scale",
                "fit()",
                "total",
                "service: uploads",
                "POST to succeeded",
                "total",
                "ratio",
                "runs that reached the target",
            ],
            rows,
        ),
        "",
        "Where the service path's time goes (medians, seconds): the uploads, dispatch, the job's "
        "run by the parts of its metrics, what the parts do not cover (POST to created, the final "
        "database write, the answer to the long poll), and the notebook's solver time beside it:",
        "",
        md_table(["set", *(label for _, label in FILES_PARTS), "not in the parts", "notebook solver"], parts),
    ]
    return "\n".join([*lines, "", *(f"- {line}" for line in _files_goal_lines(r))])


def _files_goal_lines(r: dict) -> list[str]:
    return [
        f"Files to stored model ({case['set']}): {files_ratio(case):.2f}x the notebook path, goal at "
        f"most {GOAL_FILES:g}x (stretch {FILES_STRETCH:g}x), "
        f"{'met' if files_ratio(case) <= GOAL_FILES else 'missed'}"
        for case in r["cases"]
    ]


def end_to_end_files_goals(r: dict) -> list[Goal]:
    ratios = [files_ratio(case) for case in r["cases"]]
    sets = ", ".join(case["set"] for case in r["cases"])
    return [
        ratio_goal(
            f"Files on disk to a stored model at a target accuracy, through the service, against "
            f"the notebook path ({sets}, default preprocessing)",
            ratios,
            GOAL_FILES,
        ),
        ratio_goal(f"The same, stretch goal ({sets})", ratios, FILES_STRETCH),
    ]


def _files_case(r: dict, name: str) -> dict:
    return next(case for case in r["cases"] if case["set"] == name)


def _files_goal(r: dict) -> str:
    return f"{GOAL_FILES:g}x"


def _files_stretch(r: dict) -> str:
    return f"{FILES_STRETCH:g}x"


def _files_ratio(r: dict, *sets: str) -> str:
    cases = [_files_case(r, name) for name in sets] if sets else r["cases"]
    return ratio_span([files_ratio(case) for case in cases])


def _files_missed(r: dict) -> str:
    ratios = [files_ratio(case) for case in r["cases"]]
    return count(sum(q > GOAL_FILES for q in ratios), len(ratios))


def _files_upload_share(r: dict, *sets: str) -> str:
    """The uploads' share (with their parse) of the service path's time."""
    cases = [_files_case(r, name) for name in sets] if sets else r["cases"]
    shares = [
        (case["median_service"]["upload_train_s"] + case["median_service"]["upload_test_s"])
        / case["median_service"]["total_s"]
        for case in cases
    ]
    return span([100 * x for x in shares], ".0f") + " %"


def _files_notebook_read_share(r: dict, *sets: str) -> str:
    """The reads' share of the notebook path's time."""
    cases = [_files_case(r, name) for name in sets] if sets else r["cases"]
    shares = [
        (case["median_notebook"]["read_train_s"] + case["median_notebook"]["read_test_s"])
        / case["median_notebook"]["total_s"]
        for case in cases
    ]
    return span([100 * x for x in shares], ".0f") + " %"


def _files_seconds(r: dict, side: str, key: str, name: str) -> str:
    """One median of one set, e.g. ``service solver_seconds rcv1_like``."""
    return f"{_files_case(r, name)['median_' + side][key]:.2f} s"


FIGURES.update(
    {
        ("end_to_end", "files_goal"): _files_goal,
        ("end_to_end", "files_stretch"): _files_stretch,
        ("end_to_end", "files_ratio"): _files_ratio,
        ("end_to_end", "files_missed"): _files_missed,
        ("end_to_end", "files_upload_share"): _files_upload_share,
        ("end_to_end", "files_read_share"): _files_notebook_read_share,
        ("end_to_end", "files_seconds"): _files_seconds,
    }
)
