"""What an output path names decides how it is written: a regular file is replaced atomically; a
link is followed and its target written; a character device or a FIFO is written in place and
stays what it is; a block device or a socket is refused; an input is never written. Each kind
as root (devices made with mknod) and as an ordinary user (a child process that drops to
nobody when the tests run as root)."""
from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import graphblas as gb
import numpy as np
import pytest

from dspla.errors import DsplaError
from dspla.formats import write_results
from dspla.formats.files import atomic_write, check_outputs, check_writable, note_input
from dspla.values import Array

ROOT = Path(__file__).resolve().parents[2]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="making a device file (mknod) needs root")


def result() -> dict:
    return {"T": Array(gb.Matrix.from_dense(np.arange(6.0).reshape(3, 2)), "T")}


def device(path: Path, minor: int) -> Path:
    """A character device of the memory driver (major 1): minor 3 is /dev/null, 7 /dev/full."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except PermissionError as e:   # (a container may forbid it even to root)
        pytest.skip(f"mknod is not permitted here: {e}")
    return path


def test_a_regular_file_is_replaced_atomically(tmp_path):
    p = tmp_path / "o.npz"
    p.write_bytes(b"old")
    ino = p.stat().st_ino
    write_results(str(p), result())
    assert p.stat().st_ino != ino and np.load(p)["T"].ravel().tolist() == list(np.arange(6.0))
    assert os.listdir(tmp_path) == ["o.npz"]   # (no temporary left)


def test_a_link_is_followed_and_its_target_written(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "o.npz"
    target.write_bytes(b"old")
    link = tmp_path / "o.npz"
    link.symlink_to(target)
    write_results(str(link), result())
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert list(np.load(target)["T"].shape) == [3, 2]
    dangling = tmp_path / "new.json"
    dangling.symlink_to(tmp_path / "real" / "made.json")   # (a link to a file not made yet)
    with atomic_write(dangling, "w") as fh:
        json.dump({"a": 1}, fh)
    assert dangling.is_symlink() and json.loads((tmp_path / "real" / "made.json").read_text()) == {"a": 1}


def test_a_fifo_is_written_in_place_and_its_reader_gets_everything(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_results(str(fifo), result())
    reader.join(10)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and got, "the FIFO was replaced: its reader got nothing"
    (tmp_path / "copy.npz").write_bytes(got[0])
    assert np.load(tmp_path / "copy.npz")["T"].ravel().tolist() == list(np.arange(6.0))


@pytest.mark.skipif(os.geteuid() == 0, reason="as root a regression would replace the machine's /dev/null: root "
                    "writes a device of its own (the next test)")
def test_dev_null_stays_a_device():
    before = os.stat("/dev/null")
    write_results("/dev/null", result())
    with atomic_write("/dev/null", "w") as fh:
        fh.write("text")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino and after.st_rdev == before.st_rdev


@ROOT_ONLY
def test_a_character_device_is_written_in_place_never_replaced(tmp_path):
    null = device(tmp_path / "null", 3)
    write_results(str(null), result())
    assert stat.S_ISCHR(null.stat().st_mode) and null.stat().st_rdev == os.makedev(1, 3)
    full = device(tmp_path / "full", 7)
    with pytest.raises(OSError, match="No space left on device") as e:
        write_results(str(full), result())
    assert e.value.filename == str(full)   # (the message names the file)
    assert stat.S_ISCHR(full.stat().st_mode) and full.stat().st_rdev == os.makedev(1, 7)
    assert sorted(os.listdir(tmp_path)) == ["full", "null"]


@ROOT_ONLY
def test_a_block_device_is_refused(tmp_path):
    blk = tmp_path / "disk"
    try:
        os.mknod(blk, 0o600 | stat.S_IFBLK, os.makedev(7, 200))
    except PermissionError as e:
        pytest.skip(f"mknod is not permitted here: {e}")
    with pytest.raises(DsplaError, match="it is a block device"):
        write_results(str(blk), result())
    with pytest.raises(DsplaError, match="it is a block device"):
        check_writable(blk, "results (--out)")
    assert stat.S_ISBLK(blk.stat().st_mode)


def test_a_socket_and_a_directory_are_refused(tmp_path):
    s = socket.socket(socket.AF_UNIX)
    sock = tmp_path / "sock"
    s.bind(str(sock))
    try:
        with pytest.raises(DsplaError, match="results .* it is a socket"):
            check_writable(sock, "results (--out)")
        with pytest.raises(DsplaError, match="it is a socket"):
            write_results(str(sock), result())
        assert stat.S_ISSOCK(sock.stat().st_mode)
    finally:
        s.close()
    with pytest.raises(DsplaError, match="it is a directory"):
        check_writable(tmp_path, "results (--out)")


def test_an_input_is_never_written(tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.ones((2, 2)))
    with pytest.raises(DsplaError, match=r"x.npy: it is the input .*x.npy"):
        check_writable(x, "results (--out)", inputs=[x])
    (tmp_path / "alias.npy").hardlink_to(x)   # the same file under another name
    with pytest.raises(DsplaError, match="it is the input"):
        check_writable(tmp_path / "alias.npy", "results (--out)", inputs=[x])
    with pytest.raises(DsplaError, match="stats .* and the results .* name the same file|results .* and the stats"):
        check_outputs({"results (--out)": tmp_path / "o.npz", "stats (--stats)": tmp_path / "o.npz"})
    check_outputs({"results (--out)": os.devnull, "stats (--stats)": os.devnull})   # (a device: both, in turn)
    note_input(x)   # a reader of this process read it: no writer replaces it
    with pytest.raises(DsplaError, match="it is the input"):
        write_results(str(tmp_path / "alias.npy"), result())
    assert np.load(x).tolist() == [[1.0, 1.0], [1.0, 1.0]]


_AS_USER = """
import os, stat, sys, threading, json
import graphblas as gb
import numpy as np
from dspla.errors import DsplaError
from dspla.values import Array
from dspla.formats import write_results
from dspla.formats.files import atomic_write, check_writable
os.setgid(65534); os.setuid(65534)   # (after the imports: the interpreter's files may be root's alone)
d = sys.argv[1]
import graphblas as gb
r = {"T": Array(gb.Matrix.from_dense(np.ones((2, 2))), "T")}
write_results(os.path.join(d, "plain.npz"), r)
os.symlink(os.path.join(d, "target.npz"), os.path.join(d, "link.npz"))
write_results(os.path.join(d, "link.npz"), r)
os.mkfifo(os.path.join(d, "fifo"))
got = []
t = threading.Thread(target=lambda: got.append(open(os.path.join(d, "fifo"), "rb").read()), daemon=True)
t.start(); write_results(os.path.join(d, "fifo"), r); t.join(10)
write_results("/dev/null", r)
try:
    os.mknod(os.path.join(d, "dev"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    made = True
except PermissionError:
    made = False
try:
    check_writable("/etc/dspla-test-output", "results (--out)")
    denied = False
except DsplaError as e:
    denied = "permission denied" in str(e)
print(json.dumps({"fifo": len(got[0]) if got else 0, "link": os.path.islink(os.path.join(d, "link.npz")),
                  "target": os.path.exists(os.path.join(d, "target.npz")), "mknod": made, "denied": denied,
                  "null": stat.S_ISCHR(os.stat("/dev/null").st_mode)}))
"""


def test_as_an_ordinary_user(tmp_path):
    """The same rules without root's rights: a FIFO, a link, /dev/null; mknod is refused to the
    user (so no device is made), and an unwritable folder is named before any work."""
    if os.geteuid() != 0:
        pytest.skip("runs as root to drop to nobody; as an ordinary user the other tests of this file are the check")
    d = Path(tempfile.mkdtemp(prefix="dspla-user-"))   # (pytest's own folder is root's alone)
    try:
        os.chown(d, 65534, 65534)
        r = subprocess.run([sys.executable, "-c", _AS_USER, str(d)], capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(d)}, timeout=120)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {"fifo": out["fifo"], "link": True, "target": True, "mknod": False, "denied": True, "null": True}
    assert out["fifo"] > 100
