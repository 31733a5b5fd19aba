"""`dspla bench peers` (dspla against PETSc on the same rows): its arguments, its skip when
PETSc is missing (CI has no petsc4py: the bench must say so and exit 0), and, where the system
Python has petsc4py, a short run on a small random matrix whose results must agree."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # bench/ of this checkout
from bench import peers  # noqa: E402


def test_arguments():
    a = peers.parse([])
    assert (a.Ks, a.Ps, a.rounds, a.trials, a.json, a.worker) == ([16, 64], [1, 2], 10, 2, None, None)
    assert a.graph.endswith("soc-Slashdot0902.txt.gz")
    a = peers.parse(["--K", "4,8", "--P", "2", "--rounds", "1", "--trials", "3"])
    assert (a.Ks, a.Ps, a.rounds, a.trials) == ([4, 8], [2], 1, 1)     # no more trials than rounds
    for bad in (["--K", "16,x"], ["--K", "0"], ["--rounds", "0"]):
        with pytest.raises(SystemExit) as e:
            peers.parse(bad)
        assert e.value.code == 2


@pytest.mark.parametrize("which", ["python", "mpiexec"])
def test_skips_with_a_clear_message_when_petsc_is_missing(tmp_path, capsys, which):
    missing = str(tmp_path / "not-there")
    out = tmp_path / "r.json"
    argv = ["--petsc-python" if which == "python" else "--petsc-mpiexec", missing, "--json", str(out)]
    assert peers.main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("dspla bench peers skipped:") and missing in text
    assert "optional" in text and "apt install python3-petsc4py" in text
    assert json.loads(out.read_text())["skipped"].endswith("not found")


def test_skips_when_the_python_has_no_petsc4py(capsys):
    # this test's own Python (the project's venv) has no petsc4py
    assert peers.main(["--petsc-python", sys.executable, "--petsc-mpiexec", sys.executable]) == 0
    assert "cannot import petsc4py" in capsys.readouterr().out


@pytest.fixture(scope="module")
def petsc():
    env, why = peers.find_petsc(peers.PETSC_PYTHON, peers.PETSC_MPIEXEC)
    if env is None:
        pytest.skip(f"PETSc comparison not available ({why}): it needs {peers.PETSC_PYTHON} with petsc4py "
                    f"and {peers.PETSC_MPIEXEC} ({peers.INSTALL})")
    return why


@pytest.mark.mpi
def test_a_small_run_agrees_with_petsc(tmp_path, capsys, petsc):
    rng = np.random.default_rng(3)
    n, nnz = 301, 2500     # odd: the two blocks differ by one row
    A = sp.csr_array((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
    sp.save_npz(tmp_path / "a.npz", sp.csr_matrix(A))
    out = tmp_path / "r.json"
    assert peers.main(["--graph", str(tmp_path / "a.npz"), "--K", "3,5", "--rounds", "2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "same results" in text and f"PETSc {petsc}" in text
    got = json.loads(out.read_text())
    assert got["same_results"] and got["dspla_vs_petsc_max_abs"] < 1e-12 and got["petsc"] == petsc
    assert [r["K"] for r in got["table"]] == [3, 5]
    for r in got["table"]:
        for name in ("petsc1", "petsc2", "dspla1", "dspla2"):
            assert 0 < r[name]["min_ms"] <= r[name]["median_ms"]
        assert r["ratio_P2"]["min"] > 0
