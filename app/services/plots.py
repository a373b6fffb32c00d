"""SVG (or PNG) figures of a study (time to target against m, the PGS paper's Figures 6-9) and of a
job's trace (test score and objective against solver seconds).

matplotlib is used through its object API (``Figure``, no pyplot): no GUI backend, no global
current figure. PNG goes through Agg, SVG through matplotlib's SVG backend. Rendering is
serialized by a lock, because rcParams and the font cache are process-wide; callers run it in a
worker thread (the routes are plain ``def``), never on the event loop. Elements that tests and
scripts may look for carry SVG ids: ``ttt-run{i}-target{j}`` for a study's median lines,
``trace-test-score`` and ``trace-objective`` for a job's trace, ``path-score``, ``path-band`` and
``path-chosen`` for the regularisation path of a job whose sigma was "auto".
"""

from __future__ import annotations

import io
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Format = Literal["svg", "png"]
MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png"}

_LOCK = threading.Lock()
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", ":", "-.")
# Deterministic output: the same data gives the same bytes (ids are salted, no date stamp).
# text.parse_math off: names and labels come from users and are drawn as they are written; a
# "$" would otherwise start matplotlib's mathtext, whose parse errors ("$\\frac{$") fail the figure.
_RC = {"svg.hashsalt": "pgs-service", "svg.fonttype": "none", "font.size": 9.0, "text.parse_math": False}


class PlottingUnavailable(RuntimeError):
    pass


def _matplotlib() -> tuple[Any, Any]:
    """(the matplotlib module, its Figure class), imported on first use."""
    try:
        import matplotlib
        import matplotlib.ticker  # noqa: F401  (mpl.ticker below)
        from matplotlib.figure import Figure
    except ImportError as exc:  # a deployment without the dependency
        raise PlottingUnavailable("plots need matplotlib (pip install 'matplotlib>=3.8')") from exc
    return matplotlib, Figure


def _save(fig: Any, fmt: Format) -> bytes:
    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buf, format=fmt, metadata=metadata, dpi=120)
    return buf.getvalue()


def _target_text(target: float, score_name: str) -> str:
    if score_name == "accuracy":
        return f"{100 * target:.4g}%"
    if score_name == "rmse":
        return f"RMSE {target:.4g}"
    return f"{score_name} {target:.4g}"  # the metric the targets name


