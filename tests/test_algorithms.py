"""LAGraph's algorithms in examples/ (betweenness, k-truss, local clustering, core numbers,
maximal independent set, Sandia LL triangles), each a .dspla file and a Python script, against
networkx on awkward generated graphs (isolated nodes, self-loops, several components, ties) and on
real ones; the same results on P = 1..4 (simulated) processes; the real-mpiexec tier runs the
files and the scripts as users would."""
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.frontend.parser import parse_file

from conftest import dataset
from harness import run_dist

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from betweenness import betweenness, betweenness_function  # noqa: E402
from kcore import core_numbers, kcore_function  # noqa: E402
from ktruss import ktruss, ktruss_function  # noqa: E402
from lcc import lcc, lcc_function  # noqa: E402
from mis import independent_set, mis_function  # noqa: E402
from triangles_ll import triangles_ll, triangles_ll_function  # noqa: E402

BIN = Path(sys.executable).parent


def awkward(seed=0, n=120):
    """A directed graph: three groups without edges between them (one a clique with a pendant
    path, so cores, trusses and shortest paths tie), 12 isolated nodes, self-loops."""
    rng = np.random.default_rng(seed)
    blocks = [sp.random_array((s, s), density=5.0 / s, random_state=rng, format="csr") for s in (50, 40)]
    clique = np.ones((8, 8)) - np.eye(8)
    clique = np.pad(clique, ((0, 10), (0, 10)))
    for i in range(7, 17):                   # a path hanging off the clique
        clique[i, i + 1] = 1
    blocks.append(sp.csr_array(clique))
    A = sp.block_diag(blocks + [sp.csr_array((n - 108, n - 108))], format="lil")
    for i in (3, 60, 95):
        A[i, i] = 1.0                        # self-loops
    A = sp.csr_array(A)
    A.data[:] = 1.0
    return A


def undirected(A) -> nx.Graph:
    G = nx.from_scipy_sparse_array(sp.csr_array(A + A.T), create_using=nx.Graph)
    G.remove_edges_from(nx.selfloop_edges(G))
    return G


def as_array(d: dict, n: int) -> np.ndarray:
    return np.array([d[i] for i in range(n)])


def check_ktruss(T, G, k):
    H = nx.k_truss(G, k)
    C = sp.coo_array(T)
    assert set(zip(C.row.tolist(), C.col.tolist())) == {e for i, j in H.edges() for e in ((i, j), (j, i))}, k
    T = sp.csr_array(T)
    for i, j in H.edges():
        want = len(set(H[i]) & set(H[j]))
        assert T[i, j] == T[j, i] == want, (k, i, j)


def check_mis(iset, G):
    n = iset.size
    S = nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr")
    rows, cols = S.nonzero()
    assert not (iset[rows] & iset[cols]).any(), "two neighbours in the set"
    covered = iset | (S @ iset.astype(int) > 0)
    assert covered.all(), f"not maximal: {np.flatnonzero(~covered)[:5]} could join"


# ------------------------------------------------------------------------------ one process
def test_betweenness_matches_networkx():
    A = awkward(1)
    n = A.shape[0]
    Gd = nx.from_scipy_sparse_array(A, create_using=nx.DiGraph)
    Gd.remove_edges_from(nx.selfloop_edges(Gd))
    want = as_array(nx.betweenness_centrality(Gd, normalized=False), n)
    np.testing.assert_allclose(betweenness(A, np.arange(n)), want, rtol=1e-12, atol=1e-9)
    # undirected: each pair from both ends, twice networkx's
    S = sp.csr_array(A + A.T)
    G = undirected(A)
    got = betweenness(S, np.arange(n))
    np.testing.assert_allclose(got / 2, as_array(nx.betweenness_centrality(G, normalized=False), n), atol=1e-9)
    # a subset, one source twice, one isolated: betweenness_centrality_subset's accumulation
    src = [0, 5, 5, 55, 100, 115]
    want = nx.betweenness_centrality_subset(G, src, list(G), normalized=False)
    np.testing.assert_allclose(betweenness(S, src) / 2, as_array(want, n), atol=1e-9)
    assert got[108:].max() == 0.0 and (got >= 0).all()


@pytest.mark.parametrize("k", [2, 3, 4, 5, 9])
def test_ktruss_matches_networkx(k):
    A = awkward(2)
    T, _ = ktruss(A, k)
    check_ktruss(T, undirected(A), k)


def test_lcc_matches_networkx():
    A = awkward(3)
    np.testing.assert_allclose(lcc(A), as_array(nx.clustering(undirected(A)), A.shape[0]), rtol=1e-13)


def test_core_numbers_match_networkx():
    A = awkward(4)
    got = core_numbers(A)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, as_array(nx.core_number(undirected(A)), A.shape[0]))


