"""Sparse x sparse products (A @ A, a triangle count's masked L·L) distributed: every plan that
runs them equals scipy's product (an independent oracle) exactly, on integers, at every P."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp

from harness import run_dist


def _graph(n: int, density: float, seed: int) -> sp.csr_array:
    A = sp.random_array((n, n), density=density, format="csr", random_state=seed)
    A.data = np.random.default_rng(seed).integers(1, 5, A.nnz).astype(np.float64)
    return A


def _entries(M) -> tuple:
    C = sp.csr_array(M)
    C.sum_duplicates()
    C.sort_indices()
    return C.indptr.tolist(), C.indices.tolist(), C.data.tolist()


def _square():
    A = dp.sparse("A", ("n", "n"))
    return dp.function({"C": A @ A}, inputs=[A])


def _masked():
    A = dp.sparse("A", ("n", "n"), dtype="int64")
    L = dp.select(A, "tril", -1)
    return dp.function({"T": dp.mxm(L, L, "plus_times", mask=L, structure=True)}, inputs=[A])


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("plan", ["p2p1d"])
def test_a_times_a_equals_scipy(plan, P):
    A = _graph(90, 0.05, P)
    got, stats = run_dist(_square(), {"A": A}, P, plan=plan)
    want = A @ A
    assert _entries(got["C"].to_scipy()) == _entries(want)
    assert stats["products"][0]["plan"] == plan


@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("plan", ["p2p1d"])
def test_masked_product_equals_scipy(plan, P):
    A = _graph(80, 0.08, 10 + P)
    A = (A + A.T).astype(np.int64)
    got, _ = run_dist(_masked(), {"A": A}, P, plan=plan)
    L = sp.tril(A, -1, format="csr")
    want = (L @ L).multiply(L != 0)   # the product inside L's pattern (no entry outside it)
    want = sp.csr_array(want)
    want.eliminate_zeros()
    g = sp.csr_array(got["T"].to_scipy())
    assert _entries(g) == _entries(want)
