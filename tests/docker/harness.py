"""A real Docker engine driven as a user drives it: the ``docker`` CLI and Docker Compose.

* :func:`engine_problem`: why these tests cannot run here (no CLI, no engine, no Compose), or None.
* :func:`ensure_base_images`: python:3.11-slim and postgres:16 present, else built from Debian's
  packages by scripts/docker-base-images.sh (no image registry is needed).
* :func:`build_image`: the project's image from the real Dockerfile.
* :class:`ComposeProject`: docker-compose.yml and a ``.env`` made from ``.env.example`` in a
  directory of their own, under a unique project name, so that runs never share a container, a
  network or a volume (nor the ``.env`` a developer keeps in the repository).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.harness import REPO, wait_until

BASE_IMAGES = ("python:3.11-slim", "postgres:16")
BASE_IMAGES_SCRIPT = REPO / "scripts" / "docker-base-images.sh"
# Lines for the terminal summary (conftest.py): build times, the image size, each stack's times.
REPORT: list[str] = []
HOW_TO_ENABLE = (
    "install Docker and Compose and start the engine, as .ci/run does: apt-get install "
    "docker.io docker-compose debootstrap && dockerd &"
)


def run(
    cmd: list[str],
    *,
    check: bool = True,
    timeout: float = 600,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command, output captured; a failure shows the command and the tail of its output."""
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env, stdin=subprocess.DEVNULL
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


def docker(*args: str, check: bool = True, timeout: float = 600) -> str:
    return run(["docker", *args], check=check, timeout=timeout).stdout.strip()


def compose_command() -> list[str] | None:
    """Compose v2 (``docker compose``) where it is installed, else docker-compose 1.x."""
    if run(["docker", "compose", "version"], check=False, timeout=60).returncode == 0:
        return ["docker", "compose"]
    found = shutil.which("docker-compose")
    return [found] if found else None


def engine_problem() -> str | None:
    if shutil.which("docker") is None:
        return f"no docker command: {HOW_TO_ENABLE}"
    info = run(["docker", "info", "--format", "{{.ServerVersion}}"], check=False, timeout=60)
    if info.returncode != 0:
        last = (info.stderr.strip().splitlines() or ["?"])[-1]
        return f"no Docker engine answers ({last}): {HOW_TO_ENABLE}"
    if compose_command() is None:
        return f"neither `docker compose` nor docker-compose is installed: {HOW_TO_ENABLE}"
    return None


def image_exists(ref: str) -> bool:
    return run(["docker", "image", "inspect", ref], check=False, timeout=60).returncode == 0


def ensure_base_images() -> float:
    """Build the missing base images; returns the seconds it took (0 when all were there)."""
    missing = [ref for ref in BASE_IMAGES if not image_exists(ref)]
    if not missing:
        return 0.0
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        pytest.skip(
            f"{', '.join(missing)} missing: `docker pull` them where a registry answers, or "
            f"run {BASE_IMAGES_SCRIPT.relative_to(REPO)} as root (needs debootstrap)"
        )
    started = time.monotonic()
    run(["bash", str(BASE_IMAGES_SCRIPT)], timeout=1800)
    return time.monotonic() - started


def build_image(tags: list[str], log: Path, context: Path = REPO) -> float:
    """``docker build`` of the repository (or another context); returns the seconds it took. The
    host's network, so that pip reaches the package index wherever the host does (see
    docker-compose.yml)."""
    started = time.monotonic()
    cmd = ["docker", "build", "--network", "host", *(a for t in tags for a in ("-t", t)), str(context)]
    proc = run(cmd, check=False, timeout=3600)
    log.write_text(proc.stdout + proc.stderr)
    assert proc.returncode == 0, f"docker build failed, see {log}:\n{proc.stderr[-3000:]}"
    return time.monotonic() - started


class ComposeProject:
    """One Compose project: its own directory, ``.env`` and name."""

    def __init__(self, workdir: Path, name: str, env: dict[str, str], profiles: tuple[str, ...] = ()) -> None:
        command = compose_command()
        assert command is not None
        self.dir = workdir
        self.name = name
        self.base = [*command, "-p", name, *(a for p in profiles for a in ("--profile", p))]
        workdir.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "docker-compose.yml", workdir / "docker-compose.yml")
        # The build contexts the file names besides ".": docker-compose 1.29 checks that they
        # exist before any command, even one that builds nothing.
        shutil.copytree(REPO / "docker", workdir / "docker")
        self.write_env(env)

    def write_env(self, overrides: dict[str, str]) -> None:
        """``cp .env.example .env``, then each override replaces its line (or is appended)."""
        text = (REPO / ".env.example").read_text()
        for key, value in overrides.items():
            line = f"{key}={value}"
            text, n = re.subn(rf"^#? ?{key}=.*$", line, text, flags=re.M)
            if n == 0:
                text += line + "\n"
        (self.dir / ".env").write_text(text)

    def env_value(self, key: str) -> str:
        """What the project's .env says, read as the README's commands read it."""
        match = re.search(rf"^{key}=(.*)$", (self.dir / ".env").read_text(), re.M)
        assert match, f"{key} is not set in .env"
        return match.group(1)

    def __call__(
        self, *args: str, check: bool = True, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        return run([*self.base, *args], check=check, timeout=timeout, cwd=self.dir)

    def containers(self, service: str | None = None, all_states: bool = False) -> list[str]:
        filters = ["--filter", f"label=com.docker.compose.project={self.name}"]
        if service:
            filters += ["--filter", f"label=com.docker.compose.service={service}"]
        out = docker("ps", "-q", "--no-trunc", *(["-a"] if all_states else []), *filters)
        return out.split()

    def container(self, service: str) -> str:
        (cid,) = self.containers(service)
        return cid

    def inspect(self, container: str) -> dict[str, Any]:
        return json.loads(docker("inspect", container))[0]

    def wait_healthy(self, service: str, timeout: float = 240) -> float:
        """Until the service's container reports healthy; returns the seconds it took."""
        started = time.monotonic()

        def healthy() -> bool:
            state = self.inspect(self.container(service))["State"]
            assert state["Status"] == "running", f"{service} is {state['Status']}:\n{self.logs(service)}"
            return bool(state["Health"]["Status"] == "healthy")

        wait_until(healthy, timeout, f"{service} healthy", interval=1)
        return time.monotonic() - started

    def published_port(self, service: str) -> int:
        out = self("port", service, "8000").stdout.strip()
        return int(out.rsplit(":", 1)[1])

    def logs(self, service: str) -> str:
        proc = self("logs", "--no-color", service, check=False)
        return proc.stdout + proc.stderr

    def leftovers(self) -> dict[str, list[str]]:
        """The project's containers, networks and volumes that still exist."""
        label = f"label=com.docker.compose.project={self.name}"
        return {
            "containers": self.containers(all_states=True),
            "networks": docker("network", "ls", "-q", "--filter", label).split(),
            "volumes": docker("volume", "ls", "-q", "--filter", label).split(),
        }

    def remove(self) -> None:
        """Everything of the project, whatever state a failed test left it in."""
        self("down", "-v", "--remove-orphans", "--timeout", "5", check=False)
