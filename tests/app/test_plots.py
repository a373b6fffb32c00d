"""app/services/plots.py: names and labels users typed are drawn as text, never parsed as
matplotlib's mathtext (a "$" in a study's name once made its plot a 500 on every call)."""

from __future__ import annotations

import pytest

from app.services.plots import StudyFigure, TraceFigure, render_study, render_trace

MATHTEXT = ["$\\frac{$", "$\\foo$", "${{{{{{$", "$x^{x^{x^{x}}}$"]


@pytest.mark.parametrize("fmt", ["svg", "png"])
@pytest.mark.parametrize("text", MATHTEXT)
def test_study_and_trace_figures_draw_dollar_signs_as_text(text: str, fmt: str):
    study = StudyFigure(
        title=text,
        score_name="accuracy",
        sizes=[100],
        targets=[0.8],
        labels=[text],
        rows=[],
        done=0,
        total=1,
        succeeded=0,
    )
    trace = TraceFigure(title=text, score_name="accuracy", targets=[0.8], points=[(0.1, 0.5, 0.3)])
    for figure in (render_study(study, "seconds", fmt), render_trace(trace, fmt)):
        assert figure.startswith(b"<?xml" if fmt == "svg" else b"\x89PNG")
        if fmt == "svg":
            assert text.replace("&", "&amp;").encode() in figure  # the title as typed
