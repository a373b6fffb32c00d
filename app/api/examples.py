"""Example responses of the OpenAPI document, one per resource (tests/app/api/test_contract.py
validates each against its operation's response model, so they cannot drift from it)."""

from __future__ import annotations

from typing import Any

CREATED = "2026-01-15T09:30:00Z"

DATASET: dict[str, Any] = {
    "id": 1,
    "name": "heart_scale",
    "format": "svmlight",
    "compressed": False,
    "n_samples": 270,
    "n_features": 13,
    "nnz": 3378,
    "labelled": True,
    "task": "binary",
    "classes": [-1, 1],
    "index_base": 1,
    "sha256": "5f2c8c1e0d6f3a6b1f3e2a4d9c7b8a6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a",
    "size_bytes": 27670,
    "created_at": CREATED,
    "warnings": [],
    "description": "Statlog heart",
    "tags": ["medical"],
    "task_source": "guessed",
}

DATASET_DETAIL: dict[str, Any] = DATASET | {
    "columns_status": "ready",
    "columns": {
        "items": [
            {
                "index": 0,
                "name": None,
                "kind": "numeric",
                "count": 270,
                "missing": 0,
                "mean": -0.0547,
                "std": 0.3767,
                "min": -1.0,
                "max": 1.0,
                "max_abs": 1.0,
                "distinct": None,
                "categories_truncated": None,
                "top_categories": None,
            }
        ],
        "total": 13,
        "offset": 0,
        "limit": 20,
        "listed": "occurring",
    },
}

JOB: dict[str, Any] = {
    "id": 7,
    "status": "succeeded",
    "solver": "pgs",
    "task": "binary",
    "dataset_id": 1,
    "test_dataset_id": None,
    "test_fraction": 0.25,
    "split_seed": 0,
    "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 20000, "random_state": 0},
    "targets": [0.8],
    "time_budget_s": None,
    "progress": {"iteration": 20000, "n_iter": 20000, "fraction": 1.0, "samples_seen": 20000},
    "metrics": {
        "solver_seconds": 0.041,
        "objective": 0.412,
        "test_accuracy": 0.838,
        "time_to_target": {"0.8": 0.012},
    },
    "stop_reason": "completed",
    "error": None,
    "model_id": 3,
    "attempts": 1,
    "cancel_requested": False,
    "created_at": CREATED,
    "started_at": "2026-01-15T09:30:01Z",
    "finished_at": "2026-01-15T09:30:02Z",
    "time_limit_s": 86400.0,
    "name": "heart baseline",
    "description": None,
    "tags": ["nightly"],
    "model_name": "heart-clf",
}

QUEUED_JOB: dict[str, Any] = {
    **JOB,
    "status": "queued",
    "metrics": None,
    "stop_reason": None,
    "model_id": None,
    "attempts": 0,
    "started_at": None,
    "finished_at": None,
    "progress": {"iteration": None, "n_iter": None, "fraction": None, "samples_seen": None},
}

CANCELLED_JOB: dict[str, Any] = {
    **QUEUED_JOB,
    "status": "cancelled",
    "stop_reason": "cancelled",
    "cancel_requested": True,
    "finished_at": "2026-01-15T09:30:02Z",
}

TRACE: dict[str, Any] = {
    "job_id": 7,
    "score_name": "accuracy",
    "points": [
        {
            "iteration": 1000,
            "samples_seen": 1000,
            "solver_seconds": 0.002,
            "objective": 0.61,
            "test_score": 0.72,
            "nnz_weights": 13,
            "data_accesses": 13000,
        },
        {
            "iteration": 20000,
            "samples_seen": 20000,
            "solver_seconds": 0.041,
            "objective": 0.412,
            "test_score": 0.838,
            "nnz_weights": 13,
            "data_accesses": 260000,
        },
    ],
}

