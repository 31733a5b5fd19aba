"""How a dspla error that ends a user's script is shown: one message, at the line of the script
that made the call, without dspla's own frames (they say nothing to the user; DSPLA_DEBUG=1
shows them), and once per job under mpiexec. Every other exception is shown as Python shows it.

Installed by ``import dspla`` as ``sys.excepthook`` (IPython and Jupyter keep their own display,
which this does not touch); an MPI job's ranks replace it with one that also ends the other
ranks (runtime/launch.py), which words a dspla error with :func:`text` too.
"""
from __future__ import annotations

import linecache
import os
import sys
import time
from types import TracebackType

from .errors import DsplaError, _short

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
GRACE = float(os.environ.get("DSPLA_ABORT_GRACE", "2.0"))   # (the same as runtime/failure.py's)


def user_frame(tb: TracebackType | None) -> tuple[str, int] | None:
    """(file, line) of the last frame outside dspla: the user's call that led to the error."""
    where = None
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        if not os.path.abspath(path).startswith(_PACKAGE) and not path.startswith("<frozen"):
            where = (path, tb.tb_lineno)
        tb = tb.tb_next
    return where


def text(exc: DsplaError, tb: TracebackType | None, rank: int | None = None) -> str:
    """``dspla: error[ on rank R]: FILE:LINE: message`` and the user's line under it."""
    head = f"dspla: error{f' on rank {rank}' if rank else ''}: "
    where = user_frame(tb)
    body = str(exc)
    if where is None:
        return head + body
    path, line = where
    source = linecache.getline(path, line).strip()
    if exc.span is None:
        return head + f"{_short(path)}:{line}: {body}" + (f"\n    {source}" if source else "")
    if os.path.abspath(exc.span.file) != os.path.abspath(path):   # (a .dspla file's position: say the call too)
        return head + body + f"\n  (from {_short(path)}:{line}" + (f": {source})" if source else ")")
    return head + body


def _rank() -> int:
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def _rank0_ended() -> bool:
    """In a job on one node (every rank a child of the same launcher process): whether rank 0 has
    ended. Before MPI starts, a launcher does not end the other ranks when one exits, so a rank
    whose error rank 0 has said already stays silent; elsewhere (several nodes) it cannot know."""
    if os.environ.get("MPI_LOCALNRANKS") is None or os.environ.get("MPI_LOCALNRANKS") != os.environ.get("PMI_SIZE"):
        return False
    parent, me = os.getppid(), os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
    except OSError:
        return False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) != parent:
                    continue
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if b"\0PMI_RANK=0\0" in b"\0" + fh.read():
                    return False
        except (OSError, ValueError, IndexError):
            continue
    return True


def _hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    if not isinstance(value, DsplaError) or os.environ.get("DSPLA_DEBUG") == "1":
        _previous(kind, value, tb)
        return
    rank = _rank()
    if rank:   # (in a job: rank 0 says it; a rank whose error is its own says it after a grace)
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        time.sleep(GRACE)
        if _rank0_ended():
            return
    try:
        sys.stderr.write(text(value, tb, rank) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


_previous = sys.excepthook


def install() -> None:
    """Make dspla's errors end a script with one message (once: a second import keeps the hook)."""
    global _previous
    if sys.excepthook is not _hook:
        _previous = sys.excepthook
        sys.excepthook = _hook
