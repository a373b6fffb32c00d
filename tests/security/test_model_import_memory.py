"""Model imports against a real server (``python -m app``, started here), its memory read from
/proc: hostile files sent at once leave the API process's peak resident memory (VmHWM) near where
it was (they took gigabytes: the attack report's M4 and M5), and valid imports run one at a time
(PGS_MAX_CONCURRENT_MODEL_IMPORTS=1), so four sent at once peak like one."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from bench.procs import reset_peak, status_bytes
from tests.cluster.harness import ApiServer, poll_job, tiny_svmlight
from tests.helpers import JOB_TIMEOUT_S
from tests.security.model_files import JSON, NPZ, json_parse_bomb, npz_bomb, wide_npz, widened

# A real server on 127.0.0.1: left out of make test-fast (CONTRIBUTING.md).
pytestmark = pytest.mark.system

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiServer, dict[str, Any]]]:
    """The server, and the JSON export of a model it trained (20 features, max-abs scaled)."""
    root = tmp_path_factory.mktemp("imports")
    api = ApiServer(root / "var", root / "server.log", PGS_WORKERS="1", PGS_MAX_CONCURRENT_MODEL_IMPORTS="1")
    try:
        api.start(timeout=300)
        with api.client() as c:
            ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
            job = c.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 300}}).json()
            job = poll_job(c, job["id"], timeout=JOB_TIMEOUT_S)
            assert job["status"] == "succeeded", job
            doc = c.get(f"/v1/models/{job['model_id']}/export", params={"format": "json"}).json()
        yield api, doc
    finally:
        api.stop()


def _post(api: ApiServer, body: bytes, headers: dict[str, str]) -> int:
    # Generous: bounds a hang, not a speed.
    with httpx.Client(base_url=api.base, timeout=600) as c:
        return c.post("/v1/models", content=body, headers=headers).status_code


def _peak_growth(api: ApiServer, send: Callable[[], list[int]]) -> tuple[list[int], int]:
    """The statuses ``send`` got, and how far the API process's peak resident memory rose above
    its resident memory when ``send`` began."""
    assert api.proc is not None
    pid = api.proc.pid
    reset_peak(pid)
    before = status_bytes(pid, "VmHWM")
    statuses = send()
    return statuses, status_bytes(pid, "VmHWM") - before


def _at_once(api: ApiServer, bodies: list[tuple[bytes, dict[str, str]]]) -> Callable[[], list[int]]:
    def send() -> list[int]:
        with ThreadPoolExecutor(len(bodies)) as pool:
            return list(pool.map(lambda item: _post(api, *item), bodies))

    return send


def test_hostile_imports_at_once_leave_the_peak_memory_near_where_it_was(
    server: tuple[ApiServer, dict[str, Any]],
):
    api, doc = server
    bomb = npz_bomb(doc)  # 1 GiB inflated: each took 1 GiB
    wide = json.dumps(widened(doc, 5 * 10**7)).encode()  # 2.8 KB: took 8.8 GB
    parse = json_parse_bomb(16 * MIB)  # 384 MiB parsed
    bodies = [(bomb, NPZ)] * 3 + [(wide, JSON)] * 2 + [(parse, JSON)] * 2
    statuses, growth = _peak_growth(api, _at_once(api, bodies))
    assert statuses == [413] * 3 + [422] * 2 + [413] * 2
    # A body read whole (twice its size while its pieces are joined), and a generous margin.
    assert growth < 2 * len(parse) + 64 * MIB, growth
    api.assert_clean_log()


def test_valid_imports_run_one_at_a_time(server: tuple[ApiServer, dict[str, Any]]):
    api, doc = server
    body = wide_npz(doc, 500_000)
    assert _post(api, body, NPZ) == 201  # the first import of a width allocates for good
    statuses, one = _peak_growth(api, _at_once(api, [(body, NPZ)]))
    assert statuses == [201]
    statuses, four = _peak_growth(api, _at_once(api, [(body, NPZ)] * 4))
    assert statuses == [201] * 4
    # Four at once would hold about four times what one holds: they wait for one another.
    assert four < 1.5 * one + 32 * MIB, (one, four)
