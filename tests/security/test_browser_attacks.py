"""The attacks through what a browser shows of the service (rows X2-X5 of the security review),
replayed against the real app: each test is one attack and asserts the outcome that must hold.
X1 (stored XSS in the console) and the browser half of X2 run in headless Chromium:
tests/console/test_stored_xss.py.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import assert_problem, make_settings, upload, wait_for

KEY = "keyA-0123456789"
A = {"Authorization": f"Bearer {KEY}"}
# The review's payloads, typed wherever a user may type text.
PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    '"><svg onload=alert(1)>',
]
MATHTEXT = ["$\\frac{$", "$\\foo$", "${{{{{{{{{{{{{{{{{{{{$", "$x^{x^{x^{x^{x^{x^{x}}}}}}}$"]


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("browser"), api_keys=KEY)
    with TestClient(create_app(settings), headers=A) as c:
        yield c


@pytest.fixture(scope="module")
def sample(keyed: TestClient) -> int:
    svm = (Path(__file__).resolve().parents[2] / "examples" / "sample.svm").read_bytes()
    return int(upload(keyed, svm, "sample.svm").json()["id"])


def _study(c: TestClient, dataset_id: int, name: str, labels: list[str]) -> Any:
    return c.post(
        "/v1/studies",
        json={
            "name": name,
            "dataset_id": dataset_id,
            "test_fraction": 0.25,
            "runs": [
                {"solver": "pgs", "label": label, "params": {"loss": "logistic", "sigma": 1e-3, "n_iter": 50}}
                for label in labels
            ],
            "sizes": [50],
            "repeats": 1,
            "targets": [0.7],
        },
    )


def _drawn(texts: set[str], typed: list[str]) -> list[str]:
    """What was typed but is not in any text of the figure (legends add ", 70%" to labels)."""
    return [t for t in typed if not any(t in drawn for drawn in texts)]


def _texts(svg: bytes) -> set[str]:
    return {"".join(t.itertext()) for t in _inert_svg(svg).iter("{http://www.w3.org/2000/svg}text")}


def _inert_svg(svg: bytes) -> ET.Element:
    """The figure parsed as XML: no element or attribute that could run or load anything."""
    root = ET.fromstring(svg)
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        assert tag not in ("script", "img", "foreignObject", "iframe", "image"), tag
        assert not [a for a in element.attrib if a.lower().startswith("on")], element.attrib
    return root


def test_x2_names_and_labels_in_svg_figures_are_text(keyed: TestClient, sample: int):
    """X2: a study named, and its runs labelled, with the review's payloads: its figure and its
    jobs' figures, as opened directly (the key as a header), hold the payloads as text only."""
    r = _study(keyed, sample, PAYLOADS[0], PAYLOADS[1:])
    assert r.status_code == 202, r.text
    study = r.json()
    figure = keyed.get(f"/v1/studies/{study['id']}/plot")
    assert figure.status_code == 200 and figure.headers["content-type"].startswith("image/svg+xml")
    texts = _texts(figure.content)
    assert not _drawn(texts, PAYLOADS), texts  # drawn as typed, escaped in the XML
    jobs = keyed.get(f"/v1/studies/{study['id']}/jobs").json()["items"]
    assert jobs
    for job in jobs:
        assert wait_for(keyed, job["id"])["status"] == "succeeded"
        plot = keyed.get(f"/v1/jobs/{job['id']}/plot")
        assert plot.status_code == 200, plot.text
        _inert_svg(plot.content)


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_x4_mathtext_in_a_study_name_or_label_is_drawn_as_text(keyed: TestClient, sample: int, fmt: str):
    """X4: a study named ``$\\frac{$`` with runs labelled in broken or deep mathtext is created,
    and its figure is a 200 in both formats, on every call, with the name as written."""
    r = _study(keyed, sample, MATHTEXT[0], MATHTEXT[1:])
    assert r.status_code == 202, r.text
    for _ in range(2):
        figure = keyed.get(f"/v1/studies/{r.json()['id']}/plot", params={"format": fmt})
        assert figure.status_code == 200, figure.text
    if fmt == "svg":
        texts = _texts(figure.content)
        assert not _drawn(texts, MATHTEXT), texts
    else:
        assert figure.content.startswith(b"\x89PNG")


