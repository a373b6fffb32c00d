"""The project's image, built once per test run from the real Dockerfile, and what the Docker
tests measured (printed at the end of the run, in a section of its own)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.docker.harness import (
    REPO,
    REPORT,
    build_image,
    docker,
    engine_problem,
    ensure_base_images,
)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPORT:
        terminalreporter.section("docker")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def run_id() -> str:
    """Names this run's image tag and Compose projects, so concurrent runs never meet."""
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
def pgs_image(run_id: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This run's image tag. ``pgs-service:test`` also names it and outlives the run, so the next
    build finds its layers in the engine's cache and rebuilds only what changed."""
    problem = engine_problem()
    if problem:
        pytest.skip(problem)
    base_s = ensure_base_images()
    REPORT.append(
        f"base images (python:3.11-slim, postgres:16): {base_s:.0f} s"
        + (" to build" if base_s else ", present")
    )
    tag = f"pgs-service:test-{run_id}"
    previous = docker("image", "inspect", "--format", "{{.Id}}", "pgs-service:test", check=False)
    log = tmp_path_factory.mktemp("docker-build") / "build.log"
    build_s = build_image([tag, "pgs-service:test"], log)
    if previous and previous != docker("image", "inspect", "--format", "{{.Id}}", tag):
        # The last run's image, now untagged; refused (and kept) while another run still uses it.
        docker("rmi", previous, check=False)
    REPORT.append(f"project image {tag}: built in {build_s:.0f} s (log: {log})")
    yield tag
    # Only this run's tag goes; --no-prune keeps the layers for the next build.
    docker("rmi", "--no-prune", tag, check=False)


@pytest.fixture(scope="session")
def s3_image(pgs_image: str, run_id: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The cluster profile's S3 server (docker/s3), built like the project's image (after it:
    the base image is there by then)."""
    tag = f"pgs-s3:test-{run_id}"
    log = tmp_path_factory.mktemp("docker-build-s3") / "build.log"
    build_s = build_image([tag, "pgs-s3:test"], log, context=REPO / "docker" / "s3")
    REPORT.append(f"s3 image {tag}: built in {build_s:.0f} s (log: {log})")
    yield tag
    docker("rmi", "--no-prune", tag, check=False)
