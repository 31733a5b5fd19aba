"""The graph algorithms of examples/, each a .dspla file and a Python script, against independent
oracles (scipy.sparse.csgraph, networkx) on generated graphs with isolated nodes, self-loops and
several components, and on real graphs; on P = 1..4 (simulated) processes with the same
iterations and results; the real-mpiexec tier runs the files and the scripts as users would."""
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, dijkstra, shortest_path

import dspla as dp
from dspla.frontend.parser import parse_file

from conftest import dataset
from harness import run_dist

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from bfs import bfs_function, bfs_levels  # noqa: E402
from cc import cc_function, components  # noqa: E402
from pagerank import pagerank, pagerank_function  # noqa: E402
from sssp import sssp, sssp_function  # noqa: E402
from triangles import triangles, triangles_function  # noqa: E402

BIN = Path(sys.executable).parent


def awkward(n=160, seed=0, weights=False):
    """A directed graph with isolated nodes, self-loops, dangling nodes and several components."""
    rng = np.random.default_rng(seed)
    blocks = []
    for size in (70, 50, 25):                          # three groups, no edges between them
        b = sp.random_array((size, size), density=4.0 / size, random_state=rng, format="csr")
        blocks.append(b)
    A = sp.block_diag(blocks + [sp.csr_array((n - 145, n - 145))], format="lil")   # 15 isolated nodes
    for i in (10, 60, 100):
        A[i, :] = 0                                    # dangling: in-edges only
    for i in (3, 80, 130):
        A[i, i] = 1.0                                  # self-loops
    A = sp.csr_array(A)
    A.data[:] = rng.uniform(1, 9, A.nnz) if weights else 1.0
    assert (A.sum(axis=1) == 0).sum() > 15            # dangling nodes beyond the isolated ones
    return A


def _networkx_pagerank(A):
    G = nx.from_scipy_sparse_array(A, create_using=nx.DiGraph)
    pr = nx.pagerank(G, alpha=0.85, tol=1e-14, max_iter=1000)
    return np.array([pr[i] for i in range(A.shape[0])])


def _undirected_triangles(A):
    G = nx.from_scipy_sparse_array(sp.csr_array(A + A.T), create_using=nx.Graph)
    G.remove_edges_from(nx.selfloop_edges(G))
    return sum(nx.triangles(G).values()) // 3


def _same_partition(labels, want):
    """Equal labels exactly where the oracle's are equal; each label the least node of its set."""
    _, a = np.unique(labels, return_inverse=True)
    _, b = np.unique(want, return_inverse=True)
    pairs = np.unique(np.stack([a, b]), axis=1)
    assert pairs.shape[1] == a.max() + 1 == b.max() + 1
    for lab in np.unique(labels):
        assert lab == np.flatnonzero(labels == lab).min()


# ------------------------------------------------------------------------------ one process
def test_pagerank_matches_networkx():
    A = awkward(seed=1)
    r, its = pagerank(A, tol=1e-13)
    assert its < 200
    np.testing.assert_allclose(r, _networkx_pagerank(A), rtol=1e-8, atol=1e-12)


def test_bfs_levels_match_unweighted_shortest_paths():
    A = awkward(seed=2)
    for src in (0, 75, 150):                                # in a group, another group, an isolated node
        got = bfs_levels(A, src).astype(float)
        got[got < 0] = np.inf
        np.testing.assert_array_equal(got, shortest_path(A, unweighted=True, indices=src))


def test_sssp_matches_dijkstra():
    A = awkward(seed=3, weights=True)
    for src in (0, 7, 150):
        dist, _ = sssp(A, src)
        np.testing.assert_allclose(dist, dijkstra(A, indices=src), rtol=1e-12)


def test_components_match_csgraph():
    A = awkward(seed=4)
    labels, k = components(A)
    want_k, want = connected_components(A, directed=True, connection="weak")
    assert k == want_k > 15
    _same_partition(labels, want)


def test_components_jump_along_a_long_path():
    # label propagation alone needs a round per node a label travels (255 here); with pointer
    # jumping along a path numbered in order, a label's reach doubles each round
    n = 256
    for order in (np.arange(n), np.arange(n)[::-1]):
        A = sp.csr_array((np.ones(n - 1), (order[:-1], order[1:])), shape=(n, n))
        out = cc_function()(A=A)
        assert (out["labels"].to_numpy()[:, 0] == 0).all()
        assert out["iterations"].to_numpy()[0, 0] <= 2 * int(np.log2(n)) + 2


