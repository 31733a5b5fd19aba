"""Exact 1D communication analysis against hand-computed answers and loop oracles."""
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.analysis import comm_plan, comm_stats, connectivity_minus_one, send_lists
from dspla.errors import DimensionMismatch, PlanError

from conftest import dataset


def figure2():
    """Demirci et al.'s Figure 2 as reconstructed from its text: v4 is fetched by v2, v3, v5, v6; P3 = {v5, v6}
    needs rows 1, 2 from P1 and row 4 from P2; w(v1) = 3. Self loops included (A + I)."""
    edges = [(1, 2), (1, 5), (2, 4), (2, 6), (3, 4), (4, 5), (4, 6)]
    A = np.eye(6)
    for u, v in edges:
        A[u - 1, v - 1] = A[v - 1, u - 1] = 1
    return sp.csr_matrix(A), np.array([0, 0, 1, 1, 2, 2])


def test_figure2_by_hand():
    A, parts = figure2()
    assert np.diff(A.indptr)[0] == 3  # w(v1) = 3
    plan = comm_plan(A, parts)
    # nets n1..n6 have connectivity-1 of 1, 2, 0, 2, 2, 2 (worked out on paper)
    assert plan.volume_total == 9
    assert connectivity_minus_one(A, parts) == 9
    assert {k: v.tolist() for k, v in plan.sends(0).items()} == {1: [1], 2: [0, 1]}
    got = {(int(s), int(d)): plan.rows[plan.ptr[q]:plan.ptr[q + 1]].tolist()
           for q, (s, d) in enumerate(zip(plan.src, plan.dst))}
    assert got == {(0, 1): [1], (0, 2): [0, 1], (1, 0): [3], (1, 2): [3], (2, 0): [4, 5], (2, 1): [4, 5]}
    # P3 receives rows 1, 2 (ids 0, 1) from P1 and row 4 (id 3) from P2, as in the paper's Figure 1
    assert {k: v.tolist() for k, v in plan.receives(2).items()} == {0: [0, 1], 1: [3]}
    st = comm_stats(A, parts, K=16)
    assert st.volume_sent.tolist() == [3, 2, 4]
    assert st.volume_recv.tolist() == [3, 3, 3]
    assert st.messages_sent.tolist() == [2, 2, 2] and st.messages_total == 6
    assert st.words_total == 9 * 16
    assert st.load.tolist() == [3 + 4, 2 + 5, 3 + 3]
    s = st.summary()
    assert s["volume_avg"] == 3.0 and s["volume_max"] == 4 and s["messages_max"] == 2


def test_figure2_net_n4_connectivity_minus_one_is_2():
    A, parts = figure2()
    col4 = A[:, [3]]  # net n4 alone: a 6 x 1 matrix whose single row of B is owned by v4's part
    assert connectivity_minus_one(col4, parts, P=3, b_parts=[parts[3]]) == 2
    assert comm_plan(col4, parts, P=3, b_parts=[parts[3]]).volume_total == 2


def oracle(A, parts, b_parts, P):
    """Loops over nonzeros: who needs which row of B from whom."""
    A = sp.coo_matrix(A)
    need = {}
    for i, j in zip(A.row, A.col):
        src, dst = int(b_parts[j]), int(parts[i])
        if src != dst:
            need.setdefault((src, dst), set()).add(int(j))
    return {k: sorted(v) for k, v in need.items()}


@pytest.mark.parametrize("dedup", ["flags", "sort"])   # the two ways comm_plan deduplicates (by P x m)
@pytest.mark.parametrize("shape,P,seed", [((30, 30), 4, 0), ((40, 40), 7, 1), ((25, 35), 3, 2), ((50, 20), 5, 3),
                                          ((60, 60), 1, 4), ((12, 12), 12, 5)])
