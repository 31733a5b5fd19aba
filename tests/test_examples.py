"""The examples against independent oracles: numpy power iteration, scipy's Dijkstra and BFS."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra, shortest_path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from bfs import bfs_levels  # noqa: E402
from pagerank import pagerank  # noqa: E402
from sssp import sssp  # noqa: E402


def _graph(n, density, seed, weights=False):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=density, random_state=rng, format="csr")
    A.data[:] = rng.uniform(1, 10, A.nnz) if weights else 1.0
    return A


def _numpy_pagerank(A, d=0.85, iters=500):
    dense = A.toarray()
    n = len(dense)
    out = dense.sum(1)
    M = np.zeros_like(dense)
    nz = out > 0
    M[nz] = dense[nz] / out[nz, None]
    M[~nz] = 1.0 / n  # a dangling node links to everyone
    r = np.full(n, 1.0 / n)
    for _ in range(iters):
        r = d * M.T @ r + (1 - d) / n
    return r


def test_pagerank_matches_power_iteration():
    A = _graph(80, 0.05, 1)
    assert (A.sum(1) == 0).any(), "want dangling nodes in the test graph"
    r, it = pagerank(A, tol=1e-13)
    assert it < 200
    np.testing.assert_allclose(r, _numpy_pagerank(A), rtol=1e-9, atol=1e-12)


def test_sssp_matches_dijkstra():
    A = _graph(120, 0.03, 2, weights=True)
    for src in (0, 7):
        dist, _ = sssp(A, src)
        np.testing.assert_allclose(dist, dijkstra(A, indices=src), rtol=1e-12)


def test_bfs_levels_match_unweighted_shortest_paths():
    A = _graph(150, 0.02, 3)
    want = shortest_path(A, unweighted=True, indices=0)
    got = bfs_levels(A, 0).astype(float)
    got[got < 0] = np.inf
    np.testing.assert_array_equal(got, want)


def test_gcn_layer_file_runs_and_matches_numpy(tmp_path):
    rng = np.random.default_rng(4)
    n, f = 30, 5
    A = _graph(n, 0.1, 5)
    A.data[:] = rng.uniform(-1, 1, A.nnz)
    X = rng.normal(size=(n, f))
    W = rng.normal(size=(f, 7))
    import scipy.io
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    np.save(tmp_path / "x.npy", X)
    np.savez(tmp_path / "w.npz", weights=W)
    r = subprocess.run([sys.executable, "-m", "dspla.cli.main", "run", str(ROOT / "examples" / "gcn_layer.dspla"),
                        "--input", f"A={tmp_path / 'a.mtx'}", "--input", f"X={tmp_path / 'x.npy'}",
                        "--input", f"W={tmp_path / 'w.npz'}:weights", "--out", str(tmp_path / "o.npz")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = np.load(tmp_path / "o.npz")
    dense = A.toarray()
    rows_present = np.diff(A.indptr) > 0
    H = np.maximum(dense @ X @ W, 0)
    # rows of A with no entries have no entries in H (missing, not zero)
    got_rows = np.unique(out["H.rows"])
    np.testing.assert_array_equal(got_rows, np.nonzero(rows_present)[0])
    Hg = np.full(H.shape, np.nan)
    Hg[out["H.rows"], out["H.cols"]] = out["H.values"]
    np.testing.assert_allclose(Hg[rows_present], H[rows_present], rtol=1e-12, atol=1e-12)
    T = (dense != 0).astype(float) @ X  # plus_second: A's values are ignored
    Tg = np.full(T.shape, np.nan)
    Tg[out["T.rows"], out["T.cols"]] = out["T.values"]
    np.testing.assert_allclose(Tg[rows_present], T[rows_present], rtol=1e-12)
    assert ("H" in out.files) == bool(rows_present.all())
