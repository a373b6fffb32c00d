"""The service: prediction latency (bench.predict_bench), load (bench.load_bench), job dispatch
(bench.dispatch_bench), the first job after a fresh install (bench.cold_start), hostile input
(bench.hostile_bench), many long polls (bench.long_poll_bench) and the soak (bench.soak)."""

from __future__ import annotations

import re

from .figures import Figure
from .format import approx, md_table
from .goals import Goal, ratio_goal

# Single-row prediction p99 at most this multiple of a trivial endpoint's; a job dispatched to an
# idle worker within this many ms, the first job after a start at most this many ms later; the
# first job after a fresh install training within this many seconds of /readyz; prediction p99
# under the soak at most this multiple of the quiet run's.
GOAL_PREDICT_P99 = 2.0
GOAL_WARM_DISPATCH_MS, GOAL_FIRST_JOB_MS = 100.0, 1000.0
GOAL_COLD_START_S = 10.0
GOAL_SOAK_P99 = 3.0


def predict_bench(r: dict) -> str:
    svc, triv = r["service"], r["trivial"]
    rows = [
        [name, f"{x['single_p50_ms']:.2f}", f"{x['single_p99_ms']:.2f}", f"{x['batch_rows_per_s']:,.0f}"]
        for name, x in (("service", svc), ("trivial", triv))
    ]
    return "\n".join(
        [
            f"a9a model; {r['singles']:,} single-row requests per server, alternating request by "
            f"request; {r['batches']} batches of {r['batch_rows']:,} rows; loopback, keep-alive.",
            "",
            md_table(
                [
                    "endpoint",
                    "single row p50 ms",
                    "single row p99 ms",
                    f"rows/s in {r['batch_rows']:,}-row batches",
                ],
                rows,
            ),
            "",
            f"- {_predict_line(r)}",
        ]
    )


def _p99_ratio(r: dict) -> float:
    return r["service"]["single_p99_ms"] / r["trivial"]["single_p99_ms"]


def _predict_line(r: dict) -> str:
    ratio = _p99_ratio(r)
    return (
        f"Single-row prediction p99 within {GOAL_PREDICT_P99:g}x of a trivial endpoint's: {ratio:.2f}x, "
        + ("met" if ratio <= GOAL_PREDICT_P99 else "missed")
    )


def predict_bench_goals(r: dict) -> list[Goal]:
    return [
        ratio_goal(
            "Single-row prediction p99 against a trivial FastAPI endpoint's",
            [_p99_ratio(r)],
            GOAL_PREDICT_P99,
        )
    ]


def load_bench(results: list[dict]) -> str:
    rows = []
    for r in results:
        p, t = r["predictions"], r["training"]
        wall = "-" if t["job_wall_s_median"] is None else f"{t['job_wall_s_median']:.1f} s"
        rows.append(
            [
                r["setup"],
                f"{p['requests']:,}",
                f"{p['requests_per_s']:.0f}",
                f"{p['p50_ms']:.0f} ms",
                f"{p['p99_ms']:.0f} ms",
                f"{p['max_ms']:.0f} ms",
                p["errors"],
                f"{t['jobs_completed']} of {t['jobs_submitted']} ({wall})",
            ]
        )
    first = results[0]
    return (
        f"{first['clients']} prediction clients for {first['duration_s']:.0f} s, with training "
        "jobs in flight.\n\n"
        + md_table(
            [
                "setup",
                "requests",
                "requests/s",
                "p50",
                "p99",
                "max",
                "errors",
                "jobs completed (median wall time)",
            ],
            rows,
        )
    )


def dispatch_bench(results: list[dict]) -> str:
    def ms(case: dict | None) -> str:
        if case is None:
            return "n/a"
        v = case["server_ms"]
        return f"{v:.0f} ms" if v < 1000 else f"{v / 1000:.1f} s"

    rows = [
        [
            r["setup"],
            f"{r['warm']['server_p50_ms']:.1f} ms ({r['warm']['server_max_ms']:.1f} ms)",
            f"{r['warm']['client_p50_ms']:.1f} ms",
            ms(r.get("cold_prestarted")),
            ms(r.get("cold_cache_warm")),
            ms(r.get("cold_cache_empty")),
        ]
        for r in results
    ]
    n = results[0]["warm"]["n"]
    return "\n".join(
        [
            md_table(
                [
                    "setup",
                    f"warm, idle worker: p50 (max) of {n}",
                    "client-side p50",
                    "first job after start (defaults: prestarted)",
                    "first job, no prestart, cache warm",
                    "no prestart, empty Numba cache",
                ],
                rows,
            ),
            "",
            *(f"- {line}" for line in _dispatch_lines(results)),
        ]
    )