@pytest.mark.parametrize("seed", [0, 7])
def test_mis_is_independent_and_maximal(seed):
    A = awkward(5)
    iset = independent_set(A, seed)
    assert iset.dtype == bool
    check_mis(iset, undirected(A))
    assert iset[108:].all()   # isolated nodes are in the set


def test_mis_seed_changes_the_draw_not_the_properties():
    A = sp.csr_array(nx.to_scipy_sparse_array(nx.cycle_graph(40)), dtype=np.float64)
    sets = [independent_set(A, s) for s in range(4)]
    for s in sets:
        check_mis(s, nx.cycle_graph(40))
    assert len({s.tobytes() for s in sets}) > 1


def test_triangles_ll_matches_networkx():
    A = awkward(6)
    G = undirected(A)
    assert triangles_ll(A) == sum(nx.triangles(G).values()) // 3 > 0
    path = sp.csr_array((np.ones(9), (np.arange(9), np.arange(1, 10))), shape=(10, 10))
    assert triangles_ll(path) == 0           # the sum of no entries made a present 0


def test_an_empty_graph():
    A = sp.csr_array((6, 6))
    assert (lcc(A) == 0).all() and (core_numbers(A) == 0).all() and independent_set(A).all()
    assert ktruss(A, 3)[0].nnz == 0 and triangles_ll(A) == 0
    assert (betweenness(A, [0, 2]) == 0).all()


# ------------------------------------------------------------------ the files mean the same
INPUTS = {
    "betweenness": (betweenness_function, lambda A: {"A": A, "sources": np.array([0, 3, 3, 50, 90, 110])},
                    "centrality"),
    "ktruss": (ktruss_function, lambda A: {"A": A, "k": 4}, "T"),
    "lcc": (lcc_function, lambda A: {"A": A}, "lcc"),
    "kcore": (kcore_function, lambda A: {"A": A}, "core"),
    "mis": (mis_function, lambda A: {"A": A, "seed": 3}, "iset"),
    "triangles_ll": (triangles_ll_function, lambda A: {"A": A}, "triangles"),
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_file_and_script_agree(name):
    make, inputs, out = INPUTS[name]
    A = awkward(7)
    from_file = dp.Function(parse_file(ROOT / "examples" / f"{name}.dspla"))(**inputs(A))[out]
    from_script = make()(**inputs(A))[out]
    assert from_file.shape == from_script.shape and from_file.dtype == from_script.dtype
    np.testing.assert_allclose(from_file.to_numpy(fill=-1), from_script.to_numpy(fill=-1), rtol=1e-13)


def test_the_file_results_match_networkx():
    """The files on their own (as `dspla run` runs them), against networkx."""
    A = awkward(8)
    n = A.shape[0]
    G = undirected(A)
    run = {name: dp.Function(parse_file(ROOT / "examples" / f"{name}.dspla")) for name in INPUTS}
    S = sp.csr_array(A + A.T)
    c = run["betweenness"](A=S, sources=np.arange(n))["centrality"].to_numpy()
    np.testing.assert_allclose(c / 2, as_array(nx.betweenness_centrality(G, normalized=False), n), atol=1e-9)
    check_ktruss(run["ktruss"](A=A, k=3)["T"].to_scipy(), G, 3)
    np.testing.assert_allclose(run["lcc"](A=A)["lcc"].to_numpy(), as_array(nx.clustering(G), n), rtol=1e-13)
    np.testing.assert_array_equal(run["kcore"](A=A)["core"].to_numpy(), as_array(nx.core_number(G), n))
    check_mis(run["mis"](A=A, seed=2)["iset"].to_numpy(fill=False), G)
    assert int(run["triangles_ll"](A=A)["triangles"]) == sum(nx.triangles(G).values()) // 3


# --------------------------------------------------------------------- P processes, same result
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_every_P_gives_the_same_result(name):
    make, inputs, _ = INPUTS[name]
    A = awkward(9)
    f = make()
    one = f(**inputs(A))
    for P in (2, 3, 4):
        got, _ = run_dist(f, inputs(A), P, partition="random", seed=P)
        for k in one:
            a, b = np.ravel(one[k].to_numpy(fill=-1)), np.ravel(got[k].to_numpy(fill=-1))   # (gathered: n x 1)
            if name == "betweenness":    # sums in another order: equal to rounding
                np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, err_msg=f"{name} {k} P={P}")
            else:
                np.testing.assert_array_equal(b, a, err_msg=f"{name} {k} P={P}")


# ------------------------------------------------------------------------------- real graphs
def _real(*path):
    from dspla.formats.graph import load_graph
    A = sp.csr_array(load_graph(str(dataset(*path)), quiet=True).matrix, dtype=np.float64)
    A.data[:] = 1.0
    return A


