"""A job's preprocessing built from column statistics (app/services/jobs/fitted_preprocessing.py)
equals scikit-learn's fitted on the rows themselves: files parsed by the service's own parsers
into several shards (a CSV with missing cells and text columns, german_credit's text columns, an
svmlight file), every scaling, with and without ignored columns. Equal means the same fitted
arrays within 1e-12 relative and the same transformed rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from app.core.storage.local import LocalDirStore
from app.services.datasets.dataset_stats import dataset_stats
from app.services.datasets.parse_base import ParseOptions
from app.services.datasets.parsing import parse_upload
from app.services.datasets.shards import ShardWriter, open_dataset
from app.services.jobs.fitted_preprocessing import fitted_preprocessor
from app.services.jobs.preprocessing import raw_matrix
from app.services.jobs.rows import RowSelection
from solver import make_preprocessor
from solver.preprocessing import output_width
from tests.helpers import assert_same_preprocessor

SHARD_BYTES = 16 * 1024


def _stored(tmp_path: Path, source: Path, name: str) -> tuple[LocalDirStore, str, list[int], int]:
    """``source`` parsed into a store as an upload is: (store, key, text columns, width)."""
    store = LocalDirStore(tmp_path / "store")
    key = f"datasets/{name}"
    writer = ShardWriter(store, key, shard_bytes=SHARD_BYTES, max_bytes=2**40, over_limit=OverflowError)
    parsed = parse_upload(source, ParseOptions(filename=source.name), writer)
    manifest = writer.finish(parsed.n_features)
    assert manifest.n_shards > 3
    text = [] if parsed.columns is None else parsed.columns.text_columns
    return store, key, text, parsed.n_features


def _missing_cells_csv(tmp_path: Path, data_dir: Path) -> Path:
    """magic04 with a header, a text column (fAlpha in bands), empty cells, and a column that
    is empty in every row."""
    raw = np.loadtxt(data_dir / "magic04.csv", delimiter=",", dtype=str)[:2000]
    X, y = raw[:, :-1].astype(float), raw[:, -1]
    rng = np.random.default_rng(0)
    lines = ["a,b,c,d,e,f,g,h,band,empty,label"]
    for row, label in zip(X, y, strict=True):
        cells = [f"{v:.17g}" if rng.random() > 0.1 else "" for v in row[:8]]
        band = ["low", "mid", "high", ""][min(int(abs(row[8]) // 25), 3)]
        lines.append(",".join([*cells, band, "", label]))
    path = tmp_path / "mixed.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _assert_equal_fits(store, key, text_columns, n_features, resolved):
    rows = RowSelection(open_dataset(store, key), n_features)
    X, _ = rows.in_memory()
    raw = raw_matrix(X, rows.text(), text_columns, resolved)
    reference = make_preprocessor(n_features, **resolved)
    expected = reference.fit_transform(raw)
    built = fitted_preprocessor(resolved, n_features, dataset_stats(store, key), text_columns)
    assert_same_preprocessor(built, reference)
    got = built.transform(raw)
    assert output_width(built) == got.shape[1] == expected.shape[1]
    if sp.issparse(got):
        got, expected = got.toarray(), expected.toarray()
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("scaling", ["standard", "maxabs", "none"])
@pytest.mark.parametrize("ignore", [[], [0]])
def test_a_csv_with_missing_cells_and_a_text_column(tmp_path: Path, data_dir: Path, scaling, ignore):
    store, key, text, n = _stored(tmp_path, _missing_cells_csv(tmp_path, data_dir), "mixed")
    assert text == [8]  # the empty column is numeric, missing in every row
    resolved = {"scaling": scaling, "impute": True, "categorical": [8], "ignore": ignore, "sparse": False}
    _assert_equal_fits(store, key, text, n, resolved)


def test_german_credits_text_columns(tmp_path: Path, data_dir: Path):
    store, key, text, n = _stored(tmp_path, data_dir / "german_credit.csv", "german")
    assert len(text) == 13
    resolved = {"scaling": "standard", "impute": True, "categorical": text, "ignore": [], "sparse": False}
    _assert_equal_fits(store, key, text, n, resolved)


@pytest.mark.parametrize("scaling", ["standard", "maxabs"])
def test_sparse_svmlight_rows(tmp_path: Path, data_dir: Path, scaling):
    store, key, _, n = _stored(tmp_path, data_dir / "a9a.train.svm", "a9a")
    resolved = {"scaling": scaling, "impute": False, "categorical": [], "ignore": [3], "sparse": True}
    _assert_equal_fits(store, key, [], n, resolved)
