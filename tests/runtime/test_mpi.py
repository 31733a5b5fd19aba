"""The real-MPI tier: `dspla run --np P` under the mpich wheel's mpiexec (oversubscribing the
machine), the embedded API under mpiexec, and failure handling (a failing or killed rank ends
the job within seconds with one message)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import dspla as dp
from dspla.formats.results import read_results

pytestmark = pytest.mark.mpi
BIN = Path(sys.executable).parent
DSPLA = str(BIN / "dspla")
PROG = """input A : sparse[n, n]
input X : dense[n, k]
T1 = mxm(A, X, plus_times)
T2 = mxm(A, X, min_plus)
output T1, T2
"""


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    d = tmp_path_factory.mktemp("mpi")
    rng = np.random.default_rng(5)
    A = sp.random_array((70, 70), density=0.06, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    X = rng.integers(-5, 9, (70, 4)).astype(float)
    scipy.io.mmwrite(d / "a.mtx", A)
    np.save(d / "x.npy", X)
    (d / "p.dspla").write_text(PROG)
    from dspla.frontend.parser import parse_file
    want = dp.Function(parse_file(str(d / "p.dspla")))(A=A, X=X)
    return d, want


def dspla_run(d, *args, timeout=120, env=None):
    cmd = [DSPLA, "run", str(d / "p.dspla"), "-i", f"A={d / 'a.mtx'}", "-i", f"X={d / 'x.npy'}", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def _check(out_file, want):
    out = read_results(out_file)
    for name, w in want.items():
        vals, pres = out[name]
        assert np.array_equal(pres, w.present()), name
        assert np.array_equal(vals[pres], w.to_numpy(fill=0)[pres]), name


@pytest.mark.parametrize("plan,P,extra", [("p2p1d", 1, ()), ("p2p1d", 2, ()), ("p2p1d", 3, ()), ("p2p1d", 4, ()),
                                          ("p2p1d", 4, ("--message-bytes", 64)),   # 2 rows a message, deferred posts
                                          ("allgather1d", 4, ()), ("shift1d", 4, ("--replication", 2)),
                                          ("15d", 4, ("--replication", 2)), ("2d", 4, ()), ("twoface", 2, ()),
                                          ("twoface", 3, ("--stripe-width", 4)), ("twoface", 4, ("--stripe-width", 8))])
def test_run_np_matches_reference(case, plan, P, extra, tmp_path):
    d, want = case
    r = dspla_run(d, "--np", P, "--plan", plan, "--partition", "random", "--seed", "2", "--out", tmp_path / "o.npz",
                  "--stats", tmp_path / "s.json", *extra)
    assert r.returncode == 0, r.stderr
    _check(tmp_path / "o.npz", want)
    # one-sided windows (twoface) are freed before MPI finalizes: no UCX warnings at exit
    for out in (r.stdout, r.stderr):   # (UCX writes its warnings to standard output)
        assert "UCX" not in out and "ucp_" not in out, out


def test_measured_traffic_equals_analysis_on_a_real_graph(tmp_path):
    import json

    from dspla.analysis import comm_stats
    from dspla.formats.graph import load_graph
    from dspla.partition import partition

    from conftest import dataset
    g = dataset("suitesparse", "rajat01.mtx")
    A = load_graph(str(g)).matrix
    parts = partition(A, 4, "hypergraph", seed=0).parts
    np.save(tmp_path / "parts.npy", parts)
    np.save(tmp_path / "x.npy", np.ones((A.shape[0], 8)))
    (tmp_path / "p.dspla").write_text("input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n")
    r = subprocess.run([DSPLA, "run", str(tmp_path / "p.dspla"), "--np", "4", "--partition-file",
                        str(tmp_path / "parts.npy"), "--plan", "p2p1d", "-i", f"A={g}", "-i",
                        f"X={tmp_path / 'x.npy'}", "--stats",
                        str(tmp_path / "s.json")], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    st = json.load(open(tmp_path / "s.json"))
    cs = comm_stats(A, parts, 4, K=8)
    assert st["words_sent_total"] == 8 * cs.volume_total and st["messages_sent_total"] == cs.messages_total
    assert st["partition"] == "file"


EMBEDDED = """
import sys, numpy as np, scipy.sparse as sp, dspla as dp
from dspla.runtime.launch import world
comm = world()
A = dp.sparse("A", ("n", "n")); X = dp.dense("X", ("n", "k"))
f = dp.function(outputs={"Y": dp.relu(A @ X) + X}).configure(plan="p2p1d", partition="random")
inputs = None
if comm.rank == 0:
    rng = np.random.default_rng(0)
    a = sp.random_array((50, 50), density=0.1, random_state=rng, format="csr")
    inputs = dict(A=a, X=rng.normal(size=(50, 3)))
