"""How a job fails: every rank ends, one message is printed, the exit status is non-zero.

Two kinds of failure:

- *agreed*: a step that may fail ran inside :func:`on_root` or :func:`agree`, and every rank
  learnt the outcome through one small collective. Every rank raises; the one that reports
  (the lowest failing rank) raises its own error, the others a quiet :class:`PeerError`. The
  ranks then leave normally (no abort), and only the reporter prints.
- *sudden*: an error only this rank knows about (the others may be waiting in a collective).
  :func:`fail` prints it and aborts the job. A rank other than 0 first waits ``GRACE`` seconds
  without printing: when the same error happens on every rank at once, rank 0's abort ends
  this rank within the grace and its duplicate message is never printed.
"""
from __future__ import annotations

import os
import sys
import time
import traceback

from ..errors import DsplaError

GRACE = float(os.environ.get("DSPLA_ABORT_GRACE", "2.0"))   # seconds; documented in docs/runtime.md
STDOUT_CLOSED = ("standard output was closed before everything was printed (files named by --out, --stats, "
                 "--json and the like were written before it)")
LAUNCHED_ENV = "DSPLA_LAUNCH_TOKEN"   # set by dspla's own launcher (launch.relaunch) for its ranks


def stdout_failed(err: BaseException | None) -> str:
    """What to say when standard output could not be written: closed (a pipe whose reader left),
    or refusing the bytes (/dev/full, a full disk: say why)."""
    if err is None or isinstance(err, (BrokenPipeError, ValueError)) or not getattr(err, "strerror", None):
        return STDOUT_CLOSED
    return (f"standard output could not be written: {err.strerror} (files named by --out, --stats, --json and the "
            "like were written before it)")


class PeerError(DsplaError):
    """Raised on the ranks that did not fail when another rank did (that rank reports)."""

    quiet = True


def is_quiet(exc: BaseException) -> bool:
    """Whether another rank reports this failure (this rank stays silent)."""
    return bool(getattr(exc, "quiet", False))


def describe(exc: BaseException) -> str:
    if isinstance(exc, DsplaError):
        return str(exc)
    if type(exc).__module__ == "mpi4py.MPI":
        return mpi_error(str(exc))
    if isinstance(exc, MemoryError):
        return "out of memory" + (f" ({exc})" if str(exc) else "")
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return f"{type(exc).__name__}: {exc}"


# what MPICH says, at the bottom of its error stack, when the peer of a transfer is gone
_PEER_GONE = ("(errno 3)", "process_vm_readv", "Connection reset", "Broken pipe", "Connection refused",
              "EOF on", "terminated")


def mpi_error(text: str) -> str:
    """One line for an MPI error: MPICH's message is a stack of one line per internal function,
    whose first line names the error class and whose last the cause. When the cause is a peer
    that is gone (a rank killed or crashed), say so first."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    head = lines[0].removesuffix(", error stack:").rstrip(":") if lines else "MPI error"
    cause = lines[-1].split(":", 1)[-1].strip().rstrip(".") if len(lines) > 1 else ""
    detail = head + (f": {cause}" if cause else "")
    if any(s in text for s in _PEER_GONE):
        return f"communication with another rank failed: that rank has ended (killed or crashed?) ({detail})"
    return f"MPI error ({detail})"


def _status(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - any failure must reach every rank, not only DsplaError
        if os.environ.get("DSPLA_DEBUG") == "1":
            traceback.print_exc()
        return None, e


def on_root(comm, fn):
    """Run ``fn()`` on rank 0 only and tell every rank whether it failed: returns its value on
    rank 0 (None elsewhere), or raises on every rank. Call it on every rank, before the
    communication the value feeds (so an error only rank 0 can see never leaves the others
    waiting). Without a communicator (one process) it is ``fn()``."""
    if comm is None or comm.size == 1:
        return fn()
    value, err = _status(fn) if comm.rank == 0 else (None, None)
    msg = comm.bcast(None if err is None else describe(err), 0)
    if msg is None:
        return value
    if comm.rank == 0:
        err.agreed = True
        raise err
    raise PeerError(f"rank 0 failed: {msg}")


def agree(comm, fn):
    """Run ``fn()`` on every rank, then agree: if it failed anywhere, every rank raises (the
    lowest failing rank its own error, the others a quiet PeerError). Returns this rank's value."""
    if comm is None or comm.size == 1:
        return fn()
    value, err = _status(fn)
    msgs = comm.allgather(None if err is None else describe(err))
    failed = [r for r, m in enumerate(msgs) if m is not None]
    if not failed:
        return value
    if comm.rank == failed[0]:
        err.agreed = True
        if comm.rank != 0:
            err.rank = comm.rank
        raise err
    raise PeerError(f"rank {failed[0]} failed: {msgs[failed[0]]}")


def message(exc: BaseException, rank: int | None, trace: bool = False) -> str:
    """The one message printed for a failure: ``dspla: error[ on rank R]: ...``; with the
    traceback when ``trace`` or under DSPLA_DEBUG=1 (``--debug``)."""
    where = f" on rank {rank}" if rank else ""
    if trace or os.environ.get("DSPLA_DEBUG") == "1":
        return f"dspla: error{where}:\n" + "".join(traceback.format_exception(exc)).rstrip()
    return f"dspla: error{where}: {describe(exc)}"


def fail(comm, exc: BaseException, code: int = 2, text: str | None = None):
    """A sudden failure on this rank: print one message and end the whole job (never returns).
    Ranks other than 0 wait ``GRACE`` seconds first (see the module note)."""
    rank = comm.rank if comm is not None else 0
    if rank != 0 and not getattr(comm, "simulated", False):
        time.sleep(GRACE)
    if comm is None:
        _write(text or message(exc, rank))
        _exit(code)
    comm.abort(text or message(exc, rank), code)
    _exit(code)


def _write(text: str):
    try:
        sys.stderr.write(text.rstrip("\n") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _exit(code: int):
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def launched_by_dspla() -> bool:
    """Whether dspla's own launcher started this rank (it prints interruptions itself)."""
    return LAUNCHED_ENV in os.environ


__all__ = ["GRACE", "STDOUT_CLOSED", "PeerError", "agree", "describe", "fail", "is_quiet", "launched_by_dspla",
           "message", "mpi_error", "on_root", "stdout_failed"]
