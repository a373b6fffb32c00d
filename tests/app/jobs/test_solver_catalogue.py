"""GET /v1/solvers: every solver, its tasks, losses and parameters, and the listing agrees with what
POST /v1/jobs accepts: a job of the listed defaults is queued, a value outside a listed range or
choice is a 422 naming the parameter. The OpenAPI document's <Solver>Params schemas agree too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.services.solvers import bounds
from app.services.solvers.catalogue import CATALOGUE_TASKS
from tests.contract import live_spec
from tests.helpers import assert_problem, create_job, make_settings, upload, wait_for

# The data set each catalogue task is tried on.
DATA = {"classification": "heart_scale.svm", "regression": "abalone.svm"}


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("catalogue"))
    with TestClient(create_app(settings)) as c:
        c.ids = {
            task: upload(c, data_dir / f, f).json()["id"]  # type: ignore[attr-defined]
            for task, f in DATA.items()
        }
        yield c


def _catalogue() -> list[dict[str, Any]]:
    from app.services.solvers.catalogue import solver_catalogue

    return list(solver_catalogue().values())


def _cases() -> list[Any]:
    return [
        pytest.param(s["name"], t["task"], id=f"{s['name']}-{t['task']}")
        for s in _catalogue()
        for t in s["tasks"]
    ]


def _outside(param: dict[str, Any]) -> list[Any]:
    """Values just outside what the listing says ``param`` accepts."""
    bad: list[Any] = []
    if param["range"] is not None:
        r = param["range"]
        bad.append(r["min"] - 1 if r["min_inclusive"] else r["min"])
        bad.append(r["max"] + 1 if r["max_inclusive"] else r["max"])
        if param["type"] == "integer":
            bad = [int(v) for v in bad]
    if param["choices"] is not None:
        bad.append("no-such-choice")
    return bad


def test_the_listing(app_client: TestClient):
    c = app_client
    r = c.get("/v1/solvers")
    assert r.status_code == 200, r.text
    solvers = r.json()["solvers"]
    assert [s["name"] for s in solvers][0] == "pgs"
    assert {s["name"] for s in solvers if s["streams"]} == {"pgs", "sgd", "ogd", "smidas", "truncgrad"}
    assert [s["name"] for s in solvers if not s["warm_starts"]] == ["kernel_pgs"]
    for s in solvers:
        assert s["title"] and s["paper"] and s["algorithm"]
        assert c.get(f"/v1/solvers/{s['name']}").json() == s
        assert [t["task"] for t in s["tasks"]] == ["classification", "regression"]
        for t in s["tasks"]:
            loss = next(p for p in t["params"] if p["name"] == "loss")
            assert loss["choices"] == t["losses"] and loss["default"] in t["losses"]
            for p in t["params"]:
                assert p["description"] and p["type"] in (
                    "number",
                    "integer",
                    "boolean",
                    "string",
                    "array",
                    "object",
                )
            # Every classifier weighs its classes (a label-to-weight mapping, or "balanced").
            class_weight = [p for p in t["params"] if p["name"] == "class_weight"]
            if t["task"] == "classification":
                assert class_weight[0]["type"] == "object" and class_weight[0]["choices"] == ["balanced"]
            else:
                assert not class_weight
    # The L1 paper's coordinate descent needs a smooth loss; the regressors take theirs only.
    gcd = c.get("/v1/solvers/gcd").json()["tasks"]
    assert "hinge" not in gcd[0]["losses"] and gcd[1]["losses"] == ["huber", "squared"]
    pgs = c.get("/v1/solvers/pgs").json()["tasks"][0]["params"]
    p = next(p for p in pgs if p["name"] == "p")
    assert (p["type"], p["default"], p["range"]) == (
        "number",
        2.0,
        {"min": 1.01, "max": 2.0, "min_inclusive": True, "max_inclusive": True},
    )
    radius = next(p for p in pgs if p["name"] == "radius")
    assert (radius["choices"], radius["nullable"], radius["range"]["max"]) == (["auto"], True, 1e12)
    problem = assert_problem(c.get("/v1/solvers/no-such-solver"), 404)
    assert "no-such-solver" in problem["detail"]
    assert "/v1/solvers/{name}" in c.get("/openapi.json").json()["paths"]


@pytest.mark.parametrize(("solver", "task"), _cases())
def test_the_listing_is_what_a_job_accepts(app_client: TestClient, solver: str, task: str):
    c = app_client
    listed = next(t for t in c.get(f"/v1/solvers/{solver}").json()["tasks"] if t["task"] == task)
    dataset = c.ids[task]  # type: ignore[attr-defined]
    defaults = {p["name"]: p["default"] for p in listed["params"]}
    # Accepted is all this test asks: a tiny budget keeps the fit short.
    r = create_job(c, dataset_id=dataset, solver=solver, params=defaults, time_budget_s=0.01)
    assert r.status_code == 202, r.text
    for param in listed["params"]:
        for value in _outside(param):
            refused = create_job(c, dataset_id=dataset, solver=solver, params={param["name"]: value})
            assert_problem(refused, 422, f"body.params.{param['name']}")
    assert_problem(
        create_job(c, dataset_id=dataset, solver=solver, params={"colour": 1}), 422, "body.params.colour"
    )
    wait_for(c, r.json()["id"])


def test_a_refused_parameter_names_the_listed_rule_and_the_value_received(app_client: TestClient):
    c = app_client
    dataset = c.ids["classification"]  # type: ignore[attr-defined]
    body = assert_problem(create_job(c, dataset_id=dataset, params={"p": 2.5}), 422, "body.params.p")
    (error,) = body["errors"]
    assert (error["rule"], error["input"]) == ("float in [1.01, 2]", 2.5)
    # Python's JSON parser reads NaN, which JSON cannot write back: the answer names it.
    nan = c.post(
        "/v1/jobs",
        content=b'{"dataset_id": %d, "params": {"sigma": NaN}}' % dataset,
        headers={"content-type": "application/json"},
    )
    (error,) = assert_problem(nan, 422, "body.params.sigma")["errors"]
    assert (error["rule"], error["input"]) == ('float in (0, inf) or "auto"', "nan")


# Values tried on every parameter against its schema: each kind of JSON value, the service's bound
# and either side of it, the bounds the solvers declare and either side of them.
JSON_PROBES: list[Any] = [
    None,
    True,
    False,
    "",
    "auto",
    "scale",
    "no-such-choice",
    [1],
    {"value": 1},
    -(10**12) - 1,
    -(10**12),
    -1,
    0,
    1,
    2,
    3,
    2**32 - 1,
    2**32,
    10**12,
    10**12 + 1,
    -1.5,
    -0.5,
    0.0,
    0.5,
    1.005,
    1.01,
    1.5,
    2.0,
    2.5,
    604800.5,
    1e12,
    1.5e12,
]


def _disagree_by_design(value: Any, schema: dict[str, Any]) -> bool:
    """Where JSON Schema and the solvers' Python check differ by design: JSON Schema counts true as
    no number and 2.0 as an integer, while Python's JSON reads true as 1 (a number to
    scikit-learn) and 2.0 as a float (no count to scikit-learn)."""
    kinds = json.dumps(schema)
    if isinstance(value, bool):
        return '"boolean"' not in kinds
    return isinstance(value, float) and value.is_integer() and '"integer"' in kinds


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return live_spec()


def test_a_requests_params_are_one_of_the_solvers_schemas(document: dict[str, Any]):
    schemas = document["components"]["schemas"]
    names = [s["name"] for s in _catalogue()]
    # A job may also ask for "auto" (solver.auto chooses among them); a study names its solvers.
    for model, choices in (("JobCreate", [*names, "auto"]), ("StudyRun", names)):
        properties = schemas[model]["properties"]
        assert properties["solver"]["enum"] == choices
        refs = [branch["$ref"].rsplit("/", 1)[1] for branch in properties["params"]["anyOf"]]
        assert refs == [f"{_stem(name)}Params" for name in names]


def _stem(solver: str) -> str:
    """PGS for pgs: its estimators' name without Classifier."""
    listed = next(s for s in _catalogue() if s["name"] == solver)
    return str(listed["tasks"][0]["estimator"]).removesuffix("Classifier")


