"""The dspla command: run / check / explain, exit codes and error output."""
import subprocess
import sys

import numpy as np

PROG = """input A : sparse[n, n]
input X : dense[n, k]
T = mxm(A, X, min_plus)
output T
"""


def dspla(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dspla.cli.main", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_check_ok_and_unknown_semiring(tmp_path):
    (tmp_path / "p.dspla").write_text(PROG)
    r = dspla("check", tmp_path / "p.dspla")
    assert r.returncode == 0 and "ok" in r.stdout and "T: dense[n, k] float64" in r.stdout
    (tmp_path / "bad.dspla").write_text(PROG.replace("min_plus", "min_plux"))
    r = dspla("check", tmp_path / "bad.dspla")
    assert r.returncode == 2
    assert "bad.dspla:3:15" in r.stderr and "min_plux" in r.stderr and "min_plus" in r.stderr
    assert "Traceback" not in r.stderr


def test_debug_shows_traceback(tmp_path):
    (tmp_path / "bad.dspla").write_text(PROG.replace("min_plus", "min_plux"))
    r = dspla("check", tmp_path / "bad.dspla", "--debug")
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_run_writes_coo(tmp_path):
    (tmp_path / "p.dspla").write_text(PROG)
    with open(tmp_path / "a.mtx", "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n1 2 -2\n3 3 0\n")
    np.save(tmp_path / "x.npy", np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    r = dspla("run", tmp_path / "p.dspla", "--input", f"A={tmp_path / 'a.mtx'}", "--input",
              f"X={tmp_path / 'x.npy'}", "--out", tmp_path / "o.npz")
    assert r.returncode == 0, r.stderr
    out = np.load(tmp_path / "o.npz")
    # row 0: min(1.5+1, -2+3), min(1.5+2, -2+4); row 1 is empty -> missing; row 2: explicit zero + 5/6
    assert out["T.rows"].tolist() == [0, 0, 2, 2] and out["T.cols"].tolist() == [0, 1, 0, 1]
    assert out["T.values"].tolist() == [1.0, 2.0, 5.0, 6.0]
    assert out["T.shape"].tolist() == [3, 2] and "T" not in out.files
    assert out["T.rows"].dtype == np.int64


def test_run_stores_a_full_output_once_as_coo(tmp_path):
    (tmp_path / "p.dspla").write_text("input X : dense[n, k]\nY = X * 2\noutput Y\n")
    np.save(tmp_path / "x.npy", np.array([[1.0, 0.0], [3.0, -4.0]]))
    r = dspla("run", tmp_path / "p.dspla", "--input", f"X={tmp_path / 'x.npy'}", "--out", tmp_path / "o.npz")
    assert r.returncode == 0, r.stderr
    out = np.load(tmp_path / "o.npz")
    assert sorted(out.files) == ["Y.cols", "Y.rows", "Y.shape", "Y.values"]   # once: no dense copy
    dense = np.full(tuple(out["Y.shape"]), np.nan)
    dense[out["Y.rows"], out["Y.cols"]] = out["Y.values"]
    assert dense.tolist() == [[2.0, 0.0], [6.0, -8.0]]   # the explicit zero is a present entry


def test_run_input_errors(tmp_path):
    (tmp_path / "p.dspla").write_text(PROG)
    r = dspla("run", tmp_path / "p.dspla", "--input", f"A={tmp_path / 'missing.mtx'}")
    assert r.returncode == 2 and "not found" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "a.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n")
    r = dspla("run", tmp_path / "p.dspla", "--input", f"A={tmp_path / 'a.mtx'}")
    assert r.returncode == 2 and "missing input 'X'" in r.stderr


def test_explain(tmp_path):
    (tmp_path / "p.dspla").write_text(PROG)
    r = dspla("explain", tmp_path / "p.dspla")
    assert r.returncode == 0 and "T = mxm[min_plus](A, X)" in r.stdout


def test_explain_a_program_with_an_input_named_like_an_option(tmp_path):
    """examples/gcn.dspla has an input called seed; --seed is the partitioner's."""
    (tmp_path / "p.dspla").write_text("input A : sparse[n, n]\ninput seed : dense[n, 1]\nT = A @ seed\noutput T\n")
    r = dspla("explain", tmp_path / "p.dspla", "--np", "2", "--dim", "n=50", "--seed", "3")
    assert r.returncode == 0 and "T = mxm[plus_times](A, seed)" in r.stdout, r.stderr


def test_installed_command_works_from_any_directory(tmp_path):
    import shutil
    exe = shutil.which("dspla") or str(__import__("pathlib").Path(sys.executable).parent / "dspla")
    (tmp_path / "p.dspla").write_text(PROG)
    r = subprocess.run([exe, "check", "p.dspla"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
