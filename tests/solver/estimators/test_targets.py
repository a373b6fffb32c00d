"""A classifier's labels turned into the engines' targets (solver.estimators.tasks): the classes
found by the fast path for two integral values and the +-1 targets, against NumPy's own
``np.unique`` and ``np.where``, for the label types a user passes."""

from __future__ import annotations

import numpy as np
import pytest

from solver import PGSClassifier
from solver.estimators.tasks import _classes_of, _one_vs_rest

from ..problems import binary_problem

RNG = np.random.default_rng(0)
SIGNS = np.where(RNG.random(1000) > 0.5, 1.0, -1.0)

LABELS = {
    "float -1/+1": SIGNS,
    "float 0/1": (SIGNS > 0).astype(np.float64),
    "int -1/+1": SIGNS.astype(np.int64),
    "uint8 0/1": (SIGNS > 0).astype(np.uint8),
    "float32 -1/+1": SIGNS.astype(np.float32),
    "float 2/7": np.where(SIGNS > 0, 7.0, 2.0),
    "strings": np.where(SIGNS > 0, "spam", "ham"),
    "three ints": RNG.integers(0, 3, 1000),
    "one class": np.ones(1000),
}


@pytest.mark.parametrize("y", LABELS.values(), ids=LABELS.keys())
def test_classes_and_targets_are_numpys(y):
    classes = _classes_of(y)
    np.testing.assert_array_equal(classes, np.unique(y))
    assert classes.dtype == np.unique(y).dtype
    if classes.shape[0] < 2:
        return
    positives = classes[1:] if classes.shape[0] == 2 else classes
    expected = np.stack([np.where(y == c, 1.0, -1.0) for c in positives])
    targets = _one_vs_rest(y, classes)
    assert targets.dtype == np.float64 and targets.flags.c_contiguous
    np.testing.assert_array_equal(targets, expected)


def test_two_values_that_are_not_integral_keep_scikit_learns_refusal():
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        _classes_of(np.where(SIGNS > 0, 2.5, 1.5))


def test_labels_that_are_the_targets_are_not_copied():
    y = SIGNS.copy()
    assert np.shares_memory(_one_vs_rest(y, _classes_of(y)), y)


@pytest.mark.parametrize(
    "y",
    [SIGNS[::2], np.frombuffer(SIGNS.tobytes())],  # strided; read-only
    ids=["strided", "read-only"],
)
def test_plus_minus_one_labels_the_kernels_cannot_take_as_they_are_are_copied(y):
    targets = _one_vs_rest(y, _classes_of(y))
    assert not np.shares_memory(targets, y)
    assert targets.flags.c_contiguous and targets.flags.writeable
    np.testing.assert_array_equal(targets[0], y)


def test_a_fit_leaves_labels_used_as_targets_unchanged_and_gives_the_model_of_a_copy():
    X, y = binary_problem(seed=2)
    y = np.where(y == y.max(), 1.0, -1.0)
    given = y.copy()
    shared = PGSClassifier(random_state=0, sigma=1e-3).fit(X, y)
    copied = PGSClassifier(random_state=0, sigma=1e-3).fit(X, y.astype(np.int64))
    np.testing.assert_array_equal(y, given)
    np.testing.assert_array_equal(shared.coef_, copied.coef_)
