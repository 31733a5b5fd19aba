"""Sizes too large for this machine, and an output stream that refuses the bytes, are told as
dspla messages naming the value, its size and the memory available - never a Python exception's
name or text."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
G = ROOT / "examples" / "gcn_layer.dspla"


def dspla(*args, stdout=subprocess.PIPE, env=None):
    return subprocess.run([sys.executable, "-m", "dspla.cli.main", *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=300, env={**os.environ, **(env or {})})


def one_message(r) -> str:
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("dspla: error: "), r.stderr
    for name in ("ValueError", "OverflowError", "MemoryError", "OutOfMemory", "Traceback", "Unable to allocate"):
        assert name not in r.stderr, r.stderr
    return lines[0]


def test_generated_inputs_too_large_name_the_input_its_size_and_the_memory():
    r = dspla("run", G, "-i", "A=unit:0", "-i", "X=full:1", "-i", "W=full:1", "--dim", "n=1000000000000",
              "--dim", "f=1000000000000")
    msg = one_message(r)
    assert "input A=unit:0, a 1000000000000 x 1000000000000 sparse float64 value, needs 7.3 TB, more than the" in msg
    assert "allowed (the memory available now" in msg


def test_a_size_beyond_int64_is_named():
    msg = one_message(dspla("run", G, "-i", "A=unit:0", "-i", "X=full:1", "-i", "W=full:1",
                            "--dim", "n=9223372036854775808", "--dim", "f=2"))
    assert "--dim takes NAME=SIZE with SIZE a whole number from 1 to 2^60" in msg
    assert "got 'n=9223372036854775808'" in msg


def test_a_product_too_large_to_hold_is_named_before_it_is_computed(tmp_path):
    (tmp_path / "p.dspla").write_text("input X : dense[n, f]\nG = X.T @ X\noutput G\n")
    np.save(tmp_path / "x.npy", np.zeros((0, 10**12)))
    assert (tmp_path / "x.npy").stat().st_size == 128
    msg = one_message(dspla("run", tmp_path / "p.dspla", "-i", f"X={tmp_path / 'x.npy'}"))
    assert "G (" in msg and "p.dspla:2:5), a dense 1000000000000 x 1000000000000 float64 value, needs" in msg
    assert "more than the" in msg and "allowed (the memory available now" in msg


def test_a_full_standard_output_says_so(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    np.save(tmp_path / "x.npy", np.ones((4, 3)))
    (tmp_path / "p.dspla").write_text("input X : dense[n, f]\nY = X + X\noutput Y\n")
    with open("/dev/full", "w") as full:
        r = dspla("run", tmp_path / "p.dspla", "-i", f"X={tmp_path / 'x.npy'}", "--out", tmp_path / "o.npz",
                  stdout=full)
    msg = one_message(r)
    assert "standard output could not be written: No space left on device" in msg
    assert (tmp_path / "o.npz").exists()   # the files first


@pytest.mark.mpi
def test_a_full_standard_output_at_two_processes_says_so(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    np.save(tmp_path / "x.npy", np.ones((4, 3)))
    (tmp_path / "p.dspla").write_text("input X : dense[n, f]\nY = X + X\noutput Y\n")
    with open("/dev/full", "w") as full:
        r = dspla("run", tmp_path / "p.dspla", "-i", f"X={tmp_path / 'x.npy'}", "--np", "2", stdout=full)
    assert "standard output could not be written: No space left on device" in one_message(r)
