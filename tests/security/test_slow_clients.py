"""Slow and numerous clients against a real server (``python -m app`` on 127.0.0.1), replaying
attack rows L4 (slow headers, 300 connections) and L5 (slow bodies: ``POST /v1/jobs`` with
``Content-Length: 100000`` and a byte now and then, from 300 connections, without an API key and
with one), plus the per-client bounds they rely on: X-Forwarded-For and concurrent uploads.

The limits are lowered so that a few hundred connections reach them: the server's ceiling
(PGS_MAX_CONNECTIONS 120) is below the attack's 300 connections, which in the audit had every
other client refused; PGS_MAX_CONNECTIONS_PER_CLIENT is 20; a body's grace
(PGS_BODY_RATE_GRACE_S) and the header deadline are 2 s. The whole 127/8 is loopback on Linux:
each attack comes from an address of its own (127.0.0.2, ...), the keyed client from 127.0.0.1.
An attacker whose connection the server closes opens another a second later, so the pressure
lasts while the keyed client works; every one of the keyed client's requests must succeed.
"""

from __future__ import annotations

import asyncio
import resource
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.services.datasets.resumable import WRITE_BATCH_BYTES
from tests.cluster.harness import ApiServer, running_service, tiny_svmlight, wait_until
from tests.helpers import run_async

# A real server and a few hundred sockets: out of make test-fast.
pytestmark = [pytest.mark.system, pytest.mark.slow]

KEY_A, KEY_B = "key-team-a-slow-1", "key-team-b-slow-1"
KEYS = f"team-a:member:{KEY_A},team-b:member:{KEY_B}"
PER_CLIENT = 20
UPLOADS_PER_OWNER = 2
PROXY = "127.0.0.3"
ATTACK_CONNECTIONS = 300
KEYED_REQUESTS = 21
# Bounds a hang of the server (a read that never ends), not its speed.
SOCKET_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)
    if soft < wanted:  # the attack's sockets here, and the server (which inherits it) accepts them
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    with running_service(
        tmp_path_factory.mktemp("slow-clients"),
        PGS_API_KEYS=KEYS,
        PGS_MAX_CONNECTIONS="120",
        PGS_MAX_CONNECTIONS_PER_CLIENT=str(PER_CLIENT),
        PGS_BODY_RATE_GRACE_S="2",
        PGS_HEADER_TIMEOUT_S="2",
        PGS_TRUSTED_PROXIES=PROXY,
        PGS_MAX_CONCURRENT_UPLOADS_PER_OWNER=str(UPLOADS_PER_OWNER),
    ) as api:
        yield api
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _status(answer: bytes) -> int | None:
    """The status of the first answer on a connection; None if the server sent none."""
    if not answer.startswith(b"HTTP/1.1 "):
        return None
    return int(answer[9:12])


# -- an attacker's connections ------------------------------------------------------------------


@dataclass
class Attempt:
    opened: float
    answer: bytes = b""
    closed_at: float | None = None  # when the server closed it; None: still open at the end


async def _read_to_eof(reader: asyncio.StreamReader, attempt: Attempt) -> None:
    try:
        while chunk := await reader.read(65536):
            attempt.answer += chunk
    except ConnectionError:
        pass  # a reset after the answer: closed all the same
    attempt.closed_at = time.monotonic()


async def _attacker(
    port: int, source: str, head: bytes, drip: bytes, stop: asyncio.Event, attempts: list[Attempt]
) -> None:
    """Keeps a connection from ``source`` open: sends ``head``, then ``drip`` every second; when
    the server closes it, opens another a second later."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        except OSError:
            await asyncio.sleep(1)
            continue
        attempt = Attempt(time.monotonic())
        attempts.append(attempt)
        reading = asyncio.ensure_future(_read_to_eof(reader, attempt))
        try:
            writer.write(head)
            while not stop.is_set():
                await asyncio.wait({reading}, timeout=1.0)
                if reading.done():
                    break
                writer.write(drip)
        except ConnectionError:
            pass
        if not reading.done():
            reading.cancel()
        writer.close()
        if not stop.is_set():
            await asyncio.sleep(1)


async def _keyed_client(base: str) -> list[tuple[str, int]]:
    """Fresh connections from 127.0.0.1 (no keep-alive: a new connection is what an attack at
    the connection limit refuses), a read, a list and an upload in turn."""
    statuses = []
    auth = {"Authorization": f"Bearer {KEY_A}"}
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base, timeout=SOCKET_TIMEOUT_S, limits=limits) as client:
        for i in range(KEYED_REQUESTS):
            if i % 3 == 0:
                r = await client.get("/readyz")
            elif i % 3 == 1:
                r = await client.get("/v1/datasets", headers=auth)
            else:
                r = await client.post(
                    "/v1/datasets", headers=auth, files={"file": ("t.svm", tiny_svmlight())}
                )
            statuses.append((f"{r.request.method} {r.request.url.path}", r.status_code))
            await asyncio.sleep(0.1)
    return statuses


async def _attack_while_served(
    server: ApiServer, source: str, head: bytes, drip: bytes
) -> tuple[list[Attempt], list[tuple[str, int]], float]:
    """ATTACK_CONNECTIONS attackers from ``source``; once they are under way, the keyed client's
    requests. Returns the attempts, the keyed client's statuses and when the attack stopped."""
    stop, attempts = asyncio.Event(), []
    attackers = [
        asyncio.ensure_future(_attacker(server.port, source, head, drip, stop, attempts))
        for _ in range(ATTACK_CONNECTIONS)
    ]
    try:
        await asyncio.sleep(1.5)
        statuses = await _keyed_client(server.base)
        await asyncio.sleep(max(0.0, 6.0 - (time.monotonic() - attempts[0].opened)))
    finally:
        stop.set()
        stopped = time.monotonic()
        await asyncio.gather(*attackers)
    return attempts, statuses, stopped