def _dispatch_ms(r: dict) -> tuple[float, float]:
    """Warm dispatch (p50) and how much longer the first job after a start took, in ms."""
    warm = r["warm"]["server_p50_ms"]
    return warm, r["cold_prestarted"]["server_ms"] - warm


def _dispatch_lines(results: list[dict]) -> list[str]:
    lines = []
    for r in results:
        warm, cold = _dispatch_ms(r)
        lines.append(
            f"Dispatch ({r['setup']}): warm {warm:.1f} ms, goal < {GOAL_WARM_DISPATCH_MS:g} ms, "
            f"{'met' if warm < GOAL_WARM_DISPATCH_MS else 'missed'}; first job after a start {cold:.0f} ms "
            f"more, goal < {GOAL_FIRST_JOB_MS / 1000:g} s, {'met' if cold < GOAL_FIRST_JOB_MS else 'missed'}"
        )
    return lines


def dispatch_bench_goals(results: list[dict]) -> list[Goal]:
    times = {r["setup"]: _dispatch_ms(r) for r in results}
    warm = {setup: w for setup, (w, _) in times.items()}
    cold = {setup: c for setup, (_, c) in times.items()}
    return [
        Goal(
            "Dispatch: `POST /v1/jobs` to running on an idle worker (p50)",
            f"under {GOAL_WARM_DISPATCH_MS:g} ms",
            ", ".join(f"{setup} {ms:.1f} ms" for setup, ms in warm.items()),
            sum(ms < GOAL_WARM_DISPATCH_MS for ms in warm.values()),
            len(warm),
        ),
        Goal(
            "Dispatch of the first job after a start, over a warm one",
            f"under {GOAL_FIRST_JOB_MS / 1000:g} s more",
            ", ".join(f"{setup} +{ms:.0f} ms" for setup, ms in cold.items()),
            sum(ms < GOAL_FIRST_JOB_MS for ms in cold.values()),
            len(cold),
        ),
    ]


def cold_start(r: dict) -> str:
    seen = "-" if r["running_seen_s"] is None else f"{r['running_seen_s']:.2f}"
    uploaded = "-" if r.get("uploaded_s") is None else f"{r['uploaded_s']:.2f}"
    row = [
        f"{r['make_serve_to_ready_s']:.0f}",
        uploaded,
        f"{r['posted_s']:.2f}",
        f"{r['running_s']:.2f}",
        seen,
        f"{r['compile_s']:.2f}",
        f"{r['training_s']:.2f}",
        f"{r['succeeded_s']:.2f}",
    ]
    return "\n".join(
        [
            f"A fresh clone (commit `{r['commit']}`); seconds from /readyz = 200 unless said otherwise.",
            "",
            md_table(
                [
                    "make serve to /readyz (install included)",
                    "data set uploaded",
                    "job posted",
                    "running (job's clock)",
                    "running (seen by the client)",
                    "kernels loaded (job's compile_seconds)",
                    "training starts",
                    "succeeded",
                ],
                [row],
            ),
            "",
            f"- {_cold_start_line(r)}",
        ]
    )


def _cold_start_line(r: dict) -> str:
    t = r["training_s"]
    return (
        f"First job after a fresh install: training starts {t:.1f} s after /readyz, goal at "
        f"most {GOAL_COLD_START_S:.0f} s, {'met' if t <= GOAL_COLD_START_S else 'missed'}"
    )


def cold_start_goals(r: dict) -> list[Goal]:
    t = r["training_s"]
    return [
        Goal(
            "First job after a fresh install: training starts after `/readyz`",
            f"at most {GOAL_COLD_START_S:g} s",
            f"{t:.1f} s",
            int(t <= GOAL_COLD_START_S),
        )
    ]


def _answer(outcome: dict) -> str:
    """The status, and the setting the problem's detail names as the limit that was hit."""
    limit = re.search(r"\b(PGS_[A-Z_]+)\b", outcome.get("detail") or "")
    return f"{outcome['status']}" + (f" (`{limit.group(1)}`)" if limit else "")


