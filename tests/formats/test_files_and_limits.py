"""Safe writes (atomic, cleaned up, unwritable places found first) and the input limits."""
from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from dspla.errors import DataFormatError, DsplaError
from dspla.formats import read_input
from dspla.formats.files import atomic_write, check_writable, check_writable_dir, sweep_stale
from dspla.formats.limits import parse_size
from dspla.models import checkpoint
from dspla.partition import cache


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _tmp_of(folder, name, pid) -> str:
    return os.path.join(folder, f".{name}.{socket.gethostname()}.{pid}.dspla-tmp")


def test_atomic_write_replaces_or_leaves_the_old_file(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    with atomic_write(target, "w") as fh:
        fh.write("new")
    assert target.read_text() == "new"
    with pytest.raises(RuntimeError):
        with atomic_write(target, "w") as fh:
            fh.write("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "new" and sorted(os.listdir(tmp_path)) == ["r.json"]


def test_temporaries_of_killed_writers_are_swept(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    for pid in (dead, alive):
        open(_tmp_of(tmp_path, "checkpoint.npz", pid), "w").close()
    open(os.path.join(tmp_path, ".checkpoint.npz.otherhost.1.dspla-tmp"), "w").close()
    assert sweep_stale(tmp_path) == 1
    left = sorted(os.listdir(tmp_path))
    assert _tmp_of(tmp_path, "checkpoint.npz", dead).split("/")[-1] not in left and len(left) == 2


def test_a_checkpoint_save_cleans_up_after_a_killed_one(tmp_path):
    open(_tmp_of(tmp_path, "checkpoint.npz", _dead_pid()), "w").close()
    checkpoint.save(str(tmp_path), {"epoch": 1}, {"w": np.ones(3)})
    assert os.listdir(tmp_path) == ["checkpoint.npz"]
    meta, arrays = checkpoint.load(str(tmp_path))
    assert meta["epoch"] == 1 and arrays["w"].tolist() == [1, 1, 1]


def test_a_full_disk_leaves_no_partial_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path))

    def full(fh, **arrays):
        fh.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(cache.np, "savez", full)
    cache.store("k", {"parts": np.zeros(4, np.int64)}, {"seconds": 1.0})   # must not raise either
    assert os.listdir(tmp_path) == []


def test_unwritable_places_are_named(tmp_path):
    with pytest.raises(DsplaError, match="the directory /nonexistent does not exist"):
        check_writable("/nonexistent/x.npz", "results (--out)")
    with pytest.raises(DsplaError, match="is a directory"):
        check_writable(tmp_path, "results")
    with pytest.raises(DsplaError, match="cannot write to the cache"):
        check_writable_dir("/proc/dspla-cache", "cache")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DsplaError, match="is not a directory"):
        check_writable_dir(tmp_path / "file" / "sub", "cache")
    assert check_writable_dir(tmp_path / "new" / "deeper", "cache").endswith("deeper")


def test_sizes_parse_with_suffixes():
    assert parse_size("512M", "V") == 512 << 20 and parse_size("2G", "V") == 2 << 30 and parse_size("100", "V") == 100
    with pytest.raises(DsplaError, match="must be a size"):
        parse_size("lots", "V")


def test_the_input_limit_applies_and_says_how_to_raise_it(tmp_path, monkeypatch):
    np.save(tmp_path / "x.npy", np.ones((1000, 100)))   # 800 KB of data
    monkeypatch.setenv("DSPLA_MAX_INPUT_BYTES", "100K")
    with pytest.raises(DataFormatError, match="x.npy: an array of shape .1000, 100. float64 needs 781.2 KB, more than "
                                             "the 100.0 KB allowed .DSPLA_MAX_INPUT_BYTES"):
        read_input(str(tmp_path / "x.npy"))
    monkeypatch.setenv("DSPLA_MAX_INPUT_BYTES", "1M")
    assert read_input(str(tmp_path / "x.npy")).shape == (1000, 100)


def test_mostly_empty_matrices_can_be_allowed(tmp_path, monkeypatch):
    (tmp_path / "a.mtx").write_text("%%MatrixMarket matrix coordinate real general\n20000000 3 1\n1 1 1\n")
    with pytest.raises(DataFormatError, match="DSPLA_MAX_DIM_PER_ENTRY"):
        read_input(str(tmp_path / "a.mtx"))
    monkeypatch.setenv("DSPLA_MAX_DIM_PER_ENTRY", "100000000")
    assert read_input(str(tmp_path / "a.mtx")).shape == (20000000, 3)
