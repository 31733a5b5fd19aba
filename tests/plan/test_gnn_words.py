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


@pytest.mark.parametrize("P, rpn", [(4, 2), (8, 3), (12, 4), (16, 4), (9, 9)])
def test_p2p1d_node_traffic_is_the_three_rounds(P, rpn):
    """The plan's words and messages (its instructions' traffic) equal the rounds the cost model
    counts from the partition (costmodel/nodeaware.py), and across nodes each rank sends at most
    one message per node it serves."""
    from dspla.costmodel.nodeaware import Nodes, rounds
    A, prod, dim = _planned(P, "p2p1d_node", ranks_per_node=rpn)
    steps, _, _ = rounds(A, dim.parts, P, rpn)
    assert prod.predicted["words"] == int(sum(r.sum() for _, _, r in steps)) * K
    assert prod.predicted["messages"] == sum(s.size for s, _, _ in steps)
    nodes = Nodes(P, rpn)
    (s1, d1, _), (s2, d2, _), (s3, d3, _) = steps
    assert (nodes.of(s1) == nodes.of(d1)).all() and (nodes.of(s3) == nodes.of(d3)).all()
    assert (nodes.of(s2) != nodes.of(d2)).all()
    assert np.bincount(s2, minlength=P).max() <= -(-(nodes.count - 1) // min(rpn, P))
    assert len(set(zip(s2.tolist(), d2.tolist()))) == s2.size   # one message per node pair and server


def test_node_rounds_against_a_brute_force_count():
    """Each round's rows, from the rule itself, one row of B at a time (who needs it, where)."""
    from dspla.costmodel.nodeaware import rounds
    rng = np.random.default_rng(3)
    A = sp.csr_array(((sp.random_array((60, 60), density=0.1, random_state=rng) != 0)).astype(float))
    P, rpn = 7, 3
    parts = rng.integers(0, P, 60)
    node = [r // rpn for r in range(P)]
    size = [min(rpn, P - a * rpn) for a in range(-(-P // rpn))]
    want = [dict(), dict(), dict()]
    for i, j in zip(*A.nonzero()):
        s, d = int(parts[j]), int(parts[i])
        if s == d:
            continue
        if node[s] == node[d]:
            hops = [(2, s, d)]
        else:
            ell = node[s] * rpn + node[d] % size[node[s]]
            m = node[d] * rpn + node[s] % size[node[d]]
            hops = [(0, s, ell), (1, ell, m), (2, m, d)]
        for k, a, b in hops:
            if a != b:
                want[k].setdefault((a, b), set()).add(int(j))
    steps, _, _ = rounds(A, parts, P, rpn)
    for (s, d, rows), w in zip(steps, want):
        assert {(int(a), int(b)): int(n) for a, b, n in zip(s, d, rows)} == {k: len(v) for k, v in w.items()}


@pytest.mark.parametrize("P", [4, 12, 16])
def test_15d_sparse_c_is_the_models_fastest(P):
    """Without --replication, 15d_sparse weighs every c with c^2 <= P dividing P and keeps the one
    the model predicts fastest: the same prediction as asking for that c, none faster; explain
    says what each c would take."""
    from dspla.plan.plans.sparse15d import choices
    _, prod, _ = _planned(P, "15d_sparse")
    asked = {c: _planned(P, "15d_sparse", replication=c)[1].predicted for c in choices(P)}
    best = min(asked, key=lambda c: (asked[c]["predicted_s"], c))
    assert prod.predicted["predicted_s"] == asked[best]["predicted_s"]
    assert prod.predicted["words"] == asked[best]["words"]
    (note,) = [x for x in prod.notes if x.startswith("15d_sparse: c by the model")]
    assert f"c={best} " in note and "<- chosen" in note and all(f"c={c} " in note for c in choices(P))


def test_15d_sparse_c_fits_the_memory_cap():
    """A c whose buffers exceed --memory-cap is not chosen when another fits: 15d_sparse prices its
    own variants by the rule choice uses for candidates (fastest that fits), and explain says
    which c went over."""
    P = 16
    asked = {c: _planned(P, "15d_sparse", replication=c)[1].predicted for c in (1, 2, 4)}
    fastest = min(asked, key=lambda c: (asked[c]["predicted_s"], c))
    others = [c for c in asked if c != fastest]
    cap = (asked[fastest]["memory_bytes"] + max(asked[c]["memory_bytes"] for c in others)) / 2
    fit = [c for c in others if asked[c]["memory_bytes"] <= cap]
    assert asked[fastest]["memory_bytes"] > cap and fit, "the sizes must separate the fastest c from another"
    want = min(fit, key=lambda c: (asked[c]["predicted_s"], c))
    _, prod, _ = _planned(P, "15d_sparse", memory_cap=cap)
    assert prod.predicted["predicted_s"] == asked[want]["predicted_s"]
    (note,) = [x for x in prod.notes if x.startswith("15d_sparse: c by the model")]
    assert f"c={fastest} " in note and "over the cap" in note
    assert f"c={want} {asked[want]['predicted_s'] * 1e3:.3f} ms <- chosen" in note
