"""Fixtures shared by every test directory: the real data sets of ../shared/data (tests skip when
it is absent) and a real app on a fresh data dir and SQLite file.

A module that needs other settings overrides ``settings``; the calls and checks the service
tests share are plain functions in tests/helpers.py. PostgreSQL and Dask start only for the
tests that need them (tests/cluster/conftest.py). The suites that need more than this process
are marked here by directory, for ``make test-fast`` to leave out.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app
from tests.contract import RECORDER, Report, install_httpx_recording, live_spec
from tests.helpers import make_settings
from tests.s3 import S3Server, moto_server, set_test_credentials

TESTS = Path(__file__).resolve().parent
DATA_DIR = TESTS.parents[1] / "shared" / "data"
# Suites whose every test needs more than this process, marked by directory (pyproject.toml
# describes the markers), so that a test added there is left out of `make test-fast` too.
SUITE_MARKERS = {"cluster": "cluster", "docker": "docker", "console": "browser", "faults": "system"}


def pytest_configure(config: pytest.Config) -> None:
    # Starlette's TestClient warns that it prefers a newer httpx; irrelevant to these tests.
    config.addinivalue_line("filterwarnings", "ignore:Using `httpx`:DeprecationWarning")
    install_httpx_recording()
    set_test_credentials()  # before any test starts a process that keeps its environment


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(TESTS):
            marker = SUITE_MARKERS.get(item.path.relative_to(TESTS).parts[0])
            if marker is not None:
                item.add_marker(marker)


_contract: list[Report] = []


# Under pytest-xdist (`make test`, `make test-fast`) each worker process records the answers its
# tests received and hands them to the controller, which checks them all at once: the contract
# covers the whole run however many processes ran it.
CONTRACT_OUTPUT = "contract_seen"


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On the controller: take in a finished worker's answers."""
    RECORDER.seen.update(
        tuple(answer) for answer in getattr(node, "workeroutput", {}).get(CONTRACT_OUTPUT, [])
    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run when the service answered something its OpenAPI document does not list
    (tests/contract.py)."""
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:  # an xdist worker: the controller checks
        worker_output[CONTRACT_OUTPUT] = sorted(RECORDER.seen, key=str)
        return
    if not RECORDER.seen:
        return
    report = RECORDER.check(live_spec())
    _contract.append(report)
    if report.undocumented and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not _contract:
        return
    report = _contract[0]
    terminalreporter.write_line(report.summary())
    if report.undocumented:
        terminalreporter.write_line(
            "contract: FAILED: the service answered what its OpenAPI document does not list:", red=True
        )
    for answer in report.undocumented:
        terminalreporter.write_line(f"  UNDOCUMENTED: {answer}", red=True)
    if config.get_verbosity() > 0:
        for answer in report.unexercised:
            terminalreporter.write_line(f"  not produced by these tests: {answer}")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"real data sets not found at {DATA_DIR}")
    return DATA_DIR


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Server]:
    """A real S3-compatible server (moto) on 127.0.0.1 for the session's tests that ask for it."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed (pip install -e '.[dev]')")
    with moto_server() as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A fresh app and database per test; worker processes start only if a job is submitted."""
    with TestClient(create_app(settings)) as c:
        yield c
