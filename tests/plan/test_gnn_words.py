"""The scaling counts (costmodel/scaling.py, plans' grid_words) are the plans' own traffic: for
one product A @ X, the words the 15d_sparse and 3d lowerings predict equal the counts computed
from the partition alone."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.costmodel.scaling import grid3d_words, sparse15_pairs, vertexcut_pairs
from dspla.plan.options import Options

N, K = 96, 6


def _planned(P, plan, **opt):
    rng = np.random.default_rng(P)
    A = sp.random_array((N, N), density=0.08, random_state=rng, format="csr")
    A = sp.csr_array(((A + A.T) != 0).astype(float))
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    dp_ = f.plan(P, {"A": A, "X": rng.random((N, K))}, Options(plan=plan, partition="random", seed=1, **opt)).plan
    (prod,) = dp_.products
    assert prod.plan == plan
    return A, prod, dp_.dims["n"]


@pytest.mark.parametrize("P, c", [(4, 2), (8, 2), (9, 3), (16, 4)])
def test_15d_sparse_words_from_the_partition(P, c):
    A, prod, dim = _planned(P, "15d_sparse", replication=c)
    _, _, rows = sparse15_pairs(A, dim.parts, P, c)
    n_i = dim.counts.reshape(P // c, c).sum(1)
    gather = sum((int(n_i[r // c]) - int(dim.counts[r])) * K for r in range(P))
    reduce = sum((int(n_i[r // c]) - int(dim.counts[r])) * K for r in range(P))   # point to point
    assert prod.predicted["words"] == int(rows.sum()) * K + gather + reduce


@pytest.mark.parametrize("P, grid", [(4, (1, 2, 2)), (8, (2, 2, 2)), (12, (2, 2, 3)), (27, (3, 3, 3))])
def test_3d_words_from_the_row_counts(P, grid):
    _, prod, dim = _planned(P, "3d")
    assert prod.predicted["words"] == int(grid3d_words(dim.counts, K, grid).sum())


@pytest.mark.parametrize("grid", [(4, 1, 1), (1, 4, 1), (1, 1, 4), (2, 1, 2)])
def test_3d_words_on_a_given_grid(grid):
    _, prod, dim = _planned(4, "3d", grid=grid)
    assert prod.predicted["words"] == int(grid3d_words(dim.counts, K, grid).sum())
    assert len({int(grid3d_words(dim.counts, K, g).sum()) for g in [(4, 1, 1), (1, 4, 1), (1, 1, 4)]}) == 3


@pytest.mark.parametrize("P", [2, 4])
def test_vertexcut_words_from_the_edge_partition(P):
    from dspla.partition.vertex_owners import edge_owner
    rng = np.random.default_rng(P)
    A = sp.random_array((N, N), density=0.08, random_state=rng, format="csr")
    A = sp.csr_array(((A + A.T) != 0).astype(float))
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    plan = f.plan(P, {"A": A, "X": rng.random((N, K))}, Options(plan="vertexcut", partition="spac", seed=1)).plan
    parts = plan.dims["n"].parts
    (_, _, rows_b), (_, _, rows_c) = vertexcut_pairs(A, parts, edge_owner(A, P, "spac", 0.03, 1, parts), P)
    assert plan.products[0].predicted["words"] == int(rows_b.sum() + rows_c.sum()) * K
