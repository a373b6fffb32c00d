"""The list routes' search (``q``) and sort (``sort``), and paging through a sorted list: what the
console's filters, sortable columns and pagination ask the API for."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.helpers import assert_problem, create_job, upload, wait_for

ROW = b"+1 1:0.5 2:1\n-1 1:-0.5 3:2\n"


def _names(page: dict) -> list[str]:
    return [item["name"] for item in page["items"]]


def test_search_matches_part_of_the_name_in_any_case(client: TestClient):
    for name in ["credit-2024", "Credit_old", "heart", "100%_real"]:
        upload(client, ROW, f"{name}.svm", name=name)
    assert sorted(_names(client.get("/v1/datasets", params={"q": "CREDIT"}).json())) == [
        "Credit_old",
        "credit-2024",
    ]
    # % and _ are plain characters, not wildcards.
    assert _names(client.get("/v1/datasets", params={"q": "%_"}).json()) == ["100%_real"]
    assert _names(client.get("/v1/datasets", params={"q": "nothing"}).json()) == []


def test_sorted_pages_cover_every_row_once_in_order(client: TestClient):
    names = [f"set-{c}" for c in "dbfaegc"]
    for name in names:
        upload(client, ROW, f"{name}.svm", name=name)
    for sort, expected in [("name", sorted(names)), ("-name", sorted(names, reverse=True))]:
        seen: list[str] = []
        cursor = None
        while True:
            params = {"sort": sort, "limit": 3, **({"cursor": cursor} if cursor else {})}
            page = client.get("/v1/datasets", params=params).json()
            seen += _names(page)
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == expected


def test_every_list_sorts_and_searches(client: TestClient):
    for path, field in [("/v1/jobs", "status"), ("/v1/models", "version"), ("/v1/studies", "name")]:
        page = client.get(path, params={"sort": f"-{field}", "q": "x"})
        assert page.status_code == 200 and page.json() == {"items": [], "next_cursor": None}, path


def test_unknown_sort_field_and_foreign_cursor_are_422(client: TestClient):
    problem = assert_problem(client.get("/v1/jobs", params={"sort": "params"}), 422, "query.sort")
    assert "created_at" in problem["detail"]
    assert_problem(client.get("/v1/datasets", params={"sort": "name", "cursor": "12"}), 422, "query.cursor")
    assert_problem(client.get("/v1/datasets", params={"cursor": "o12"}), 422, "query.cursor")


def test_models_and_jobs_filter_by_the_data_set_they_use(client: TestClient):
    """The data set page's own jobs and models, asked of the API instead of read from its newest
    thousands."""
    train, other = (upload(client, ROW, f"{n}.svm", name=n).json()["id"] for n in ("train", "other"))
    bodies = {
        "on_train": {"dataset_id": train},
        "tested_on_other": {"dataset_id": train, "test_dataset_id": other},
        "on_other": {"dataset_id": other},
    }
    jobs = {
        name: create_job(client, **body, params={"n_iter": 20}).json()["id"] for name, body in bodies.items()
    }
    finished = {name: wait_for(client, job_id) for name, job_id in jobs.items()}
    assert all(job["status"] == "succeeded" for job in finished.values())

    def ids(path: str, **params: int) -> set[int]:
        return {item["id"] for item in client.get(path, params=params).json()["items"]}

    assert ids("/v1/jobs", test_dataset_id=other) == {jobs["tested_on_other"]}
    assert ids("/v1/jobs", dataset_id=other) == {jobs["on_other"]}
    model_of = {name: job["model_id"] for name, job in finished.items()}
    assert ids("/v1/models", dataset_id=train) == {model_of["on_train"], model_of["tested_on_other"]}
    assert ids("/v1/models", dataset_id=other) == {model_of["on_other"]}
    assert_problem(client.get("/v1/models", params={"dataset_id": 0}), 422, "query.dataset_id")