MODEL: dict[str, Any] = {
    "id": 3,
    "solver": "pgs",
    "task": "binary",
    "estimator": "PGSClassifier",
    "params": {"loss": "logistic", "sigma": 1e-4, "n_iter": 20000, "random_state": 0},
    "n_features": 13,
    "classes": [-1, 1],
    "job_id": 7,
    "dataset_id": 1,
    "metrics": {"solver_seconds": 0.041, "test_accuracy": 0.838},
    "nnz_weights": 13,
    "size_bytes": 1180,
    "created_at": CREATED,
    "name": "heart-clf",
    "version": 2,
    "description": None,
    "tags": ["nightly"],
}

COEFFICIENT_PAGE: dict[str, Any] = {
    "class": 1,
    "intercept": 1.67,
    "items": [
        {"name": "5", "column": 4, "category": None, "weight": 1.766, "model_weight": 1.766},
        {"name": "8", "column": 7, "category": None, "weight": -1.694, "model_weight": -1.694},
        {"name": "12", "column": 11, "category": None, "weight": 1.428, "model_weight": 1.428},
    ],
    "total": 13,
    "offset": 0,
    "limit": 3,
}

PREDICTION: dict[str, Any] = {
    "predictions": [1, -1],
    "scores": [0.83, -1.2],
    "probabilities": [[0.3, 0.7], [0.77, 0.23]],
}

STUDY: dict[str, Any] = {
    "id": 2,
    "name": "heart: p = 2 against p = 1.8",
    "status": "running",
    "task": "binary",
    "score_name": "accuracy",
    "dataset_id": 1,
    "test_dataset_id": None,
    "test_fraction": 0.25,
    "seed": 0,
    "n_train": 202,
    "runs": [
        {
            "solver": "pgs",
            "params": {"loss": "logistic", "p": 2.0, "sigma": 1e-3},
            "label": "pgs logistic p=2",
        }
    ],
    "sizes": [50, 100],
    "repeats": 3,
    "targets": [0.8],
    "time_budget_s": None,
    "select_sigma": None,
    "cancel_requested": False,
    "progress": {
        "total": 6,
        "done": 3,
        "fraction": 0.5,
        "queued": 2,
        "running": 1,
        "succeeded": 3,
        "failed": 0,
        "cancelled": 0,
    },
    "created_at": CREATED,
    "finished_at": None,
    "table": [
        {
            "run": 0,
            "solver": "pgs",
            "label": "pgs logistic p=2",
            "m": 50,
            "target": 0.8,
            "repeats": 3,
            "reached": 2,
            "median_seconds": 0.004,
            "min_seconds": 0.003,
            "max_seconds": 0.006,
            "median_iterations": 900.0,
            "min_iterations": 700,
            "max_iterations": 1400,
            "selected_sigmas": None,
        }
    ],
}


BATCH_PREDICTION: dict[str, Any] = {
    "id": 1,
    "model_id": 3,
    "dataset_id": 1,
    "extra_features": "fail",
    "status": "succeeded",
    "progress": {"rows_done": 270, "n_rows": 270, "fraction": 1.0},
    "outputs": ["predictions", "scores", "probabilities"],
    "metrics_note": None,
    "error": None,
    "attempts": 1,
    "cancel_requested": False,
    "created_at": CREATED,
    "started_at": "2026-01-15T09:30:01Z",
    "finished_at": "2026-01-15T09:30:02Z",
}

ALIAS: dict[str, Any] = {
    "name": "heart-clf",
    "alias": "production",
    "model_id": 3,
    "version": 2,
    "updated_at": CREATED,
    "ref": "heart-clf@production",
}

ALIAS_HISTORY: dict[str, Any] = {
    "items": [
        {
            "id": 1,
            "name": "heart-clf",
            "alias": "production",
            "model_id": 2,
            "previous_model_id": None,
            "principal": "ci",
            "at": CREATED,
        },
        {
            "id": 2,
            "name": "heart-clf",
            "alias": "production",
            "model_id": 3,
            "previous_model_id": 2,
            "principal": "ci",
            "at": "2026-01-16T10:00:00Z",
        },
    ]
}


def page(item: dict[str, Any]) -> dict[str, Any]:
    """A listing's first page holding one item, the cursor of the next."""
    return {"items": [item], "next_cursor": "6"}
