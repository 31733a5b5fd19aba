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


def test_run_stores_a_full_output_once_as_a_plain_array(tmp_path):
    # every entry present: the array itself, as numpy users read it (it was stored as
    # Y.rows/.cols/.values/.shape, and np.load(F)["Y"] failed)
    (tmp_path / "p.dspla").write_text("input X : dense[n, k]\nY = X * 2\noutput Y\n")
    np.save(tmp_path / "x.npy", np.array([[1.0, 0.0], [3.0, -4.0]]))
    r = dspla("run", tmp_path / "p.dspla", "--input", f"X={tmp_path / 'x.npy'}", "--out", tmp_path / "o.npz")
    assert r.returncode == 0, r.stderr
    out = np.load(tmp_path / "o.npz")
    assert out.files == ["Y"]   # once: no second, COO copy
    assert out["Y"].tolist() == [[2.0, 0.0], [6.0, -8.0]]   # the explicit zero is a present entry


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


def test_explain_takes_the_generated_inputs_run_takes(tmp_path):
    """examples/bfs.dspla's header: -i s=unit:0, sized by the graph read for A (explain said
    'input file not found: unit:0')."""
    import scipy.io
    import scipy.sparse as sp
    scipy.io.mmwrite(tmp_path / "g.mtx", sp.random_array((40, 40), density=0.1, random_state=1, format="coo"))
    bfs = __import__("pathlib").Path(__file__).parents[2] / "examples" / "bfs.dspla"
    r = dspla("explain", bfs, "-i", f"A={tmp_path / 'g.mtx'}", "-i", "s=unit:0", "--np", "2")
    assert r.returncode == 0 and "frontier_2 = mxm[any_pair](AT, frontier)" in r.stdout, r.stderr
    r = dspla("explain", bfs, "-i", f"A={tmp_path / 'g.mtx'}", "-i", "s=unit:40", "--np", "2")
    assert r.returncode == 2 and "unit:40" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_installed_command_works_from_any_directory(tmp_path):
    import shutil
    exe = shutil.which("dspla") or str(__import__("pathlib").Path(sys.executable).parent / "dspla")
    (tmp_path / "p.dspla").write_text(PROG)
    r = subprocess.run([exe, "check", "p.dspla"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr


LOOP = """input x0 : dense[n, 1]
x = x0
while reduce_all(x) < LIMIT max 3 {
  x = x * 2.0
}
total = reduce_all(x)
output x, total
"""


def test_run_sizes_generated_inputs_by_dim_and_shows_one_by_one_values(tmp_path):
    (tmp_path / "p.dspla").write_text(LOOP.replace("LIMIT", "5.0"))
    r = dspla("run", tmp_path / "p.dspla", "-i", "x0=full:1")
    assert r.returncode == 2 and "--dim n=SIZE" in r.stderr and "'n'" in r.stderr
    r = dspla("run", tmp_path / "p.dspla", "-i", "x0=full:1", "--dim", "n=4")
    # sum 4 -> 8 after one doubling, no longer below 5: the loop ended on its condition
    assert r.returncode == 0, r.stderr
    assert "x: 4x1 float64, 4 present" in r.stdout and "total: 1x1 float64 = 8.0" in r.stdout
    assert "warning" not in r.stderr
    r = dspla("run", tmp_path / "p.dspla", "-i", "x0=full:1", "--dim", "n=four")
    assert r.returncode == 2 and "--dim takes NAME=SIZE" in r.stderr


def test_a_loop_cut_short_warns_once_at_its_line_in_the_file(tmp_path):
    (tmp_path / "p.dspla").write_text(LOOP.replace("LIMIT", "100.0"))
    r = dspla("run", tmp_path / "p.dspla", "-i", "x0=full:1", "--dim", "n=2")
    assert r.returncode == 0, r.stderr
    # 2 -> 16 in 3 doublings, still below 100: stopped by its bound; said with the file's position only
    # (the file as positions show it: relative to the working directory or absolute, the shorter)
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("dspla: warning: ") and line.endswith(
        "p.dspla:3:1: loop 0 ran all 3 iterations it may: it stopped at its bound, not because its condition "
        "became false"), line
    assert "frozen" not in line and "LoopBoundWarning" not in line
    assert "total: 1x1 float64 = 16.0" in r.stdout


def test_a_misspelt_plan_or_partition_is_refused_on_one_process_too(tmp_path):
    (tmp_path / "p.dspla").write_text(LOOP.replace("LIMIT", "5.0"))
    base = ["run", tmp_path / "p.dspla", "-i", "x0=full:1", "--dim", "n=4"]
    r = dspla(*base, "--plan", "shift1D")
    assert r.returncode == 2 and "unknown plan 'shift1D'" in r.stderr and "shift1d" in r.stderr
    r = dspla(*base, "--partition", "hypergraf")
    assert r.returncode == 2 and "unknown partition method 'hypergraf'" in r.stderr and "hypergraph" in r.stderr


def test_an_input_without_its_equals_sign_says_what_to_write(tmp_path):
    (tmp_path / "p.dspla").write_text(PROG)
    r = dspla("run", tmp_path / "p.dspla", "-i", "A", tmp_path / "a.mtx")
    assert r.returncode == 2 and f"write -i A={tmp_path / 'a.mtx'}" in r.stderr
    r = dspla("run", tmp_path / "p.dspla", "--bogus")
    assert r.returncode == 2 and "unrecognized arguments: --bogus" in r.stderr


def test_nan_results_are_warned_about(tmp_path):
    # r0 = 0 everywhere: r0 / reduce_all(r0) is 0 / 0, and the run still succeeds (IEEE arithmetic)
    (tmp_path / "p.dspla").write_text("input r0 : dense[n, 1]\nr = r0 / reduce_all(r0)\noutput r\n")
    r = dspla("run", tmp_path / "p.dspla", "-i", "r0=full:0", "--dim", "n=3")
    assert r.returncode == 0 and "output r has 3 NaN or infinite entries" in r.stderr
    r = dspla("run", tmp_path / "p.dspla", "-i", "r0=full:2", "--dim", "n=3")
    assert r.returncode == 0 and "NaN" not in r.stderr
