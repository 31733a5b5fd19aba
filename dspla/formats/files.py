"""Writing files safely: atomically (a reader sees the old file or the new one, never half of
one), cleaning up after failures and after writers that were killed, and finding an unwritable
place before the long work that would fill it starts.

What a path names decides how it is written (``atomic_write``):

- a regular file, or nothing yet: a temporary file beside it, renamed over it when complete;
- a symbolic link: followed; its target is written as above (the link stays a link);
- a character device (``/dev/null``, a terminal) or a FIFO: written in place, never replaced,
  once the whole content is made (a reader of the FIFO gets all of it or nothing);
- a block device, a socket, a directory: refused with an error naming the path.

A file a data reader of this process read (``note_input``), or one the caller names as an
input (``check_writable(..., inputs=)``), is never written: the same file under another name
(a link) is the same file."""
from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager

from ..errors import DsplaError

_TMP = ".dspla-tmp"   # temporary files are named .NAME.HOST.PID.dspla-tmp, beside the target


_INPUTS: dict[tuple[int, int], str] = {}   # (device, inode) -> the path a data reader read it as


def _identity(path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def note_input(path) -> None:
    """Record that this process read ``path`` as input data: no writer here replaces it."""
    key = _identity(path)
    if key is not None:
        _INPUTS[key] = os.fspath(path)


def _kind(st: os.stat_result | None) -> str:
    if st is None:
        return "absent"
    for test, name in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "directory"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISFIFO, "FIFO"), (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")):
        if test(st.st_mode):
            return name
    return "special file"


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)   # (follows links)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise DsplaError(f"cannot write {path}: {e.strerror or e}") from None


def check_writable(path, what: str = "output", inputs=()) -> str:
    """Raise a DsplaError naming ``what`` unless ``path`` can be written: created or replaced
    (its folder exists and is writable; a link's target's folder), or written in place (a
    character device or a FIFO); not a folder, a block device or a socket; not one of the files
    ``inputs`` names (the same file under any name), nor one a reader of this process read.
    Returns the absolute path."""
    path = os.path.abspath(os.fspath(path))
    st = _stat(path)
    kind = _kind(st)
    if kind == "directory":
        raise DsplaError(f"cannot write the {what} to {path}: it is a directory")
    if kind in ("block device", "socket", "special file"):
        raise DsplaError(f"cannot write the {what} to {path}: it is a {kind} (dspla writes regular files, "
                         "character devices such as /dev/null, and FIFOs)")
    same = _same_as_input(path, inputs)
    if same is not None:
        raise DsplaError(f"cannot write the {what} to {path}: it is the input {same}, which would be lost")
    if kind in ("character device", "FIFO"):
        if not os.access(path, os.W_OK):
            raise DsplaError(f"cannot write the {what} to {path}: permission denied")
        return path
    target = os.path.realpath(path)   # (a link: its target is written)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        shown = folder if target == path else f"{folder} (where the link {path} leads)"
        raise DsplaError(f"cannot write the {what} to {path}: the directory {shown} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or st is not None and not os.access(target, os.W_OK):
        raise DsplaError(f"cannot write the {what} to {path}: permission denied")
    return path


def check_outputs(outputs: dict, inputs=()) -> None:
    """``check_writable`` for each of ``outputs`` (what -> path or None), and no two the same file."""
    seen: dict = {}
    for what, path in outputs.items():
        if not path:
            continue
        check_writable(path, what, inputs)
        if _kind(_stat(os.path.abspath(os.fspath(path)))) in ("character device", "FIFO"):
            continue   # (written in place, one after the other: --out /dev/null --stats /dev/null is fine)
        key = _identity(path) or os.path.realpath(path)
        if key in seen:
            raise DsplaError(f"the {what} and the {seen[key]} name the same file, {path}: give each its own")
        seen[key] = what


def _same_as_input(path, inputs=()) -> str | None:
    """The input (a name from ``inputs``, or a file a reader noted) that ``path`` is, or None."""
    key = _identity(path)
    if key is None:
        return None
    for p in inputs:
        if p and _identity(p) == key:
            return os.fspath(p)
    return _INPUTS.get(key)


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
    return os.path.join(folder, f".{name}.{_host()}.{os.getpid()}{_TMP}")


def sweep_stale(folder) -> int:
    """Remove temporary files left in ``folder`` by writers on this host that no longer run
    (killed mid-write); returns how many were removed."""
    host, removed = _host(), 0
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
    is untouched. ``durable``: fsync the file and the folder (checkpoints). A link is followed
    (its target is written so), a character device or a FIFO is written in place once the
    content is complete, anything else is refused (the module note)."""
    path = os.path.abspath(os.fspath(path))
    kind = _kind(_stat(path))
    if kind not in ("absent", "file", "character device", "FIFO"):
        check_writable(path)   # (raises, naming what it is)
    same = _same_as_input(path)
    if same is not None:
        raise DsplaError(f"cannot write {path}: it is the input {same}, which would be lost")
    if kind in ("character device", "FIFO"):
        with _in_place(path, mode) as fh:
            yield fh
        return
    path = os.path.realpath(path)
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
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and e.errno in _WRITE_ERRORS and e.filename is None:
            e.filename = path   # (the disk's error: its message names the file)
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


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}


@contextmanager
def _in_place(path: str, mode: str):
    """A character device or a FIFO: the content is made in an anonymous temporary file (so a
    failure writes nothing, and formats that seek work), then copied into it."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        if "b" in mode:
            yield tmp
        else:
            text = io.TextIOWrapper(tmp, encoding="utf-8", newline="", write_through=True)
            yield text
            text.flush()
            text.detach()
        tmp.flush()
        tmp.seek(0)
        try:
            with open(path, "wb") as out:   # (a FIFO: waits for its reader, as a shell's > does)
                shutil.copyfileobj(tmp, out, 1 << 20)
        except OSError as e:
            if e.filename is None:
                e.filename = path   # (the device's error, as /dev/full's: its message names it)
            raise


__all__ = ["atomic_write", "check_outputs", "check_writable", "check_writable_dir", "jsonable", "note_input",
           "sweep_stale"]


def jsonable(x):
    """What ``json.dump`` cannot take, as JSON (its ``default=``): numpy scalars and arrays as the
    numbers and lists they hold, anything else as its text."""
    import numpy as np  # (this module checks paths for processes that load no numpy)

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def _host() -> str:
    """This machine's name (in temporary files' names: a folder shared by several machines)."""
    import socket  # (loaded when a file is written: not by a process that only checks paths)

    return socket.gethostname()
