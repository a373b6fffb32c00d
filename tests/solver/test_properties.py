"""Property tests (hypothesis) of the identities the fast PGS relies on."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver._sparse import as_kernel_data
from solver.losses import LOSSES
from solver.pgs import PGSState, _link_power

from .reference import grad_r_star

ps = st.sampled_from([1.05, 1.1, 1.25, 1.5, 1.8, 1.9, 2.0]) | st.floats(1.02, 2.0)


@settings(max_examples=60, deadline=None)
@given(p=ps, seed=st.integers(0, 2**31), radius=st.none() | st.floats(1e-3, 10.0),
       scale=st.floats(1e-3, 1e3), t0=st.floats(1.0, 1e4))
def test_state_is_grad_r_star_of_lambda(p, seed, radius, scale, t0):
    """w_t = grad r*(lambda / ((t + t0) sigma)) with the projection (Figure 2), the dual-norm
    identities ||w||_p = min(B, (p-1) ||lambda||_q / ((t+t0) sigma)) and Hoelder's equality
    <w, lambda> = ||w||_p ||lambda||_q, and (inside the ball) grad r inverts the link."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20, 6)) * scale * (rng.random((20, 6)) < 0.6)
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    sigma = 0.1
    state = PGSState(as_kernel_data(X), y, loss_code=LOSSES["logistic"].code, p=p, sigma=sigma,
                     radius=np.inf if radius is None else radius, fit_intercept=True,
                     batch_size=2, t0=t0, epsilon=1.0, average=False)
    state.run(rng.integers(0, 20, size=2 * 37))
    lam = state.dual()
    w = state.current()
    theta = lam / ((state.t + t0) * sigma)
    expected = grad_r_star(theta, p, radius)
    np.testing.assert_allclose(w, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())
    q = p / (p - 1.0)
    norm_w = np.sum(np.abs(w) ** p) ** (1 / p)
    norm_lam = np.sum(np.abs(lam) ** q) ** (1 / q)
    unprojected = (p - 1.0) * norm_lam / ((state.t + t0) * sigma)
    assert np.isclose(norm_w, min(unprojected, radius or np.inf), rtol=1e-9)
    assert np.isclose(w @ lam, norm_w * norm_lam, rtol=1e-9)
    if radius is None or unprojected <= radius:
        # The inverse link: grad r(w) = ||w||_p^(2-p) sgn(w) |w|^(p-1) / (p-1) gives theta back.
        grad_r = norm_w ** (2.0 - p) * np.sign(w) * np.abs(w) ** (p - 1.0) / (p - 1.0)
        np.testing.assert_allclose(grad_r, theta, rtol=1e-8, atol=1e-10 * np.abs(theta).max())


@settings(max_examples=200, deadline=None)
@given(a=st.floats(0.0, 1e6), quarters=st.integers(1, 40))
def test_link_power_by_square_roots_equals_pow(a, quarters):
    q = 1.0 + quarters / 4.0
    assert np.isclose(_link_power(a, q, quarters), a ** (q - 1.0), rtol=1e-14, atol=0.0)
