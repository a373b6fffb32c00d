"""Fuzz the HTTP API from its own OpenAPI document (schemathesis), over real HTTP on loopback.

Every operation gets schema-conforming (positive) and schema-violating (negative) requests,
a bounded number of each. The server runs as its own process (uvicorn, SQLite, the local pool)
with a data set and a trained model in it, so ids that exist are reached too. Every answer must
be below 500, arrive within the timeout (no hang), and every error must be problem+json. Every
answer also goes to the session's contract check (tests/contract.py): a status or content type
the document does not list for its operation fails the run.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies
from hypothesis.errors import HypothesisException

from tests.cluster.harness import ApiServer, poll_job, tiny_svmlight
from tests.contract import RECORDER

# A real server, fuzzed for about a minute: out of make test-fast.
pytestmark = pytest.mark.system

schemathesis = pytest.importorskip("schemathesis")

EXAMPLES_PER_MODE = 20
REQUEST_TIMEOUT_S = 15


def _content_type(response) -> str:
    ctype = response.headers.get("content-type") or [""]
    return ctype[0] if isinstance(ctype, list) else ctype


def _problems(response) -> list[str]:
    code = response.status_code
    out = []
    if code >= 500:
        out.append(f"server error {code}")
    if code >= 400:
        ctype = _content_type(response)
        if not ctype.startswith("application/problem+json"):
            out.append(f"{code} with content-type {ctype!r}")
        elif response.request.method == "HEAD":
            pass  # a HEAD answer has the headers of the problem, never a body (RFC 9110 9.3.2)
        else:
            body = json.loads(response.content)
            if body.get("status") != code or not body.get("title") or not body.get("type"):
                out.append(f"{code} with a malformed problem body {body}")
    return out


def test_fuzz_every_operation_from_the_openapi_schema(tmp_path: Path):
    server = ApiServer(
        tmp_path / "var", tmp_path / "api.log", PGS_WORKERS="1", PGS_MAX_BODY_BYTES="65536"
    ).start()
    try:
        with server.client() as c:  # something to find behind the ids 1
            ds = c.post("/v1/datasets", files={"file": ("t.svm", tiny_svmlight())}).json()["id"]
            job = c.post("/v1/jobs", json={"dataset_id": ds, "params": {"n_iter": 2000}}).json()
            assert poll_job(c, job["id"])["status"] == "succeeded"

        # A tus PATCH body is raw bytes (application/offset+octet-stream), which schemathesis
        # cannot derive from a JSON schema: it gets arbitrary bytes.
        schemathesis.openapi.media_type("application/offset+octet-stream", strategies.binary(max_size=4096))
        schema = schemathesis.openapi.from_url(f"{server.base}/openapi.json")
        modes = [schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE]
        tried: collections.Counter[str] = collections.Counter()
        statuses: collections.Counter[int] = collections.Counter()
        failures: list[str] = []
        skipped: list[str] = []

        def fuzz(operation, mode) -> None:
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES_PER_MODE,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            def run(case) -> None:
                tried[operation.label] += 1
                response = case.call(base_url=server.base, timeout=REQUEST_TIMEOUT_S)
                statuses[response.status_code] += 1
                RECORDER.record(
                    operation.method, operation.path, response.status_code, _content_type(response) or None
                )
                failures.extend(
                    f"{operation.label} ({mode.value}): {p}\n  {case.as_curl_command()}"
                    for p in _problems(response)
                )

            run()

        for result in schema.get_all_operations():
            operation = result.ok()
            for mode in modes:
                try:
                    fuzz(operation, mode)
                except HypothesisException as exc:  # e.g. no negative data for this operation
                    skipped.append(f"{operation.label} ({mode.value}): {type(exc).__name__}")
        total = sum(tried.values())
        print(
            f"\nschemathesis: {total} requests over {len(tried)} operations; "
            f"statuses {dict(sorted(statuses.items()))}; not generated: {skipped}"
        )
        assert not failures, "\n".join(failures[:20])
        assert total >= 500, tried
    finally:
        server.stop()
