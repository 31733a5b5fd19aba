"""Partitioner runs in child processes that start clean.

``python -m dspla.partition.worker DIR PARENT_PID`` reads ``DIR/job.npz`` (the hypergraph as
arrays, the request as JSON), runs one backend and writes ``DIR/out.npz``. The parent (``run``)
starts one child per seed. Unlike multiprocessing's spawn, nothing here re-imports the user's
``__main__`` (a script without an ``if __name__ == "__main__"`` guard, or one that imports
mpi4py at the top, would otherwise run again in the child), the child's environment has no MPI
job variables (so nothing in it can take itself for a rank), data go through plain .npz files
(no pickles), and a child whose parent dies is killed with it (Linux).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

# prefixes of the variables by which launchers (Hydra, Open MPI, PMIx, Slurm, Intel MPI) and
# dspla's own launcher tell a process it is a rank; the child must not see them
JOB_ENV_PREFIXES = ("PMI_", "PMIX_", "OMPI_", "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "HYDRA_", "SLURM_", "I_MPI_",
                    "DSPLA_LAUNCH_TOKEN", "DSPLA_EXPECT_NP", "DSPLA_FAULT")


class WorkerError(Exception):
    """A child failed: ``kind`` is 'died' (no result: killed, crashed, out of memory) or the
    name of the exception it raised; ``message`` its text."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


def child_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(JOB_ENV_PREFIXES)}
    env["PYTHONSAFEPATH"] = "1"   # the working directory is not put on the child's sys.path
    return env


def run(requests: list[dict], arrays: dict[str, np.ndarray], workers: int) -> list[np.ndarray]:
    """One child per request (a JSON-able dict naming the backend and its parameters), sharing
    ``arrays``, at most ``workers`` at a time; their results in order, or WorkerError."""
    root = tempfile.mkdtemp(prefix="dspla-partition-")
    procs: dict[int, tuple[subprocess.Popen, str]] = {}
    results: list = [None] * len(requests)
    try:
        np.savez(os.path.join(root, "arrays.npz"), **arrays)
        todo = list(range(len(requests)))
        while todo or procs:
            while todo and len(procs) < max(1, workers):
                i = todo.pop(0)
                d = os.path.join(root, str(i))
                os.mkdir(d)
                with open(os.path.join(d, "request.json"), "w") as fh:
                    json.dump(requests[i], fh)
                err = open(os.path.join(d, "stderr"), "wb")
                p = subprocess.Popen([sys.executable, "-m", "dspla.partition.worker", d, str(os.getpid())],
                                     env=child_env(), stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                     cwd=root)
                err.close()
                procs[i] = (p, d)
            for i, (p, d) in list(procs.items()):
                if p.poll() is not None:
                    del procs[i]
                    results[i] = _result(p.returncode, d)
            if procs:
                time.sleep(0.02)
        return results
    finally:
        for p, _ in procs.values():   # interrupted, or another child failed: stop the rest
            p.kill()
            p.wait()
        shutil.rmtree(root, ignore_errors=True)


def _result(code: int, d: str) -> np.ndarray:
    out = os.path.join(d, "out.npz")
    if code == 0 and os.path.exists(out):
        with np.load(out, allow_pickle=False) as z:
            return z["parts"]
    err = os.path.join(d, "error.json")
    if os.path.exists(err):
        with open(err) as fh:
            e = json.load(fh)
        raise WorkerError(e["kind"], e["message"])
    try:
        with open(os.path.join(d, "stderr"), "rb") as fh:
            tail = fh.read()[-400:].decode("utf-8", "replace").strip()
    except OSError:
        tail = ""
    why = f"signal {-code}" if code < 0 else f"exit status {code}"
    raise WorkerError("died", f"{why}" + (f": {tail}" if tail else ""))


def _die_with(parent: int):
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:   # the parent died before the line above
        os._exit(1)


def main(argv) -> int:
    d, parent = argv[0], int(argv[1])
    _die_with(parent)
    with open(os.path.join(d, "request.json")) as fh:
        req = json.load(fh)
    try:
        from .backends import run_request  # not at the top: backends imports this module

        with np.load(os.path.join(d, "..", "arrays.npz"), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        parts = run_request(req, arrays)
        np.savez(os.path.join(d, "out.npz"), parts=np.asarray(parts, dtype=np.int64))
        return 0
    except Exception as e:  # noqa: BLE001 - reported to the parent, which raises it as a dspla error
        with open(os.path.join(d, "error.json"), "w") as fh:
            json.dump({"kind": type(e).__name__, "message": str(e)}, fh)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
