"""Gradients through extract, assign, diag and ewise_union (a distributed A by rows) equal the
single process's on P = 2..4 simulated ranks, and finite differences at P = 1."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp

from harness import assert_same, central_differences, run_dist


def _program():
    A = dp.declare("A", "sparse", ("n", "n"))
    W = dp.param("W", ("n", 3))
    H = A @ W
    out = dp.assign(H, dp.extract(H, [0, 2, 5], None) * 2.0, [1, 3, 4], None)
    d = dp.diag(A)
    loss = dp.reduce_all(out * out) + dp.reduce_all(dp.ewise_union(d, dp.reduce_rows(H), "times", 1.0, 0.5))
    (dW,) = dp.grad(loss, [W])
    return dp.function({"loss": dp.as_matrix(loss), "dW": dW}), dp.function({"loss": loss})


def _data(seed=3, n=11):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=0.3, random_state=seed, format="csr")
    A.setdiag(rng.uniform(0.5, 1.5, n) * (rng.random(n) < 0.6))
    A.eliminate_zeros()
    return {"A": sp.csr_array(A), "W": rng.uniform(-1, 1, (n, 3))}


def test_against_finite_differences():
    f, floss = _program()
    data = _data()
    got = f(**data)["dW"].to_numpy(fill=0.0)
    num = central_differences(lambda Wp: float(floss(**{**data, "W": Wp})["loss"]), data["W"])
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("P", [2, 3, 4])
def test_distributed_equals_one_process(P):
    f, _ = _program()
    data = _data()
    want = f(**data)
    got, _ = run_dist(f, data, P)
    assert_same(got, want, exact=False)
