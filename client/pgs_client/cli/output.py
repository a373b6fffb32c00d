"""What the commands print: rich tables for people, JSON (``--json``) for scripts."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

stdout = Console(soft_wrap=True)
stderr = Console(stderr=True)


def plain(obj: Any) -> Any:
    """Result objects (dataclasses, nested) as JSON-ready dicts and lists."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, list):
        return [plain(o) for o in obj]
    return obj


def emit_json(obj: Any) -> None:
    # print, not rich: JSON goes out exactly as json.dumps writes it (no wrapping, no colour).
    print(json.dumps(plain(obj), default=str, indent=2))


def _cell(value: Any, nested: bool = False) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        text = ", ".join(f"{k}={_cell(v, True)}" for k, v in value.items())
        return "{" + text + "}" if nested else text
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if hasattr(value, "strftime"):
        return str(value.strftime("%Y-%m-%d %H:%M:%S"))  # the service's times are UTC
    return str(value)


def table(items: Sequence[Any], columns: Sequence[str], title: str | None = None) -> None:
    """One row per item (a dataclass or a dict), the given fields as columns."""
    out = Table(title=title)
    for column in columns:
        out.add_column(column, overflow="fold")
    for item in items:
        row = plain(item)
        out.add_row(*(_cell(row.get(c)) for c in columns))
    stdout.print(out)


def record(item: Any, title: str | None = None) -> None:
    """One object as a two-column table of its fields."""
    out = Table(title=title, show_header=False)
    out.add_column("field")
    out.add_column("value", overflow="fold")
    for key, value in plain(item).items():
        if key == "coefficients" and value:
            out.add_row(key, top_weights(value))
        elif key == "progress" and isinstance(value, dict) and "eta_s" in value:
            out.add_row(key, job_progress(value))
        elif key != "table":
            out.add_row(key, _cell(value))
    stdout.print(out)


# What a running job's counts count (JobProgress.phase).
PHASES = {
    "select_sigma": "choosing sigma: fits of the path",
    "choose_threshold": "choosing the threshold: iterations",
}


def duration(seconds: float) -> str:
    """Seconds as a person reads them: 42 s, 3 min 5 s, 2 h 10 min."""
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.3g} s" if seconds < 10 else f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def job_progress(p: dict[str, Any]) -> str:
    """A job's progress in a line: what is counted, how far, the time spent and left."""
    if p.get("n_iter"):
        counted = PHASES.get(p.get("phase") or "", "iterations")
        line = f"{counted} {p.get('iteration') or 0:,} of {p['n_iter']:,}"
        if p.get("fraction") is not None:
            line += f" ({p['fraction']:.0%})"
    else:
        line = "not started"
    if p.get("elapsed_s") is not None:
        line += f", {duration(p['elapsed_s'])} elapsed"
    if p.get("eta_s") is not None:
        line += f", about {duration(p['eta_s'])} left"
        if p.get("phase") not in (None, "fit"):
            line += " in this phase"
    return line


def top_weights(summary: dict[str, Any], each_side: int = 3) -> str:
    """A job's or a model's coefficients in a line per class: the few largest positive and
    most negative weights by name (``pgs models coefficients`` lists them all)."""
    lines = []
    for out in summary["outputs"]:
        picked = out["positive"][:each_side] + out["negative"][:each_side]
        weights = ", ".join(f"{e['name']} {e['weight']:+.4g}" for e in picked)
        label = "" if out.get("class_") is None else f"{out['class_']}: "
        lines.append(f"{label}{weights or 'none'} ({out['nonzero']} non-zero)")
    return "\n".join(lines)


def fit_warnings(obj: Any) -> None:
    """A job's or a model's warnings for a degenerate fit, and a data set's (plain sentences:
    what it cannot be used for), on stderr in bold (also with --json, whose stdout stays the
    JSON)."""
    for warning in getattr(obj, "warnings", None) or []:
        if isinstance(warning, str):
            stderr.print(f"[bold yellow]warning:[/] {escape(warning)}")
        else:
            stderr.print(f"[bold yellow]warning ({warning.code}):[/] {escape(warning.message)}")


def show(obj: Any, as_json: bool, columns: Sequence[str] | None = None, title: str | None = None) -> None:
    """``--json``: the object as JSON; else a table (a list) or a record (one object)."""
    if as_json:
        emit_json(obj)
    elif isinstance(obj, list):
        table(obj, columns or [], title)
    else:
        record(obj, title)
    if not isinstance(obj, list):
        fit_warnings(obj)


# The single-number metrics of a model's evaluation rows (metrics.test), in the order shown.
TEST_METRICS = (
    "rows",
    "accuracy",
    "balanced_accuracy",
    "log_loss",
    "roc_auc",
    "average_precision",
    "precision",
    "recall",
    "f1",
    "rmse",
    "mae",
    "r2",
)


def test_metrics(test: dict[str, Any], title: str) -> None:
    """A model's metrics on its evaluation rows (metrics.test): the numbers (a missing one with
    its reason), precision/recall/F1 per class, the confusion matrix and the threshold."""
    absent = test.get("absent") or {}
    numbers = Table(title=title, show_header=False)
    numbers.add_column("metric")
    numbers.add_column("value", overflow="fold")
    for name in TEST_METRICS:
        if name in test:
            numbers.add_row(
                name, _cell(test[name]) if test[name] is not None else f"- ({absent.get(name, '')})"
            )
    threshold = test.get("threshold")
    if threshold:
        numbers.add_row(
            "threshold", f"{threshold['value']:.6g} on the {threshold['applies_to']} ({threshold['source']})"
        )
    stdout.print(numbers)
    if test.get("per_class"):
        table(test["per_class"], ["label", "precision", "recall", "f1", "support"], "per class")
    confusion = test.get("confusion_matrix")
    if confusion:
        matrix = Table(title="confusion matrix (rows: true, columns: predicted)")
        matrix.add_column("")
        for label in confusion["labels"]:
            matrix.add_column(str(label), justify="right")
        for label, row in zip(confusion["labels"], confusion["matrix"], strict=True):
            matrix.add_row(str(label), *(f"{v:.6g}" for v in row))
        stdout.print(matrix)
