"""Owners and roles (app/core/tenants.py) through the real app, SQLite and worker pool: another
owner's objects do not exist for a member (404, absent from lists), a reader reads and predicts
only, an admin sees everything and reads the audit log, a bare key is the admin of ``default``,
and the keys file rotates a key without a restart. Rows A2 (one key on another's data set, job,
model and alias) and A3 (on another's resumable upload) of the security review."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.tenants import RELOAD_INTERVAL_S
from app.main import create_app
from tests.cluster.harness import wait_until
from tests.helpers import assert_problem, make_settings, wait_for

KEYS = {
    "a": "team-a:member:key-team-a-1",
    "b": "team-b:member:key-team-b-1",
    "reader": "team-a:reader:key-reader-a",
    "admin": "ops:admin:key-admin-01",
    "legacy": "legacy-bare-key",
}


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name].rsplit(':', 1)[-1]}"}


A, B, READER, ADMIN, LEGACY = (bearer(n) for n in ("a", "b", "reader", "admin", "legacy"))
LOGISTIC = {"loss": "logistic", "sigma": 1e-3, "n_iter": 500, "random_state": 0}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[dict[str, Any]]:
    """A server with the keys above where team-a has a data set, a succeeded job, its model (named
    and aliased), a batch prediction and a study."""
    root = tmp_path_factory.mktemp("tenants")
    settings = make_settings(root, api_keys=",".join(KEYS.values()))
    with TestClient(create_app(settings)) as c:
        heart = (data_dir / "heart_scale.svm").read_bytes()
        ds = c.post("/v1/datasets", headers=A, files={"file": ("heart.svm", heart)}).json()
        body = {"dataset_id": ds["id"], "test_fraction": 0.25, "params": LOGISTIC, "model_name": "heart"}
        job = c.post("/v1/jobs", headers=A, json=body).json()
        c.headers.update(A)
        job = wait_for(c, job["id"])
        assert job["status"] == "succeeded", job
        c.headers.clear()
        model_id = job["model_id"]
        assert c.put("/v1/aliases/heart@prod", headers=A, json={"model_id": model_id}).status_code == 200
        batch = c.post(f"/v1/models/{model_id}/predictions", headers=A, json={"dataset_id": ds["id"]}).json()
        study = c.post(
            "/v1/studies",
            headers=A,
            json={
                "dataset_id": ds["id"],
                "test_fraction": 0.3,
                "runs": [{"solver": "pgs", "params": {"n_iter": 100}}],
                "sizes": [50],
                "repeats": 1,
                "targets": [0.5],
            },
        ).json()
        yield {
            "c": c,
            "dataset": ds["id"],
            "job": job["id"],
            "model": model_id,
            "batch": batch,
            "study": study,
        }


def _a_paths(w: dict[str, Any]) -> list[str]:
    m = w["model"]
    return [
        f"/v1/datasets/{w['dataset']}",
        f"/v1/jobs/{w['job']}",
        f"/v1/jobs/{w['job']}/trace",
        f"/v1/jobs/{w['job']}/plot",
        f"/v1/models/{m}",
        f"/v1/models/{m}/export",
        "/v1/models/heart@prod",
        f"/v1/models/{m}/predictions",
        f"/v1/models/{m}/predictions/{w['batch']['id']}",
        f"/v1/studies/{w['study']['id']}",
        f"/v1/studies/{w['study']['id']}/jobs",
        "/v1/aliases/heart@prod",
        "/v1/aliases/heart@prod/history",
    ]


def test_another_owners_objects_do_not_exist_for_a_member(world: dict[str, Any]):
    """A2: key B lists, reads, traces, plots and exports nothing of key A's."""
    c = world["c"]
    for path in _a_paths(world):
        assert c.get(path, headers=A).status_code == 200, path
        assert_problem(c.get(path, headers=B), 404)
    for listing in ("/v1/datasets", "/v1/jobs", "/v1/models", "/v1/studies", "/v1/aliases"):
        assert c.get(listing, headers=A).json()["items"], listing
        assert c.get(listing, headers=B).json()["items"] == [], listing