def test_against_loop_oracle(shape, P, seed, dedup, monkeypatch):
    if dedup == "sort":
        monkeypatch.setattr("dspla.analysis.comm.FLAG_LIMIT", 0)
    rng = np.random.default_rng(seed)
    A = sp.random(*shape, density=0.15, random_state=seed, format="csr")
    parts = rng.integers(0, P, shape[0])
    b_parts = parts if shape[0] == shape[1] else rng.integers(0, P, shape[1])
    want = oracle(A, parts, b_parts, P)
    plan = comm_plan(A, parts, P, None if shape[0] == shape[1] else b_parts)
    got = {(int(s), int(d)): plan.rows[plan.ptr[q]:plan.ptr[q + 1]].tolist()
           for q, (s, d) in enumerate(zip(plan.src, plan.dst))}
    assert got == want
    st = comm_stats(A, parts, P, K=3, b_parts=None if shape[0] == shape[1] else b_parts)
    for p in range(P):
        sent = {d: rows for (s, d), rows in want.items() if s == p}
        assert st.volume_sent[p] == sum(len(r) for r in sent.values())
        assert st.messages_sent[p] == len(sent)
        assert st.volume_recv[p] == sum(len(r) for (s, d), r in want.items() if d == p)
        assert {k: v.tolist() for k, v in plan.sends(p).items()} == sent
        assert {k: v.tolist() for k, v in send_lists(A, parts, p, P, None if shape[0] == shape[1] else b_parts)
                .items()} == sent
        assert st.load[p] == sum(A[i].nnz for i in range(shape[0]) if parts[i] == p)
    assert st.km1 == st.volume_total == sum(len(r) for r in want.values())


def test_pairs_are_sorted_and_csr_consistent():
    A = sp.random(200, 200, density=0.05, random_state=9, format="csr")
    parts = np.random.default_rng(9).integers(0, 8, 200)
    plan = comm_plan(A, parts)
    pair = plan.src * plan.P + plan.dst
    assert np.all(np.diff(pair) > 0) and plan.ptr[0] == 0 and plan.ptr[-1] == plan.rows.size
    for q in range(plan.npairs):
        seg = plan.rows[plan.ptr[q]:plan.ptr[q + 1]]
        assert seg.size > 0 and np.all(np.diff(seg) > 0)
        assert np.all(parts[seg] == plan.src[q])  # the sender owns every row it sends


def test_km1_equals_total_volume_on_real_graph():
    from dspla.formats.graph import load_graph

    A = sp.csr_matrix(load_graph(dataset("snap", "ca-HepPh.txt")).matrix)
    C = A.tocsc()
    for P, seed in [(16, 0), (64, 1)]:
        parts = np.random.default_rng(seed).integers(0, P, A.shape[0])
        # connectivity-1 by a loop over columns: parts of the column's rows plus the owner of row j of B
        km1 = sum(len(set(parts[C.indices[C.indptr[j]:C.indptr[j + 1]]].tolist()) | {parts[j]}) - 1
                  for j in range(A.shape[1]))
        st = comm_stats(A, parts, P)
        assert st.volume_total == km1 == st.km1


def test_rectangular_auto_owner_gives_connectivity_minus_one():
    A = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]]))
    parts = np.array([0, 0, 1, 1, 2])
    plan = comm_plan(A, parts, 3, b_parts="auto")
    # col 0: rows in parts {0, 1}, two of them in part 0 -> owner 0, volume 1; col 1: {0, 1} tie -> 0, 1;
    # col 2: {0, 1} tie -> 0, 1; col 3: empty -> round robin, 0
    assert plan.b_parts.tolist() == [0, 0, 0, 0]
    assert plan.volume_total == 3


def test_errors_are_specific():
    A = sp.random(10, 10, density=0.3, random_state=1, format="csr")
    with pytest.raises(DimensionMismatch, match="9 entries"):
        comm_plan(A, np.zeros(9, dtype=int))
    with pytest.raises(PlanError, match="P = 2"):
        comm_plan(A, np.arange(10) % 3, P=2)
    with pytest.raises(PlanError, match="b_parts"):
        comm_plan(sp.random(10, 12, density=0.3, format="csr"), np.zeros(10, dtype=int))
    with pytest.raises(PlanError, match="integer"):
        comm_plan(A, np.zeros(10))
