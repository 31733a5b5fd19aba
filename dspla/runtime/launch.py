"""Starting and joining MPI jobs.

``dspla run FILE --np 4`` re-launches itself under mpiexec (the mpich wheel's by default,
``--mpiexec`` or $DSPLA_MPIEXEC for a cluster's launcher); plain ``mpiexec -n 4 dspla run`` and
``srun dspla run`` are detected from the environment. Waiting ranks yield the CPU, so a 2-core
machine can run 4 ranks. A rank that fails takes the job down with one message.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import traceback

from ..errors import DsplaError
from .comm.mpi import MPIComm
from .comm.sim import SimComm
from .process import configure_threads, freeze_startup, keep_freed_memory

# Set by the launchers we know: MPICH/Intel (PMI), Open MPI, PMIx, Slurm.
_JOB_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")
# MPICH busy-polls by default; yield early so oversubscribed ranks do not starve each other.
YIELD_ENV = {"MPIR_CVAR_POLLS_BEFORE_YIELD": "1"}  # heavy yield (usleep) made a 16 MB Allgatherv 15x slower


def in_mpi_job() -> bool:
    if any(v in os.environ for v in _JOB_VARS):
        return True
    return int(os.environ.get("SLURM_NTASKS", "1")) > 1 and "SLURM_PROCID" in os.environ


_WORLD = None


def world():
    """The MPI world communicator (initialising MPI on first use), or None outside a job."""
    global _WORLD
    if _WORLD is None and in_mpi_job():
        keep_freed_memory()
        _WORLD = MPIComm()
        configure_threads(_WORLD.size)
        freeze_startup()
        if _WORLD.size > 1:
            _install_abort_hook(_WORLD)
    return _WORLD


_ONE = None


def one_process():
    """The one-rank communicator (simulated: no MPI) on which one process runs plans through the
    same runtime as P processes."""
    global _ONE
    if _ONE is None:
        _ONE = SimComm.create(1, timeout=3600.0)[0]
    return _ONE


def _install_abort_hook(comm):
    """An uncaught exception on any rank stops every rank (MPI Abort) instead of leaving them
    waiting forever for the one that died."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            return previous(kind, value, tb)
        if issubclass(kind, DsplaError) and os.environ.get("DSPLA_DEBUG") != "1":
            msg = f"dspla: error on rank {comm.rank}: {value}"
        else:
            msg = f"dspla: rank {comm.rank} failed:\n" + "".join(traceback.format_exception(kind, value, tb))
        comm.abort(msg, 1)

    sys.excepthook = hook


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


_NOISE = re.compile(r"^(=+|\s*BAD TERMINATION|\s*PID \d+ RUNNING AT|\s*EXIT CODE|\s*CLEANING UP|\s*KILLED BY|"
                    r"\s*YOUR APPLICATION TERMINATED|\s*This typically refers|\s*Intel\(R\) MPI|\s*$|"
                    r"\[proxy:|\[mpiexec@|Abort\(\d+\) on node \d+)")


def relaunch(np: int, argv: list[str], mpiexec: str | None = None) -> int:
    """Run ``dspla argv`` on ``np`` processes and return the job's exit code. The launcher's own
    failure banners are filtered; if the job failed without a dspla message, one is printed."""
    exe = find_mpiexec(mpiexec)
    env = dict(os.environ)
    for k, v in YIELD_ENV.items():
        env.setdefault(k, v)
    env["PYTHONUNBUFFERED"] = "1"
    cmd = [exe, "-n", str(np), sys.executable, "-m", "dspla.cli.main", *argv]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True, errors="replace")
    said = []

    def pump():
        for line in proc.stderr:
            if _NOISE.match(line):
                continue
            if line.startswith("dspla"):
                said.append(line)
            sys.stderr.write(line)
            sys.stderr.flush()

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        code = proc.wait()
    t.join(timeout=5)
    if code != 0 and not said:
        why = f"signal {-code}" if code < 0 else f"exit status {code}"
        sys.stderr.write(f"dspla: the {np}-process job failed ({why}): a rank died without a message "
                         "(killed, or crashed in native code); the other ranks were stopped\n")
    return code if code >= 0 else 128 - code