@pytest.mark.data
def test_on_bcsstk13():
    """A structural matrix (2,003 nodes, 42,943 entries): dense blocks, so many triangles, deep
    trusses and cores that peel in rounds."""
    A = _real("suitesparse", "bcsstk13.mtx")
    n = A.shape[0]
    G = undirected(A)
    np.testing.assert_allclose(lcc(A), as_array(nx.clustering(G), n), rtol=1e-12)
    np.testing.assert_array_equal(core_numbers(A), as_array(nx.core_number(G), n))
    check_ktruss(ktruss(A, 12)[0], G, 12)
    check_mis(independent_set(A, 1), G)
    assert triangles_ll(A) == sum(nx.triangles(G).values()) // 3
    src = list(range(0, n, n // 8))
    want = nx.betweenness_centrality_subset(G, src, list(G), normalized=False)
    np.testing.assert_allclose(betweenness(sp.csr_array(A + A.T), src) / 2, as_array(want, n), rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------- real processes
def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_scripts_under_mpiexec_print_what_one_process_prints(name):
    script = [sys.executable, str(ROOT / "examples" / f"{name}.py"), "--scale", "8"]
    assert _run([str(BIN / "mpiexec"), "-n", "3", *script]) == _run(script)


@pytest.mark.mpi
@pytest.mark.parametrize("name,extra", [("betweenness", ["-i", "sources=SRC"]), ("ktruss", ["-i", "k=4"]),
                                        ("lcc", []), ("kcore", []), ("mis", ["-i", "seed=3"]), ("triangles_ll", [])])
def test_files_under_dspla_run_np(name, extra, tmp_path):
    import scipy.io
    A = awkward(10)
    scipy.io.mmwrite(tmp_path / "g.mtx", sp.coo_array(A))
    np.save(tmp_path / "src.npy", np.array([0, 3, 50, 90]))
    extra = [e.replace("SRC", str(tmp_path / "src.npy")) for e in extra]
    outs = []
    for P in (1, 4):   # (P = 2, 3 run simulated above; a real job costs seconds a process here)
        _run([str(BIN / "dspla"), "run", str(ROOT / "examples" / f"{name}.dspla"), "-i", f"A={tmp_path / 'g.mtx'}",
              *extra, "--np", str(P), "--partition", "random", "--out", str(tmp_path / f"o{P}.npz")])
        outs.append(np.load(tmp_path / f"o{P}.npz"))
    _check_against_networkx(name, outs[0], A)
    for o in outs[1:]:
        assert sorted(o.files) == sorted(outs[0].files)
        for k in o.files:
            if name == "betweenness":
                np.testing.assert_allclose(o[k], outs[0][k], rtol=1e-12, atol=1e-12)
            else:
                np.testing.assert_array_equal(o[k], outs[0][k])


def _check_against_networkx(name, npz, A):
    """A `dspla run --out` result file (whole values dense, others as coordinates) against networkx."""
    n, G = A.shape[0], undirected(A)

    def value(key, fill=0):
        if key in npz.files:
            return npz[key]
        shape = tuple(npz[f"{key}.shape"])
        return sp.coo_array((npz[f"{key}.values"], (npz[f"{key}.rows"], npz[f"{key}.cols"])), shape=shape)

    if name == "ktruss":
        check_ktruss(value("T"), G, 4)
    elif name == "lcc":
        np.testing.assert_allclose(np.ravel(value("lcc")), as_array(nx.clustering(G), n), rtol=1e-13)
    elif name == "kcore":
        np.testing.assert_array_equal(np.ravel(value("core")), as_array(nx.core_number(G), n))
    elif name == "mis":
        v = value("iset")
        check_mis(np.ravel(v.toarray() if sp.issparse(v) else v).astype(bool), G)
    elif name == "triangles_ll":
        assert int(np.ravel(value("triangles"))[0]) == sum(nx.triangles(G).values()) // 3
    else:   # betweenness of the directed graph from sources 0, 3, 50, 90
        Gd = nx.from_scipy_sparse_array(A, create_using=nx.DiGraph)
        Gd.remove_edges_from(nx.selfloop_edges(Gd))
        want = nx.betweenness_centrality_subset(Gd, [0, 3, 50, 90], list(Gd), normalized=False)
        np.testing.assert_allclose(np.ravel(value("centrality")), as_array(want, n), atol=1e-9)


@pytest.mark.mpi
def test_pagerank_file_runs_with_only_its_graph(tmp_path):
    """r0 defaults to every entry 1: the same ranks as with -i r0=full:1, on 1 and 2 processes."""
    import scipy.io
    A = awkward(11)
    scipy.io.mmwrite(tmp_path / "g.mtx", sp.coo_array(A))
    base = [str(BIN / "dspla"), "run", str(ROOT / "examples" / "pagerank.dspla"), "-i", f"A={tmp_path / 'g.mtx'}"]
    _run(base + ["-i", "r0=full:1", "--out", str(tmp_path / "given.npz")])
    _run(base + ["--np", "2", "--out", str(tmp_path / "default.npz")])
    np.testing.assert_allclose(np.load(tmp_path / "default.npz")["r"], np.load(tmp_path / "given.npz")["r"], rtol=1e-12)