def long_poll_bench(r: dict) -> str:
    """Before and after (when both were measured): /readyz and a job read, quiet and under the polls."""
    sides = [side for side in ("before", "after") if side in r]
    n = r[sides[-1]]["polls"]["n"]

    def latency(x: dict) -> str:
        return f"{x['p50_ms']:.0f} / {x['p99_ms']:.0f} / {x['max_ms']:.0f} ms"

    rows = []
    for side in sides:
        x = r[side]
        polls = x["polls"]
        rows.append(
            [
                side,
                latency(x["quiet"]["readyz"]),
                latency(x["loaded"]["readyz"]),
                latency(x["loaded"]["get_job"]),
                f"{x['api_cpu_percent']:.0f} %",
                f"{x['all_waiting_after_s']:.1f} s",
                f"{polls['ok']} of {polls['n']}; {polls['min_s']:.1f}-{polls['max_s']:.1f} s",
            ]
        )
    return md_table(
        [
            "code",
            "/readyz quiet p50 / p99 / max",
            f"/readyz under {n} polls",
            f"job read under {n} polls",
            "API CPU under the polls",
            "all polls waiting after",
            f"polls answered 200 (wait={r['wait_s']}); their time",
        ],
        rows,
    )


def hostile_bench(r: dict) -> str:
    inputs = {
        "bomb": "gzip bomb: a small gzip of ~150 MB of one-feature rows",
        "newlines": "a 3 MB gzip of ~3 GB of newlines after two rows",
        "cr_rows": "36 MB `\\r`-separated text prediction (9.4M rows)",
        "json_rows": "64 MB JSON prediction of 16.8M one-number rows",
    }
    rows = [
        [
            text,
            _answer(r[case]),
            f"{r[case]['seconds']:.2f} s",
            f"+{r[case]['api_peak_rss_growth_mb']:.1f} MB",
            f"{r[case]['healthz_worst_ms']:.0f} ms",
        ]
        for case, text in inputs.items()
        if case in r
    ]
    for case, what in (("upload", "svmlight upload"), ("upload_gz", "gzip svmlight upload")):
        if case in r:
            up = r[case]["upload"]
            rows.append(
                [
                    f"{r[case]['file_mb']:.0f} MB {what} (a9a rows repeated)",
                    _answer(up),
                    f"{up['seconds']:.1f} s",
                    f"+{up['api_peak_rss_growth_mb']:.1f} MB",
                    "",
                ]
            )
    lines = [
        md_table(["input", "answer", "time to it", "API peak RSS growth", "worst /healthz meanwhile"], rows)
    ]
    quiet, loaded = r.get("quiet"), r.get("upload", {}).get("predict")
    if quiet and loaded and "p50_ms" in quiet and "p50_ms" in loaded:
        lines += [
            "",
            f"Single-row predictions from one client: p50 {quiet['p50_ms']:.1f} ms, p99 "
            f"{quiet['p99_ms']:.1f} ms quiet; p50 {loaded['p50_ms']:.1f} ms, p99 "
            f"{loaded['p99_ms']:.1f} ms while the {r['upload']['file_mb']:.0f} MB file was "
            "uploaded and parsed.",
        ]
    return "\n".join(lines)