@pytest.mark.parametrize("solver", [s["name"] for s in _catalogue()])
def test_a_solvers_params_schema_accepts_what_a_job_of_some_task_accepts(
    document: dict[str, Any], solver: str
):
    schema = document["components"]["schemas"][f"{_stem(solver)}Params"]
    validator = jsonschema.Draft202012Validator(schema)
    listed = next(s for s in _catalogue() if s["name"] == solver)
    assert set(schema["properties"]) == {p["name"] for t in listed["tasks"] for p in t["params"]}
    assert not list(validator.iter_errors({p["name"]: p["default"] for p in listed["tasks"][0]["params"]}))
    assert list(validator.iter_errors({"colour": 1}))
    data_tasks = [CATALOGUE_TASKS[t["task"]] for t in listed["tasks"]]
    verdicts: dict[str, set[bool]] = {}
    for name, property_schema in schema["properties"].items():
        choices = [
            c for t in listed["tasks"] for p in t["params"] if p["name"] == name for c in p["choices"] or []
        ]
        for value in JSON_PROBES + choices:
            if _disagree_by_design(value, property_schema):
                continue
            in_schema = validator.is_valid({name: value})
            accepted = [_accepts(solver, task, name, value) for task in data_tasks]
            assert in_schema == any(accepted), (name, value, accepted)
            verdicts.setdefault(name, set()).add(in_schema)
    # The probes tell good from bad for every parameter: each gets values of both kinds.
    assert all(found == {True, False} for found in verdicts.values()), verdicts


def _accepts(solver: str, task: str, name: str, value: Any) -> bool:
    """Whether a job takes ``value`` for ``name`` as far as a rule of that one parameter goes: its
    declared values and the service's bound. A rule of two parameters (gd's and sgd's
    eta * sigma <= 1) is in the one's description, not in its schema."""
    from solver import SOLVERS
    from solver.parameters import check_parameters

    cls = SOLVERS[solver].estimator_class(task)
    alone = [problem for problem in check_parameters(cls, {name: value}) if not problem.others]
    return not alone and bounds.within(name, value)
