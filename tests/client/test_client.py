"""Upload, train, wait, trace and predict through the client against a real service."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from pgs_client import Client, Conflict, Dataset, Job, JobCancelled, TracePoint, ValidationError
from pgs_client.data import encode_row, rows
from pgs_client.schemas import PGSParams, SCDParams, Selection
from sklearn.datasets import load_svmlight_file

from tests.client.conftest import PREDICT_LIMIT

# Against real services (conftest.py): out of make test-fast.
pytestmark = pytest.mark.system


def test_upload_a_file_plain_gzip_and_compressed_on_the_way(
    client: Client, heart: Path, tmp_path: Path, capsys
):
    plain = client.datasets.upload(heart, name="heart plain", progress=True)
    assert "upload heart_scale.svm" in capsys.readouterr().err  # the bar, on stderr
    gz = tmp_path / "heart.svm.gz"
    gz.write_bytes(gzip.compress(heart.read_bytes()))
    from_gzip = client.datasets.upload(gz)
    compressed = client.datasets.upload(heart, name="heart compressed", compress=True)

    assert (plain.name, plain.n_samples, plain.n_features, plain.classes) == ("heart plain", 270, 13, [-1, 1])
    assert not plain.compressed and from_gzip.compressed and compressed.compressed
    assert from_gzip.name == "heart.svm.gz"
    assert plain.nnz == from_gzip.nnz == compressed.nnz == 3378
    assert client.datasets.get(plain.id) == plain


@pytest.mark.parametrize("form", ["numpy", "scipy", "pandas", "lists", "dicts"])
def test_upload_arrays_in_every_form(client: Client, heart: Path, form: str):
    X, y = load_svmlight_file(str(heart))
    X_in = {
        "numpy": X.toarray(),
        "scipy": X,
        "pandas": pd.DataFrame(X.toarray()),
        "lists": X.toarray().tolist(),
        "dicts": [dict(zip(r.indices.tolist(), r.data.tolist(), strict=True)) for r in X],
    }[form]
    y_in = pd.Series(y) if form == "pandas" else y.tolist() if form == "lists" else y
    ds = client.datasets.upload((X_in, y_in), name=form)
    assert (ds.n_samples, ds.n_features, ds.nnz, ds.classes) == (270, 13, 3378, [-1, 1])
    # A DataFrame goes as CSV with its header (its columns' names), the rest as svmlight.
    assert ds.format == ("csv" if form == "pandas" else "svmlight") and ds.compressed
    if form == "pandas":
        assert ds.feature_names == [str(j) for j in range(13)] and ds.label_name == "label"


def test_columns_are_each_columns_statistics_a_page_at_a_time(client: Client, heart: Path):
    ds = client.datasets.upload(heart)
    columns = list(client.datasets.columns(ds, page_size=5))
    X, _ = load_svmlight_file(str(heart))
    dense = X.toarray()
    assert [c.index for c in columns] == list(range(13))
    assert [c.mean for c in columns] == pytest.approx(dense.mean(axis=0).tolist(), rel=1e-12)
    assert all(c.kind == "numeric" and c.count == 270 for c in columns)


def test_upload_arrays_keeps_trailing_zero_columns_and_string_labels(client: Client):
    X = np.zeros((6, 5))
    X[:, 0] = [1, 2, 3, -1, -2, -3]
    ds = client.datasets.upload((X, [1, 1, 1, 0, 0, 0]))
    assert ds.n_features == 5 and ds.classes == [0, 1]
    ds = client.datasets.upload((X, ["g", "g", "g", "h", "h", "h"]), task="classification")
    assert ds.format == "csv" and ds.n_features == 5 and ds.classes == ["g", "h"]


def test_train_wait_trace(client: Client, heart_job: tuple[Dataset, Job]):
    ds, job = heart_job
    assert job.status == "succeeded" and job.dataset_id == ds.id and job.model_id is not None
    assert job.metrics is not None and job.metrics["test_accuracy"] > 0.75
    assert set(job.metrics["time_to_target"]) == {"0.8"}

    points = client.jobs.trace(job)
    assert points and all(isinstance(p, TracePoint) for p in points)
    assert [p.iteration for p in points] == sorted(p.iteration for p in points)
    assert points[-1].test_score == pytest.approx(job.metrics["test_accuracy"])
    frame = client.jobs.trace(job.id, as_frame=True)
    assert list(frame["iteration"]) == [p.iteration for p in points]
    assert {"solver_seconds", "objective", "test_score"} <= set(frame.columns)
    assert client.jobs.plot(job).startswith(b"<?xml")


def test_typed_params_send_the_fields_that_were_set(client: Client, heart_job: tuple[Dataset, Job]):
    ds, _ = heart_job
    # radius=None (no ball) is set, unlike its default "auto"; the loss, left unset, is the task's.
    job = client.jobs.create(ds, params=PGSParams(sigma=1e-3, radius=None, n_iter=500, random_state=0))
    assert job.params == {"sigma": 1e-3, "radius": None, "n_iter": 500, "random_state": 0}
    assert client.jobs.wait(job).status == "succeeded"
    with pytest.raises(ValidationError) as refused:
        client.jobs.create(ds, solver="scd", params=SCDParams(loss="hinge"))
    (error,) = refused.value.errors
    assert (error["field"], error["input"]) == ("body.params.loss", "hinge")
    assert '"logistic"' in error["rule"] and '"hinge"' not in error["rule"]


def test_sigma_auto_with_a_selection_and_its_path_figure(client: Client, heart_job: tuple[Dataset, Job]):
    ds, _ = heart_job
    selection = Selection(folds=3, n_sigmas=4, patience=2)
    job = client.jobs.create(
        ds, params={"loss": "logistic", "sigma": "auto", "random_state": 0}, selection=selection
    )
    assert job.selection_options is not None and job.selection_options["folds"] == 3
    done = client.jobs.wait(job)
    assert done.selection is not None and done.selection.splits == "3-fold"
    assert done.selection.sigma in [point.sigma for point in done.selection.path]
    assert client.jobs.plot(done, kind="path").startswith(b"<?xml")
    with pytest.raises(ValidationError) as refused:
        client.jobs.create(ds, params={"sigma": "auto"}, selection={"grid": [1e-3, -1.0]})
    assert refused.value.errors[0]["field"] == "body.selection.grid.1"


def test_a_refresh_from_a_stored_model_says_where_it_started(client: Client, heart_job: tuple[Dataset, Job]):
    ds, job = heart_job
    start = client.models.get(job.model_id)
    refreshed = client.jobs.wait(client.jobs.create(ds, params={"loss": "logistic"}, init_model=start))
    assert refreshed.status == "succeeded" and refreshed.init_model_id == start.id
    assert client.models.get(refreshed.model_id).init_model_id == start.id
    with pytest.raises(ValidationError) as refused:
        client.jobs.create(ds, params={"loss": "hinge"}, init_model=start.id)
    assert refused.value.errors[0]["field"] == "body.init_model"


def test_predict_in_every_input_form_agrees(client: Client, heart: Path, heart_job: tuple[Dataset, Job]):
    _, job = heart_job
    X, y = load_svmlight_file(str(heart))
    dense = X.toarray()
    forms = {
        "scipy csr": X,
        "numpy": dense,
        "pandas": pd.DataFrame(dense),
        "dense lists": dense.tolist(),
        "dicts": [dict(zip(r.indices.tolist(), r.data.tolist(), strict=True)) for r in X],
        "api sparse rows": [{"indices": r.indices.tolist(), "values": r.data.tolist()} for r in X],
    }
    reference = client.models.predict(job.model_id, X)
    assert isinstance(reference.predictions, np.ndarray) and reference.predictions.shape == (270,)
    assert reference.scores.shape == (270,) and reference.probabilities.shape == (270, 2)
    assert set(np.unique(reference.predictions)) <= {-1, 1}
    np.testing.assert_allclose(reference.probabilities.sum(axis=1), 1.0)
    for name, X_form in forms.items():
        pred = client.models.predict(job.model_id, X_form)
        np.testing.assert_array_equal(pred.predictions, reference.predictions, err_msg=name)
        np.testing.assert_allclose(pred.scores, reference.scores, err_msg=name)
    lines = heart.read_text().splitlines()
    text = client.models.predict_svmlight(job.model_id, lines, batch_rows=100)
    np.testing.assert_allclose(text.scores, reference.scores)


def test_export_and_import_a_model(
    client: Client, heart: Path, heart_job: tuple[Dataset, Job], tmp_path: Path
):
    _, job = heart_job
    X, _ = load_svmlight_file(str(heart))
    reference = client.models.predict(job.model_id, X[:20])
    for fmt in ("npz", "json"):
        path = client.models.export(job.model_id, fmt, tmp_path / f"heart.{fmt}")
        imported = client.models.import_file(path)
        assert imported.id != job.model_id and imported.preprocessing is not None
        np.testing.assert_allclose(client.models.predict(imported, X[:20]).scores, reference.scores)
    onnx_file = client.models.export(job.model_id, "onnx", tmp_path / "heart.onnx")
    assert onnx_file.stat().st_size > 0


def test_predict_batches_a9a_under_the_services_body_limit(client: Client, data_dir: Path):
    """16,281 rows of a9a are about 1.6 MB of JSON, over this service's 256 kB predict limit:
    the default batches (8 MB) get a 413 and are split until they fit, and the predictions
    equal the job's own evaluation of the same test set."""
    train = client.datasets.upload(data_dir / "a9a.train.svm")
    test = client.datasets.upload(data_dir / "a9a.test.svm", n_features=train.n_features)
    job = client.jobs.wait(client.jobs.create(train, test_dataset=test, params={"random_state": 0}))
    X, y = load_svmlight_file(str(data_dir / "a9a.test.svm"), n_features=train.n_features)
    assert sum(len(encode_row(r)) for r in rows(X)) > 4 * PREDICT_LIMIT  # so it was split
    pred = client.models.predict(job.model_id, X)
    assert pred.predictions.shape == (16281,) and pred.probabilities.shape == (16281, 2)
    assert np.mean(pred.predictions == y) == pytest.approx(job.metrics["test_accuracy"], abs=1e-12)
    small = client.models.predict(job.model_id, X[:3000], batch_rows=1000)
    np.testing.assert_array_equal(small.scores, pred.scores[:3000])