def _note(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.35")


@dataclass
class StudyFigure:
    title: str
    score_name: str
    sizes: list[int]
    targets: list[float]
    labels: list[str]
    rows: list[dict[str, Any]]
    done: int
    total: int
    succeeded: int


@dataclass
class _Series:
    """One (run, target) line of a study figure, per size: the median (NaN: not drawn) and the
    fastest and slowest repeat that reached the target (NaN where none did: a gap in the band)."""

    ys: list[float] = field(default_factory=list)
    lo: list[float] = field(default_factory=list)
    hi: list[float] = field(default_factory=list)
    drawn: int = 0
    hidden: int = 0

    @classmethod
    def of(cls, rows: list[dict[str, Any] | None], y: str) -> _Series:
        series = cls()
        for row in rows:
            ran = row is not None and row["repeats"] > 0
            med = low = high = None
            if row is not None and ran:
                med, low, high = row[f"median_{y}"], row[f"min_{y}"], row[f"max_{y}"]
            if low is not None and high is not None and low > 0:
                series.lo.append(low)
                series.hi.append(high)
            else:
                series.lo.append(math.nan)
                series.hi.append(math.nan)
            if med is not None and med > 0:
                series.ys.append(med)
                series.drawn += 1
            else:
                series.hidden += ran
                series.ys.append(math.nan)
        return series


def render_study(fig_data: StudyFigure, y: Literal["seconds", "iterations"], fmt: Format) -> bytes:
    """Median time to each target against m (log-log), one line per (run, target), over a band
    from the fastest to the slowest repeat that reached it (as the console draws it). Points
    whose median is undefined (half or more never reached the target) or zero (met before
    training) are not drawn; the band has a gap where no repeat reached the target."""
    mpl, Figure = _matplotlib()
    with _LOCK, mpl.rc_context(_RC):
        fig = Figure(figsize=(7.0, 4.8), layout="constrained")
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        by_cell = {(r["run"], r["m"], r["target"]): r for r in fig_data.rows}
        sizes = sorted(fig_data.sizes)
        drawn = hidden = 0
        for run, label in enumerate(fig_data.labels):
            color = f"C{run % 10}"
            for j, target in enumerate(fig_data.targets):
                series = _Series.of([by_cell.get((run, m, target)) for m in sizes], y)
                drawn, hidden = drawn + series.drawn, hidden + series.hidden
                (line,) = ax.plot(
                    sizes,
                    series.ys,
                    color=color,
                    marker=_MARKERS[j % len(_MARKERS)],
                    linestyle=_LINESTYLES[j % len(_LINESTYLES)],
                    markersize=4,
                    label=f"{label}, {_target_text(target, fig_data.score_name)}",
                )
                line.set_gid(f"ttt-run{run}-target{j}")
                band = ax.fill_between(sizes, series.lo, series.hi, color=color, alpha=0.15, linewidth=0)
                band.set_gid(f"band-run{run}-target{j}")
        ax.set_xlim(sizes[0] / 1.5, sizes[-1] * 1.5)
        # Ticks at the study's sizes, as plain numbers (not 4 x 10^1).
        ax.set_xticks(sizes, [f"{m:,}" for m in sizes])
        ax.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
        ax.set_xlabel("training-set size m")
        what = "solver seconds" if y == "seconds" else "iterations"
        ax.set_ylabel(f"{what} to reach the target (median)")
        fig.suptitle(fig_data.title)
        ax.grid(True, which="both", alpha=0.25)
        if drawn == 0:
            ax.set_ylim(*((1e-4, 1e1) if y == "seconds" else (1, 1e6)))
            _note(ax, "no job has reached a target yet" if fig_data.succeeded else "no job has succeeded yet")
        notes = [f"{fig_data.done} of {fig_data.total} jobs finished"]
        if hidden:
            notes.append(
                f"{hidden} point(s) not drawn (reached by half the repeats or fewer, or at the start)"
            )
        ax.set_title("; ".join(notes), fontsize=7, color="0.4")
        if fig_data.labels and fig_data.targets:
            n = len(fig_data.labels) * len(fig_data.targets)
            ax.legend(fontsize=7, ncol=2 if n > 8 else 1, loc="best")
        return _save(fig, fmt)


@dataclass
class TraceFigure:
    title: str
    score_name: str | None
    targets: list[float]
    # (solver seconds, objective, test score) per checkpoint, in order.
    points: Sequence[tuple[float, float | None, float | None]]


def render_trace(fig_data: TraceFigure, fmt: Format) -> bytes:
    """Test score (top) and training objective (bottom) against solver seconds."""
    mpl, Figure = _matplotlib()
    with _LOCK, mpl.rc_context(_RC):
        fig = Figure(figsize=(6.4, 5.6), layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True)
        scored = [(t, s) for t, _, s in fig_data.points if s is not None]
        objective = [(t, o) for t, o, _ in fig_data.points if o is not None]
        name = fig_data.score_name or "test score"
        if scored:
            (line,) = top.plot(*zip(*scored, strict=True), marker=".", color="C0")
            line.set_gid("trace-test-score")
            for j, target in enumerate(fig_data.targets):
                ref = top.axhline(target, color="0.5", linestyle=":", linewidth=1)
                ref.set_gid(f"target-{j}")
        else:
            _note(top, "no test score recorded (no evaluation data, or no checkpoint yet)")
        top.set_ylabel(f"test {name}")
        top.set_title(fig_data.title)
        if objective:
            (line,) = bottom.plot(*zip(*objective, strict=True), marker=".", color="C1")
            line.set_gid("trace-objective")
        else:
            _note(bottom, "no checkpoints recorded yet")
        bottom.set_ylabel("training objective")
        bottom.set_xlabel("solver seconds")
        for ax in (top, bottom):
            ax.grid(True, alpha=0.25)
        return _save(fig, fmt)


@dataclass
class PathFigure:
    title: str
    metric: str | None
    chosen: float | None
    # (sigma, mean score, its std) per point of the path; None where every fit diverged.
    points: Sequence[tuple[float, float | None, float | None]]


def render_path(fig_data: PathFigure, fmt: Format) -> bytes:
    """The cross-validated score against sigma (log x), mean over a band of +- one standard
    deviation, the chosen sigma marked."""
    mpl, Figure = _matplotlib()
    with _LOCK, mpl.rc_context(_RC):
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        ax = fig.add_subplot()
        ax.set_xscale("log")
        scored = sorted((x, m, sd or 0.0) for x, m, sd in fig_data.points if m is not None)
        if scored:
            xs, means, stds = zip(*scored, strict=True)
            band = ax.fill_between(
                xs,
                [m - sd for m, sd in zip(means, stds, strict=True)],
                [m + sd for m, sd in zip(means, stds, strict=True)],
                color="C0",
                alpha=0.2,
                linewidth=0,
            )
            band.set_gid("path-band")
            (line,) = ax.plot(xs, means, marker="o", markersize=4, color="C0")
            line.set_gid("path-score")
        else:
            ax.set_xlim(1e-6, 1.0)
            _note(ax, "no point of the path recorded yet")
        if fig_data.chosen is not None:
            mark = ax.axvline(fig_data.chosen, color="C3", linestyle="--", linewidth=1)
            mark.set_gid("path-chosen")
            ax.text(
                fig_data.chosen,
                1.0,
                f" sigma = {fig_data.chosen:.3g}",
                transform=ax.get_xaxis_transform(),
                va="top",
                color="C3",
            )
        # Plain tick labels (1e-04): the log axis's own are mathtext, which _RC turns off.
        ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda value, _: f"{value:.0e}"))
        ax.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
        ax.set_xlabel("sigma")
        ax.set_ylabel(f"held-out {fig_data.metric or 'score'} (mean +- std over the splits)")
        ax.set_title(fig_data.title)
        ax.grid(True, which="both", alpha=0.25)
        return _save(fig, fmt)