def _policy(headers: Any) -> dict[str, str]:
    directives = (d.strip().split(" ", 1) for d in headers["content-security-policy"].split(";"))
    return {d[0]: d[1] if len(d) > 1 else "" for d in directives if d[0]}


def test_x3_pages_that_take_a_key_forbid_inline_scripts_and_framing(keyed: TestClient):
    """X3, the pages: the console, its files, /docs (its Authorize dialog takes the bearer key)
    and its OAuth2 redirect page load scripts from this origin only (/docs's inline one by its
    hash), cannot be framed, and are never sniffed."""
    for path in ("/", "/console/js/main.js", "/console/console.css", "/docs", "/docs/oauth2-redirect"):
        r = keyed.get(path, headers={"Authorization": ""})
        assert r.status_code == 200, path
        policy = _policy(r.headers)
        assert "'unsafe-inline'" not in policy["script-src"], path
        assert policy["frame-ancestors"] == "'none'" and policy["default-src"] == "'self'", path
        assert r.headers["x-content-type-options"] == "nosniff", path
        assert r.headers["referrer-policy"] == "no-referrer", path


def test_x3_api_answers_are_never_sniffed_and_run_nothing_if_opened(keyed: TestClient, sample: int):
    """X3, the API: its answers (JSON, problem+json, SVG, the OpenAPI document, the health
    checks) carry nosniff and a policy under which, opened as a page, nothing loads or runs and
    nothing frames them."""
    study = _study(keyed, sample, "headers", ["a"]).json()
    answers = {
        "JSON": keyed.get("/v1/datasets"),
        "problem": keyed.get("/v1/datasets/999999"),
        "401": keyed.get("/v1/datasets", headers={"Authorization": ""}),
        "SVG": keyed.get(f"/v1/studies/{study['id']}/plot"),
        "PNG": keyed.get(f"/v1/studies/{study['id']}/plot", params={"format": "png"}),
        "openapi": keyed.get("/openapi.json"),
        "healthz": keyed.get("/healthz"),
    }
    for what, r in answers.items():
        assert r.headers["x-content-type-options"] == "nosniff", what
        policy = _policy(r.headers)
        assert policy["default-src"] == "'none'" and policy["frame-ancestors"] == "'none'", what
        assert "script-src" not in policy, what


@pytest.mark.parametrize(
    "name",
    [
        "nul\x00name",
        "\x1b[31mred\x1b[0m",
        "two\nlines",
        "c1\x9bcsi",
        "invoice\u202etxt.exe",  # a right-to-left override: shown as "invoiceexe.txt"
        "zero\u200bwidth",
    ],
)
def test_x5_control_and_format_characters_in_a_name_are_refused(
    client: TestClient, tmp_path: Path, name: str
):
    """X5: names with U+202E (right-to-left override), U+200B (zero-width space) or other
    unprintable characters are refused wherever a name is given (app.schemas.common.PrintableName):
    data sets, jobs, studies and a study's run labels."""
    assert_problem(upload(client, b"1 1:1\n-1 2:1\n", "d.svm", name=name), 422, "body.name")
    assert client.get("/v1/datasets").json()["items"] == []
    assert list((tmp_path / "var" / "datasets").iterdir()) == []
    assert list((tmp_path / "var" / "tmp").iterdir()) == []
    assert_problem(client.post("/v1/jobs", json={"dataset_id": 1, "name": name}), 422, "body.name")
    assert_problem(_study(client, 1, name, ["fine"]), 422, "body.name")
    assert_problem(_study(client, 1, "fine", [name]), 422, "body.runs.0.label")


@pytest.mark.parametrize("name", ["invoice\u202etxt.exe", "zero\u200bwidth"])
def test_x5_format_characters_in_a_file_name_are_refused(client: TestClient, name: str):
    """X5: an upload without a name is named after its file, whose name follows the same rule.
    (HTTP clients percent-encode control characters in a file name; format characters pass.)"""
    assert_problem(upload(client, b"1 1:1\n-1 2:1\n", f"{name}.svm"), 422, "body.file")
    assert client.get("/v1/datasets").json()["items"] == []
