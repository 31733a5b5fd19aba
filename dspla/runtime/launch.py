"""Starting and joining MPI jobs.

``dspla run FILE --np 4`` re-launches itself under mpiexec (the mpich wheel's by default,
``--mpiexec`` or $DSPLA_MPIEXEC for a cluster's launcher); plain ``mpiexec -n 4 dspla run`` and
``srun dspla run`` are detected from the environment. Waiting ranks yield the CPU, so a 2-core
machine can run 4 ranks. A rank that fails takes the job down with one message (failure.py).
"""
from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import TYPE_CHECKING

from .._excepthook import text as user_error
from ..errors import DsplaError
from .failure import LAUNCHED_ENV, fail, launched_by_dspla, message, stdout_failed
from .jobio import Pump
from .process import configure_threads, freeze_startup, keep_freed_memory

if TYPE_CHECKING:
    from .comm.mpi import MPIComm
    from .comm.sim import SimComm

# Set by the launchers we know: MPICH/Intel (PMI), Open MPI, PMIx, Slurm.
_JOB_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")
# MPICH busy-polls by default; yield early so oversubscribed ranks do not starve each other.
YIELD_ENV = {"MPIR_CVAR_POLLS_BEFORE_YIELD": "1"}  # heavy yield (usleep) made a 16 MB Allgatherv 15x slower
EXPECT_NP_ENV = "DSPLA_EXPECT_NP"   # the job size dspla's launcher asked for


def in_mpi_job() -> bool:
    if any(v in os.environ for v in _JOB_VARS):
        return True
    return int(os.environ.get("SLURM_NTASKS", "1")) > 1 and "SLURM_PROCID" in os.environ


def job_environment_names() -> tuple[str, ...]:
    """Prefixes of the variables through which a launcher hands a process its place in a job
    (a child process must not see them, or it would take itself for a rank)."""
    return ("PMI_", "PMIX_", "OMPI_", "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "HYDRA_", "SLURM_", "I_MPI_",
            LAUNCHED_ENV, EXPECT_NP_ENV)


def current_rank() -> int:
    """This process's rank from the launcher's environment (without initialising MPI)."""
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


_WORLD: MPIComm | None = None
_OUTSIDE = False   # decided once: a process started outside a job stays outside (every call asks)


def world() -> MPIComm | None:
    """The MPI world communicator (initialising MPI on first use), or None outside a job."""
    global _WORLD, _OUTSIDE
    if _WORLD is None and not _OUTSIDE:
        _OUTSIDE = not in_mpi_job()
        if not _OUTSIDE:
            from .comm.mpi import MPIComm  # (numpy and MPI: not for a process that only launches a job)

            keep_freed_memory()
            _WORLD = MPIComm()
            configure_threads(_WORLD.size)
            freeze_startup()
            if _WORLD.size > 1:
                _WORLD.open_control()
                _install_abort_hook(_WORLD)
                _install_exit_notice(_WORLD)
            _check_launch(_WORLD)
    return _WORLD


def check_launcher_started_a_job():
    """In a process started by dspla's launcher: it must be inside an MPI job (a launcher that
    just runs the command N times would make N independent single-process runs)."""
    want = os.environ.get(EXPECT_NP_ENV)
    if want and not in_mpi_job():
        raise DsplaError(f"the launcher started dspla without an MPI job environment (expected {want} "
                         "processes of one job): use the mpiexec of the MPI mpi4py was built with "
                         "(--mpiexec or $DSPLA_MPIEXEC)")


def _check_launch(comm):
    want = os.environ.get(EXPECT_NP_ENV)
    if want and int(want) != comm.size:
        err = DsplaError(f"the launcher started a job of {comm.size} process(es), not the {want} asked for: "
                         "its MPI does not match the one mpi4py uses (--mpiexec or $DSPLA_MPIEXEC)")
        fail(comm if comm.size > 1 else None, err)
    if comm.rank == 0:
        announce_started()


_ONE: SimComm | None = None


def one_process() -> SimComm:
    """The one-rank communicator (simulated: no MPI) on which one process runs plans through the
    same runtime as P processes."""
    global _ONE
    if _ONE is None:
        from .comm.sim import SimComm  # (python-graphblas: not for a process that only launches a job)
        _ONE = SimComm.create(1, timeout=3600.0)[0]
    return _ONE


