"""Writing files safely: atomically (a reader sees the old file or the new one, never half of
one), cleaning up after failures and after writers that were killed, and finding an unwritable
place before the long work that would fill it starts."""
from __future__ import annotations

import os
import socket
import tempfile
from contextlib import contextmanager

import numpy as np

from ..errors import DsplaError

_TMP = ".dspla-tmp"   # temporary files are named .NAME.HOST.PID.dspla-tmp, beside the target


def check_writable(path, what: str = "output") -> str:
    """Raise a DsplaError naming ``what`` unless ``path`` can be created or replaced: its folder
    exists and is writable, and it is not itself a folder. Returns the absolute path."""
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise DsplaError(f"cannot write the {what} to {path}: it is a directory")
    if not os.path.isdir(folder):
        raise DsplaError(f"cannot write the {what} to {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or os.path.exists(path) and not os.access(path, os.W_OK):
        raise DsplaError(f"cannot write the {what} to {path}: permission denied")
    return path


def check_writable_dir(folder, what: str = "directory") -> str:
    """Like check_writable for a folder that will be created if missing (its nearest existing
    parent must be writable). Probes with a real file: os.access trusts mode bits that a
    read-only mount or a full disk may contradict."""
    folder = os.path.abspath(os.fspath(folder))
    probe_in = folder
    while not os.path.isdir(probe_in):
        if os.path.exists(probe_in):
            raise DsplaError(f"cannot use {folder} as the {what}: {probe_in} is not a directory")
        parent = os.path.dirname(probe_in)
        if parent == probe_in:
            break
        probe_in = parent
    try:
        fd, probe = tempfile.mkstemp(prefix=".dspla-probe-", dir=probe_in)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise DsplaError(f"cannot write to the {what} {folder}: {e.strerror}") from None
    return folder


def _tmp_name(path: str) -> str:
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.{socket.gethostname()}.{os.getpid()}{_TMP}")


def sweep_stale(folder) -> int:
    """Remove temporary files left in ``folder`` by writers on this host that no longer run
    (killed mid-write); returns how many were removed."""
    host, removed = socket.gethostname(), 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if not (name.startswith(".") and name.endswith(_TMP)):
            continue
        parts = name[:-len(_TMP)].rsplit(".", 2)
        if len(parts) != 3 or parts[1] != host or not parts[2].isdigit():
            continue
        pid = int(parts[2])
        if pid != os.getpid() and not process_alive(pid):
            try:
                os.unlink(os.path.join(folder, name))
                removed += 1
            except OSError:
                pass
    return removed


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie, not yet reaped, has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # (someone else's: it exists)
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):   # (no /proc here: it exists)
        return True


@contextmanager
def atomic_write(path, mode: str = "wb", durable: bool = False):
    """``with atomic_write(p) as fh: ...`` writes a temporary file beside ``p`` and renames it
    over ``p`` when the block succeeds; on any failure the temporary file is removed and ``p``
    is untouched. ``durable``: fsync the file and the folder (checkpoints)."""
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path)
    sweep_stale(folder)
    tmp = _tmp_name(path)
    try:
        with open(tmp, mode) as fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        try:  # make the rename itself durable
            dfd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass


__all__ = ["atomic_write", "check_writable", "check_writable_dir", "sweep_stale"]


def jsonable(x):
    """What ``json.dump`` cannot take, as JSON (its ``default=``): numpy scalars and arrays as the
    numbers and lists they hold, anything else as its text."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)
