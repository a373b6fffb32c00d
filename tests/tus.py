"""A tus client's requests against a TestClient (the resumable upload tests share them)."""

from __future__ import annotations

import base64
from typing import Any

from fastapi.testclient import TestClient

from tests.helpers import poll

KEY_A, KEY_B = "key-a", "key-b"
TUS = {"Tus-Resumable": "1.0.0"}
OFFSET_STREAM = "application/offset+octet-stream"


def auth(key: str = KEY_A) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **TUS}


def create(client: TestClient, length: int, filename: str = "d.svm.gz", key: str = KEY_A) -> Any:
    meta = "filename " + base64.b64encode(filename.encode()).decode()
    return client.post(
        "/v1/uploads", headers={**auth(key), "Upload-Length": str(length), "Upload-Metadata": meta}
    )


def patch(
    client: TestClient, location: str, offset: int, data: bytes, key: str = KEY_A, **headers: str
) -> Any:
    return client.patch(
        location,
        content=data,
        headers={**auth(key), "Upload-Offset": str(offset), "Content-Type": OFFSET_STREAM, **headers},
    )


def offset_of(client: TestClient, location: str, key: str = KEY_A) -> int:
    r = client.head(location, headers=auth(key))
    assert r.status_code == 200, r.status_code
    return int(r.headers["Upload-Offset"])


def finish(client: TestClient, location: str, key: str = KEY_A, **options: Any) -> dict[str, Any]:
    """POST .../dataset, then the upload once it is done or failed."""
    r = client.post(f"{location}/dataset", json=options, headers=auth(key))
    assert r.status_code == 202, r.text
    assert r.headers["Location"] == location
    return poll(client, location, lambda u: u["state"] in ("done", "failed"), headers=auth(key))
