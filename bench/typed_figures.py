"""Find measured figures typed by hand into the prose of bench/benchmarks_template.md.

Every measurement in docs/benchmarks.md comes from a record: a table (``{{ NAME }}``) or a figure
in a sentence (``{{= NAME.FIGURE ... }}``, see bench/report.py), so that the text cannot drift
from the tables when a benchmark runs again. ``python -m bench.report --check`` fails on what this
module finds, naming the template's line.

What counts as typed (a heuristic): a number, or a range of numbers, with a unit of time, size or
rate (s, ms, us, minutes, hours, %, MB, GB, MiB, GiB, MB/s, ...) or an 'x' (1.3x, 0.5-0.7x), and
"N of M" counts, in the prose. Placeholders, code spans, table rows and command lines are not
prose and are not looked at.

The allow-list rule: a number that is not a measurement may stay typed - a data set's size or
make-up from its definition, a command's argument, an equation or figure number, a setting or a
default of the code. Most have no unit and pass anyway. The few with one are listed, phrase by
phrase with the reason, in ``NOT_MEASURED``: add a phrase there only if it is not a measurement,
and draw a measured figure from its record instead (a goal's target too: the goals are
constants in bench/tables/ and have figures of their own).
"""

from __future__ import annotations

import re

# Phrases with a number and a unit that are not measurements, and why.
NOT_MEASURED = (
    "runs under 10 ms",  # bench.time_to_accuracy's SHORT_RUN: which runs are re-timed
    "KDD Cup 99's 10%",  # the name of the data set kdd_like imitates
    "80% for training",  # kdd_like's split, from its definition
    "150 s time budget",  # bench.inverse_time_scale's --time-budget argument
    "under 8 GiB",  # bench.inverse_time_scale's --min-free default
    "5% of its labels flipped",  # rcv1_like's label noise, from its definition
    "54% dense",  # ARCENE's make-up
    "(5% ones)",  # MAGIC04S/D's noise columns, from their definition
    "3 of 23 features",  # the sparse optimum of a test problem
    "polling every 2 ms",  # bench.dispatch_bench's client poll interval
    "raised to 1 GiB",  # bench.hostile_bench's PGS_MAX_UPLOAD_BYTES
    "polled every 10 ms",  # bench.hostile_bench's /healthz poll interval
)

_NUMBER = r"\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?"
_RANGE = rf"{_NUMBER}(?:\s?(?:-|to)\s?{_NUMBER})?"
_UNIT = r"(?:s|ms|us|ns|min|minutes?|hours?|seconds?|%|MB/s|[KMGT]B|[KMGT]iB)"
MEASURED = re.compile(
    rf"(?<![\w.^/-]){_RANGE}(?:\s?{_UNIT}(?![\w/])|x(?![\w/]))"  # 0.9 s, 21-25 MB/s, 1.3x
    rf"|(?<![\w.^/-]){_NUMBER} of (?:the |its )?{_NUMBER}(?![\w.])"  # 7 of 16
)
_NOT_PROSE = re.compile(
    r"\{\{.*?\}\}"  # placeholders
    r"|(?s:``.+?``|`[^`]+`)"  # code spans, which may run over a line end
    r"|^\|(?!\|).*$"  # table rows (not '||w||', a norm)
    r"|^\s*(?:\$ |python -m ).*$",  # command lines
    re.MULTILINE,
)


def _blank(match: re.Match[str]) -> str:
    """The match with everything but its line ends blanked, so line numbers stay right."""
    return re.sub(r"[^\n]", " ", match.group(0))


def find(template: str) -> list[tuple[int, str]]:
    """(line number, text) of every typed measured figure in the template's prose."""
    prose = _NOT_PROSE.sub(_blank, template)
    for phrase in NOT_MEASURED:  # matched across line ends
        prose = re.sub(r"\s+".join(map(re.escape, phrase.split())), _blank, prose)
    return [(prose.count("\n", 0, m.start()) + 1, m.group(0)) for m in MEASURED.finditer(prose)]