def test_predict_refuses_what_is_not_a_matrix(client: Client, heart_job: tuple[Dataset, Job]):
    _, job = heart_job
    with pytest.raises(ValueError, match="2-D"):
        client.models.predict(job.model_id, np.ones(13))
    # NaN is sent as a missing value (null); this model (no preprocessing) does not impute.
    with pytest.raises(ValidationError, match="missing"):
        client.models.predict(job.model_id, np.full((1, 13), np.nan))
    with pytest.raises(ValueError, match="infinite"):
        client.models.predict(job.model_id, np.full((1, 13), np.inf))
    with pytest.raises(ValueError, match="no rows"):
        client.models.predict(job.model_id, sp.csr_matrix((0, 13)))


def test_pagination_iterates_every_page_newest_first(client: Client, heart: Path):
    made = [client.datasets.upload(heart, name=f"page {i}").id for i in range(3)]
    listed = [d.id for d in client.datasets.list(page_size=1)]
    assert listed == sorted(listed, reverse=True) and set(made) <= set(listed)
    assert [d.id for d in client.datasets.list(limit=2, page_size=1)] == listed[:2]
    assert all(j.status == "succeeded" for j in client.jobs.list(status="succeeded"))
    everything = list(client.jobs.list())
    some = everything[-1]
    on_it = [j.id for j in everything if j.dataset_id == some.dataset_id and j.solver == some.solver]
    assert [j.id for j in client.jobs.list(dataset=some.dataset_id, solver=some.solver, page_size=1)] == on_it
    assert list(client.jobs.list(solver="no-such-solver")) == []
    assert [m.id for m in client.models.list(limit=1)] == [max(m.id for m in client.models.list())]