ref = f._reference(inputs)["Y"].to_numpy() if comm.rank == 0 else None
out = f(**(inputs or {}))                  # every rank: its rows of Y, kept where they are
Y = out["Y"]
assert Y.shape == (50, 3) and Y.local.index.size == Y.local.matrix.nrows
out2 = f(A=inputs["A"] if inputs else None, X=Y)   # passed back: nothing moves, nothing re-planned
assert f.last_stats is None or f.last_stats["planning_s"] == 0
whole = out2["Y"].to_numpy(root=0)         # a collective: rank 0 gets the whole
if comm.rank == 0:
    want = np.maximum(inputs["A"] @ ref, 0) + ref
    assert np.allclose(whole, want, rtol=1e-12), "mismatch"
    assert f.last_stats["P"] == comm.size
    print("OK", comm.size, f.last_stats["words_sent_total"])
else:
    assert whole is None
"""


def test_embedded_api_under_mpiexec(tmp_path):
    (tmp_path / "s.py").write_text(EMBEDDED)
    r = subprocess.run([str(BIN / "mpiexec"), "-n", "3", sys.executable, str(tmp_path / "s.py")], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    assert r.returncode == 0, r.stderr
    assert "OK 3" in r.stdout


def test_a_failing_rank_ends_the_job_with_one_message(case):
    d, _ = case
    t0 = time.monotonic()
    r = dspla_run(d, "--np", 3, "--plan", "p2p1d", env={"DSPLA_FAULT": "1:2"}, timeout=60)
    assert r.returncode != 0 and time.monotonic() - t0 < 30
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines == ["dspla: error on rank 1: RuntimeError: fault injected by DSPLA_FAULT before instruction 2 (Pack)"]


def _is_python(pid):
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return False
    return "python" in os.path.basename(argv0)


def test_a_killed_rank_ends_the_job_within_seconds(case):
    d, _ = case
    cmd = [DSPLA, "run", str(d / "p.dspla"), "-i", f"A={d / 'a.mtx'}", "-i", f"X={d / 'x.npy'}", "--np", "3",
           "--repeat", "1000000"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _kill_one_rank_and_check(proc, d)
    finally:  # never leave a million-iteration job behind
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _kill_one_rank_and_check(proc, d):
    marker = f"run {d / 'p.dspla'}"
    pids = []
    deadline = time.monotonic() + 60
    while len(pids) < 3 and time.monotonic() < deadline:
        time.sleep(0.5)
        ps = subprocess.run(["pgrep", "-f", f"dspla.cli.main {marker}"], capture_output=True, text=True).stdout
        pids = [int(x) for x in ps.split() if _is_python(int(x))]  # not mpiexec, whose argv matches too
    assert len(pids) == 3, "ranks did not start"
    time.sleep(2)  # let them get into the repeat loop
    os.kill(pids[1], signal.SIGKILL)
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and time.monotonic() - t0 < 30
    msgs = [ln for ln in err.splitlines() if ln.startswith("dspla")]
    assert len(msgs) == 1 and "failed" in msgs[0], err


def test_bad_input_is_reported_once_before_communication(case, tmp_path):
    d, _ = case
    np.save(tmp_path / "bad.npy", np.ones((71, 4)))
    r = subprocess.run([DSPLA, "run", str(d / "p.dspla"), "-i", f"A={d / 'a.mtx'}", "-i", f"X={tmp_path / 'bad.npy'}",
                        "--np", "3"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count("dspla: error") == 1 and "dimension 'n' is 70" in r.stderr and "Traceback" not in r.stderr
