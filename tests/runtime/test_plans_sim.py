"""Every plan x semiring x P (simulated ranks) equals the single-process reference, including
empty local parts, more processes than non-empty rows and a process that owns nothing."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.plan.plans import plan_names

from harness import assert_same, run_dist

SEMIRINGS = ["plus_times", "plus_second", "min_plus", "lor_land"]
# plans this suite checks: every registered plan (a new plan is covered by registering it)
# that runs any sparse x dense product on any row partition (the others: sparse x sparse plans in
# tests/plan/test_spgemm.py, vertexcut on an edge partition in tests/plan/test_gcn_plans.py)
PLANS = plan_names(general=True)
PLAN_OPTIONS = {"shift1d": {"replication": 2}, "15d": {"replication": 2}, "twoface": {"stripe_width": 4},
                "p2p1d_node": {"ranks_per_node": 2}}


def _program(sr):
    A = dp.sparse("A", ("n", "n"), dtype="bool" if sr == "lor_land" else "float64")
    X = dp.dense("X", ("n", "k"), dtype="bool" if sr == "lor_land" else "float64")
    return dp.function(outputs={"C": dp.mxm(A, X, sr)})


def _data(n, k, density, seed, sr, empty_rows=()):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=density, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    A = A.tolil()
    for r in empty_rows:
        A[r, :] = 0
    A = sp.csr_array(A)
    A.eliminate_zeros()
    X = rng.integers(-5, 9, (n, k)).astype(float)
    if sr == "lor_land":
        return sp.csr_array(A, dtype=bool), X > 0
    return A, X


def _valid(plan, P):
    if plan == "2d":
        return int(round(P ** 0.5)) ** 2 == P
    if plan in ("shift1d", "15d"):
        return P % PLAN_OPTIONS[plan]["replication"] == 0
    return True


CASES = [(plan, P, sr) for plan in PLANS for P in (1, 2, 3, 4) for sr in SEMIRINGS if _valid(plan, P)]


@pytest.mark.parametrize("plan,P,sr", CASES)
def test_random_graph(plan, P, sr):
    A, X = _data(37, 5, 0.12, P * 7 + len(sr), sr, empty_rows=(3, 4))
    f = _program(sr)
    want = f(A=A, X=X)
    got, stats = run_dist(f, {"A": A, "X": X}, P, plan=plan, partition="random", seed=1, **PLAN_OPTIONS.get(plan, {}))
    assert_same(got, want, exact=True)
    assert stats["P"] == P


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("sr", SEMIRINGS)
def test_random_graph_p2p1d_by_messages(P, sr, monkeypatch):
    """p2p1d with its rows as messages (ranks on several nodes, or DSPLA_SHM=0): the own block
    multiplied while they fly, each arrived block accumulated; simulated ranks otherwise share
    memory and stack the rows in place (runtime/interp/shm.py)."""
    monkeypatch.setenv("DSPLA_SHM", "0")
    A, X = _data(37, 5, 0.12, P * 11 + len(sr), sr, empty_rows=(3, 4))
    f = _program(sr)
    got, _ = run_dist(f, {"A": A, "X": X}, P, plan="p2p1d", partition="random", seed=1)
    assert_same(got, f(A=A, X=X), exact=True)


@pytest.mark.parametrize("plan", PLANS)
def test_edge_partitions(plan):
    """A process that owns nothing, rows with no off-process columns, P above the non-empty rows."""
    P = 4
    if not _valid(plan, P):
        pytest.skip(f"{plan} does not run on P={P}")
    f = _program("plus_times")
    A, X = _data(12, 3, 0.2, 3, "plus_times", empty_rows=range(2, 12))   # only rows 0, 1 non-empty
    parts = np.array([0] * 6 + [1] * 6)                                  # ranks 2, 3 own nothing
    for p in (parts, np.arange(12) % P):
        got, _ = run_dist(f, {"A": A, "X": X}, P, plan=plan, parts=p, **PLAN_OPTIONS.get(plan, {}))
        assert_same(got, f(A=A, X=X), exact=True)
    D = sp.csr_array(sp.diags(np.arange(1.0, 13.0)))                     # no off-process columns at all
    got, stats = run_dist(f, {"A": D, "X": X}, P, plan=plan, partition="block", **PLAN_OPTIONS.get(plan, {}))
    assert_same(got, f(A=D, X=X), exact=True)
    if plan == "p2p1d":
        assert stats["words_sent_total"] == 0


@pytest.mark.parametrize("plan,P", [(plan, P) for plan in PLANS for P in (1, 2, 4) if _valid(plan, P)])
def test_min_max_products_ignore_nan_as_graphblas_does(plan, P):
    """SuiteSparse's min and max ignore a NaN, and an entry whose terms are all NaN is NaN. A
    full output started at the identity gave +-inf there, and partial results combined across
    processes by np.minimum spread a NaN to entries with other terms."""
    import graphblas as gb
    rng = np.random.default_rng(5)
    A, _ = _data(16, 3, 0.3, 5, "min_plus")
    X = rng.integers(0, 3, (16, 3)).astype(float)   # X / X: NaN where X is 0
    Ae, Xe = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 3))
    srs = ("min_plus", "max_times", "min_second")
    f = dp.function(outputs={sr: dp.mxm(Ae, Xe / Xe, sr) for sr in srs})
    got = f(A=A, X=X) if P == 1 else run_dist(f, {"A": A, "X": X}, P, plan=plan, partition="random", seed=2,
                                               **PLAN_OPTIONS.get(plan, {}))[0]
    Ag = gb.Matrix.from_coo(*sp.coo_array(A).coords, A.tocoo().data, nrows=16, ncols=16)
    with np.errstate(invalid="ignore"):
        Yg = gb.Matrix.from_dense(X / X)
    for sr in srs:
        want = Ag.mxm(Yg, getattr(gb.semiring, sr)).new()
        # (no value is -7.5: the fill compares presence too)
        assert np.array_equal(got[sr].to_numpy(fill=-7.5), want.to_dense(fill_value=-7.5), equal_nan=True), sr


def test_p2p1d_traffic_equals_analysis():
    from dspla.analysis import comm_stats
    f = _program("plus_times")
    A, X = _data(60, 6, 0.08, 5, "plus_times")
    for P in (2, 3, 4):
        parts = np.random.default_rng(P).integers(0, P, 60)
        got, stats = run_dist(f, {"A": A, "X": X}, P, plan="p2p1d", parts=parts)
        cs = comm_stats(A, parts, P, K=6)
        assert stats["words_sent_total"] == 6 * cs.volume_total
        assert stats["messages_sent_total"] == cs.messages_total
        sent = [r["words_sent"] for r in stats["per_rank"]]
        recv = [r["words_received"] for r in stats["per_rank"]]
        assert sum(sent) == sum(recv)


def test_whole_program_gcn_style():
    """Products, transposes, reductions, broadcasts and Allreduce-ed small results in one program."""
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    W = dp.param("W", ("f", 4))
    deg = dp.reduce_rows(A + dp.eye("n"), "plus")
    Ahat = (A + dp.eye("n")) / deg                       # static: computed once at planning
    H = dp.relu(Ahat @ (X @ W))
    G = dp.softmax(H)
    dW = X.T @ (Ahat.T @ G)                              # Allreduce of a small replicated result
    colmax = dp.reduce_cols(H, "max")
    f = dp.function(outputs={"H": H, "G": G, "dW": dW, "colmax": colmax, "Ahat": Ahat})
    rng = np.random.default_rng(2)
    A_ = sp.random_array((30, 30), density=0.1, random_state=rng, format="csr")
    inputs = {"A": A_, "X": rng.normal(size=(30, 6)), "W": rng.normal(size=(6, 4))}
    want = f(**inputs)
    for P in (1, 2, 3):
        got, _ = run_dist(f, inputs, P, plan="p2p1d", partition="random", seed=3)
        for k in want:
            g, w = got[k], want[k]
            assert np.array_equal(g.present(), w.present()), k
            np.testing.assert_allclose(g.to_numpy(fill=0), w.to_numpy(fill=0), rtol=1e-12, atol=1e-14, err_msg=k)


def test_repeat_reuses_the_plan():
    f = _program("plus_times")
    A, X = _data(40, 4, 0.1, 1, "plus_times")
    got, stats = run_dist(f, {"A": A, "X": X}, 2, repeat=3, plan="p2p1d", partition="random")
    assert len(stats["iteration_s"]) == 3 and stats["planning_s"] > 0


def test_dropout_mask_does_not_depend_on_P():
    X = dp.dense("X", ("n", "f"))
    A = dp.sparse("A", ("n", "n"))
    seed = dp.dense("seed", (1, 1), dtype="int64")
    H = A @ X
    D = dp.dropout_mask(H, 0.5, seed)
    f = dp.function(outputs={"D": D, "HD": H * D, "XT": dp.dropout_mask(X.T, 0.3, seed)})
    rng = np.random.default_rng(0)
    inputs = {"A": sp.random_array((40, 40), density=0.2, random_state=rng, format="csr"),
              "X": rng.normal(size=(40, 8)), "seed": np.array([[7]])}
    want = f(**inputs)
    kept = want["D"].nvals / want["D"].present().size
    assert 0.35 < kept < 0.65 and set(np.unique(want["D"].to_coo()[2])) == {2.0}
    for P in (2, 3, 4):
        got, _ = run_dist(f, inputs, P, plan="p2p1d", partition="random", seed=P)
        assert_same(got, want, exact=False)  # masks exactly; HD up to the order of A @ X's sums
        assert np.array_equal(got["D"].present(), want["D"].present())
    other = f(**{**inputs, "seed": np.array([[8]])})
    assert not np.array_equal(other["D"].present(), want["D"].present())


@pytest.mark.parametrize("plan", PLANS)
def test_operand_with_missing_entries(plan):
    """B is not full (a selected intermediate): pieces travel with presence, and a missing
    entry never becomes a zero, for every plan and for P = 1..4."""
    A, X = _data(29, 4, 0.15, 9, "min_plus", empty_rows=(0,))
    Asym, Xs = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function(outputs={"C": dp.mxm(Asym, dp.select(Xs, ">", 2), "min_plus"),
                             "D": dp.mxm(Asym, dp.select(Xs, ">", 2), "plus_times")})
    want = f(A=A, X=X)
    for P in (1, 2, 3, 4):
        if not _valid(plan, P):
            continue
        got, _ = run_dist(f, {"A": A, "X": X}, P, plan=plan, partition="random", seed=P, **PLAN_OPTIONS.get(plan, {}))
        assert_same(got, want, exact=True)


@pytest.mark.parametrize("plan", [p for p in PLANS if p not in ("15d_sparse", "p2p1d_node")])   # (refuse a sparse B)
def test_bool_operand_with_missing_entries(plan):
    """A bool B with missing entries (a BFS frontier): packing its rows with presence zeroes the
    missing slots with a bool zero (np.copyto refused the int 0: shift1d failed at P = 2..4)."""
    A, _ = _data(31, 1, 0.15, 5, "lor_land", empty_rows=(2,))
    s = sp.csr_array((np.ones(3, dtype=bool), ([0, 7, 20], [0, 0, 0])), shape=(31, 1))
    As, ss = dp.sparse("A", ("n", "n"), dtype="bool"), dp.sparse("s", ("n", 1), dtype="bool")
    f = dp.function(outputs={"F": dp.mxm(dp.cast(As.T, "bool"), ss, "any_pair")})
    want = f(A=A, s=s)
    for P in (2, 3, 4):
        if not _valid(plan, P):
            continue
        got, _ = run_dist(f, {"A": A, "s": s}, P, plan=plan, partition="random", seed=P, **PLAN_OPTIONS.get(plan, {}))
        assert_same(got, want, exact=True)