def test_lists_search_sort_and_filter_by_data_set(client: Client, heart: Path):
    """Every list takes the API's search (q) and sort; models and jobs filter by the data set
    that trained (or evaluated) them."""
    train = client.datasets.upload(heart, name="Heart-Search-train")
    test = client.datasets.upload(heart, name="heart-search-test")
    assert [d.id for d in client.datasets.list(search="HEART-SEARCH", sort="name")] == [train.id, test.id]
    assert [d.id for d in client.datasets.list(search="heart-search", sort="-name")] == [test.id, train.id]
    job = client.jobs.wait(
        client.jobs.create(train, test_dataset=test, params={"n_iter": 50}, name="searched")
    )
    assert [j.id for j in client.jobs.list(test_dataset=test)] == [job.id]
    assert [j.id for j in client.jobs.list(search="SEARCHED", sort="name")] == [job.id]
    assert [m.id for m in client.models.list(dataset=train)] == [job.model_id]
    assert list(client.models.list(dataset=test)) == []
    assert list(client.studies.list(search="no study is named so", sort="name")) == []


def test_cancel_a_long_job(client: Client, heart: Path):
    ds = client.datasets.upload(heart)
    job = client.jobs.create(ds, params={"n_iter": 10**9}, time_budget_s=600)
    with pytest.raises(Conflict, match="used by queued or running"):
        client.datasets.delete(ds)  # 409 while the job may still use it
    # A wait that runs out before the job: TimeoutError, the job untouched.
    with pytest.raises(TimeoutError, match=f"job {job.id} not finished after 0.5 s"):
        client.jobs.wait(job, timeout=0.5, poll_s=0.2)
    assert client.jobs.get(job).status in ("queued", "running")
    client.jobs.cancel(job)
    with pytest.raises(JobCancelled) as caught:
        client.jobs.wait(job)
    assert caught.value.job.status == "cancelled"
    # A job cancelled while running keeps a partial model: the data set goes only with force.
    client.datasets.delete(ds, force=True)