def _assert_all_served(statuses: list[tuple[str, int]]) -> None:
    failed = [(what, code) for what, code in statuses if not 200 <= code < 300]
    assert not failed, f"{len(failed)} of {len(statuses)} keyed requests failed: {failed}"


def _answers(attempts: list[Attempt]) -> Counter[int | None]:
    """The statuses of the attack connections the server closed."""
    return Counter(_status(a.answer) for a in attempts if a.closed_at is not None)


def _assert_none_held(attempts: list[Attempt], stopped: float, hold_s: float) -> None:
    """Every attack connection opened ``hold_s`` before the end was closed by the server."""
    held = [a for a in attempts if a.closed_at is None and a.opened < stopped - hold_s]
    assert not held, f"{len(held)} attack connections held for over {hold_s} s"


SLOW_JOB = (
    "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Content-Length: 100000\r\n{auth}\r\n{{"
)


def test_l5_keyless_slow_bodies_do_not_keep_a_keyed_client_out(server: ApiServer):
    head = SLOW_JOB.format(auth="").encode()
    attempts, statuses, stopped = run_async(_attack_while_served(server, "127.0.0.2", head, b" "))
    _assert_all_served(statuses)
    answers = _answers(attempts)
    # 401 before the body is read, then closed; past the per-client limit, 429 at once.
    assert set(answers) <= {401, 429}, answers
    assert answers[401] and answers[429], answers
    _assert_none_held(attempts, stopped, hold_s=3.0)


def test_l5_keyed_slow_bodies_are_cut_at_the_minimum_pace(server: ApiServer):
    head = SLOW_JOB.format(auth=f"Authorization: Bearer {KEY_B}\r\n").encode()
    attempts, statuses, stopped = run_async(_attack_while_served(server, "127.0.0.5", head, b" "))
    _assert_all_served(statuses)
    answers = _answers(attempts)
    # A byte a second against 1 KiB/s: 408 once the 2 s grace is spent; the rest 429 at once.
    assert set(answers) <= {408, 429}, answers
    assert answers[408] and answers[429], answers
    cut = next(a.answer for a in attempts if _status(a.answer) == 408)
    assert b"PGS_MIN_BODY_BYTES_PER_S" in cut and b"application/problem+json" in cut
    _assert_none_held(attempts, stopped, hold_s=5.0)


def test_l4_slow_headers_are_closed_at_the_header_deadline(server: ApiServer):
    head = b"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    attempts, statuses, stopped = run_async(_attack_while_served(server, "127.0.0.6", head, b"X-Slow: 1\r\n"))
    _assert_all_served(statuses)
    answers = _answers(attempts)
    assert set(answers) <= {408, 429}, answers
    assert answers[408] and answers[429], answers
    _assert_none_held(attempts, stopped, hold_s=5.0)


# -- X-Forwarded-For ----------------------------------------------------------------------------


def _answers_to_slow_jobs(port: int, source: str, forwarded_for: list[str]) -> Counter[int | None]:
    """One connection from ``source`` per X-Forwarded-For value, each a keyed ``POST /v1/jobs``
    whose body never comes; the statuses the server answers them with."""
    with ExitStack() as stack:
        socks = []
        for hop in forwarded_for:
            sock = stack.enter_context(socket.socket())
            sock.bind((source, 0))
            sock.settimeout(SOCKET_TIMEOUT_S)
            sock.connect(("127.0.0.1", port))
            head = SLOW_JOB.format(auth=f"Authorization: Bearer {KEY_B}\r\nX-Forwarded-For: {hop}\r\n")
            sock.sendall(head.encode())
            socks.append(sock)
        answers = []
        for sock in socks:  # 429 at once past the limit, 408 at the end of the grace
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            answers.append(_status(answer))
    return Counter(answers)


def test_x_forwarded_for_from_an_untrusted_peer_does_not_escape_the_limit(server: ApiServer):
    spoofed = [f"198.51.100.{i}" for i in range(PER_CLIENT + 10)]
    answers = _answers_to_slow_jobs(server.port, "127.0.0.4", spoofed)
    assert answers == {408: PER_CLIENT, 429: 10}


