"""A semiring and monoid from the user's Python functions (examples/tropical_plugin.py, loaded by
--plugin on every rank) under real mpiexec: the products' partial results and a column
reduction are combined by MPI with a user op made from the same function. Checked against a
dense numpy oracle with GraphBLAS semantics."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.formats.results import read_results

pytestmark = pytest.mark.mpi
ROOT = Path(__file__).resolve().parents[2]
DSPLA = str(Path(sys.executable).parent / "dspla")
PROG = """semiring tropical = tmin.tplus
input A : sparse[n, n]
input X : dense[n, k]
T = mxm(A, X, tropical)
m = reduce_cols(T, tmin)
output T, m
"""


@pytest.mark.parametrize("plan,P", [("15d", 2), ("p2p1d", 3)])
def test_plugin_semiring_under_mpiexec(tmp_path, plan, P):
    rng = np.random.default_rng(P)
    A = sp.random_array((50, 50), density=0.08, random_state=rng, format="lil")
    A[7, :] = 0
    A = sp.coo_array(A)
    A.data[:] = rng.integers(-3, 9, A.nnz)
    X = rng.integers(-5, 9, (50, 4)).astype(float)
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "p.dspla").write_text(PROG)
    plugin = ROOT / "examples" / "tropical_plugin.py"
    cmd = [DSPLA, "run", tmp_path / "p.dspla", "--plugin", plugin, "-i", f"A={tmp_path / 'a.mtx'}",
           "-i", f"X={tmp_path / 'x.npy'}", "--np", P, "--plan", plan, "--partition", "random",
           "--out", tmp_path / "o.npz"]
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    Ap = np.zeros(A.shape, bool)
    Ap[A.row, A.col] = True
    terms = np.where(Ap[:, :, None], A.toarray()[:, :, None] + X[None, :, :], np.inf)
    want, pres = terms.min(axis=1), Ap.any(axis=1)[:, None].repeat(4, axis=1)
    out = read_results(tmp_path / "o.npz")
    vals, got_pres = out["T"]
    assert np.array_equal(got_pres, pres) and np.array_equal(vals[pres], want[pres])
    assert np.array_equal(out["m"][0][0], want[pres[:, 0]].min(axis=0))
