"""How fast every failure path ends a job: ``dspla bench failures [--repeat N]``.

Each path runs ``dspla run`` (or ``dspla train``) on a small generated program and data, N times;
the table gives the median and worst wall time from the start of the command (or from the
signal, for signals and a killed rank) to the exit of the launcher, the exit status, and how
many dspla messages were printed. docs/benchmarks.md records a run of it.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from .common import git_commit

BIN = Path(sys.executable).parent
DSPLA, MPIEXEC = str(BIN / "dspla"), str(BIN / "mpiexec")
PROG = "input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n"


def _data(d: Path):
    rng = np.random.default_rng(0)
    scipy.io.mmwrite(d / "a.mtx", sp.random_array((2000, 2000), density=0.005, random_state=rng, format="csr"))
    np.save(d / "x.npy", rng.random((2000, 8)))
    (d / "p.dspla").write_text(PROG)
    bad = (d / "a.mtx").read_text().splitlines()
    bad[10] = "1 1 x"
    (d / "bad.mtx").write_text("\n".join(bad) + "\n")


def _cmd(d: Path, *extra, A="a.mtx"):
    return [DSPLA, "run", str(d / "p.dspla"), "-i", f"A={d / A}", "-i", f"X={d / 'x.npy'}", "--partition", "random",
            *map(str, extra)]


def _once(cmd, env=None, signal_after=None, sig=None, kill_rank=False, close_stdout=False):
    env = {**os.environ, **(env or {})}
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if close_stdout:
        p.stdout.close()
    if signal_after is not None:
        time.sleep(signal_after)
        t0 = time.monotonic()
        if kill_rank:
            marker = str(cmd[2])
            out = subprocess.run(["pgrep", "-f", f"dspla.cli.main run {marker}"], capture_output=True, text=True)
            ranks = [int(x) for x in out.stdout.split()
                     if "python" in Path(f"/proc/{x}/cmdline").read_bytes().split(b"\0")[0].decode()]
            os.kill(ranks[-1], signal.SIGKILL)
        else:
            p.send_signal(sig)
    err = p.stderr.read()
    if not close_stdout:
        p.stdout.read()
    p.wait()
    return time.monotonic() - t0, p.returncode, sum(ln.startswith("dspla") for ln in err.splitlines())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench failures", description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    d = Path(tempfile.mkdtemp(prefix="dspla-failures-"))
    _data(d)
    fake = d / "fake-mpiexec"
    fake.write_text('#!/bin/sh\nshift 2\n"$@" & "$@"\nwait\n')
    fake.chmod(0o755)
    long = ("--np", 2, "--repeat", 10**8)
    paths = [
        ("input file missing, only rank 0 reads it (--np 2)", lambda: _once(_cmd(d, "--np", 2, A="missing.mtx"))),
        ("malformed .mtx read on rank 0 (--np 4)", lambda: _once(_cmd(d, "--np", 4, A="bad.mtx"))),
        ("malformed .mtx, plain mpiexec -n 2", lambda: _once([MPIEXEC, "-n", "2", *_cmd(d, A="bad.mtx")])),
        ("DsplaError on rank 1 before any communication", lambda: _once(_cmd(d, "--np", 2),
                                                                       {"DSPLA_FAULT": "1:start:dspla"})),
        ("crash on rank 1 before any communication", lambda: _once(_cmd(d, "--np", 2), {"DSPLA_FAULT": "1:start"})),
        ("DsplaError on rank 0 after the first collectives", lambda: _once(_cmd(d, "--np", 2),
                                                                          {"DSPLA_FAULT": "0:2:dspla"})),
        ("crash on rank 1 after the first collectives", lambda: _once(_cmd(d, "--np", 2), {"DSPLA_FAULT": "1:2"})),
        ("crash on rank 3 of 4 mid-plan", lambda: _once(_cmd(d, "--np", 4, "--plan", "p2p1d"),
                                                       {"DSPLA_FAULT": "3:3"})),
        ("a rank killed (SIGKILL), from the kill", lambda: _once(_cmd(d, *long), signal_after=6, kill_rank=True)),
        ("SIGTERM to the launcher, from the signal", lambda: _once(_cmd(d, *long), signal_after=6,
                                                                   sig=signal.SIGTERM)),
        ("SIGINT to the launcher, from the signal", lambda: _once(_cmd(d, *long), signal_after=6, sig=signal.SIGINT)),
        ("missing launcher", lambda: _once(_cmd(d, "--np", 2, "--mpiexec", "/nonexistent/mpiexec"))),
        ("launcher that starts nothing (/bin/true)", lambda: _once(_cmd(d, "--np", 2, "--mpiexec", "/bin/true"))),
        ("launcher without an MPI job", lambda: _once(_cmd(d, "--np", 2, "--mpiexec", fake))),
        ("closed stdout (--np 2, --out written)", lambda: _once(_cmd(d, "--np", 2, "--out", d / "o.npz"),
                                                                close_stdout=True)),
        ("unwritable --out, found before launching", lambda: _once(_cmd(d, "--np", 2, "--out", "/nonexistent/o.npz"))),
    ]
    print(f"commit {git_commit()}; {args.repeat} runs each; seconds to the launcher's exit")
    print(f"{'failure path':<52} {'median s':>9} {'max s':>7} {'exit':>5} {'messages':>9}")
    worst = 0.0
    for name, fn in paths:
        runs = [fn() for _ in range(args.repeat)]
        ts = [r[0] for r in runs]
        codes = sorted({r[1] for r in runs})
        msgs = sorted({r[2] for r in runs})
        worst = max(worst, max(ts))
        print(f"{name:<52} {statistics.median(ts):>9.2f} {max(ts):>7.2f} {','.join(map(str, codes)):>5} "
              f"{','.join(map(str, msgs)):>9}", flush=True)
    print(f"worst {worst:.2f} s (bar: 10 s)")
    return 0 if worst < 10 else 1
