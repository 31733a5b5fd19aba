"""ewise_add(P1, P2) of two products over static operands (GraphSAGE's X S + Am (X N)): the
product lowered first cannot accumulate into the other, not computed yet; the result equals numpy."""
import numpy as np
import scipy.sparse as sp

import dspla as dp


def test_sum_of_two_static_products():
    rng = np.random.default_rng(0)
    A, X = dp.sparse("A", ("n", "n")), dp.sparse("X", ("n", "f"))
    S, N = dp.dense("S", ("f", 3)), dp.dense("N", ("f", 3))
    f = dp.function({"H": dp.relu(X @ S + A @ (X @ N))})
    a = sp.random_array((30, 30), density=0.1, random_state=rng, format="csr")
    x = sp.random_array((30, 5), density=0.5, random_state=rng, format="csr")
    s, n = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    got = f(A=a, X=x, S=s, N=n)["H"].to_numpy(fill=0.0)
    np.testing.assert_allclose(got, np.maximum(x @ s + a @ (x @ n), 0), rtol=1e-12, atol=1e-14)
