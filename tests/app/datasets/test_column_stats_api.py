"""A data set's column statistics over HTTP: ``GET /v1/datasets/{id}`` shows the first columns',
``GET /v1/datasets/{id}/columns`` pages through them (every column of a CSV, the occurring ones of
an svmlight file), a data set stored before statistics gets them from a background pass after
the service starts (never from a request), and an upload
refused after some of its shards were written leaves no statistics behind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sklearn.datasets import load_svmlight_file

from app.main import create_app
from app.services.datasets.dataset_stats import backfill_dataset_stats
from tests.helpers import assert_problem, make_settings, poll, upload

CSV = (
    b"height,colour,empty,label\n"
    + b"1.5,red,,a\n"
    + b"NA,blue,,b\n"
    + b"2.5,,,a\n"
    + b"-4,red,,b\n"
    + b"0,red,,a\n"
)


@pytest.fixture
def client(tmp_path: Path):
    # Shards of 256 KiB: the large upload below is a few of them.
    with TestClient(create_app(make_settings(tmp_path, shard_bytes=2**18))) as c:
        yield c


def test_get_shows_each_columns_statistics(client: TestClient):
    ds = upload(client, CSV, "c.csv").json()
    body = client.get(f"/v1/datasets/{ds['id']}").json()
    columns = body["columns"]
    assert (columns["total"], columns["listed"], columns["offset"]) == (3, "all", 0)
    height, colour, empty = columns["items"]
    values = np.array([1.5, 2.5, -4, 0])
    assert height["name"] == "height" and height["kind"] == "numeric"
    assert (height["count"], height["missing"], height["min"], height["max"], height["max_abs"]) == (
        4,
        1,
        -4,
        2.5,
        4,
    )
    assert height["mean"] == pytest.approx(values.mean()) and height["std"] == pytest.approx(values.std())
    assert height["top_categories"] is None
    assert colour["kind"] == "text" and (colour["count"], colour["missing"], colour["distinct"]) == (4, 1, 3)
    assert colour["top_categories"][0] == {"value": "red", "count": 3}
    assert colour["categories_truncated"] is False and colour["mean"] is None
    # A column missing in every row: no mean, no extremes.
    assert (empty["count"], empty["missing"], empty["mean"], empty["min"]) == (0, 5, None, None)
    # The listing stays small: no statistics there.
    assert "columns" not in client.get("/v1/datasets").json()["items"][0]


def test_columns_page_through_an_svmlight_files_occurring_columns(client: TestClient, data_dir: Path):
    ds = upload(client, data_dir / "heart_scale.svm", "heart_scale.svm").json()
    X, _ = load_svmlight_file(str(data_dir / "heart_scale.svm"))
    page = client.get(f"/v1/datasets/{ds['id']}/columns", params={"offset": 10, "limit": 2}).json()
    assert (page["total"], page["listed"], page["offset"], page["limit"]) == (13, "occurring", 10, 2)
    assert [c["index"] for c in page["items"]] == [10, 11]
    dense = X.toarray()
    for c in page["items"]:
        column = dense[:, c["index"]]  # implicit zeros are values
        assert c["count"] == 270 and c["missing"] == 0
        assert c["mean"] == pytest.approx(column.mean(), rel=1e-12)
        assert c["std"] == pytest.approx(column.std(), rel=1e-12)
        assert c["max_abs"] == pytest.approx(np.abs(column).max())
    assert client.get(f"/v1/datasets/{ds['id']}/columns", params={"offset": 13}).json()["items"] == []
    assert_problem(client.get(f"/v1/datasets/{ds['id']}/columns", params={"limit": 0}), 422, "query.limit")
    assert_problem(client.get(f"/v1/datasets/{ds['id']}/columns", params={"offset": -1}), 422, "query.offset")
    assert_problem(client.get("/v1/datasets/999/columns"), 404)


def test_a_data_set_stored_before_statistics_shows_them_pending_until_the_background_pass(
    client: TestClient, tmp_path: Path
):
    ds = upload(client, CSV, "c.csv").json()
    (stats,) = (tmp_path / "var" / "datasets").rglob("stats.npz")
    expected = client.get(f"/v1/datasets/{ds['id']}").json()
    assert expected["columns_status"] == "ready"
    stats.unlink()
    # A request never reads every row for them: GET says pending, the page asks to retry.
    body = client.get(f"/v1/datasets/{ds['id']}").json()
    assert (body["columns"], body["columns_status"]) == (None, "pending")
    page = client.get(f"/v1/datasets/{ds['id']}/columns")
    assert_problem(page, 503)
    assert page.headers["Retry-After"].isdigit()
    assert not stats.exists()
    app = client.app
    assert backfill_dataset_stats(app.state.session_factory, app.state.settings.store) == 1  # type: ignore[attr-defined]
    assert client.get(f"/v1/datasets/{ds['id']}").json() == expected
    assert stats.is_file()


def test_the_service_computes_missing_statistics_after_it_starts(tmp_path: Path):
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as c:
        ds = upload(c, CSV, "c.csv").json()
        expected = c.get(f"/v1/datasets/{ds['id']}").json()["columns"]
    (stats,) = (tmp_path / "var" / "datasets").rglob("stats.npz")
    stats.unlink()
    with TestClient(create_app(settings)) as c:
        body = poll(c, f"/v1/datasets/{ds['id']}", lambda b: b["columns_status"] == "ready")
        assert body["columns"] == expected


def test_a_data_set_whose_files_are_gone_says_so(client: TestClient, tmp_path: Path):
    ds = upload(client, CSV, "c.csv").json()
    for f in (tmp_path / "var" / "datasets").rglob("*.*"):
        f.unlink()
    body = client.get(f"/v1/datasets/{ds['id']}").json()
    assert (body["columns"], body["columns_status"]) == (None, "unavailable")
    assert_problem(client.get(f"/v1/datasets/{ds['id']}/columns"), 503)


def test_an_upload_refused_after_its_first_shards_leaves_no_statistics(client: TestClient, tmp_path: Path):
    # 5 MB: the first 4 MiB block of lines is parsed and written as shards before the
    # bad last line is read.
    content = b"x,y,label\n" + b"1.5,2,0\n3,4.25,1\n" * 300_000 + b"5,oops\n"
    assert_problem(upload(client, content, "late.csv"), 422, "body.file")
    assert client.get("/v1/datasets").json()["items"] == []
    assert list((tmp_path / "var" / "datasets").rglob("*")) == []
