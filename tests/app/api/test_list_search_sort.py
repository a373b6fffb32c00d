"""The list routes' search (``q``) and sort (``sort``), and paging through a sorted list: what the
console's filters, sortable columns and pagination ask the API for."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.helpers import assert_problem, upload

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
