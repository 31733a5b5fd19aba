"""Helpers for benchmarks: medians over repeats after warm-up, the commit, MPI worker jobs."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_time(fn, repeat: int = 5, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def mpi_worker(module: str, P: int, args: Callable[[str], list], env: dict | None = None) -> dict:
    """Run ``python -m MODULE ARGS`` on P ranks under the venv's mpiexec, one GraphBLAS thread per
    rank, and return the JSON rank 0 wrote. ``args(out)``: the arguments, given the path to write;
    ``env``: the environment to start from (default this one). A failed job ends the bench with
    its output."""
    from dspla.runtime.launch import YIELD_ENV, find_mpiexec
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        cmd = [find_mpiexec(), "-n", str(P), sys.executable, "-m", module, *map(str, args(out))]
        env = {**(os.environ if env is None else env), **YIELD_ENV, "DSPLA_THREADS": "1"}
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=3600)
        if r.returncode != 0:
            raise SystemExit(f"P={P} failed: {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        with open(out) as fh:
            return json.load(fh)
