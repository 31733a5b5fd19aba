"""Disk cache, stochastic hypergraph (SHP), edge partitioning and the bottleneck refinement."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from test_partition_methods import part_weights_loop, powerlaw_graph

from dspla.partition import (
    UniformNodeSampler,
    contracted_split_graph,
    edge_hypergraph,
    edge_partition,
    nets_needed,
    partition,
    split_graph,
    undirected_edges,
)
from dspla.partition.refine import SendState, refine_bottleneck

# ---------------------------------------------------------------------------------------- cache

def test_cache_hit_bypass_and_location(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path / "c"))
    A = powerlaw_graph(200)
    r1 = partition(A, 4, "graph", seed=3)
    assert not r1.cached and len(list((tmp_path / "c").glob("*.npz"))) == 1
    r2 = partition(A, 4, "graph", seed=3)
    assert r2.cached and np.array_equal(r1.parts, r2.parts) and r2.seconds == pytest.approx(r1.seconds)
    assert not partition(A, 4, "graph", seed=3, cache=False).cached  # bypass
    assert not partition(A, 4, "graph", seed=4).cached  # another seed is another entry
    assert not partition(A, 4, "graph", seed=3, eps=0.05).cached
    B = A.copy().tolil()
    B[0, 1] = 1 - B[0, 1]  # one entry changed: another matrix
    assert not partition(B.tocsr(), 4, "graph", seed=3).cached
    assert len(list((tmp_path / "c").glob("*.npz"))) == 4  # cache=False stored nothing


def test_damaged_cache_entry_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path))
    A = powerlaw_graph(120)
    r1 = partition(A, 3, "graph")
    for f in tmp_path.glob("*.npz"):
        f.write_bytes(b"not a zip")
    r2 = partition(A, 3, "graph")
    assert not r2.cached and np.array_equal(r1.parts, r2.parts)


def test_xdg_cache_home(tmp_path, monkeypatch):
    from dspla.partition.cache import cache_dir

    monkeypatch.delenv("DSPLA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "dspla" / "partitions"


# ------------------------------------------------------------------------------------------ SHP

def test_nets_needed_is_eq_14():
    # (P - 1)^2 ln(2 / delta) / (2 error^2), rounded up: P = 3, error 1, delta 0.05 -> 4 ln 40 / 2 = 7.38
    assert nets_needed(3, 1.0, 0.05) == 8
    assert nets_needed(65, 2.0, 0.1) == math.ceil(64 ** 2 * math.log(20) / 8)


def test_uniform_sampler_keeps_batch_rows_only():
    A = powerlaw_graph(200, seed=2)
    S = UniformNodeSampler(batch_size=10, hops=1)(A, np.random.default_rng(0))
    rows = np.flatnonzero(np.diff(S.indptr))
    assert S.shape == A.shape and rows.size <= 10
    assert all((S[i] != A[i]).nnz == 0 for i in rows)  # a batch row keeps all its nonzeros
    S2 = UniformNodeSampler(batch_size=10, hops=2)(A, np.random.default_rng(0))
    assert set(rows) <= set(np.flatnonzero(np.diff(S2.indptr)))


def test_shp_balanced_deterministic_and_pluggable_sampler():
    A = powerlaw_graph(300, seed=4)
    calls = []

    class Sampler:
        def __call__(self, A, rng):
            calls.append(1)
            return UniformNodeSampler(30, 1)(A, rng)

        def __repr__(self):
            return "Sampler()"

    r = partition(A, 4, "stochastic-hypergraph", seed=1, cache=False, sampler=Sampler(), preset="default")
    assert calls and r.info["batches"] == len(calls)
    assert r.info["nets"] >= r.info["nets_required"] or r.info["batches"] == 1000
    r2 = partition(A, 4, "stochastic-hypergraph", seed=1, cache=False, sampler=Sampler(), preset="default")
    assert np.array_equal(r.parts, r2.parts) and r.imbalance <= 0.03 + 1e-9


# ------------------------------------------------------------------------------- edge partitioning

def vertex_cut_loop(edges, parts):
    touched = {}
    for (u, v), p in zip(edges.tolist(), parts.tolist()):
        touched.setdefault(u, set()).add(p)
        touched.setdefault(v, set()).add(p)
    return sum(len(s) - 1 for s in touched.values())


def small_graph():
    return powerlaw_graph(120, seed=7, directed=False)


def test_undirected_edges():
    A = sp.csr_matrix(np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]]))
    assert undirected_edges(A).tolist() == [[0, 1], [0, 2], [1, 2]]  # self loop dropped, both directions merged


def test_split_graph_structure():
    A = small_graph()
    edges = undirected_edges(A)
    sg = split_graph(A)
    deg = np.bincount(edges.ravel(), minlength=A.shape[0])
    assert sg.num_nodes == 2 * len(edges)
    assert np.array_equal(np.bincount(sg.owner, minlength=A.shape[0]), deg)  # d(v) split nodes for v
    # every split node is in exactly one dominant edge, which joins split nodes of the edge's ends
    assert np.array_equal(np.sort(sg.dominant.ravel()), np.arange(sg.num_nodes))
    ends = np.sort(sg.owner[sg.dominant], axis=1)
    assert np.array_equal(ends, edges)
    # auxiliary edges stay inside one vertex's split set and form a cycle (an edge when d = 2)
    assert np.all(sg.owner[sg.auxiliary[:, 0]] == sg.owner[sg.auxiliary[:, 1]])
    aux = np.bincount(sg.owner[sg.auxiliary[:, 0]], minlength=A.shape[0])
    want = np.where(deg >= 3, deg, np.where(deg == 2, 1, 0))
    assert np.array_equal(aux, want)
    W = contracted_split_graph(sg)
    assert W.shape == (len(edges), len(edges)) and (W != W.T).nnz == 0 and W.diagonal().sum() == 0


@pytest.mark.parametrize("method,params", [("spac", {}), ("hypergraph", {"preset": "default"})])
def test_edge_partition_vertex_cut_and_balance(method, params):
    A = small_graph()
    r = edge_partition(A, 4, method, seed=1, cache=False, **params)
    assert r.parts.shape == (r.edges.shape[0],) and r.parts.max() < 4
    assert r.vertex_cut == vertex_cut_loop(r.edges, r.parts)
    counts = part_weights_loop(r.parts, np.ones(r.parts.size, dtype=int), 4)
    assert max(counts) <= 1.03 * r.parts.size / 4 + 1e-9
    rng = np.random.default_rng(0)
    random_cut = vertex_cut_loop(r.edges, rng.integers(0, 4, r.parts.size))
    assert r.vertex_cut < random_cut
    again = edge_partition(A, 4, method, seed=1, cache=False, **params)
    assert np.array_equal(r.parts, again.parts)


def test_edge_hypergraph_km1_is_vertex_cut():
    A = small_graph()
    edges = undirected_edges(A)
    hg = edge_hypergraph(edges, A.shape[0])
    parts = np.random.default_rng(3).integers(0, 5, edges.shape[0])
    assert hg.km1(parts) == vertex_cut_loop(edges, parts)


# ----------------------------------------------------------------------------------- refinement

def sends_loop(A, parts, P):
    """Rows of B sent per process and messages per process, by sets."""
    C = sp.csc_matrix(A)
    vol, peers = [0] * P, [set() for _ in range(P)]
    for j in range(A.shape[1]):
        need = set(parts[C.indices[C.indptr[j]:C.indptr[j + 1]]].tolist()) - {parts[j]}
        vol[parts[j]] += len(need)
        peers[parts[j]] |= need
    return vol, [len(s) for s in peers]


def test_refinement_lowers_the_bottleneck_within_bounds():
    A = powerlaw_graph(500, seed=9)
    P = 6
    w = np.diff(A.indptr)
    start = partition(A, P, "hypergraph", seed=0, cache=False, preset="default", refine=False).parts
    bound = 1.03 * w.sum() / P
    st = SendState(A, start, w, P)
    vol0, msg0 = sends_loop(A, start, P)
    assert st.S.tolist() == vol0 and st.M.tolist() == msg0
    new, info = refine_bottleneck(A, start, w, P, bound, km1_budget=0.05)
    vol1, msg1 = sends_loop(A, new, P)
    assert max(vol1) <= max(vol0) and max(msg1) <= max(msg0)
    assert sum(vol1) <= sum(vol0) + 0.05 * sum(vol0)
    W0, W1 = part_weights_loop(start, w, P), part_weights_loop(new, w, P)
    assert all(b <= max(bound, a) for a, b in zip(W0, W1))  # no part rises above the bound
    assert info["max_send_after"] == max(vol1) and info["volume_after"] == sum(vol1)


def test_refinement_state_stays_exact_through_moves_and_undos():
    """The refinement keeps lambda, V, S and M incrementally, caches what a row's moves share per
    state, and undoes tentative moves by their inverse. After every move, undo and re-move (the
    order a step takes: try, undo, apply another) the state equals one built afresh from the
    parts, and S and M equal a loop over columns."""
    A = powerlaw_graph(300, seed=4)
    P = 5
    w = np.diff(A.indptr)
    rng = np.random.default_rng(7)
    st = SendState(A, rng.integers(0, P, A.shape[0]), w, P)
    for _ in range(60):
        v, q = int(rng.integers(A.shape[0])), int(rng.integers(P))
        if q == st.parts[v]:
            continue
        p = int(st.parts[v])
        d = st.delta(v, q)
        st.apply(v, q, d)
        u = int(rng.integers(A.shape[0]))        # a partner's row, read in the tentative state
        if st.parts[u] != p:
            st.delta(u, p)
        st.undo(v, p, d)
        if rng.random() < 0.5:                   # the real move, sometimes another row's
            v, q = u, int((st.parts[u] + 1) % P)
        st.apply(v, q)
        fresh = SendState(A, st.parts, w, P)
        assert (st.lam == fresh.lam).all() and (st.V == fresh.V).all()
        assert (st.S == fresh.S).all() and (st.M == fresh.M).all() and (st.W == fresh.W).all()
    vol, msgs = sends_loop(A, st.parts, P)
    assert st.S.tolist() == vol and st.M.tolist() == msgs


def test_no_cache_reaches_the_edge_partition_under_a_vertex_owner_method(tmp_path, monkeypatch):
    """--no-cache on a plan cut by an edge partition (spac: rows to the part holding most of their
    edges; vertexcut multiplies on the edges) stores nothing, neither the rows nor the edges the
    rows came from; with the cache on, both are kept and served the second time."""
    import dspla as dp
    from dspla.plan.options import Options
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path / "c"))
    A = powerlaw_graph(200)
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    X = np.random.default_rng(0).random((200, 3))
    plan = f.plan(3, {"A": A, "X": X}, Options(plan="vertexcut", partition="spac", seed=1, cache=False)).plan
    assert plan.products[0].plan == "vertexcut" and not list((tmp_path / "c").glob("*.npz"))
    f.plan(3, {"A": A, "X": X}, Options(plan="vertexcut", partition="spac", seed=1))
    assert len(list((tmp_path / "c").glob("*.npz"))) == 2   # the row partition and its edge partition
