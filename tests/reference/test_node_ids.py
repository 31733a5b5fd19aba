"""Data in and out as given, from Python: a weighted edge list read with its weights (SSSP against
scipy's Dijkstra), original node ids through a run (``Array.ids``), networkx graphs in and out,
whole-number floats into integer inputs."""
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

import dspla as dp
from dspla.errors import InputError
from dspla.formats.graph import load_graph

from conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
from sssp import sssp_function  # noqa: E402


def _random_weighted_list(tmp_path, n=60, m=400, seed=3):
    """A weighted edge list with sparse original ids, duplicates and both directions listed."""
    rng = np.random.default_rng(seed)
    names = np.sort(rng.choice(10**6, n, replace=False))
    src, dst = rng.integers(0, n, m), rng.integers(0, n - 8, m)   # 8 nodes no edge reaches
    w = np.round(rng.uniform(0.5, 10.0, m), 3)
    lines = [f"{names[a]}\t{names[b]}\t{x}" for a, b, x in zip(src, dst, w)]
    (tmp_path / "w.txt").write_text("# weighted\n" + "\n".join(lines) + "\n")
    # the oracle's matrix, from the lists by hand: the first weight of each (src, dst) kept
    first = {}
    for a, b, x in zip(src, dst, w):
        first.setdefault((a, b), x)
    used = np.unique(np.r_[src, dst])
    pos = {v: k for k, v in enumerate(used)}
    D = np.full((len(used), len(used)), np.inf)
    for (a, b), x in first.items():
        D[pos[a], pos[b]] = x
    return tmp_path / "w.txt", names[used], D


def test_weighted_sssp_matches_dijkstra_with_original_ids(tmp_path):
    path, ids, D = _random_weighted_list(tmp_path)
    g = load_graph(path, quiet=True)
    assert g.ids.tolist() == ids.tolist()
    f = sssp_function()
    source = int(ids[7])
    s = sp.csr_array(([1.0], ([int(g.index(source)[0])], [0])), shape=(g.shape[0], 1))
    out = f(A=g, s=s)
    d = out["d"]
    assert d.ids.tolist() == ids.tolist()           # row k of d is node ids[k]
    got = d.to_numpy(fill=np.inf)[:, 0]
    # scipy's dijkstra on the dense weights (np.inf: no edge; a self loop cannot shorten a path)
    want = dijkstra(np.where(np.isinf(D), 0, D), directed=True, indices=7)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isinf(want).any() and np.isfinite(want).sum() > 5   # reached and unreached nodes both


def test_ids_go_with_a_result_passed_on_and_must_agree(tmp_path):
    (tmp_path / "a.txt").write_text("5 10 1\n10 2000 2\n2000 77777 3\n")
    g = load_graph(tmp_path / "a.txt")
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    step = dp.function({"y": A @ x + x, "B": A @ A})
    out = step(A=g, x=np.ones((4, 1)))
    assert out["y"].ids.tolist() == [5, 10, 2000, 77777] and out["y"].col_ids is None
    assert out["B"].ids.tolist() == out["B"].col_ids.tolist() == [5, 10, 2000, 77777]
    y2 = step(A=g, x=out["y"])["y"]                  # an Array passed on keeps them
    assert y2.ids.tolist() == [5, 10, 2000, 77777]
    assert step(A=g.matrix, x=np.ones((4, 1)))["y"].ids is None   # a scipy matrix: positions
    (tmp_path / "b.txt").write_text("1 2\n2 3\n3 4\n4 1\n")
    with pytest.raises(InputError, match="number the nodes of 'n' differently"):
        dp.function({"C": A @ dp.sparse("B", ("n", "n"))})(A=g, B=load_graph(tmp_path / "b.txt"))


def test_networkx_round_trip():
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_weighted_edges_from([("a", "b", 2.0), ("b", "c", 3.5), ("c", "a", 1.0), ("a", "a", 0.5)])
    G.add_node("lonely")
    A = dp.sparse("A", ("n", "n"))
    f = dp.function({"B": A * 2.0, "P": dp.mxm(A, A, "min_plus")})
    out = f(A=G)
    H = out["B"].to_networkx()
    assert isinstance(H, nx.DiGraph) and list(H.nodes) == list(G.nodes)
    assert {(u, v): d["weight"] for u, v, d in H.edges(data=True)} == \
        {(u, v): 2 * d["weight"] for u, v, d in G.edges(data=True)}
    # two-hop shortest lengths, by hand: a->a->a 1.0, a->a->b 2.5, a->b->c 5.5, b->c->a 4.5,
    # c->a->a 1.5, c->a->b 3.0
    P = out["P"].to_networkx()
    assert {(u, v): d["weight"] for u, v, d in P.edges(data=True)} == \
        {("a", "a"): 1.0, ("a", "b"): 2.5, ("a", "c"): 5.5, ("b", "a"): 4.5, ("c", "a"): 1.5, ("c", "b"): 3.0}
    U = nx.Graph([(1, 2, {"weight": 4.0}), (2, 3, {"weight": 5.0})])
    back = f(A=U)["B"].to_networkx(directed=False)
    assert isinstance(back, nx.Graph) and not back.is_directed()
    assert sorted((min(u, v), max(u, v), d["weight"]) for u, v, d in back.edges(data=True)) == \
        [(1, 2, 8.0), (2, 3, 10.0)]
    with pytest.raises(Exception, match="not symmetric"):
        out["B"].to_networkx(directed=False)
    with pytest.raises(Exception, match="square"):
        dp.function({"r": dp.reduce_rows(A)})(A=G)["r"].to_networkx()


def test_whole_floats_feed_an_integer_input():
    A = dp.sparse("A", ("n", "n"), dtype="int64")
    f = dp.function({"C": dp.mxm(A, A, "plus_times")})
    a = sp.csr_array(np.array([[0, 2.0], [3.0, 1.0]]))
    c = f(A=a)["C"]
    assert c.dtype == np.int64 and c.to_numpy(fill=0).tolist() == [[6, 2], [3, 7]]
    with pytest.raises(InputError, match=r"'A' is declared int64 but its entry \(1, 0\) is 3.25, not a whole"):
        f(A=sp.csr_array(np.array([[0, 2.0], [3.25, 1.0]])))
