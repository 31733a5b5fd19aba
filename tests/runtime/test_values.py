"""Values that stay where they are: results are distributed on every rank, pass back into the
same or another function without moving or re-planning, move by an explicit instruction when
their layout differs, gather only on request (collectives); sparse operands move only their
present entries."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.analysis import comm_plan
from dspla.errors import DsplaError
from dspla.runtime.comm.sim import run_simulated

N = 40


def _graph(seed=0):
    rng = np.random.default_rng(seed)
    a = sp.random_array((N, N), density=0.1, random_state=rng, format="csr")
    return a, rng.random((N, 2))


def _step():
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 2))
    return dp.function({"y": A @ x * 0.5 + x, "s": dp.reduce_all(x)})


@pytest.mark.parametrize("P", [2, 3])
def test_results_stay_distributed_and_pass_back_without_moving(P):
    a, x0 = _graph()
    f = _step()

    def body(comm):
        out = f.run({"A": a, "x": x0} if comm.rank == 0 else None, comm=comm, plan="p2p1d", partition="random")
        y = out["y"]
        piece = y.local
        first = f.last_stats
        out2 = f.run({"A": a if comm.rank == 0 else None, "x": y}, comm=comm, plan="p2p1d", partition="random")
        again = f.last_stats
        whole0 = out2["y"].to_numpy(root=0)   # a collective: rank 0 gets the whole, the others None
        whole = out2["y"].to_numpy()          # every rank gets it
        return (piece.index, piece.matrix.to_dense(), out["s"].to_numpy(), whole0, whole, y.distributed,
                first, again)

    res = run_simulated(P, body)
    y1 = 0.5 * (a @ x0) + x0
    want = 0.5 * (a @ y1) + y1
    for r, (index, rows, s, whole0, whole, distributed, _, _) in enumerate(res):
        assert distributed
        np.testing.assert_allclose(rows, y1[index], rtol=1e-13)         # this rank's rows, by global id
        np.testing.assert_allclose(s, [[x0.sum()]])                      # a reduction: on every rank
        np.testing.assert_allclose(whole, want, rtol=1e-13)
        assert (whole0 is None) == (r != 0)
    owned = np.sort(np.concatenate([x[0] for x in res]))
    assert np.array_equal(owned, np.arange(N))                          # the pieces cover every row once
    first, again = res[0][6], res[0][7]
    assert first["planning_s"] > 0 and again["planning_s"] == 0          # passed back: no new plan
    assert again["words_sent_total"] == first["words_sent_total"]        # and only the product's traffic


def test_another_function_keeps_the_layout_and_a_forced_one_moves_it_explicitly():
    a, x0 = _graph(1)
    f = _step()
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 2))
    g = dp.function({"z": dp.mxm(A, x, "max_plus")})
    P = 3
    other = np.arange(N) % P

    def body(comm):
        y = f.run({"A": a, "x": x0} if comm.rank == 0 else None, comm=comm, plan="p2p1d", partition="random")["y"]
        kept = g.run({"A": a if comm.rank == 0 else None, "x": y}, comm=comm, plan="p2p1d")["z"]
        st_kept = g.last_stats
        moved = g.run({"A": a if comm.rank == 0 else None, "x": y}, comm=comm, plan="p2p1d",
                      parts=other if comm.rank == 0 else None, partition="file")["z"]
        st_moved = g.last_stats
        return kept.to_numpy(fill=-np.inf), moved.to_numpy(fill=-np.inf), st_kept, st_moved, \
            kept.local.index, y.local.index

    res = run_simulated(P, body)
    y1 = 0.5 * (a @ x0) + x0
    A_ = a.toarray()
    want = np.where(A_[:, :, None] != 0, A_[:, :, None] + y1[None, :, :], -np.inf).max(axis=1)
    for kept, moved, *_ in res:
        np.testing.assert_allclose(kept, want, rtol=1e-13)
        np.testing.assert_allclose(moved, want, rtol=1e-13)
    st_kept, st_moved = res[0][2], res[0][3]
    assert st_kept["partition"].endswith("(kept from the input)")
    for rec in res:
        assert np.array_equal(rec[4], rec[5])                          # g's result lies where f's did
    # the forced partition moved x by the plan's redistribution, counted apart from the product
    product = st_moved["products"][0]["words_sent_total"]
    assert st_moved["words_sent_total"] > product


@pytest.mark.parametrize("P", [2, 3])
def test_a_value_in_another_layout_than_the_plan_takes_is_moved_not_misread(P):
    """A replicated result (an extract's) where a plan takes rows, and a row-distributed result
    where a plan takes the whole value (its input declared of fixed sizes): each rank's piece
    was read as the value (a wrong sum of 3 of 6 rows, or 'Output array is the wrong shape')."""
    a, x0 = _graph(2)
    idx = [5, 0, 5, *range(N - 3)]   # (rows repeated: an extract's result is replicated)
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 2))
    f = dp.function({"y": A @ x, "r": dp.extract(x, idx, None)})
    g = dp.function({"s": dp.reduce(dp.dense("y", (N, 2)), "plus", "rows")})
    B, R = dp.sparse("B", ("m", "m")), dp.dense("r", ("m", 2))
    h = dp.function({"u": dp.mxm(B, R, "min_plus"), "d": B @ R - R})

    def body(comm):
        out = f.run({"A": a, "x": x0} if comm.rank == 0 else None, comm=comm, plan="p2p1d")
        y, r = out["y"], out["r"]
        s = g.run({"y": y}, comm=comm)["s"].to_numpy()
        got = h.run({"B": a if comm.rank == 0 else None, "r": r}, comm=comm, plan="p2p1d")
        # then a value in the plan's own rows: the plan made for a replicated r does not fit it
        again = h.run({"B": a if comm.rank == 0 else None, "r": got["d"]}, comm=comm, plan="p2p1d")
        return ((y.dist.kind, r.dist.kind, got["d"].dist.kind), s, got["u"].to_numpy(fill=np.inf),
                got["d"].to_numpy(), again["d"].to_numpy())

    A_, r0 = a.toarray(), x0[idx]
    minplus = np.where(A_[:, :, None] != 0, A_[:, :, None] + r0[None, :, :], np.inf).min(axis=1)
    for kinds, s, u, d, d2 in run_simulated(P, body):
        assert kinds == ("row", "rep", "row")
        np.testing.assert_allclose(s, (a @ x0).sum(axis=1, keepdims=True), rtol=1e-13)
        np.testing.assert_allclose(u, minplus, rtol=1e-13)
        np.testing.assert_allclose(d, a @ r0 - r0, rtol=1e-13)
        np.testing.assert_allclose(d2, a @ d - d, rtol=1e-12)


def test_a_sparse_operand_moves_only_its_present_entries():
    rng = np.random.default_rng(5)
    a = sp.random_array((60, 60), density=0.15, random_state=rng, format="csr")
    present = rng.random(60) < 0.2
    v = sp.csr_array((rng.random(present.sum()), (np.flatnonzero(present), np.zeros(present.sum(), int))),
                     shape=(60, 1))
    A, f_ = dp.sparse("A", ("n", "n")), dp.sparse("f", ("n", 1))
    fn = dp.function({"g": dp.mxm(A, f_, "min_plus")})
    parts = np.arange(60) % 3
    plan = comm_plan(a, parts, 3)

    def body(comm):
        out = fn.run({"A": a, "f": v} if comm.rank == 0 else None, comm=comm, plan="p2p1d", parts=parts,
                     partition="file")
        return out["g"].to_numpy(fill=np.inf), fn.last_stats

    got, stats = run_simulated(3, body)[0]
    # words: the present entries of each send list (an independent count from the partition)
    want_words = sum(int(present[plan.sends(r)[q]].sum()) for r in range(3) for q in plan.sends(r))
    assert stats["words_sent_total"] == want_words < sum(lst.size for r in range(3) for lst in plan.sends(r).values())
    A_ = a.toarray()
    vv = np.where(present, v.toarray()[:, 0], np.inf)
    want = np.where(A_ != 0, A_ + vv[None, :], np.inf).min(axis=1, keepdims=True)
    np.testing.assert_allclose(got, want)


def test_ranks_passing_different_values_get_one_error_and_no_hang():
    a, x0 = _graph(2)
    f = _step()

    def body(comm):
        y = f.run({"A": a, "x": x0} if comm.rank == 0 else None, comm=comm, plan="p2p1d", partition="random")["y"]
        try:
            f.run({"A": a if comm.rank == 0 else None, "x": y if comm.rank == 0 else x0}, comm=comm, plan="p2p1d",
                  partition="random")
        except DsplaError as e:
            return str(e)
        return None

    msgs = run_simulated(2, body, timeout=30)
    assert "other distributed values than rank 0" in msgs[0] and "rejected" in msgs[1]


def test_one_process_results_are_whole():
    a, x0 = _graph(3)
    out = _step()(A=a, x=x0)
    assert not out["y"].distributed
    np.testing.assert_allclose(out["y"].gb.to_dense(), 0.5 * (a @ x0) + x0)
    assert out["y"].local.index.size == N


@pytest.mark.parametrize("P", [1, 2, 3])
def test_nonfinite_counts_nan_and_inf_entries_on_every_rank(P):
    # x / x: 0 / 0 is NaN where x is 0, 1 / 0 is inf (oracle: numpy's count of the same division)
    x0 = np.arange(N, dtype=np.float64).reshape(-1, 1) % 4
    d0 = np.where(np.arange(N) % 5 == 0, 0.0, 1.0).reshape(-1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = int((~np.isfinite(x0 / d0)).sum())
    assert want > 0
    x, d = dp.dense("x", ("n", 1)), dp.dense("d", ("n", 1))
    f = dp.function({"q": x / d, "c": dp.cast(x, "int64")})

    def body(comm):
        out = f.run({"x": x0, "d": d0} if comm.rank == 0 else None, comm=comm, plan="p2p1d", partition="random")
        return out["q"].nonfinite(), out["c"].nonfinite()

    for got in run_simulated(P, body):
        assert got == (want, 0)
