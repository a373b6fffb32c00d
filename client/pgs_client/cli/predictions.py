"""Predictions as ``pgs predict`` and ``pgs batches create FILE`` print them: CSV (the
prediction in the model's labels, the score or one per class, the probabilities) or JSON."""

from __future__ import annotations

import csv
from typing import Any, TextIO

from pgs_client.cli import output
from pgs_client.resources.models import Prediction


def write_csv(pred: Prediction, classes: list[Any] | None, stream: TextIO) -> None:
    names = classes or []
    scores = pred.scores.tolist() if hasattr(pred.scores, "tolist") else pred.scores
    probs = pred.probabilities.tolist() if pred.probabilities is not None else None
    multi = bool(scores) and isinstance(scores[0], list)
    header = ["prediction"] + ([f"score_{c}" for c in names] if multi else ["score"])
    header += [f"probability_{c}" for c in names] if probs is not None else []
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(header)
    labels = pred.predictions.tolist() if hasattr(pred.predictions, "tolist") else pred.predictions
    for i, label in enumerate(labels):
        row = [label, *(scores[i] if multi else [scores[i]])]
        writer.writerow(row + (probs[i] if probs is not None else []))


def emit_json(pred: Prediction) -> None:
    output.emit_json({k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in vars(pred).items()})