@pytest.mark.parametrize("P", [1, 2, 4])
def test_fastsv_components_match_csgraph(P):
    """FastSV (stochastic and aggressive hooking, shortcutting) gives lp's labels, the least node
    of each component, on every P; one way or both, with isolated nodes."""
    A = awkward(seed=4)
    _, want = connected_components(A, directed=True, connection="weak")
    f = cc_function(method="fastsv")
    got = f(A=A)["labels"] if P == 1 else run_dist(f, {"A": A}, P)[0]["labels"]
    labels = got.to_numpy()[:, 0]
    _same_partition(labels, want)
    least = np.array([np.flatnonzero(want == want[i]).min() for i in range(A.shape[0])])
    np.testing.assert_array_equal(labels, least)


def test_fastsv_takes_logarithmic_rounds_on_a_long_path():
    # a path in random order: pointer jumping alone needs about a round per node a label
    # travels there; FastSV's hooking merges whole trees
    n = 1024
    order = np.random.default_rng(3).permutation(n)
    A = sp.csr_array((np.ones(n - 1), (order[:-1], order[1:])), shape=(n, n))
    out = cc_function(method="fastsv")(A=A)
    assert (out["labels"].to_numpy()[:, 0] == 0).all()
    rounds = out["iterations"].to_numpy()[0, 0]
    assert rounds <= 2 * int(np.log2(n)) + 2 < cc_function()(A=A)["iterations"].to_numpy()[0, 0]
    with pytest.raises(ValueError, match="one of lp, fastsv"):
        cc_function(method="sv")


def test_triangles_match_networkx():
    A = awkward(seed=5)
    assert triangles(A) == _undirected_triangles(A) > 0


def test_undirected_graphs_read_as_they_are():
    """cc and triangles told that A holds each edge both ways read it without symmetrising, to
    the oracles' results; given a one-way graph they see its edges one way (the promise matters)."""
    A = awkward(seed=6)
    S = sp.csr_array(A + A.T)
    S.data[:] = 1.0
    labels, k = components(S, f=cc_function(undirected=True))
    want_k, want = connected_components(S, directed=False)
    assert k == want_k > 15
    _same_partition(labels, want)
    assert triangles(S, f=triangles_function(undirected=True)) == _undirected_triangles(S) > 0
    U = sp.csr_array(sp.triu(S, 1))                     # each edge once: above the diagonal only
    assert triangles(U, f=triangles_function(undirected=True)) == 0 < triangles(U)


