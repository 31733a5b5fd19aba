"""Each plan's words and messages have one account, its instructions' own traffic
(``Instr.traffic``), which the cost model and the runtime both read; explain's and the stats'
``predicted`` totals are its sum over the ranks. These tests recompute the totals independently,
from the partition alone: the closed forms of each plan (CAGNET's 1D allgather, dense shifting
with replication c as in the Two-Face paper, the hypergraph send sets' volume from the analysis
layer), and compare."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.analysis import comm_plan
from dspla.plan.options import Options

N, K = 48, 5


def _graph(seed: int) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    A = sp.random_array((N, N), density=0.1, random_state=rng, format="csr") + sp.eye_array(N, format="csr")
    return sp.csr_array(A)


def _planned(P: int, plan: str, A, **opt):
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    X = np.random.default_rng(0).random((N, K))
    distplan = f.plan(P, {"A": A, "X": X}, Options(plan=plan, partition="random", seed=2, **opt)).plan
    (prod,) = distplan.products
    assert prod.plan == plan
    counts = distplan.dims["n"].counts
    assert (counts > 0).all()   # (the closed forms below count every rank as holding rows)
    return prod, distplan.dims["n"]


@pytest.mark.parametrize("P", [2, 3, 4])
def test_allgather1d_moves_every_rank_its_rows_to_every_other(P):
    prod, dim = _planned(P, "allgather1d", _graph(1))
    assert prod.predicted["words"] == K * sum(int(c) * (P - 1) for c in dim.counts)
    assert prod.predicted["messages"] == P * (P - 1)


@pytest.mark.parametrize("P, c", [(2, 1), (3, 1), (4, 1), (4, 2)])
def test_shift1d_gathers_in_groups_and_shifts_super_blocks(P, c):
    prod, dim = _planned(P, "shift1d", _graph(2), replication=c)
    q = P // c
    super_rows = dim.counts.reshape(q, c).sum(axis=1)   # the rows of each group of c ranks
    want = K * (sum((c - 1) * int(n) for n in dim.counts) + (q - 1) * c * int(super_rows.sum()))
    assert prod.predicted["words"] == want
    assert prod.predicted["messages"] == P * (c - 1) + P * (q - 1)


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("cut", [False, True], ids=["whole", "chunked"])
def test_p2p1d_moves_the_hypergraph_volume(P, cut):
    A = _graph(3)
    per = 2   # rows per message when cut
    prod, dim = _planned(P, "p2p1d", A, **({"message_bytes": per * K * 8} if cut else {}))
    cp = comm_plan(A, dim.parts, P, b_parts=dim.parts)
    assert prod.predicted["words"] == cp.volume_total * K == prod.predicted["volume_rows"] * K
    messages = sum(-(-lst.size // per) for r in range(P) for lst in cp.receives(r).values()) if cut else cp.npairs
    assert prod.predicted["messages"] == messages


@pytest.mark.parametrize("P", [2, 3, 4])
def test_the_sampled_product_moves_the_rows_its_pattern_names(P):
    rng = np.random.default_rng(4)
    M = _graph(5)
    f = dp.function({"C": dp.mxm(dp.dense("G", ("n", K)), dp.dense("B", ("n", K)).T, mask=dp.sparse("M", ("n", "n")),
                                 structure=True)})
    distplan = f.plan(P, {"M": M, "G": rng.random((N, K)), "B": rng.random((N, K))},
                      Options(partition="random", seed=2)).plan
    (prod,) = distplan.products
    cp = comm_plan(M, distplan.dims["n"].parts, P, b_parts=distplan.dims["n"].parts)
    assert prod.predicted["words"] == cp.volume_total * K
    assert prod.predicted["messages"] == cp.npairs