def test_a_member_cannot_change_or_use_another_owners_objects(world: dict[str, Any]):
    """A2: key B renames, deletes, cancels, predicts with, and aliases nothing of key A's."""
    c, ds, m = world["c"], world["dataset"], world["model"]
    assert_problem(c.patch(f"/v1/datasets/{ds}", headers=B, json={"description": "x"}), 404)
    assert_problem(c.patch(f"/v1/datasets/{ds}", headers=B, json={"name": "mine-now"}), 404)
    assert_problem(c.patch(f"/v1/models/{m}", headers=B, json={"description": "x"}), 404)
    assert_problem(c.get(f"/v1/models/{m}/export", headers=B, params={"format": "json"}), 404)
    assert_problem(c.delete("/v1/aliases/heart@prod", headers=B), 404)
    assert_problem(c.delete(f"/v1/datasets/{ds}", headers=B, params={"force": "true"}), 404)
    assert_problem(c.post(f"/v1/jobs/{world['job']}/cancel", headers=B), 404)
    assert_problem(c.delete(f"/v1/models/{m}", headers=B), 404)
    assert_problem(c.post(f"/v1/models/{m}/predict", headers=B, json={"instances": [[0.0] * 13]}), 404)
    assert_problem(c.post(f"/v1/models/{m}/predictions", headers=B, json={"dataset_id": ds}), 404)
    # Referring to another owner's object in a body is a 422 that says it does not exist.
    r = c.post("/v1/jobs", headers=B, json={"dataset_id": ds, "params": LOGISTIC})
    assert "does not exist" in assert_problem(r, 422, "body.dataset_id")["detail"]
    r = c.put("/v1/aliases/heart@prod", headers=B, json={"model_id": m})
    assert "does not exist" in assert_problem(r, 422, "body.model_id")["detail"]
    # team-b's own heart@prod is another alias: it does not move team-a's.
    assert c.get("/v1/aliases/heart@prod", headers=A).json()["model_id"] == m
    study = {
        "dataset_id": ds,
        "test_fraction": 0.3,
        "runs": [{}],
        "sizes": [50],
        "repeats": 1,
        "targets": [0.5],
    }
    assert "does not exist" in assert_problem(c.post("/v1/studies", headers=B, json=study), 422)["detail"]
    # And nothing of team-a's changed.
    assert c.get(f"/v1/datasets/{ds}", headers=A).json()["description"] is None
    assert c.get(f"/v1/datasets/{ds}", headers=A).json()["name"] == "heart.svm"
    assert c.get("/v1/aliases/heart@prod", headers=A).json()["model_id"] == m


def test_another_owners_resumable_upload_does_not_exist(world: dict[str, Any]):
    """A3: key B's HEAD, PATCH, DELETE and finish of key A's tus upload are 404s, and A's
    offset is unchanged."""
    c, tus = world["c"], {"Tus-Resumable": "1.0.0"}
    location = c.post("/v1/uploads", headers={**A, **tus, "Upload-Length": "13"}).headers["Location"]
    stream = {**tus, "Content-Type": "application/offset+octet-stream"}
    sent = c.patch(location, headers={**A, **stream, "Upload-Offset": "0"}, content=b"1 1:1\n")
    assert sent.status_code == 204
    assert c.head(location, headers={**B, **tus}).status_code == 404
    rest = c.patch(location, headers={**B, **stream, "Upload-Offset": "6"}, content=b"-1 2:1\n")
    assert_problem(rest, 404)
    assert_problem(c.post(f"{location}/dataset", headers=B, json={}), 404)
    assert_problem(c.delete(location, headers={**B, **tus}), 404)
    assert c.head(location, headers={**A, **tus}).headers["Upload-Offset"] == "6"


def test_model_names_are_per_owner(world: dict[str, Any], data_dir: Path):
    c = world["c"]
    heart = (data_dir / "heart_scale.svm").read_bytes()
    ds = c.post("/v1/datasets", headers=B, files={"file": ("heart.svm", heart)}).json()
    body = {"dataset_id": ds["id"], "params": LOGISTIC, "model_name": "heart"}
    c.headers.update(B)
    job = wait_for(c, c.post("/v1/jobs", json=body).json()["id"])
    c.headers.clear()
    mine = c.get(f"/v1/models/{job['model_id']}", headers=B).json()
    # team-a's "heart" is version 1; team-b's first "heart" is its own version 1.
    assert (mine["name"], mine["version"]) == ("heart", 1)


def test_a_reader_reads_and_predicts_and_changes_nothing(world: dict[str, Any]):
    c, ds, m = world["c"], world["dataset"], world["model"]
    for path in _a_paths(world):
        assert c.get(path, headers=READER).status_code == 200, path
    r = c.post("/v1/models/heart@prod/predict", headers=READER, json={"instances": [[0.0] * 13]})
    assert r.status_code == 200 and len(r.json()["predictions"]) == 1
    for method, path, body in [
        ("POST", "/v1/jobs", {"dataset_id": ds, "params": LOGISTIC}),
        ("PATCH", f"/v1/datasets/{ds}", {"description": "x"}),
        ("DELETE", f"/v1/models/{m}", None),
        ("PUT", "/v1/aliases/heart@canary", {"model_id": m}),
        ("POST", f"/v1/models/{m}/predictions", {"dataset_id": ds}),
    ]:
        r = c.request(method, path, headers=READER, json=body)
        assert "reader" in assert_problem(r, 403)["detail"], (method, path)


