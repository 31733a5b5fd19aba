"""Every failure path of a real MPI job ends every rank within 10 s, with one message on stderr
and a non-zero exit status: errors only rank 0 sees, errors on another rank before
and after the first collective, a killed rank, SIGINT/SIGTERM to dspla's launcher, a missing or
wrong launcher, a closed stdout, and the training command's bad pickles and checkpoints.

The 10 s run from the failure, not from the start: on a loaded machine starting P Pythons that
import numpy, numba and GraphBLAS alone can take longer than that. A job's clock starts when the
first of its ranks (or its launcher) ends, which a failing job does at the failure, and stops when
the whole job has ended; a rank left waiting in a collective keeps the job running past the bound
(and a job where nothing ends at all runs into JOB_S)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.formats.results import read_results

pytestmark = pytest.mark.mpi
BIN = Path(sys.executable).parent
DSPLA = str(BIN / "dspla")
MPIEXEC = str(BIN / "mpiexec")
LIMIT_S = 10.0   # from the first process of a job to end (the failure) to the last
JOB_S = 120.0    # a whole job, however loaded the machine
PROG = "input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\nU = mxm(A, T, min_plus)\noutput T, U\n"
CORA = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "planetoid"


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    d = tmp_path_factory.mktemp("fail")
    rng = np.random.default_rng(3)
    scipy.io.mmwrite(d / "a.mtx", sp.random_array((60, 60), density=0.08, random_state=rng, format="csr"))
    np.save(d / "x.npy", rng.random((60, 4)))
    (d / "p.dspla").write_text(PROG)
    bad = (d / "a.mtx").read_text().splitlines()
    bad[5] = "1 1 abc"
    (d / "bad.mtx").write_text("\n".join(bad) + "\n")
    return d


def run(cmd, env=None, timeout=JOB_S, **kw):
    """(result, seconds from the first end of a rank or of the launcher to the end of the job).
    The job's processes are watched as it runs: the command's own children (mpiexec, or under a
    plain mpiexec its proxies) and its ranks (Pythons started by a program that is not Python,
    so not the partitioner's workers). A job that goes on LIMIT_S after one of them ended, or
    runs ``timeout`` s in all, is killed and fails the test."""
    with open(os.devnull, "rb") as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(c) for c in cmd], stdin=stdin, stdout=out, stderr=err,
                                env={**os.environ, **(env or {})}, start_new_session=True, **kw)
        try:
            after = _watch(proc, timeout)
        finally:
            _kill_tree(proc)
        out.seek(0)
        err.seek(0)
        r = subprocess.CompletedProcess(proc.args, proc.returncode, out.read().decode(errors="replace"),
                                        err.read().decode(errors="replace"))
    return r, after


def _procs() -> dict[int, tuple[int, bool, bool]]:
    """pid -> (parent pid, is a Python, has ended: a zombie not yet reaped) of every process."""
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            exe = os.readlink(f"/proc/{d}/exe") if stat[stat.rindex(")") + 2] != "Z" else ""
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        found[int(d)] = (int(fields[1]), "python" in os.path.basename(exe), fields[0] == "Z")
    return found


def _tree(root: int, procs: dict) -> set[int]:
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    seen, todo = set(), [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in seen:
                seen.add(k)
                todo.append(k)
    return seen


def _watch(proc, timeout: float) -> float:
    t0, first_end, watched = time.monotonic(), None, set()
    while proc.poll() is None:
        now = time.monotonic()
        procs = _procs()
        if first_end is None and any(p not in procs or procs[p][2] for p in watched):
            first_end = now
        for p in _tree(proc.pid, procs):
            ppid, python, ended = procs[p]
            if not ended and (ppid == proc.pid or (python and not procs.get(ppid, (0, True))[1])):
                watched.add(p)
        if first_end is not None and now - first_end > LIMIT_S:
            pytest.fail(f"the job was still running {LIMIT_S:.0f} s after its first process ended: "
                        f"{sorted(_tree(proc.pid, procs))} (killed)")
        if now - t0 > timeout:
            pytest.fail(f"the job was still running after {timeout:.0f} s and no rank had ended (killed)")
        time.sleep(0.05)
    return time.monotonic() - first_end if first_end is not None else 0.0


def _kill_tree(proc) -> None:
    """SIGKILL to what is left of the job (its own session, and any process of its tree)."""
    if proc.poll() is None:
        for p in _tree(proc.pid, _procs()) | {proc.pid}:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        proc.wait()


def dspla_run(d, *extra, A="a.mtx", env=None):
    return run([DSPLA, "run", d / "p.dspla", "-i", f"A={d / A}", "-i", f"X={d / 'x.npy'}", "--partition", "random",
                *extra], env=env)


def one_message(r, *fragments) -> str:
    """The run failed with exactly one dspla message, containing ``fragments``, no traceback and
    no launcher banner."""
    assert r.returncode != 0, r.stdout + r.stderr
    msgs = [ln for ln in r.stderr.splitlines() if ln.startswith("dspla")]
    assert len(msgs) == 1, r.stderr
    for f in fragments:
        assert f in msgs[0], r.stderr
    for noise in ("Traceback", "BAD TERMINATION", "Abort(", "[mpiexec@", "[proxy:"):
        assert noise not in r.stderr + r.stdout, r.stderr + r.stdout
    return msgs[0]


def test_an_input_error_only_rank_0_sees_ends_the_job(case):
    r, t = dspla_run(case, "--np", 2, A="missing.mtx")
    one_message(r, "input file not found", "missing.mtx")
    assert t < LIMIT_S


def test_a_malformed_matrix_read_on_rank_0_at_four_processes(case):
    r, t = dspla_run(case, "--np", 4, A="bad.mtx")
    one_message(r, "bad.mtx:6", "is not a number")
    assert r.returncode == 2 and t < LIMIT_S


def test_the_same_under_a_plain_mpiexec(case):
    r, t = run([MPIEXEC, "-n", 2, DSPLA, "run", case / "p.dspla", "-i", f"A={case / 'bad.mtx'}", "-i",
                f"X={case / 'x.npy'}"], env={"MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    one_message(r, "bad.mtx:6")
    assert t < LIMIT_S


@pytest.mark.parametrize("fault,P,says", [
    ("1:start:dspla", 2, "dspla: error on rank 1: fault injected by DSPLA_FAULT at start"),
    ("1:start", 3, "dspla: error on rank 1: RuntimeError: fault injected"),
    ("0:start", 2, "dspla: error: RuntimeError: fault injected by DSPLA_FAULT at start"),
    ("0:2:dspla", 2, "dspla: error: fault injected by DSPLA_FAULT before instruction 2"),
    ("1:2", 2, "dspla: error on rank 1: RuntimeError: fault injected by DSPLA_FAULT before instruction 2"),
    ("2:3:dspla", 4, "dspla: error on rank 2: fault injected by DSPLA_FAULT before instruction 3"),
])
def test_an_error_on_one_rank_before_or_after_the_first_collective(case, fault, P, says):
    r, t = dspla_run(case, "--np", P, "--plan", "p2p1d", env={"DSPLA_FAULT": fault})
    assert one_message(r).startswith(says), r.stderr
    assert t < LIMIT_S


def test_a_gather_position_out_of_range_on_one_rank_ends_the_job(case, tmp_path):
    # the bad position is in the last rows (rank 1's): the ranks agree before any exchange
    (tmp_path / "g.dspla").write_text("input A : sparse[n, n]\ninput x : vector[n]\ninput i : vector[n] int64\n"
                                      "g = gather(x, i)\ny = A @ x\noutput g, y\n")
    np.save(tmp_path / "x.npy", np.arange(60.0))
    np.save(tmp_path / "i.npy", np.r_[np.arange(59), 99].astype(np.int64))
    r, t = run([DSPLA, "run", tmp_path / "g.dspla", "-i", f"A={case / 'a.mtx'}", "-i", f"x={tmp_path / 'x.npy'}",
                "-i", f"i={tmp_path / 'i.npy'}", "--np", 2, "--partition", "block", "--plan", "p2p1d"])
    one_message(r, "gather: position 99 is outside the vector's 60 entries")
    assert t < LIMIT_S


def _ranks_of(marker: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"dspla.cli.main run {marker}"], capture_output=True, text=True).stdout
    pids = []
    for p in out.split():
        try:
            argv0 = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        if "python" in os.path.basename(argv0):   # not mpiexec, whose argv matches too
            pids.append(int(p))
    # not a rank's own child for the moment between its fork and exec (a library's subprocess
    # call), whose command line is still the rank's
    return [p for p in pids if _parent(p) not in pids]


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _start_long_job(d, tmp_path, P=2):
    prog = tmp_path / "long.dspla"
    prog.write_text(PROG)
    cmd = [DSPLA, "run", str(prog), "-i", f"A={d / 'a.mtx'}", "-i", f"X={d / 'x.npy'}", "--np", str(P),
           "--partition", "random", "--repeat", "100000000", "--out", str(tmp_path / "out.npz")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + JOB_S
        while len(_ranks_of(str(prog))) < P and time.monotonic() < deadline:
            time.sleep(0.3)
        assert len(_ranks_of(str(prog))) == P, "ranks did not start"
        while not all(_mpi_started(pid) for pid in _ranks_of(str(prog))) and time.monotonic() < deadline:
            time.sleep(0.3)   # imports take seconds on a loaded machine; MPI starts after them
        time.sleep(2)   # into the repeat loop
    except BaseException:   # (never leave a job of 10^8 repeats behind: its ranks start late on a loaded machine)
        proc.terminate()   # (the launcher stops its ranks, the one that have started and the others)
        try:
            proc.communicate(timeout=JOB_S)
        finally:
            for pid in _ranks_of(str(prog)):
                os.kill(pid, signal.SIGKILL)
            proc.kill()
        raise
    return proc, str(prog)


def _mpi_started(pid: int) -> bool:
    try:
        return "libmpi" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("sig,code,says", [(signal.SIGTERM, 143, "dspla: stopped by SIGTERM"),
                                           (signal.SIGINT, 130, "dspla: interrupted")])
def test_a_signal_to_the_launcher_stops_the_whole_job(case, tmp_path, sig, code, says):
    proc, marker = _start_long_job(case, tmp_path)
    try:
        t0 = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        t = time.monotonic() - t0
        msgs = [ln for ln in err.splitlines() if ln.startswith("dspla")]
        assert proc.returncode == code and len(msgs) == 1 and msgs[0].startswith(says), err
        assert "BAD TERMINATION" not in out + err and "Traceback" not in err and "Exception ignored" not in err
        assert t < LIMIT_S
        time.sleep(0.5)
        assert _ranks_of(marker) == [], "ranks survived the launcher"
        assert not (tmp_path / "out.npz").exists()
    finally:
        for pid in _ranks_of(marker):
            os.kill(pid, signal.SIGKILL)
        proc.kill()


def test_a_killed_rank_ends_the_job_with_one_message(case, tmp_path):
    proc, marker = _start_long_job(case, tmp_path, P=3)
    try:
        os.kill(_ranks_of(marker)[1], signal.SIGKILL)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=30)
        assert time.monotonic() - t0 < LIMIT_S
        msgs = [ln for ln in err.splitlines() if ln.startswith("dspla")]
        assert proc.returncode != 0 and len(msgs) == 1 and "died without a message" in msgs[0], err
        assert "BAD TERMINATION" not in out + err
    finally:
        for pid in _ranks_of(marker):
            os.kill(pid, signal.SIGKILL)
        proc.kill()


def test_a_missing_launcher(case):
    r, t = dspla_run(case, "--np", 2, "--mpiexec", "/nonexistent/mpiexec")
    one_message(r, "mpiexec '/nonexistent/mpiexec' not found")


@pytest.mark.parametrize("launcher,says", [("/bin/true", "exited without starting dspla"),
                                           ("/bin/false", "failed (exit status 1) before dspla had started")])
def test_a_launcher_that_starts_nothing(case, tmp_path, launcher, says):
    fake = tmp_path / "fake-mpiexec"   # (lives long enough for its end to be seen: the clock starts there)
    fake.write_text(f"#!/bin/sh\nsleep 1\nexec {launcher}\n")
    fake.chmod(0o755)
    r, t = dspla_run(case, "--np", 2, "--mpiexec", fake)
    one_message(r, says)
    assert 0 < t < LIMIT_S


def test_a_launcher_that_starts_copies_outside_an_mpi_job(case, tmp_path):
    fake = tmp_path / "fake-mpiexec"
    fake.write_text('#!/bin/sh\nshift 2\n"$@" & "$@"\nwait\n')   # drops "-n N", runs the command twice
    fake.chmod(0o755)
    r, t = dspla_run(case, "--np", 2, "--mpiexec", fake)
    one_message(r, "without an MPI job environment")
    assert t < LIMIT_S


@pytest.mark.parametrize("P", [1, 2])
def test_a_closed_stdout_is_an_error_and_the_files_are_written_first(case, tmp_path, P):
    out, stats = tmp_path / "o.npz", tmp_path / "s.json"
    cmd = [DSPLA, "run", case / "p.dspla", "-i", f"A={case / 'a.mtx'}", "-i", f"X={case / 'x.npy'}", "--partition",
           "random", "--out", out, "--stats", stats] + (["--np", "2"] if P > 1 else [])
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()   # the reader went away, as in `dspla run ... | true`
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    msgs = [ln for ln in err.splitlines() if ln.startswith("dspla")]
    assert proc.returncode != 0 and len(msgs) == 1 and "standard output was closed" in msgs[0], err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert set(read_results(out)) == {"T", "U"} and stats.stat().st_size > 0


def test_an_unwritable_output_is_found_before_the_job_starts(case, tmp_path):
    started = tmp_path / "started"
    launcher = tmp_path / "mpiexec"   # the real one, noting that it was started
    launcher.write_text(f"#!/bin/sh\ntouch {started}\nexec {MPIEXEC} \"$@\"\n")
    launcher.chmod(0o755)
    r, t = dspla_run(case, "--np", 2, "--out", "/nonexistent/x.npz", "--mpiexec", launcher)
    one_message(r, "/nonexistent/x.npz", "does not exist")
    assert not started.exists(), "the job was started before the output was checked"


def _cora_copy(tmp_path):
    if not CORA.is_dir():
        pytest.skip("../shared/datasets/planetoid not found")
    d = tmp_path / "cora"
    d.mkdir()
    for f in CORA.glob("ind.cora.*"):
        (d / f.name).write_bytes(f.read_bytes())
    return d


def test_train_with_a_refused_pickle(tmp_path):
    d = _cora_copy(tmp_path)
    (d / "ind.cora.x").write_bytes(b"cposix\nsystem\n(S'touch " + str(tmp_path / "PWNED").encode() + b"'\ntR.")
    r, t = run([DSPLA, "train", "examples/gcn.dspla", "--dataset", "cora", "--data-dir", d, "--np", 2, "--epochs", 2],
               cwd=Path(__file__).resolve().parents[2])
    one_message(r, "ind.cora.x", "refused to unpickle posix.system")
    assert t < LIMIT_S and not (tmp_path / "PWNED").exists()


def test_train_resume_with_a_truncated_or_foreign_checkpoint(tmp_path):
    d = _cora_copy(tmp_path)
    root = Path(__file__).resolve().parents[2]
    ck = tmp_path / "ck"
    base = [DSPLA, "train", "examples/gcn.dspla", "--dataset", "cora", "--data-dir", d, "--checkpoint", ck, "-q"]
    r, _ = run(base + ["--epochs", 2], cwd=root)
    assert r.returncode == 0, r.stderr
    r, t = run(base + ["--epochs", 4, "--resume", "--np", 2, "--lr", "0.05"], cwd=root)
    one_message(r, "is from a different run", "lr")
    assert t < LIMIT_S
    data = (ck / "checkpoint.npz").read_bytes()
    (ck / "checkpoint.npz").write_bytes(data[:len(data) // 3])
    r, t = run(base + ["--epochs", 4, "--resume", "--np", 2], cwd=root)
    one_message(r, "cannot read checkpoint")
    assert t < LIMIT_S


GUARDLESS = """from mpi4py import MPI   # at the top, and no `if __name__ == "__main__":` guard
import numpy as np, scipy.sparse as sp
import dspla as dp
A = dp.sparse("A", ("n", "n")); X = dp.dense("X", ("n", "k"))
f = dp.function(outputs={"T": A @ X}).configure(partition="hypergraph")
rng = np.random.default_rng(0)
a = sp.random_array((300, 300), density=0.03, random_state=rng, format="csr")
x = rng.random((300, 4))
print("explain", len(f.explain(np=4, A=a, X=x)) > 0, flush=True)
out = f(A=a, X=x)
T = out["T"].to_numpy()   # every rank: a collective under mpiexec
if MPI.COMM_WORLD.rank == 0:
    assert np.allclose(T, a @ x)
    print("OK", MPI.COMM_WORLD.size, f.last_stats.get("partition"), flush=True)
"""


@pytest.mark.parametrize("P", [1, 2])
def test_a_guardless_script_importing_mpi4py_runs_under_mpiexec(tmp_path, P):
    """The partitioner's worker processes must not re-run the user's script (nor start MPI)."""
    script = tmp_path / "guardless.py"
    script.write_text(GUARDLESS)
    cache = tmp_path / "cache"   # a cold cache: the hypergraph partitioner really runs
    cmd = ([MPIEXEC, "-n", P] if P > 1 else []) + [sys.executable, script]
    r, t = run(cmd, env={"DSPLA_CACHE_DIR": str(cache), "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("explain True") == P and f"OK {P}" in r.stdout
    if P > 1:
        assert "hypergraph" in r.stdout


USER_BUG = """import numpy as np
import dspla as dp
x = dp.dense("x", ("n", 1))
f = dp.function(outputs={"y": x * 2.0})
out = f(x=np.ones((4, 1)))
out["y"].no_such_method()
"""


@pytest.mark.mpi
def test_an_exception_of_the_users_script_keeps_its_traceback_under_mpiexec(tmp_path):
    script = tmp_path / "bug.py"
    script.write_text(USER_BUG)
    r, t = run([MPIEXEC, "-n", 2, sys.executable, script])
    assert r.returncode != 0 and t < LIMIT_S
    # where it happened in the user's script, once, as Python would say it on one process
    assert f'File "{script}", line 6' in r.stderr and "AttributeError" in r.stderr and "no_such_method" in r.stderr
    assert r.stderr.count("Traceback") == 1, r.stderr


ONE_RANK_GATHERS = """import numpy as np, scipy.sparse as sp
import dspla as dp
from mpi4py import MPI
A = dp.sparse("A", ("n", "n")); X = dp.dense("X", ("n", "k"))
f = dp.function(outputs={"y": A @ X, "z": A @ A @ X})
out = f(A=sp.random_array((200, 200), density=0.05, random_state=0, format="csr"), X=np.ones((200, 2)))
if MPI.COMM_WORLD.rank == 0:   # the mistake: a collective on one rank only
    out["y"].to_numpy(fill=0)
elif MPI.COMM_WORLD.rank == 1 and SWAPPED:   # another: different collectives on different ranks
    out["z"].nvals
"""


@pytest.mark.mpi
@pytest.mark.parametrize("P, says", [(2, "but rank 1 ended the script without calling it"),
                                     (4, "but ranks 1, 2 and 3 ended the script without calling it")])
def test_a_collective_called_on_one_rank_only_ends_the_job_naming_it(tmp_path, P, says):
    script = tmp_path / "one_rank.py"
    script.write_text("SWAPPED = False\n" + ONE_RANK_GATHERS)
    r, t = run([MPIEXEC, "-n", P, sys.executable, script], env={"MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    one_message(r, "to_numpy() of y is a collective: every rank must call it", says)
    assert t < LIMIT_S


@pytest.mark.mpi
def test_different_collectives_at_one_point_end_the_job_naming_them(tmp_path):
    script = tmp_path / "swapped.py"
    script.write_text("SWAPPED = True\n" + ONE_RANK_GATHERS)
    r, t = run([MPIEXEC, "-n", 2, sys.executable, script], env={"MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    one_message(r, "called different collectives", "rank 0: to_numpy() of y; rank 1: nvals of z")
    assert t < LIMIT_S


ONE_RANK_BARRIER = """from mpi4py import MPI
import dspla
dspla.world()
if MPI.COMM_WORLD.rank == 0:   # the script's own collective, on one rank: dspla cannot end it
    MPI.COMM_WORLD.barrier()
"""


def _stuck_job_stderr(tmp_path, P: int, then: float = 0.0) -> str:
    """ONE_RANK_BARRIER on P ranks (rank 0 waits in a barrier of the script's own that the
    others never join, so the job cannot end by itself): its stderr once a rank has said it
    ended, and ``then`` seconds later; the job is killed."""
    script = tmp_path / "one_rank.py"
    script.write_text(ONE_RANK_BARRIER)
    env = {**os.environ, "DSPLA_EXIT_NOTICE_S": "1", "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"}
    log = tmp_path / "stderr"
    with open(log, "w") as fh:
        p = subprocess.Popen([MPIEXEC, "-n", str(P), sys.executable, str(script)], stdout=subprocess.DEVNULL,
                             stderr=fh, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while "ended its script" not in log.read_text() and time.monotonic() < deadline:
            assert p.poll() is None, log.read_text()
            time.sleep(0.2)
        time.sleep(then)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    return log.read_text()


@pytest.mark.mpi
def test_a_collective_of_the_script_on_one_rank_only_is_named_by_the_rank_that_ended(tmp_path):
    err = _stuck_job_stderr(tmp_path, 2)
    assert "rank 1 ended its script" in err and "the script's own MPI calls" in err, err


@pytest.mark.mpi
def test_of_the_ranks_that_ended_one_speaks(tmp_path):
    """At P = 4 with rank 0 in a barrier the others never join, ranks 1, 2 and 3 end: rank 1
    says so, once (each of the three said it before)."""
    err = _stuck_job_stderr(tmp_path, 4, then=4)   # the others' notices, had they spoken, 1 s after they ended
    assert err.count("ended its script") == 1 and "rank 1 ended its script" in err, err
