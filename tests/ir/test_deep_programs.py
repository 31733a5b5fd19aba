"""Programs thousands of nodes deep go through every stage without reaching Python's recursion
limit: equality of IR nodes, the passes, the reference executor and planning."""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla.frontend.parser import parse
from dspla.function import Function


def _chain(depth: int):
    X = dp.dense("X", ("n", "k"))
    H = X
    for _ in range(depth):
        H = dp.relu(H) + X
    return H


def test_structurally_equal_deep_graphs_compare_equal_without_recursion():
    depth = 4 * sys.getrecursionlimit()
    a, b = _chain(depth).node, _chain(depth).node
    assert a is not b and a == b and hash(a) == hash(b)
    assert a != (dp.relu(_chain(depth)) + dp.dense("X", ("n", "k"))).node


def test_a_long_unrolled_product_chain_runs_and_plans():
    lines = ["input A : sparse[n, n]", "input X : dense[n, k]", "H0 = X"]
    lines += [f"H{i + 1} = A @ H{i}" for i in range(300)]
    f = Function(parse("\n".join(lines + ["output H300"]) + "\n"))
    rng = np.random.default_rng(0)
    A = sp.random_array((40, 40), density=0.05, random_state=rng, format="csr") * 0.5
    X = rng.random((40, 3))
    got = f(A=A, X=X)["H300"].to_numpy(fill=0.0)
    want = X
    for _ in range(300):
        want = A @ want
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    assert "product 299" in f.explain(np=2, A=A, X=X, partition="block")


def test_a_deep_elementwise_program_runs_on_one_and_two_processes():
    f = dp.function(outputs={"H": _chain(2000)})
    x = np.random.default_rng(1).random((30, 4))
    want = x
    for _ in range(2000):
        want = np.maximum(want, 0) + x
    np.testing.assert_allclose(f(X=x)["H"].to_numpy(), want, rtol=1e-12)
    assert "program after passes" in f.explain(np=2, X=x)
