"""Sparse x sparse plans under real mpiexec (the mpi tier): A @ A by summa2d_sparse and spgemm3d,
the masked triangle product, and the transitive closure whose fixed operand's rows are fetched,
each equal to scipy's result (integers)."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.formats.results import read_results

pytestmark = pytest.mark.mpi
DSPLA = str(Path(sys.executable).parent / "dspla")
SQUARE = "input A : sparse[n, n]\nC = A @ A\nT = mxm(A, A, plus_pair, mask=A, structure=true)\noutput C, T\n"
CLOSURE = """input A : sparse[n, n]
R = cast(A, bool)
C = R
grew = reduce_all(C, lor)
while grew max n {
  new = ewise_add(C, mxm(C, R, lor_land), lor)
  grew = reduce_all(cast(new, int64)) > reduce_all(cast(C, int64))
  C = new
}
output C
"""


def _graph(tmp_path, n=80, density=0.06):
    rng = np.random.default_rng(3)
    A = sp.random_array((n, n), density=density, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 6, A.nnz)
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    return A


def _run(tmp_path, src, *args):
    (tmp_path / "p.dspla").write_text(src)
    r = subprocess.run([DSPLA, "run", str(tmp_path / "p.dspla"), "-i", f"A={tmp_path / 'a.mtx'}",
                        "--out", str(tmp_path / "o.npz"), *map(str, args)], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    return read_results(tmp_path / "o.npz")


@pytest.mark.parametrize("plan", ["summa2d_sparse", "spgemm3d"])
def test_square_and_masked_products(tmp_path, plan):
    A = _graph(tmp_path)
    out = _run(tmp_path, SQUARE, "--np", 4, "--plan", plan)
    C = (A @ A).toarray()
    vals, pres = out["C"]
    assert np.array_equal(pres, C != 0) and np.array_equal(vals[pres], C[pres])
    T = ((A != 0).astype(np.int64) @ (A != 0).astype(np.int64)).multiply(A != 0).toarray()
    vals, pres = out["T"]
    assert np.array_equal(vals[pres], T[pres]) and np.array_equal(pres, (T != 0))


def test_transitive_closure(tmp_path):
    from scipy.sparse.csgraph import shortest_path
    A = _graph(tmp_path, 50, 0.03)
    D = shortest_path(A != 0, unweighted=True)   # (D[i, i] = 0: every node reaches itself)
    # a path of length >= 1 from i to j: j reachable from a successor of i
    succ = (A != 0).toarray()
    want = (succ.astype(int) @ (np.isfinite(D)).astype(int)) > 0
    _, pres = _run(tmp_path, CLOSURE, "--np", 2)["C"]
    assert np.array_equal(pres, want)


def test_column_batches_lower_the_run_peak(tmp_path):
    """summa2d_sparse under a --memory-per-rank its blocks exceed makes C in column batches: the same
    C (entries and total, integers) and a lower peak on the ranks while the plan runs (the stats'
    run_peak_rss_bytes, each rank's RSS; planning's own peak is reported apart)."""
    import json
    n, d = 120_000, 6
    rng = np.random.default_rng(0)
    A = sp.csr_array((rng.integers(1, 5, n * d).astype(float), (np.repeat(np.arange(n), d), rng.integers(0, n, n * d))),
                     shape=(n, n))
    A.sum_duplicates()
    sp.save_npz(tmp_path / "a.npz", A)
    C = A @ A
    (tmp_path / "p.dspla").write_text("input A : sparse[n, n]\nC = A @ A\ntotal = reduce_all(C)\nentries = nvals(C)\n"
                                      "output C, total, entries\n")
    got = {}
    for cap in (None, "80e6"):
        stats = tmp_path / "s.json"
        r = subprocess.run([DSPLA, "run", str(tmp_path / "p.dspla"), "-i", f"A={tmp_path / 'a.npz'}", "--np", "4",
                            "--plan", "summa2d_sparse", "--stats", str(stats)] +
                           (["--memory-per-rank", cap] if cap else []), capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        assert f"total: 1x1 float64 = {C.sum():.1f}" in r.stdout and f"= {C.nnz}" in r.stdout
        s = json.loads(stats.read_text())
        got[cap] = (s["products"][0]["predicted"]["batches"], [x["run_peak_rss_bytes"] for x in s["per_rank"]])
    assert got[None][0] == 1 and got["80e6"][0] > 1
    assert sum(got["80e6"][1]) < sum(got[None][1])
