"""The command line's outputs (--out, --stats, train --json, partition --out): a device stays a
device, a link's target is written, an input named as an output is refused before any work."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import pytest

PROG = "input A : sparse[n, n]\ninput X : dense[n, f]\nT = mxm(A, X, plus_second)\noutput T\n"


def dspla(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dspla.cli.main", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.fixture
def case(tmp_path):
    (tmp_path / "p.dspla").write_text(PROG)
    (tmp_path / "a.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 1\n3 1 1\n")
    np.save(tmp_path / "x.npy", np.arange(6.0).reshape(3, 2))
    return tmp_path


def run(case, *more):
    return dspla("run", case / "p.dspla", "-i", f"A={case / 'a.mtx'}", "-i", f"X={case / 'x.npy'}", *more)


def test_an_input_named_as_the_output_is_refused_before_any_work(case):
    before = (case / "x.npy").read_bytes()
    for out in (case / "x.npy", case / "p.dspla"):
        r = run(case, "--out", out)
        assert r.returncode != 0 and "it is the input" in r.stderr and str(out) in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""
    os.link(case / "a.mtx", case / "same.npz")   # another name of the same file
    r = run(case, "--stats", case / "same.npz")
    assert r.returncode != 0 and "it is the input" in r.stderr
    r = run(case, "--out", case / "o.npz", "--stats", case / "o.npz")
    assert r.returncode != 0 and "name the same file" in r.stderr
    assert (case / "x.npy").read_bytes() == before and not (case / "o.npz").exists()
    (case / "part.npy").symlink_to(case / "a.mtx")   # (partition --out appends .npy: a link to the graph)
    r = dspla("partition", case / "a.mtx", "-P", "2", "--method", "block", "--out", case / "part")
    assert r.returncode != 0 and "it is the input" in r.stderr, r.stdout
    assert (case / "a.mtx").read_text().startswith("%%MatrixMarket")


def test_a_link_is_followed(case):
    (case / "o.npz").symlink_to(case / "real.npz")
    r = run(case, "--out", case / "o.npz")
    assert r.returncode == 0, r.stderr
    assert (case / "o.npz").is_symlink() and list(np.load(case / "real.npz")["T"].shape) == [3, 2]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device file (mknod) needs root")
def test_a_full_device_is_reported_and_kept(case):
    full = case / "full"
    try:
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError as e:
        pytest.skip(f"mknod is not permitted here: {e}")
    r = run(case, "--out", full)
    assert r.returncode != 0 and "No space left on device" in r.stderr and "wrote" not in r.stdout, r.stderr
    assert stat.S_ISCHR(full.stat().st_mode) and full.stat().st_rdev == os.makedev(1, 7)
    null = case / "null"   # (not the machine's /dev/null: a regression would replace it)
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    r = run(case, "--stats", null)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(null.stat().st_mode) and null.stat().st_rdev == os.makedev(1, 3)
