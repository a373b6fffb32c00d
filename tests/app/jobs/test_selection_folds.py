"""``params.sigma: "auto"``'s folds against a classifier's smallest class, checked at POST /v1/jobs
from the label counts stored with the data set (app/services/jobs/selection.py): exact without a
test split, refusing only the folds that surely fail with one, and the doubtful rest left to the
fit, which fails the job naming ``folds``."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.services.datasets.splits import ShardSplit, held_out_rows
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

AUTO = {"loss": "logistic", "sigma": "auto", "random_state": 3}
# 40 rows of one class and 3 of the other: 4 folds pass the small class, and by far less than
# the rows per class on average (21.5), which is all the class count alone can tell.
LABELS = np.array([-1] * 40 + [1] * 3)


def _svmlight(labels: np.ndarray) -> bytes:
    rng = np.random.default_rng(0)
    rows = [f"{y:+d} 1:{rng.normal():.4f} 2:{rng.normal() + y:.4f} 3:{rng.normal():.4f}" for y in labels]
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("selection-folds"), workers=1)
    with TestClient(create_app(settings)) as c:
        c.dataset_id = upload(c, _svmlight(LABELS), "small-class.svm").json()["id"]  # type: ignore[attr-defined]
        yield c


def _body(c: TestClient, **fields: object) -> dict[str, object]:
    return {"dataset_id": c.dataset_id, "params": AUTO, **fields}  # type: ignore[attr-defined]


def test_folds_past_the_smallest_class_are_a_422_naming_folds(client: TestClient):
    problem = assert_problem(
        create_job(client, **_body(client, selection={"folds": 4})), 422, "body.selection.folds"
    )
    assert "3 rows of the smallest class" in problem["errors"][0]["msg"]


def test_default_folds_past_the_smallest_class_are_a_422_naming_folds(client: TestClient):
    # folds "auto" is 5 folds for 43 training rows, more than the 3 of the small class.
    problem = assert_problem(create_job(client, **_body(client)), 422, "body.selection.folds")
    assert "folds auto (5 for 43 training rows)" in problem["errors"][0]["msg"]


def test_as_many_folds_as_the_smallest_class_are_accepted_and_fit(client: TestClient):
    # The check is exact: the boundary itself trains.
    response = create_job(client, **_body(client, selection={"folds": 3}))
    assert response.status_code == 202, response.text
    job = wait_for(client, response.json()["id"])
    assert job["status"] == "succeeded", job
    assert job["selection"]["splits"] == "3-fold"


def test_a_test_split_too_small_to_empty_the_class_still_refuses(client: TestClient):
    # 5% of 43 rows is 2 held out: the small class keeps at least 1 training row, at most 3 < 4.
    body = _body(client, test_fraction=0.05, selection={"folds": 4})
    problem = assert_problem(create_job(client, **body), 422, "body.selection.folds")
    assert "before the test split takes 2 rows" in problem["errors"][0]["msg"]


def _smallest_training_class(test_fraction: float, seed: int) -> int:
    """The rows of the smallest class among the training rows of the job's split: the one shard
    of the data set, split as a job splits it (app/services/jobs/rows.py)."""
    held = ShardSplit([len(LABELS)], test_fraction, seed).held_out_mask(0)
    return int(np.unique(LABELS[~held], return_counts=True)[1].min())


def test_a_doubtful_test_split_is_left_to_the_fit_which_names_folds(client: TestClient):
    # 10% of 43 rows is 4 held out, which may take 0 to 3 of the small class's rows: 3 folds may
    # fit or not, depending on the seed. A seed whose split leaves it 2 training rows fails.
    fraction = 0.1
    assert held_out_rows(len(LABELS), fraction) == 4
    seed = next(s for s in range(1000) if _smallest_training_class(fraction, s) == 2)
    body = _body(client, test_fraction=fraction, split_seed=seed, selection={"folds": 3})
    response = create_job(client, **body)
    assert response.status_code == 202, response.text  # not refused: the request cannot know
    job = wait_for(client, response.json()["id"])
    assert job["status"] == "failed", job
    assert "'folds'" in job["error"] and "smallest class (2)" in job["error"], job["error"]
