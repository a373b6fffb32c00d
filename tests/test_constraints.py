"""constraints.txt (``make lock``) pins every requirement of both pyprojects, at a version their
specifiers accept: a dependency added or raised without refreshing it fails here, instead of
installing an unpinned newest release (or failing the install) on the next machine."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PYPROJECTS = [REPO / "pyproject.toml", REPO / "client" / "pyproject.toml"]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        requirement = line.split("#")[0].strip()
        if requirement:
            name, version = requirement.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _requirements(pyproject: Path) -> tuple[str, list[Requirement]]:
    project = tomllib.loads(pyproject.read_text())["project"]
    lists = [project["dependencies"], *project.get("optional-dependencies", {}).values()]
    return canonicalize_name(project["name"]), [Requirement(r) for rs in lists for r in rs]


def test_every_requirement_is_pinned_at_a_version_it_accepts():
    pins = _pins()
    checked = []
    for pyproject in PYPROJECTS:
        own_name, requirements = _requirements(pyproject)
        for requirement in requirements:
            name = canonicalize_name(requirement.name)
            if name == own_name:  # an extra of the project itself (dev = [pgs-solver[service]])
                continue
            assert name in pins, f"{requirement} ({pyproject.name}) is not in constraints.txt: run make lock"
            assert requirement.specifier.contains(pins[name], prereleases=True), (
                f"constraints.txt pins {name}=={pins[name]}, outside {requirement}: run make lock"
            )
            checked.append(name)
    assert {"numba", "fastapi", "pytest", "snapml", "httpx", "typer"} <= set(checked)
