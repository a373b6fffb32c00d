"""The solver as a library: the distribution's core needs only numpy, scipy, numba and
scikit-learn, and importing :mod:`solver` loads nothing of the service (its dependencies are the
``service`` extra)."""

from __future__ import annotations

import ast
import importlib.metadata
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

SOLVER = Path(__file__).resolve().parents[2] / "solver"
CORE = {"numpy", "scipy", "numba", "scikit-learn"}
# Their import names: what solver/ may import besides the standard library and itself.
CORE_MODULES = {"numpy", "scipy", "numba", "sklearn"}
SERVICE_MODULES = ["fastapi", "sqlalchemy", "dask", "psycopg", "s3fs", "onnx", "matplotlib", "httpx"]


def test_the_core_requirements_are_the_four_numerical_libraries():
    requires = [Requirement(r) for r in importlib.metadata.requires("pgs-solver") or []]
    assert {r.name for r in requires if r.marker is None} == CORE
    # The service's dependencies are there, behind the extra.
    service = {r.name for r in requires if r.marker is not None and r.marker.evaluate({"extra": "service"})}
    assert {"fastapi", "sqlalchemy", "dask", "psycopg", "s3fs", "onnx"} <= service


def test_importing_the_solver_loads_none_of_the_services_dependencies():
    probe = (
        "import sys; import solver; from solver import PGSClassifier; "
        f"print([m for m in {SERVICE_MODULES!r} if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=SOLVER.parent
    )
    assert done.stdout.strip() == "[]", done.stderr


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_solver_module_imports_beyond_the_core_even_lazily():
    """Also the imports inside functions, which the subprocess above never runs."""
    allowed = CORE_MODULES | set(sys.stdlib_module_names) | {"solver"}
    outside = {
        str(path.relative_to(SOLVER)): sorted(_imported_roots(path) - allowed)
        for path in sorted(SOLVER.rglob("*.py"))
    }
    assert {name: roots for name, roots in outside.items() if roots} == {}
