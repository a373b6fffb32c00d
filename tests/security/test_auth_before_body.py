"""A caller without a valid key is answered before its body is read (a real server on 127.0.0.1):
a keyless client that promises a large body and sends none holds no connection, so it cannot make
the service refuse a keyed one; nor can a reader's key."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from tests.cluster.harness import running_service

# A real server on 127.0.0.1: left out of make test-fast (CONTRIBUTING.md).
pytestmark = pytest.mark.system

KEYS = "team-a:member:key-team-a-1,team-a:reader:key-reader-a-1"


def _answer_to_a_promised_body(port: int, headers: str) -> bytes:
    """Send a request's head promising 1 MB of body, send none, and read what comes back."""
    with socket.create_connection(("127.0.0.1", port)) as conn:
        # Bounds a hang of the test (a server that waits for the body), not the server's speed.
        conn.settimeout(60)
        conn.sendall(
            (
                "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: 1000000\r\n{headers}\r\n"
            ).encode()
        )
        answer = b""
        while chunk := conn.recv(4096):  # the server closes: the promised body was never read
            answer += chunk
        return answer


def test_no_or_a_wrong_key_is_answered_without_reading_the_body(tmp_path: Path):
    with running_service(tmp_path, PGS_API_KEYS=KEYS) as server:
        assert _answer_to_a_promised_body(server.port, "").startswith(b"HTTP/1.1 401")
        wrong = _answer_to_a_promised_body(server.port, "Authorization: Bearer not-a-key\r\n")
        assert wrong.startswith(b"HTTP/1.1 403")
        # A reader's write is refused the same way: readers change nothing.
        reader = _answer_to_a_promised_body(server.port, "Authorization: Bearer key-reader-a-1\r\n")
        assert reader.startswith(b"HTTP/1.1 403") and b"reader" in reader
        me = httpx.get(f"{server.base}/v1/me", headers={"Authorization": "Bearer key-team-a-1"}).json()
        assert me["owner"] == "team-a"