def test_a_graph_without_triangles_counts_zero():
    # a path: networkx finds no triangle; the sum of no entries is made a present 0 (file and script)
    n = 10
    A = sp.csr_array((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    assert _undirected_triangles(A) == 0
    assert triangles(A) == 0
    got = dp.Function(parse_file(ROOT / "examples" / "triangles.dspla"))(A=A)["triangles"]
    assert got.nvals == 1 and got.to_numpy()[0, 0] == 0


# ------------------------------------------------------------------ the files mean the same
@pytest.mark.parametrize("name,inputs,out", [
    ("pagerank", lambda A: {"A": A, "r0": np.ones((A.shape[0], 1))}, "r"),
    ("bfs", lambda A: {"A": A, "s": sp.csr_array(([True], ([0], [0])), shape=(A.shape[0], 1))}, "levels"),
    ("sssp", lambda A: {"A": A, "s": sp.csr_array(([1.0], ([0], [0])), shape=(A.shape[0], 1))}, "d"),
    ("cc", lambda A: {"A": A}, "labels"),
    ("triangles", lambda A: {"A": A}, "triangles"),
])
def test_file_and_script_agree(name, inputs, out):
    A = awkward(seed=6, weights=name == "sssp")
    fn = {"pagerank": pagerank_function, "bfs": bfs_function, "sssp": sssp_function, "cc": cc_function,
          "triangles": triangles_function}[name]()
    from_file = dp.Function(parse_file(ROOT / "examples" / f"{name}.dspla"))(**inputs(A))[out]
    from_script = fn(**inputs(A))[out]
    np.testing.assert_allclose(from_file.to_numpy(fill=-1), from_script.to_numpy(fill=-1), rtol=1e-13)


# --------------------------------------------------------------------- P processes, same result
CASES = {
    "pagerank": (pagerank_function, lambda A: {"A": A, "r0": np.ones((A.shape[0], 1))}, False),
    "bfs": (bfs_function, lambda A: {"A": A, "s": sp.csr_array(([True], ([0], [0])), shape=(A.shape[0], 1))},
            False),
    "sssp": (sssp_function, lambda A: {"A": A, "s": sp.csr_array(([1.0], ([0], [0])), shape=(A.shape[0], 1))},
             True),
    "cc": (cc_function, lambda A: {"A": A}, False),
    "triangles": (triangles_function, lambda A: {"A": A}, False),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("plan", ["p2p1d", "auto"])
def test_every_P_runs_the_same_iterations_to_the_same_result(name, plan):
    make, inputs, weights = CASES[name]
    A = awkward(seed=7, weights=weights)
    f = make()
    one = f(**inputs(A))
    for P in (2, 3, 4):
        got, stats = run_dist(f, inputs(A), P, plan=plan, partition="random", seed=P)
        for k in one:
            a, b = one[k].to_numpy(fill=-1), got[k].to_numpy(fill=-1)
            if name == "pagerank" and k == "r":   # sums in another order: equal to rounding
                np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-16)
            elif name != "pagerank":
                np.testing.assert_array_equal(b, a, err_msg=f"{name} {k} P={P}")
        if "iterations" in one:
            assert got["iterations"].to_numpy()[0, 0] == one["iterations"].to_numpy()[0, 0]
            assert stats["loops"][0]["iterations"] == one["iterations"].to_numpy()[0, 0]


def test_bfs_moves_the_frontier_as_its_entries():
    """Per level, the words moved track the frontier, not n: summed over the levels they stay
    below what dense frontiers would move."""
    A = awkward(seed=8)
    f = bfs_function()
    s = sp.csr_array(([True], ([0], [0])), shape=(A.shape[0], 1))
    _, stats = run_dist(f, {"A": A, "s": s}, 3, plan="p2p1d", partition="random")
    (prod,) = stats["products"]
    its = prod["iterations"]
    dense = prod["predicted"]["words"] * its          # every row of the frontier, every level
    assert 0 < prod["words_sent_total"] < dense / 2


# ------------------------------------------------------------------------------- real graphs
def _real(name):
    from dspla.formats.graph import load_graph
    return sp.csr_array(load_graph(str(dataset(*name.split("/"))), quiet=True).matrix, dtype=np.float64)


@pytest.mark.data
def test_on_ca_hepph():
    A = _real("snap/ca-HepPh.txt")
    A.data[:] = 1.0
    np.testing.assert_allclose(pagerank(A, tol=1e-13)[0], _networkx_pagerank(A), rtol=1e-7, atol=1e-12)
    got = bfs_levels(A, 5).astype(float)
    got[got < 0] = np.inf
    np.testing.assert_array_equal(got, shortest_path(A, unweighted=True, indices=5))
    labels, k = components(A)
    want_k, want = connected_components(A, directed=True, connection="weak")
    assert k == want_k
    _same_partition(labels, want)
    assert triangles(A) == _undirected_triangles(A)


@pytest.mark.data
def test_sssp_on_luxembourg_roads():
    A = _real("suitesparse/luxembourg_osm.mtx")
    A = sp.csr_array(A + A.T)
    A.data[:] = 1.0 + (A.indices % 5)                  # road lengths
    dist, its = sssp(A, 0)
    np.testing.assert_allclose(dist, dijkstra(A, indices=0), rtol=1e-12)


# --------------------------------------------------------------------------- real processes
def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"}, **kw)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(CASES))
def test_scripts_under_mpiexec_print_what_one_process_prints(name):
    one = _run([sys.executable, str(ROOT / "examples" / f"{name}.py"), "--scale", "10"])
    for P in (2, 4):
        assert _run([str(BIN / "mpiexec"), "-n", str(P), sys.executable, str(ROOT / "examples" / f"{name}.py"),
                     "--scale", "10"]) == one


@pytest.mark.mpi
@pytest.mark.parametrize("name,extra", [("pagerank", ["-i", "r0=full:1"]), ("bfs", ["-i", "s=unit:0"]),
                                        ("sssp", ["-i", "s=unit:0"]), ("cc", []), ("triangles", [])])
def test_files_under_dspla_run_np(name, extra, tmp_path):
    import scipy.io
    A = awkward(seed=9, weights=name == "sssp")
    scipy.io.mmwrite(tmp_path / "g.mtx", sp.coo_array(A))
    outs = []
    for P in (1, 2, 3, 4):
        _run([str(BIN / "dspla"), "run", str(ROOT / "examples" / f"{name}.dspla"), "-i", f"A={tmp_path / 'g.mtx'}",
              *extra, "--np", str(P), "--partition", "random", "--out", str(tmp_path / f"o{P}.npz")])
        outs.append(np.load(tmp_path / f"o{P}.npz"))
    for o in outs[1:]:
        for k in o.files:
            if name == "pagerank":
                np.testing.assert_allclose(o[k], outs[0][k], rtol=1e-12, atol=1e-14)
            else:
                np.testing.assert_array_equal(o[k], outs[0][k])
