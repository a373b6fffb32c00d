"""solver="auto" (solver.auto): the candidates a request admits, the choice and the reason it
gives, the smallest sigma of a request, and the library's way to the same choice."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver import PGSClassifier, ShardedMatrix, estimator_for
from solver.auto import LOST_BY, SolverChoice, choose_solver, choose_solver_for, smallest_sigma, supports

TEXT = {"m": 8_000, "d": 124_615, "nnz": 270_789, "dense": False}


def choose(**kwargs) -> SolverChoice:
    request = {"task": "binary", "loss": None, "p": None, "sigma": 1e-5, **TEXT, **kwargs}
    return choose_solver(**request)


def test_candidates_follow_the_catalogue_declarations():
    assert supports("sdca", "binary", "logistic", 2.0)
    assert not supports("sdca", "binary", "logistic", 1.8)  # sdca has p = 2 only
    assert not supports("sdca", "regression", "huber", 2.0)  # no dual step for huber
    assert supports("lbfgs", "binary", "logistic", 1.8)
    assert not supports("lbfgs", "binary", "hinge", 2.0)  # L-BFGS needs a smooth loss
    assert supports("pgs", "regression", "huber", 1.5)


def test_a_request_every_candidate_supports_goes_to_pgs_with_both_losers_evidence():
    choice = choose()
    assert choice.solver == "pgs"
    assert LOST_BY["sdca"] in choice.reason and LOST_BY["lbfgs"] in choice.reason
    assert "m=8,000" in choice.reason and "sigma*m=0.08" in choice.reason
    assert choice.as_dict() == {"requested": "auto", "chosen": "pgs", "reason": choice.reason}


def test_p_below_2_leaves_sdca_out_of_the_reason():
    choice = choose(p=1.8)
    assert choice.solver == "pgs"
    assert LOST_BY["lbfgs"] in choice.reason and LOST_BY["sdca"] not in choice.reason


def test_a_nonsmooth_loss_leaves_lbfgs_out_of_the_reason():
    choice = choose(loss="hinge")
    assert LOST_BY["sdca"] in choice.reason and LOST_BY["lbfgs"] not in choice.reason


def test_no_other_candidate_is_said_so():
    choice = choose(loss="hinge", p=1.5)
    assert choice.solver == "pgs"
    assert "neither sdca nor lbfgs supports loss 'hinge' at p=1.5" in choice.reason


def test_regression_defaults_to_the_squared_loss_which_sdca_supports():
    choice = choose(task="regression", m=200, d=5, nnz=1_000, dense=True)
    assert "1,000 dense values" in choice.reason  # m x d for dense data
    assert LOST_BY["sdca"] in choice.reason


def test_the_reason_says_whether_the_shape_was_measured():
    assert "(within the measured" in choose().reason
    assert "(outside the measured" in choose(sigma=1e-9).reason  # sigma m = 8e-6
    assert "(outside the measured" in choose(m=5_000_000, nnz=10**8).reason
    assert "smallest sigma known only at fit" in choose(sigma=None).reason


@pytest.mark.parametrize("m, d, nnz", [(0, 5, 0), (5, 0, 0), (5, 5, -1)])
def test_an_impossible_shape_is_refused(m, d, nnz):
    with pytest.raises(ValueError, match="m >= 1 rows"):
        choose(m=m, d=d, nnz=nnz)


@pytest.mark.parametrize(
    "params, expected",
    [
        ({}, 1e-5),  # the estimators' default
        ({"sigma": 0.01}, 0.01),
        ({"sigma": "auto", "sigma_grid": [1e-2, 1e-4, 1e-3]}, 1e-4),
        ({"sigma": "auto", "sigma_min": 1e-7, "sigma_max": 1.0}, 1e-7),
        ({"sigma": "auto", "sigma_max": 0.5}, 0.5e-6),
        ({"sigma": "auto"}, None),  # the default grid's bounds come from the data at fit
        ({"sigma": "auto", "sigma_min": "auto", "sigma_max": "auto"}, None),
    ],
)
def test_the_smallest_sigma_of_a_request(params, expected):
    assert smallest_sigma(params) == pytest.approx(expected) if expected else smallest_sigma(params) is None


def test_the_library_gets_the_same_choice_from_its_data_and_fits_with_it():
    rng = np.random.default_rng(0)
    X = sp.random(300, 50, density=0.1, format="csr", random_state=0)
    y = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    params = {"sigma": "auto", "sigma_grid": [1e-2, 1e-3], "folds": 2}
    choice = choose_solver_for(X, "binary", params)
    expected = choose_solver(
        task="binary", loss=None, p=None, m=300, d=50, nnz=X.nnz, sigma=1e-3, dense=False
    )
    assert choice == expected
    dense = choose_solver_for(X.toarray(), "binary", {"sigma": 1e-3})
    assert "15,000 dense values" in dense.reason
    clf = estimator_for(choice.solver, "binary", {**params, "random_state": 0}).fit(X, y)
    assert isinstance(clf, PGSClassifier) and clf.sigma_ in (1e-2, 1e-3)


def test_sharded_data_goes_to_the_one_candidate_that_streams():
    X = sp.random(40, 6, density=0.5, format="csr", random_state=0)
    sharded = ShardedMatrix.from_arrays(X, np.ones(40), [20, 20])
    assert choose_solver_for(sharded, "binary", {}) == SolverChoice(
        "pgs", "data in shards: of the candidates only pgs streams"
    )
