"""nvals: the number of present entries as a 1 x 1 int64, always present (0 for an empty value),
on one process and summed over P simulated ranks for every layout and plan; in both front ends
and as a loop's test for growth. The oracle counts the stored entries of the scipy inputs and
of a dense numpy product."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DsplaError
from dspla.frontend.parser import parse
from dspla.function import Function
from tests.harness import run_dist

N = 37


def _inputs(seed=0, density=0.12):
    rng = np.random.default_rng(seed)
    A = sp.random_array((N, N), density=density, random_state=rng, format="csr")
    x = sp.random_array((N, 1), density=0.3, random_state=rng, format="csr")
    return A, x


def _counts():
    A, x = dp.sparse("A", ("n", "n")), dp.sparse("x", ("n", 1))
    y = dp.mxm(A, x, "plus_times")
    return dp.function({"a": dp.nvals(A), "x": dp.nvals(x), "y": dp.nvals(y), "t": dp.nvals(A.T),
                        "empty": dp.nvals(dp.select(x, ">", 10.0))}, inputs=[A, x])


def _want(A, x):
    y = (A.toarray() != 0) @ (x.toarray() != 0)     # where a term exists (values are positive)
    return {"a": A.nnz, "x": x.nnz, "y": int((y > 0).sum()), "t": A.nnz, "empty": 0}


def test_nvals_one_process_is_present_int64_and_zero_when_empty():
    A, x = _inputs()
    out = _counts()(A=A, x=x)
    for k, v in _want(A, x).items():
        got = out[k].to_numpy()
        assert got.dtype == np.int64 and got.shape == (1, 1), k
        assert got[0, 0] == v, k


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("plan", ["p2p1d", "allgather1d", "shift1d", "twoface", "15d", "2d"])
def test_nvals_distributed_sums_the_pieces(P, plan):
    A, x = _inputs(seed=P)
    if plan == "2d" and P != 4:   # (asked for, a plan that cannot run is refused, not replaced)
        with pytest.raises(DsplaError, match="2d needs a square process count"):
            run_dist(_counts(), {"A": A, "x": x}, P, plan=plan, partition="random")
        return
    out, _ = run_dist(_counts(), {"A": A, "x": x}, P, plan=plan, partition="random")
    for k, v in _want(A, x).items():
        assert out[k].to_numpy()[0, 0] == v, (k, P, plan)


GROWTH = """
input A : sparse[n, n]
input s : sparse[n, 1] bool
AT = cast(A.T, bool)
reached = s
count = nvals(s)
grew = count > 0
while grew max n {
  reached = ewise_add(reached, mxm(AT, reached, any_pair), lor)
  now = nvals(reached)
  grew = now > count
  count = now
}
output count
"""


@pytest.mark.parametrize("P", [1, 2, 3])
def test_nvals_as_a_loop_test_in_a_dspla_file(P):
    """The nodes reachable from node 0 (growth stops when the count does), against scipy."""
    A, _ = _inputs(seed=7, density=0.05)
    s = sp.csr_array(([True], ([0], [0])), shape=(N, 1))
    f = Function(parse(GROWTH))
    from scipy.sparse.csgraph import breadth_first_order
    want = len(breadth_first_order(A, 0, directed=True, return_predecessors=False))
    if P == 1:
        got = f(A=A, s=s)["count"].to_numpy()[0, 0]
    else:
        got = run_dist(f, {"A": A, "s": s}, P, plan="p2p1d", partition="random")[0]["count"].to_numpy()[0, 0]
    assert got == want


def test_nvals_has_no_gradient_through_it():
    """A count does not depend on the values: its gradient contribution is zero."""
    W = dp.param("W", ("n", 1))
    loss = dp.reduce_all(W * W) + dp.cast(dp.nvals(W), "float64")
    g = dp.grad(loss, [W])
    w = np.arange(1.0, N + 1).reshape(-1, 1)
    out = dp.function({"g": g[0]}, inputs=[W])(W=w)["g"].to_numpy()
    np.testing.assert_allclose(out, 2 * w)
