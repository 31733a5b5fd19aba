"""Local SpMM on sparser blocks: the cluster model's per-output-row cost (CAGNET's schedules write
a running sum of every row of a stage's block; dspla's plans the rows holding entries of each
block they multiply), hand-counted and against brute-force counts; and 15d_sparse's sends
dealt over the members of a process row."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.costmodel import cagnet, cluster, scaling
from dspla.instr import Send
from dspla.instr.program import walk
from dspla.plan.options import Options

SUMMIT = cluster.load("summit")


def test_cagnet_rows_per_rank_hand_counted():
    n, f = 3600, [16, 16]          # one layer: a forward and a backward SpMM of width 16
    assert cagnet.one_d(n, 10_000, f, 4).rows_per_rank == 4 * 900 * 32            # P stages of n/P rows
    assert cagnet.one_five_d(n, 10_000, f, 16, 2).rows_per_rank == 4 * 450 * 32    # P/c^2 stages of nc/P
    assert cagnet.two_d(n, 10_000, f, 16).rows_per_rank == 4 * 900 * 32 / 4      # T stages, n/X x f/Y
    assert cagnet.three_d(n, 10_000, f, 8, (2, 2, 2)).rows_per_rank == 2 * 1800 * 32 / 2
    assert cagnet.spmm_only(cagnet.two_d(n, 10_000, [16, 16], 16)).rows_per_rank == 4 * 900 * 16 / 4


def test_sparser_blocks_cost_more_per_nonzero():
    """Same nonzeros per rank, but 3D's blocks (rows over P^(2/3)) are sparser than 2D's (over
    P^(1/2)): priced per output row, 3D computes longer; without the row rate, the same."""
    n, nnz, f = 14_249_639, 230_788_269, [300, 64, 64, 24]
    flat = dataclasses.replace(SUMMIT, spmm_row=0.0)
    two, three = cagnet.two_d(n, nnz, f, 121), cagnet.three_d(n, nnz, f, 125, (5, 5, 5))
    assert cagnet.seconds(three, flat)["compute_s"] < cagnet.seconds(two, flat)["compute_s"]
    assert cagnet.seconds(three, SUMMIT)["compute_s"] > cagnet.seconds(two, SUMMIT)["compute_s"]
    assert SUMMIT.spmm_seconds(1e6, 1e6) == pytest.approx(1e6 / SUMMIT.spmm_rate + 1e6 / SUMMIT.spmm_row)
    assert flat.spmm_seconds(1e6, 1e9) == 1e6 / SUMMIT.spmm_rate


def _graph(n=300, density=0.02, seed=3):
    A = sp.random_array((n, n), density=density, random_state=np.random.default_rng(seed), format="csr")
    return sp.csr_array(((A + A.T) != 0).astype(np.float32))


def test_block_rows_equal_a_brute_force_count():
    A, P = _graph(), 6
    parts = np.random.default_rng(0).integers(0, P, A.shape[0])
    got = scaling.block_rows(A, np.repeat(parts, np.diff(A.indptr)), parts[A.indices], P)
    for r in range(P):
        rows = A[parts == r]
        want = sum(int((np.diff(rows[:, parts == q].tocsr().indptr) > 0).sum()) for q in range(P))
        assert got[r] == want


@pytest.mark.parametrize("P, c", [(8, 2), (16, 4), (18, 3)])
def test_15d_sparse_rows_equal_a_brute_force_count(P, c):
    A = _graph()
    parts = scaling.block_row_parts(A, P, c, "random", 1)
    got = scaling._sparse15_rows(A, parts, P, c)
    brow, nb = parts // c, P // c
    per = nb // c
    chunk = [list(range(j * per, (j + 1) * per)) + (list(range(c * per, nb)) if j == c - 1 else []) for j in range(c)]
    for r in range(P):
        i, j = divmod(r, c)
        rows = A[brow == i]
        want = sum(int((np.diff(rows[:, brow == k].tocsr().indptr) > 0).sum()) for k in chunk[j])
        assert got[r] == want


@pytest.mark.parametrize("P, c", [(8, 2), (16, 2), (16, 4)])
def test_15d_sparse_deals_the_sends_over_the_process_row(P, c):
    """Every rank sends about as many messages as it receives (P(k, i mod c) serves P(i, j)), and
    the plan's sends are the pairs the scaling model counts."""
    A = sp.csr_array(np.ones((64, 64)))       # every block needs every other: the most messages
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    plan = f.plan(P, {"A": A, "X": np.ones((64, 2))}, Options(plan="15d_sparse", partition="random", seed=1,
                                                               replication=c)).plan
    sends = {(r, i.dest) for r, prog in enumerate(plan.programs) for i in walk(prog.instrs)
             if type(i) is Send and i.tag % 8 == 0}     # B's rows (tag + 1: C's partial rows, in the row)
    src, dst, _ = scaling.sparse15_pairs(A, plan.dims["n"].parts, P, c)
    assert sends == set(zip(src.tolist(), dst.tolist()))
    per_rank = np.bincount(src, minlength=P)
    assert per_rank.max() <= -(-(P // c) // c) < P // c - 1   # P(k, j) alone: P/c - 1 each


def test_breakdown_by_repricing_equals_cagnets_own_split():
    """scaling splits every candidate's time by pricing it on the cluster without the other
    costs; for CAGNET's schedules that equals the split cagnet.seconds computes term by term."""
    from dspla.generate import rmat
    sh = scaling.Shape.of("g", rmat(9, 8, seed=2))
    (row,) = scaling.scaling(sh, [16], [32, 16, 8], SUMMIT)
    by_plan = {c["plan"]: c for c in row["candidates"]}
    for s in cagnet.cagnet_four(sh.n, sh.nnz, [32, 16, 8], 16):
        got, want = by_plan["CAGNET " + s.name + (" 2x2x4" if s.name == "3d" else "")], cagnet.seconds(s, SUMMIT)
        assert got["compute_s"] == pytest.approx(want["compute_s"], rel=1e-9)
        assert got["latency_s"] == pytest.approx(want["latency_s"], rel=1e-9)
        assert got["bandwidth_s"] == pytest.approx(want["comm_s"], rel=1e-6)
    for c in row["candidates"]:
        assert min(c["compute_s"], c["latency_s"], c["bandwidth_s"]) >= 0
        assert c["compute_s"] + c["latency_s"] <= c["predicted_s"] * (1 + 1e-9)