def test_an_admin_sees_every_owner_and_reads_the_audit_log(world: dict[str, Any]):
    c, ds = world["c"], world["dataset"]
    assert c.get(f"/v1/datasets/{ds}", headers=ADMIN).status_code == 200
    owners = {d["id"] for d in c.get("/v1/datasets", headers=ADMIN).json()["items"]}
    assert ds in owners and len(owners) >= 2  # team-a's and team-b's
    events = c.get("/v1/audit", headers=ADMIN, params={"owner": "team-a", "limit": 500}).json()["items"]
    seen = {(e["action"], e["resource"], e["resource_id"]) for e in events}
    assert ("create", "dataset", str(ds)) in seen
    assert ("create", "job", str(world["job"])) in seen
    assert ("update", "alias", "heart@prod") in seen
    assert ("create", "batch_prediction", str(world["batch"]["id"])) in seen
    assert ("create", "study", str(world["study"]["id"])) in seen
    made = next(e for e in events if e["resource"] == "dataset" and e["resource_id"] == str(ds))
    assert (made["actor_owner"], made["actor_role"]) == ("team-a", "member")
    assert made["actor_key"].startswith("key:") and "key-team-a" not in str(made)
    # Refused writes and reads are not writes.
    assert not any(e["actor_owner"] == "team-b" and e["owner"] == "team-a" for e in events)
    later = c.get("/v1/audit", headers=ADMIN, params={"since": "2999-01-01T00:00:00Z"}).json()
    assert later["items"] == []
    for key in (A, B, READER):
        assert_problem(c.get("/v1/audit", headers=key), 403)


def test_an_admins_write_to_another_owners_object_is_logged_as_theirs(world: dict[str, Any]):
    c, ds = world["c"], world["dataset"]
    assert c.patch(f"/v1/datasets/{ds}", headers=ADMIN, json={"tags": ["audited"]}).status_code == 200
    events = c.get("/v1/audit", headers=ADMIN, params={"owner": "team-a", "action": "update"}).json()
    change = next(e for e in events["items"] if e["resource"] == "dataset")
    assert (change["owner"], change["actor_owner"], change["actor_role"]) == ("team-a", "ops", "admin")


def test_who_a_key_is(world: dict[str, Any]):
    c = world["c"]
    assert c.get("/v1/me", headers=A).json() | {"key_id": None} == {
        "owner": "team-a",
        "role": "member",
        "key_id": None,
        "authenticated": True,
    }
    # A bare key is the admin of "default": deployments from before owners keep working.
    legacy = c.get("/v1/me", headers=LEGACY).json()
    assert (legacy["owner"], legacy["role"]) == ("default", "admin")
    assert c.get(f"/v1/datasets/{world['dataset']}", headers=LEGACY).status_code == 200


def test_without_keys_every_caller_is_the_admin_of_default(client: TestClient):
    me = client.get("/v1/me").json()
    assert me == {"owner": "default", "role": "admin", "key_id": "anonymous", "authenticated": False}


def test_a_malformed_key_entry_stops_the_start_naming_the_entry_not_the_key(tmp_path: Path):
    for entry, rule in [
        ("Team:member:secret-key-1", "owner"),
        ("team:boss:secret-key-1", "role"),
        ("team:member:", "empty"),
    ]:
        with pytest.raises(ValueError, match=rule) as refused:
            make_settings(tmp_path, api_keys=f"fine-key-123,{entry}")
        assert "secret-key-1" not in str(refused.value) and "entry 2" in str(refused.value)


def test_a_key_rotates_through_the_keys_file_without_a_restart(tmp_path: Path):
    keys_file = tmp_path / "keys"
    keys_file.write_text("# team-a's key\nteam-a:member:old-key-0001\n")
    settings = make_settings(tmp_path, api_keys_file=keys_file)
    old = {"Authorization": "Bearer old-key-0001"}
    new = {"Authorization": "Bearer new-key-0002"}
    with TestClient(create_app(settings)) as c:
        assert c.get("/v1/me", headers=old).json()["owner"] == "team-a"
        assert_problem(c.get("/v1/me", headers=new), 403)
        # Both keys for a while: clients move over one by one.
        keys_file.write_text("team-a:member:old-key-0001\nteam-a:member:new-key-0002\n")
        wait_until(lambda: c.get("/v1/me", headers=new).status_code == 200, 30, "the new key to be taken")
        assert c.get("/v1/me", headers=old).status_code == 200
        keys_file.write_text("team-a:member:new-key-0002\n")
        wait_until(lambda: c.get("/v1/me", headers=old).status_code == 403, 30, "the old key to be refused")
        # A malformed file keeps the last good keys.
        keys_file.write_text("team-a:member:new-key-0002\nnot:a:valid:entry-because-role\n")
        time.sleep(2 * RELOAD_INTERVAL_S)  # the file is read again (and refused) within this
        assert c.get("/v1/me", headers=new).status_code == 200