def soak(r: dict) -> str:
    quiet, loaded, jobs, rss = r["quiet"], r["soak"], r["jobs"], r["api_rss_mb"]
    rows = [
        [
            what,
            f"{p['requests']:,}",
            f"{p['requests_per_s']:.0f}",
            f"{p['p50_ms']:.0f} ms",
            f"{p['p99_ms']:.0f} ms",
            f"{p['max_ms']:.0f} ms",
            p["errors"],
        ]
        for what, p in (("quiet", quiet), ("soak", loaded))
    ]
    lines = [
        f"{r['clients']} prediction clients, {r['quiet_seconds']:.0f} s alone, then "
        f"{r['seconds']:.0f} s with hostile uploads, a job every {r['job_interval_s']:.0f} s "
        f"and a worker killed every {r['kill_every_s']:.0f} s ({r['workers_killed']} killed, "
        f"{r['idle_workers_killed']} of them idle; "
        f"{r['workers']} workers, `PGS_MAX_JOB_SECONDS={r['max_job_seconds']:.0f}`).",
        "",
        md_table(["run", "predictions", "per s", "p50", "p99", "max", "failed"], rows),
        "",
        md_table(["job kind: final state (reason)", "jobs"], jobs["outcomes"].items()),
        "",
    ]
    slowest = r["slowest_answer_s"]
    uploads = [
        [
            f"`{name}`",
            ", ".join(f"{status} x{n}" for status, n in sorted(answers.items())),
            f"{slowest[name]:.1f} s",
        ]
        for name, answers in sorted(r["uploads"].items())
    ]
    lines += [md_table(["hostile upload", "answers", "slowest answer"], uploads), ""]
    refused = ", ".join(f"{k} x{n}" for k, n in jobs["refused"].items()) or "none"
    lines.append(
        f"Jobs submitted: {jobs['submitted']} (refused before queueing: {refused}); "
        f"not final after the drain: {len(jobs['not_final'])}; with a reason other than "
        f"the true one: {len(jobs['untrue_reasons'])}. API resident memory: "
        f"{rss['start']:.0f} MB at the start of the soak, peak {rss['peak']:.0f} MB, "
        f"{rss['end']:.0f} MB after the drain. The slowest answer to a job submission "
        f"took {slowest.get('POST /v1/jobs', 0):.1f} s."
    )
    return "\n".join(lines)


def soak_goals(r: dict) -> list[Goal]:
    failed, ratio, jobs = r["soak"]["errors"], r["p99_ratio"], r["jobs"]
    wrong = len(jobs["not_final"]) + len(jobs["untrue_reasons"])
    return [
        Goal("Soak: failed predictions", "0", f"{failed}", int(failed == 0)),
        ratio_goal("Soak: prediction p99 against the quiet run's", [ratio], GOAL_SOAK_P99),
        Goal(
            "Soak: jobs not final after the drain, or with an untrue reason", "0", f"{wrong}", int(wrong == 0)
        ),
    ]


# -- figures for the prose ---------------------------------------------------------------------------


def _predict_goal(r: dict) -> str:
    return f"{GOAL_PREDICT_P99:g}x"


def _warm_dispatch_goal(r: list[dict]) -> str:
    return f"{GOAL_WARM_DISPATCH_MS:g} ms"


def _first_job_goal(r: list[dict]) -> str:
    return f"{GOAL_FIRST_JOB_MS / 1000:g} s"


def _cold_start_goal(r: dict) -> str:
    return f"{GOAL_COLD_START_S:g} s"


def _training_starts(r: dict) -> str:
    """From /readyz to the first job's training, the goal's measure."""
    return f"{r['training_s']:.1f} s"


def _claimed(r: dict) -> str:
    """From the job's POST to its claim by a worker, on the job's clock."""
    return f"{approx(1e3 * (r['running_s'] - r['posted_s']))} ms"


def _compile(r: dict) -> str:
    return f"{r['compile_s']:.2f} s"


def _uploaded(r: dict) -> str:
    return f"{r['uploaded_s']:.1f} s"


def _make_serve(r: dict) -> str:
    """`make serve` to /readyz in a fresh clone: the install and the Numba warm-up."""
    return f"{approx(r['make_serve_to_ready_s'] / 60)} minutes"


def _soak_quiet(r: dict) -> str:
    return f"{r['quiet_seconds']:g} s"


def _soak_duration(r: dict) -> str:
    return f"{r['seconds']:g} s"


def _soak_kill_every(r: dict) -> str:
    return f"{r['kill_every_s']:g} s"


FIGURES: dict[tuple[str, str], Figure] = {
    ("predict_bench", "goal"): _predict_goal,
    ("dispatch_bench", "goal_warm"): _warm_dispatch_goal,
    ("dispatch_bench", "goal_first"): _first_job_goal,
    ("cold_start", "goal"): _cold_start_goal,
    ("cold_start", "training_starts"): _training_starts,
    ("cold_start", "claimed"): _claimed,
    ("cold_start", "compile"): _compile,
    ("cold_start", "uploaded"): _uploaded,
    ("cold_start", "make_serve"): _make_serve,
    ("soak", "quiet"): _soak_quiet,
    ("soak", "duration"): _soak_duration,
    ("soak", "kill_every"): _soak_kill_every,
}
