"""python-graphblas's methods for the ops defined beside the others in dspla/ops (kronecker,
ewise_union, diag, extract by ``[I, J]``): on values and in traced functions, equal to
python-graphblas's. Each test runs once its op is defined (``dp.NAME``) and says so otherwise."""
import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp
from eager_oracle import assert_same

import dspla as dp
from dspla.ops import SPELLINGS


def needs(name):
    return pytest.mark.skipif(name not in SPELLINGS, reason=f"dp.{name} is not defined in this build")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    a = sp.random_array((12, 9), density=0.3, random_state=rng, format="csr")
    a.data[:] = rng.integers(1, 9, a.nnz)
    b = sp.random_array((4, 5), density=0.5, random_state=rng, format="csr")
    b.data[:] = rng.integers(1, 9, b.nnz)
    c = sp.random_array((12, 9), density=0.3, random_state=rng, format="csr")
    return a, b, c


@needs("kronecker")
def test_kronecker(data):
    a, b, _ = data
    want = gb.io.from_scipy_sparse(a).kronecker(gb.io.from_scipy_sparse(b), gb.binary.times).new()
    assert_same(dp.array(a).kronecker(dp.array(b), "times"), want)
    f = dp.function(lambda A, B: A.kronecker(B, "times"))
    assert_same(f(dp.array(a), dp.array(b)), want)


@needs("ewise_union")
def test_ewise_union(data):
    a, _, c = data
    ga, gc = gb.io.from_scipy_sparse(a), gb.io.from_scipy_sparse(c)
    want = ga.ewise_union(gc, gb.binary.minus, 10.0, -1.0).new()
    assert_same(dp.array(a).ewise_union(dp.array(c), "minus", 10.0, -1.0), want)


@needs("diag")
@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_both_ways(data, k):
    a, _, _ = data
    sq = sp.csr_array(a[:9, :9])
    g = gb.io.from_scipy_sparse(sq)
    assert_same(dp.array(sq).diag(k), g.diag(k))
    v = np.arange(1.0, 6.0)
    assert_same(dp.array(v).diag(k), gb.Vector.from_dense(v).diag(k))


@needs("extract")
@pytest.mark.parametrize("key", [(slice(0, 5), slice(None)), ([3, 1, 7], slice(2, 8)), (slice(None), [0, 4]),
                                 (np.array([11, 0, 5]), np.array([8, 1]))])
def test_extract_by_index(data, key):
    a, _, _ = data
    want = gb.io.from_scipy_sparse(a)[key].new()
    assert_same(dp.array(a)[key], want)
    A = dp.sparse("A", (12, 9))
    got = dp.function({"E": A[key]})(A=a)["E"]
    assert_same(got, want)
