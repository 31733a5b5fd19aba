"""The new ops under real mpiexec (the marked tier): a script using extract, assign, diag, select
with a Python predicate, kronecker, build and vector and scalar results runs on 2 and 3
processes and gives what numpy gives; and ``dspla run`` of a file with A[I, J] and C[I, J] =."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.formats.results import read_results

pytestmark = pytest.mark.mpi
BIN = Path(sys.executable).parent
SCRIPT = """
import numpy as np, scipy.sparse as sp, dspla as dp
from dspla.runtime.launch import world
comm = world()

def upper_odd(values, rows, cols, thunk):   # a Python predicate: defined alike on every rank
    return (cols > rows) & (values % 2 == thunk)

A = dp.sparse("A", ("n", "n"), "int64"); u = dp.vector("u", "n", "int64")
I = dp.vector("I", "e", "int64"); J = dp.vector("J", "e", "int64"); W = dp.vector("w", "e", "int64")
X = A * 3
f = dp.function({"rows": X[[5, 1, 5, 30]], "col": X[:, 2], "set": dp.assign(X, 9, [0, 7], [1, 2]),
                 "d": dp.diag(X), "m": dp.diag(u), "odd": dp.select(X, upper_odd, 1), "y": A @ u,
                 "tot": dp.reduce_scalar(X), "k": dp.kron(X[:, [0, 1, 2]], dp.sparse("B", (1, 2), "int64")),
                 "b": dp.build(I, J, W, ("n", "n"), dup_op="plus")}).configure(partition="random")
rng = np.random.default_rng(3)
a = sp.random_array((40, 40), density=0.15, random_state=rng, format="csr")
a.data[:] = rng.integers(1, 9, a.nnz)
a = a.astype(np.int64)
inputs = dict(A=a, u=np.arange(40), I=np.array([3, 3, 8]), J=np.array([4, 4, 0]), w=np.array([0, 1, 2]),
              B=sp.csr_array(np.array([[1, 2]])))
out = f(**inputs)
stats = f.last_stats
got = {k: (v.to_numpy(fill=-99), v.shape) for k, v in out.items()}
if comm.rank == 0:
    ref = f._reference(inputs)
    for k, (g, shape) in got.items():
        assert shape == ref[k].shape and np.array_equal(g, ref[k].to_numpy(fill=-99)), k
    x = 3 * a.toarray()
    assert np.array_equal(got["rows"][0], np.where(a.toarray()[[5, 1, 5, 30]] != 0, x[[5, 1, 5, 30]], -99))
    some = a.toarray().any(1)
    assert got["y"][1] == (40,) and np.array_equal(got["y"][0][some], (a @ np.arange(40))[some])
    assert int(out["tot"]) == x.sum() and got["b"][0][3, 4] == 0 + 1 and got["b"][0][8, 0] == 2
    print("OK", comm.size, stats["words_sent_total"])
"""


@pytest.mark.parametrize("P", [3])
def test_new_ops_under_mpiexec(tmp_path, P):
    (tmp_path / "s.py").write_text(SCRIPT)
    r = subprocess.run([str(BIN / "mpiexec"), "-n", str(P), sys.executable, str(tmp_path / "s.py")],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    assert r.returncode == 0, r.stderr
    assert f"OK {P}" in r.stdout


PROG = """input A : sparse[n, n]
B = A[0:5, 0:5]
C = A * 2
C[1, 0:3] = 4
d = diag(C)
output B, C, d
"""


def test_dspla_run_a_file_with_indexing(tmp_path):
    A = sp.random_array((30, 30), density=0.2, random_state=1, format="coo")
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    (tmp_path / "p.dspla").write_text(PROG)
    r = subprocess.run([str(BIN / "dspla"), "run", str(tmp_path / "p.dspla"), "-i", f"A={tmp_path / 'a.mtx'}",
                        "--np", "2", "--out", str(tmp_path / "o.npz")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "d: vector[30] float64" in r.stdout
    out = read_results(tmp_path / "o.npz")
    a = A.toarray()
    vals, pres = out["B"]
    assert np.array_equal(pres, a[:5, :5] != 0) and np.allclose(vals[pres], a[:5, :5][pres])
    c = 2 * a
    c[1, 0:3] = 4
    vals, pres = out["C"]
    assert np.array_equal(pres, c != 0) and np.allclose(vals[pres], c[c != 0])