def test_x_forwarded_for_from_a_trusted_proxy_names_the_client(server: ApiServer):
    # The left hops are the client's own writing; the proxy appended the right-most.
    hops = [f"10.0.{i}.1, 203.0.113.50" for i in range(PER_CLIENT + 10)]
    result: dict[str, Counter[int | None]] = {}
    worker = threading.Thread(
        target=lambda: result.update(answers=_answers_to_slow_jobs(server.port, PROXY, hops)), daemon=True
    )
    worker.start()
    try:
        # While that client holds its limit, another one behind the same proxy is served (and
        # the proxy's own connections, over 20, are not refused).
        def other_client_served() -> bool:
            with httpx.Client(transport=httpx.HTTPTransport(local_address=PROXY), timeout=30) as c:
                r = c.get(f"{server.base}/readyz", headers={"X-Forwarded-For": "203.0.113.51"})
            return r.status_code == 200

        assert other_client_served()
    finally:
        worker.join(SOCKET_TIMEOUT_S)
    assert result["answers"] == {408: PER_CLIENT, 429: 10}


# -- concurrent uploads per owner ---------------------------------------------------------------


class _SlowUploads:
    """Upload bodies of team-a kept coming at 10 KB/s each (well above the minimum pace) until
    closed, so that they hold their upload slots."""

    def __init__(self, server: ApiServer) -> None:
        self.server = server
        self.socks: list[socket.socket] = []
        self._stop = threading.Event()
        self._feeder = threading.Thread(target=self._feed, daemon=True)

    def open(self, head: bytes) -> None:
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=SOCKET_TIMEOUT_S)
        sock.sendall(head)
        self.socks.append(sock)

    def _feed(self) -> None:
        while not self._stop.wait(0.2):
            for sock in list(self.socks):
                sock.sendall(b"1 1:1\n" * 340)

    def __enter__(self) -> _SlowUploads:
        self._feeder.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._feeder.join(SOCKET_TIMEOUT_S)
        for sock in self.socks:
            sock.close()


def _probe(client: httpx.Client, key: str) -> int:
    """An upload request without a body (a PATCH of no upload): 429 while the owner's upload
    slots are all taken, else 404."""
    return client.patch(
        "/v1/uploads/no-such-upload",
        headers={"Authorization": f"Bearer {key}", "Tus-Resumable": "1.0.0", "Upload-Offset": "0"},
    ).status_code


def test_concurrent_uploads_per_owner_are_bounded_and_other_owners_unaffected(server: ApiServer):
    auth = {"Authorization": f"Bearer {KEY_A}"}
    tmp_dir = Path(server.env["PGS_DATA_DIR"]) / "tmp"
    boundary = "slowb0undary"
    multipart = (
        f"POST /v1/datasets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY_A}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 100000000\r\n\r\n"
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="s.svm"\r\n\r\n'
    ).encode()
    with server.client() as c:
        tus = {**auth, "Tus-Resumable": "1.0.0"}
        location = c.post("/v1/uploads", headers={**tus, "Upload-Length": "100000000"}).headers["location"]
        tus_patch = (
            f"PATCH {location} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY_A}\r\n"
            "Tus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
            "Content-Length: 100000000\r\n\r\n"
        ).encode()
        with _SlowUploads(server) as slow:
            # One after the other, each seen receiving (its bytes on the server's disk), so that
            # both hold their slots before anything else of team-a's is sent.
            slow.open(multipart)
            wait_until(lambda: list(tmp_dir.glob("upload-*.part")), 30, "the multipart upload receiving")
            # A first batch's worth, so that the server writes some of it to disk at once.
            slow.open(tus_patch + b"x" * WRITE_BATCH_BYTES)
            wait_until(
                lambda: int(c.head(location, headers=tus).headers["upload-offset"]) > 0,
                30,
                "the tus PATCH receiving",
            )
            refused = c.post("/v1/datasets", headers=auth, files={"file": ("t.svm", tiny_svmlight())})
            assert refused.status_code == 429, refused.text
            assert refused.headers["retry-after"] == "5"
            assert "PGS_MAX_CONCURRENT_UPLOADS_PER_OWNER" in refused.json()["detail"]
            assert _probe(c, KEY_A) == 429  # a PATCH is an upload too
            other = c.post(
                "/v1/datasets",
                headers={"Authorization": f"Bearer {KEY_B}"},
                files={"file": ("t.svm", tiny_svmlight())},
            )
            assert other.status_code == 201, other.text
        # The slow uploads ended: their slots are free again.
        wait_until(lambda: _probe(c, KEY_A) == 404, 30, "team-a's upload slots freed")
        again = c.post("/v1/datasets", headers=auth, files={"file": ("t.svm", tiny_svmlight())})
        assert again.status_code == 201, again.text