def _install_abort_hook(comm):
    """An uncaught exception on any rank stops every rank (MPI Abort) with one message, instead
    of leaving them waiting forever for the one that died."""

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            if comm.rank == 0 and not launched_by_dspla():
                _say("dspla: interrupted")
            _quiet_exit(130)
        # rank 0 reports at once; the others after a grace (failure.py). An exception of the
        # user's own code keeps its traceback, as Python shows it on one process; dspla's errors
        # say where in the user's script or file themselves
        if isinstance(value, DsplaError):
            text = None if os.environ.get("DSPLA_DEBUG") == "1" else user_error(value, tb, comm.rank)
        else:
            text = message(value, comm.rank, trace=True)
        fail(comm, value, 1, text)

    sys.excepthook = hook


EXIT_NOTICE_S = float(os.environ.get("DSPLA_EXIT_NOTICE_S", "10"))


def _install_exit_notice(comm):
    """At the normal end of a script, tell every other rank so (a rank waiting to meet it in a
    collective of dspla's, ``to_numpy()`` on rank 0 alone, then ends the job with an error naming
    the call: MPIComm.meet), and wait for the others on the control communicator (so it cannot
    match a collective of the script's); past EXIT_NOTICE_S, say what may be wrong: a rank in a
    collective dspla does not meet first (the script's own MPI calls) would hang the job with no
    word. It only speaks: a rank may lawfully work on alone.

    One rank speaks for each run of ranks that ended: every rank that ends tells the next one
    (one byte), and a rank that heard from the one before it stays silent (at P = 4 with rank 0
    in a gather, rank 1 says it, not ranks 1, 2 and 3)."""

    from .comm.mpi import NOTICE_TAG, free_open_windows

    def wait_for_the_others():
        t0, said = time.monotonic(), False
        token, got = bytearray(1), bytearray(1)
        before = None   # the token of the rank before this one, once the communicator is made
        made = comm.control_request()

        def wait(req):
            nonlocal said
            while not req.Test():
                if not said and time.monotonic() - t0 > EXIT_NOTICE_S:
                    said = True
                    if before is None or not before.Test():   # (no rank before, or it has not ended)
                        _say(f"dspla: rank {comm.rank} ended its script {EXIT_NOTICE_S:.0f} s ago and waits for "
                             "the others; if a rank is inside a collective only some ranks called (the script's "
                             "own MPI calls: dspla's own end the job), the job will not end: stop it with Ctrl-C")
                time.sleep(0.005)

        if made is not None:
            wait(made)
        dup = comm.control()
        ended = comm.ended()
        after = dup.Isend(token, comm.rank + 1, NOTICE_TAG) if comm.rank + 1 < comm.size else None
        before = dup.Irecv(got, comm.rank - 1, NOTICE_TAG) if comm.rank > 0 else None
        wait(dup.Ibarrier())   # every rank is here: every token has been sent
        for req in (after, before, *ended):
            if req is not None:
                req.Wait()
        comm.collect_ended()
        comm.close_control()
        free_open_windows()   # the plans' windows go before MPI finalizes

    atexit.register(wait_for_the_others)


def _quiet_exit(code: int):
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def find_mpiexec(explicit: str | None = None) -> str:
    cand = explicit or os.environ.get("DSPLA_MPIEXEC")
    if cand:
        path = shutil.which(cand) or (cand if os.path.exists(cand) else None)
        if not path:
            raise DsplaError(f"mpiexec {cand!r} not found")
        return path
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(here):
        return here
    path = shutil.which("mpiexec")
    if not path:
        raise DsplaError("no mpiexec found: install the mpich wheel (make install) or pass --mpiexec")
    return path


STOP_GRACE = 3.0   # seconds a job gets to stop after a forwarded signal before it is killed


def relaunch(np: int, argv: list[str], mpiexec: str | None = None) -> int:
    """Run ``dspla argv`` on ``np`` processes and return the exit status for the command.

    The job's output passes through this process: the launcher's failure banners are dropped
    and, when the job failed without a dspla message, one is printed. SIGINT, SIGTERM and SIGHUP
    are forwarded to the job, which is killed if it has not stopped ``STOP_GRACE`` s later; if
    this process dies, mpiexec gets SIGTERM (Linux). A launcher that exits without starting
    dspla, or starts it outside an MPI job of ``np`` processes, is an error."""
    if np < 1:
        raise DsplaError(f"--np must be at least 1, got {np}")
    exe = find_mpiexec(mpiexec)
    fd, token = tempfile.mkstemp(prefix="dspla-launch-")
    os.close(fd)
    env = dict(os.environ)
    for k, v in YIELD_ENV.items():
        env.setdefault(k, v)
    env.update(PYTHONUNBUFFERED="1", **{LAUNCHED_ENV: token, EXPECT_NP_ENV: str(np)})
    cmd = [exe, "-n", str(np), sys.executable, "-m", "dspla.cli.main", *argv]
    try:
        return _supervise(cmd, env, np, exe, token)
    finally:
        _unlink(token)


