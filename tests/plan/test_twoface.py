"""Two-Face's preprocessing (the Two-Face thesis §4.2, Algorithm 4.1) on a hand-worked example in the
setting of the thesis's Figure 4.2 (4 nodes, W = 2, row panels of one row), run coalescing as in
§4.3.2, the memory cap, and the plan on both halves against a dense oracle."""
import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla.costmodel import Coefficients
from dspla.instr.layout import DimPart
from dspla.plan.plans.twoface import Stripes, apply_memory_cap, classify, coalesce, stripes_of

from harness import run_dist

# 8 x 8, node m owns rows and columns 2m, 2m+1: every megatile is one stripe of width 2.
# Only node 0 has non-local entries: row 0 -> cols 2, 3, 4, 7; row 1 -> cols 2, 3, 6.
ENTRIES = [(0, 0), (0, 2), (0, 3), (0, 4), (0, 7), (1, 1), (1, 2), (1, 3), (1, 6)] + [(i, i) for i in range(2, 8)]
A = sp.csr_array((np.arange(1.0, len(ENTRIES) + 1), tuple(np.array(ENTRIES).T)), shape=(8, 8))
PARTS = np.repeat(np.arange(4), 2)
# unit-free coefficients chosen so the arithmetic is easy to follow by hand
COEF = {"beta_S": 1.0, "alpha_S": 2.0, "beta_A": 1.0, "alpha_A": 3.0, "gamma_A": 0.5, "kappa_A": 1.0}
K, W = 4, 2


def test_stripe_statistics_of_node_0():
    cols = DimPart("n", PARTS, 4)
    st, sid = stripes_of(A[[0, 1]], 0, cols, W)
    assert st.owner.tolist() == [1, 2, 3]
    assert st.l.tolist() == [2, 1, 2]          # rows of B each stripe needs
    assert st.n.tolist() == [4, 1, 2]          # its nonzeros
    assert st.width.tolist() == [2, 2, 2]
    assert (sid[[0, 5]] == -1).all()           # (0,0) and (1,1) are local-input


def test_algorithm_4_1_by_hand():
    # u = alpha_A + kappa_A + beta_S K W + alpha_S = 3 + 1 + 8 + 2 = 14
    # v = K (beta_A l + gamma_A n): stripe(owner 1) 4(2 + 2) = 16, owner 2: 4(1 + 0.5) = 6, owner 3: 4(2 + 1) = 12
    # z = 30, 20, 26; limit = S_T (beta_S K W + alpha_S) = 3 x 10 = 30
    # ascending z: 20 -> sum 20 < 30: async; 20 + 26 = 46 >= 30: stop. Only owner 2's stripe is async.
    got = classify([2, 1, 2], [4, 1, 2], K, W, COEF)
    assert got.tolist() == [False, True, False]
    # nothing is async when sync transfers are free; when they are dear, all but one: each z_i
    # carries the sync cost it saves (u), so the sum of all z always passes the limit (eq. 4.11)
    assert not classify([2, 1, 2], [4, 1, 2], K, W, {**COEF, "beta_S": 0.0, "alpha_S": 0.0}).any()
    assert classify([1] * 5, [1] * 5, 1, 64, {**COEF, "beta_S": 100.0}).sum() == 4


def test_coalescing_follows_the_thesis_example():
    rows = np.array([2, 3, 6, 8])
    s, c = coalesce(rows, 128)                 # gap 127/128 + 1 = 1: only adjacent rows join
    assert list(zip(s.tolist(), c.tolist())) == [(2, 2), (6, 1), (8, 1)]
    s, c = coalesce(rows, 64)                  # gap 2: rows 6 and 8 join, row 7 is fetched too
    assert list(zip(s.tolist(), c.tolist())) == [(2, 2), (6, 3)]
    s, c = coalesce(np.zeros(0, np.int64), 8)
    assert s.size == c.size == 0


def test_memory_cap_turns_sync_stripes_async_largest_saving_first():
    st = Stripes(np.array([1, 1, 2]), np.array([0, 1, 0]), np.array([8, 8, 8]), np.array([7, 1, 4]), np.ones(3))
    mask = np.zeros(3, dtype=bool)
    same, moved = apply_memory_cap(st, mask, K=1, itemsize=1, base_bytes=0, cap=100)
    assert moved == 0 and not same.any()
    got, moved = apply_memory_cap(st, mask, K=1, itemsize=1, base_bytes=0, cap=20)   # need 24 -> 17 after one
    assert moved == 1 and got.tolist() == [False, True, False]
    got, moved = apply_memory_cap(st, mask, K=1, itemsize=1, base_bytes=0, cap=0)    # cannot fit: all async
    assert moved == 3 and got.all()


def _run(coefficients, **kw):
    Asym, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function(outputs={"C": Asym @ X})
    Xv = np.arange(32.0).reshape(8, 4)
    got, stats = run_dist(f, {"A": A, "X": Xv}, 4, plan="twoface", parts=PARTS, stripe_width=W,
                          coefficients=coefficients, **kw)
    np.testing.assert_array_equal(got["C"].to_numpy(fill=0), A @ Xv)
    return stats


def test_plan_on_the_example_moves_what_the_classification_says():
    coef = Coefficients(beta_coll=1.0, alpha_coll=2.0, beta_get=1.0, alpha_get=3.0, gamma=0.5, kappa=1.0)
    stats = _run(coef)
    per = stats["per_rank"]
    # node 0 gets one row (column 4) from node 2 and receives the whole stripes of nodes 1 and 3
    assert per[0]["words_received"] == 1 * K + 2 * W * K
    assert [p["words_sent"] for p in per] == [0, W * K, 1 * K, W * K]
    assert stats["words_sent_total"] == sum(p["words_received"] for p in per)


def test_memory_cap_in_the_plan_keeps_the_result():
    coef = Coefficients(beta_coll=1.0, alpha_coll=2.0, beta_get=1.0, alpha_get=3.0, gamma=0.5, kappa=1.0)
    stats = _run(coef, memory_cap=1)          # every sync stripe must go async
    per = stats["per_rank"]
    assert per[0]["words_received"] == 5 * K  # rows 2, 3 (node 1), 4 (node 2), 6, 7 (node 3)


def test_gets_from_both_halves_of_the_window_across_calls():
    """The windows are double-buffered (each iteration writes the other half), so the gets
    alternate between two access patterns: a new dense input on the same plan every call (a
    stale half would still hold the previous one) must match A @ X each time."""
    from dspla.plan.options import Options
    from dspla.runtime.comm.sim import run_simulated
    from dspla.session import DistSession
    Asym, Xs = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function(outputs={"C": Asym @ Xs})
    coef = Coefficients(beta_coll=1.0, alpha_coll=2.0, beta_get=1.0, alpha_get=3.0, gamma=0.5, kappa=1.0)
    Xv = [np.arange(32.0).reshape(8, 4) * (t + 1) - t for t in range(4)]

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="twoface", parts=PARTS, stripe_width=W, coefficients=coef))
        outs = []
        for t, X in enumerate(Xv):
            out = s.run({"A": A, "X": X} if comm.rank == 0 else None, repeat=2 if t == 3 else 1)
            outs.append(None if out is None else out["C"].to_numpy(fill=0))
        return outs, s.last_stats

    outs, stats = run_simulated(4, body, timeout=120)[0]
    assert stats["per_rank"][0]["words_received"] == 1 * K + 2 * W * K   # still the planned traffic
    for got, X in zip(outs, Xv):
        np.testing.assert_array_equal(got, A @ X)