def test_studies(client: Client, heart: Path, tmp_path: Path):
    ds = client.datasets.upload(heart)
    study = client.studies.create(
        ds,
        runs=[{"solver": "pgs", "params": {"loss": "logistic", "sigma": 1e-3}, "label": "pgs"}],
        sizes=[50, 100],
        repeats=2,
        targets=[0.7],
        test_fraction=0.25,
        name="heart study",
    )
    assert study.progress.total == 4 and study.name == "heart study"
    done = client.studies.wait(study, poll_s=0.5)
    assert done.status == "succeeded" and done.progress.succeeded == 4
    assert {(r.m, r.target) for r in done.table} == {(50, 0.7), (100, 0.7)}
    assert len(list(client.studies.jobs(study, page_size=3))) == 4
    assert study.id in [s.id for s in client.studies.list()]
    assert client.studies.plot(study, y="iterations", format="png").startswith(b"\x89PNG")


def test_labels_aliases_and_batch_predictions(client: Client, heart: Path, tmp_path: Path):
    """Tags and names through list and update, a model version behind an alias, and a batch
    prediction of a stored data set downloaded as CSV and .npy."""
    ds = client.datasets.upload(heart, name="heart-labels", tags=["client-test"], description="Statlog heart")
    assert [d.id for d in client.datasets.list(tag="client-test")] == [ds.id]
    assert client.datasets.update(ds, tags=["client-test", "medical"]).tags == ["client-test", "medical"]
    job = client.jobs.wait(
        client.jobs.create(
            ds, params={"n_iter": 500}, name="nightly", tags=["client-test"], model_name="client-heart"
        )
    )
    assert [j.id for j in client.jobs.list(tag="client-test")] == [job.id]
    model = client.models.get(job.model_id)
    assert (model.name, model.version) == ("client-heart", 1)
    assert client.models.update(model, tags=["candidate"]).tags == ["candidate"]

    alias = client.aliases.set("client-heart@production", model)
    assert (alias.model_id, alias.ref) == (model.id, "client-heart@production")
    X = [[0.0] * 13]
    np.testing.assert_array_equal(
        client.models.predict("client-heart@production", X).scores, client.models.predict(model, X).scores
    )
    assert [e.model_id for e in client.aliases.history("client-heart@production")] == [model.id]

    batch = client.models.predict_dataset("client-heart@production", ds)
    assert client.models.wait_batch(model, batch).status == "succeeded"
    path = client.models.download_batch(model, batch, tmp_path / "heart.csv")
    assert path.read_text().splitlines()[0].startswith("row,prediction,score")
    npy = client.models.download_batch(model, batch, tmp_path / "p.npy", format="npy")
    np.testing.assert_array_equal(
        np.load(npy), client.models.predict_svmlight(model, heart.read_text().splitlines()).predictions
    )


def test_upload_names_a_csvs_missing_value_markers(client: Client, tmp_path: Path):
    path = tmp_path / "sentinel.csv"
    path.write_bytes(b"age,glucose,outcome\n50,-999,sick\n31,85,healthy\n44,NA,sick\n")
    default = client.datasets.upload(path, name="default markers", task="classification")
    assert default.text_columns == [] and default.n_missing == 1  # NA only; -999 is a number
    custom = client.datasets.upload(path, name="custom markers", na_values=["NA", "-999"])
    assert custom.n_missing == 2
