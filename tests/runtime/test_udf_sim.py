"""A tropical semiring from Python functions runs distributed (every plan, P = 1..4, simulated
ranks) with results equal to a dense numpy oracle with GraphBLAS semantics: a missing entry is
not zero, and a row of A with no entry gives a missing row, not the identity."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.plan.plans import plan_names

from harness import run_dist

PLAN_OPTIONS = {"shift1d": {"replication": 2}, "15d": {"replication": 2}, "twoface": {"stripe_width": 4},
                "p2p1d_node": {"ranks_per_node": 2}}


def trop_min(x, y):
    return x if x < y else y


def trop_plus(x, y):
    return x + y


TROP = dp.semiring.define("test_udf_tropical", monoid=trop_min, op=trop_plus, identity=math.inf)


def _valid(plan, P):
    if plan == "2d":
        return int(round(P ** 0.5)) ** 2 == P
    if plan in ("shift1d", "15d"):
        return P % 2 == 0
    return True


def _data(n=40, k=5, seed=0, x_missing=False):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=0.08, random_state=rng, format="lil")
    A[3, :] = 0   # a row with no entry: its result row is missing
    A = sp.csr_array(A)
    A.eliminate_zeros()
    A.data[:] = rng.integers(-4, 9, A.nnz)
    X = rng.integers(-5, 9, (n, k)).astype(float)
    Xp = rng.random((n, k)) > 0.3 if x_missing else np.ones((n, k), bool)
    return A, X, Xp


def oracle_min_plus(A, X, Xp):
    """(values, present) of A min.+ X by dense numpy with explicit presence masks."""
    Ad = A.toarray()
    Ap = np.zeros(A.shape, bool)
    coo = A.tocoo()
    Ap[coo.row, coo.col] = True   # stored entries, explicit zeros included
    # term[i, j, c] exists where A[i, j] and X[j, c] both do
    both = Ap[:, :, None] & Xp[None, :, :]
    terms = np.where(both, Ad[:, :, None] + X[None, :, :], np.inf)
    return terms.min(axis=1), both.any(axis=1)


def _check(got, want_vals, want_pres):
    assert np.array_equal(got.present(), want_pres)
    assert np.array_equal(got.to_numpy(fill=0)[want_pres], want_vals[want_pres])


CASES = [(plan, P) for plan in plan_names(general=True) for P in (1, 2, 3, 4) if _valid(plan, P)]


@pytest.mark.parametrize("plan,P", CASES)
def test_tropical_from_python_functions(plan, P):
    A, X, Xp = _data(seed=P)
    f = dp.function(outputs={"C": dp.mxm(dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k")), TROP)})
    got, _ = run_dist(f, {"A": A, "X": X}, P, plan=plan, partition="random", seed=P, **PLAN_OPTIONS.get(plan, {}))
    _check(got["C"], *oracle_min_plus(A, X, Xp))


@pytest.mark.parametrize("P", [2, 3])
def test_tropical_with_rows_in_chunks(P):
    """p2p1d's chunked, windowed receives (2 rows a message) with a user semiring's kernel."""
    A, X, Xp = _data(seed=20 + P)
    f = dp.function(outputs={"C": dp.mxm(dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k")), TROP)})
    got, stats = run_dist(f, {"A": A, "X": X}, P, plan="p2p1d", partition="random", seed=P, message_bytes=2 * 5 * 8)
    _check(got["C"], *oracle_min_plus(A, X, Xp))
    assert stats["messages_sent_total"] > P * (P - 1)   # more messages than pairs: the rows were cut


@pytest.mark.parametrize("plan", ["p2p1d", "allgather1d", "15d"])
def test_tropical_operand_with_missing_entries(plan):
    A, X, Xp = _data(seed=7, x_missing=True)
    Xs = sp.csr_array((X[Xp], np.nonzero(Xp)), shape=X.shape)   # explicit zeros stay present
    # (X's width literal: a symbolic one would be a distributed dim of a sparse input, which only
    # p2p1d's sparse exchange runs; asked for, the others are refused)
    f = dp.function(outputs={"C": dp.mxm(dp.sparse("A", ("n", "n")), dp.sparse("X", ("n", X.shape[1])), TROP)})
    got, _ = run_dist(f, {"A": A, "X": Xs}, 2, plan=plan, partition="random", **PLAN_OPTIONS.get(plan, {}))
    _check(got["C"], *oracle_min_plus(A, X, Xp))


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_user_monoid_reduction_and_unary_across_ranks(P):
    """reduce with a user monoid (an Allreduce by the user's function) and a user unary operator."""
    A, X, _ = _data(seed=11)
    dp.monoid.define("test_udf_absmax", lambda x, y: max(abs(x), abs(y)), 0.0)
    dp.unary.define("test_udf_halve", lambda x: x / 2.0)
    Ae, Xe = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    Y = dp.apply(dp.mxm(Ae, Xe, TROP), "test_udf_halve")
    f = dp.function(outputs={"m": dp.reduce_all(Y, "test_udf_absmax"), "c": dp.reduce_cols(Y, "test_udf_absmax")})
    got, _ = run_dist(f, {"A": A, "X": X}, P, plan="p2p1d", partition="random", seed=P)
    vals, pres = oracle_min_plus(A, X, np.ones(X.shape, bool))
    half = np.where(pres, np.abs(vals / 2.0), 0.0)
    assert got["m"].to_numpy(fill=np.nan)[0, 0] == half.max()
    assert np.array_equal(got["c"].to_numpy(fill=np.nan)[0], half.max(axis=0))


def test_bellman_ford_loop_matches_oracle():
    """SSSP as a while loop over the user semiring (the planner sees it like min_plus)."""
    rng = np.random.default_rng(3)
    n = 30
    A = sp.random_array((n, n), density=0.1, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    Ae = dp.sparse("A", ("n", "n"))
    d0 = dp.dense("d0", ("n", 1))

    def body(d, changed):
        new = dp.ewise_add(d, dp.mxm(Ae.T, d, TROP), "min")
        return new, dp.reduce_all(new != d, "lor")

    d, _ = dp.while_loop(lambda d, changed: changed, body, (d0, dp.reduce_all(d0 == d0, "lor")), max_iter=n)
    f = dp.function(outputs={"d": d})
    start = np.full((n, 1), np.inf)
    start[0] = 0
    got, _ = run_dist(f, {"A": A, "d0": start}, 3, plan="p2p1d", partition="random")
    dist = start[:, 0].copy()
    Ad = A.toarray()
    for _ in range(n):   # the oracle: n rounds of dense relaxation
        cand = np.where(Ad > 0, dist[:, None] + Ad, np.inf).min(axis=0)
        dist = np.minimum(dist, cand)
    assert np.array_equal(got["d"].to_numpy(fill=np.nan)[:, 0], dist)