def _supervise(cmd, env, np: int, exe: str, token: str) -> int:
    try:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True, preexec_fn=_die_with_parent)
    except OSError as e:
        raise DsplaError(f"cannot start the launcher {exe}: {e.strerror}") from None
    pumps = [Pump(proc.stdout, sys.stdout),
             Pump(proc.stderr, sys.stderr, one_error=os.environ.get("DSPLA_DEBUG") != "1")]
    for p in pumps:
        p.start()
    got: list[int] = []

    def forward(signum, frame):
        if not got:
            got.append(signum)
            try:
                proc.send_signal(signum)
            except ProcessLookupError:
                pass

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        code = _wait(proc, got)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    for p in pumps:
        p.join(timeout=5)
    said = pumps[0].said + pumps[1].said
    started = os.path.getsize(token) > 0 if os.path.exists(token) else False
    if got:
        name = signal.Signals(got[0]).name
        _say(f"dspla: {'interrupted' if got[0] == signal.SIGINT else 'stopped by ' + name}: "
             f"the {np}-process job was stopped")
        return 128 + got[0]
    if not started:
        if not said and code == 0:
            _say(f"dspla: error: the launcher {exe} exited without starting dspla on {np} processes; "
                 "give a working mpiexec with --mpiexec or $DSPLA_MPIEXEC")
        elif not said:
            _say(f"dspla: error: the {np}-process job failed ({_status(code)}) before dspla had started on it: a "
                 f"process was killed or crashed while starting, or the launcher {exe} does not work (give a "
                 "working one with --mpiexec or $DSPLA_MPIEXEC)")
        return code if code > 0 else 2
    if pumps[0].write_error is not None and code == 0:
        _say(f"dspla: error: {stdout_failed(pumps[0].write_error)}")
        return 2
    signals = pumps[0].filter.signals + pumps[1].filter.signals
    stack = pumps[0].filter.stack + pumps[1].filter.stack
    if stack and not said and not signals:   # (MPICH's own account is all there is: shown)
        for line in stack:
            _say(line.rstrip("\n"))
    if code != 0 and not said:
        # the rank that died first: Hydra's banner names its signal (the others it stopped with
        # SIGTERM, which the job's own status sometimes reports instead)
        sig = next((s for s in signals if s != signal.SIGTERM), signals[0] if signals else None)
        how = f"{signal.Signals(sig).name}, signal {sig}" if sig in _SIGNALS else _status(code)
        _say(f"dspla: the {np}-process job failed ({how}): a rank died without a message "
             "(killed, or crashed in native code); the other ranks were stopped")
        if sig in _SIGNALS:
            return sig
    return code if code >= 0 else 128 - code


_SIGNALS = frozenset(int(s) for s in signal.Signals)


def _wait(proc, got) -> int:
    """Wait for the job; after a forwarded signal, give it STOP_GRACE seconds, then kill the
    launcher and every process it started (each rank is a session of its own under Hydra)."""
    deadline = None
    while True:
        try:
            return proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        if got and deadline is None:
            deadline = time.monotonic() + STOP_GRACE
        if deadline is not None and time.monotonic() > deadline:
            for pid in [proc.pid, *_descendants(proc.pid)]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            return proc.wait()


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc; empty where there is none)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(e))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


_PR_SET_PDEATHSIG = 1
_LIBC: ctypes.CDLL | None
try:
    _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
except OSError:  # not glibc: the launcher still stops the job on the signals it can catch
    _LIBC = None


def _die_with_parent():  # runs in the child between fork and exec: no imports, no allocation
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _status(code: int) -> str:
    return f"signal {-code}" if code < 0 else f"exit status {code}"


def _say(text: str):
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _unlink(path: str):
    try:
        os.unlink(path)
    except OSError:
        pass


def announce_started():
    """Called by rank 0 of a job started by ``relaunch``: tells the launcher dspla is running."""
    token = os.environ.get(LAUNCHED_ENV)
    if token:
        try:
            with open(token, "a") as fh:
                fh.write("started\n")
        except OSError:
            pass
