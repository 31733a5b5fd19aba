"""What a command costs before any work: ``dspla bench startup [--rounds N] [--json FILE]``.

Times, as wall clock from the start of the command to its exit: ``import dspla``, and ``dspla run``
of a small program (examples/gcn_layer.dspla on a 1,000-node graph) on one process and with
``--np 2``. Each is run with a warm bytecode cache (a cache directory filled by a first run) and a
cold one (no cache at all: PYTHONDONTWRITEBYTECODE=1 and an empty PYTHONPYCACHEPREFIX, so every
module, numpy's and scipy's too, is compiled from source). The cases are interleaved round by
round and the medians are reported with the CPU time of the same runs (user + system, the
command and its children: on a loaded machine it moves less than the wall time). The bars:
``dspla run`` on one process at most 0.5 s wall, at ``--np 2`` at most 1.0 s, warm.
``--baseline BIN`` (another checkout's venv bin folder, e.g. ../main/.venv/bin) runs every case
with its python and dspla too, interleaved with these, and prints the ratios.
Writes bench/results/startup.json; docs/benchmarks.md holds the current figures.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from .common import ROOT, git_commit

BIN = Path(sys.executable).parent
BARS = {"run np1": 0.5, "run np2": 1.0}


def _data(d: Path) -> None:
    rng = np.random.default_rng(0)
    scipy.io.mmwrite(d / "a.mtx", sp.random_array((1000, 1000), density=0.005, rng=rng, format="coo"))
    np.save(d / "x.npy", rng.random((1000, 16)))
    np.save(d / "w.npy", rng.random((16, 7)))


def _cases(d: Path, bin_: Path, label: str = "") -> dict:
    run = [str(bin_ / "dspla"), "run", os.path.join(ROOT, "examples", "gcn_layer.dspla"), "-i", f"A={d / 'a.mtx'}",
           "-i", f"X={d / 'x.npy'}", "-i", f"W={d / 'w.npy'}"]
    return {f"import dspla{label}": [str(bin_ / "python"), "-c", "import dspla"], f"run np1{label}": run,
            f"run np2{label}": [*run, "--np", "2"]}


def _once(cmd: list, env: dict, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and everything it started). Run from ``cwd``, a
    folder of no source tree (``python -c`` imports from the working folder first)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench startup", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="rounds of every case (default 7)")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "startup.json"),
                    help="where to write the results (default bench/results/startup.json)")
    ap.add_argument("--baseline", metavar="BIN", help="also run every case with this venv's python and dspla "
                    "(another checkout's .venv/bin), interleaved, and print the ratios")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        _data(d)
        cases = _cases(d, BIN)
        if args.baseline:
            cases.update(_cases(d, Path(args.baseline), " (baseline)"))
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
        warm_env = {**base, "PYTHONPYCACHEPREFIX": str(d / "pycache-warm")}
        for cmd in cases.values():   # fills the warm cache
            _once(cmd, warm_env, d)
        times: dict = {(c, m): [] for c in cases for m in ("warm", "cold")}
        for r in range(args.rounds):
            for case, cmd in cases.items():
                for mode in ("warm", "cold"):
                    if mode == "cold":
                        prefix = d / f"pycache-cold-{r}"
                        env = {**base, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(prefix)}
                    else:
                        env = warm_env
                    times[(case, mode)].append(_once(cmd, env, d))
                    if mode == "cold":
                        shutil.rmtree(d / f"pycache-cold-{r}", ignore_errors=True)
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
    rows = []
    print(f"{'case':<25} {'cache':<5} {'wall median':>11} {'min':>6} {'max':>6} {'CPU median':>10}")
    for (case, mode), got in times.items():
        wall = [w for w, _ in got]
        cpu = [c for _, c in got]
        rows.append({"case": case, "cache": mode, "wall_s_median": statistics.median(wall), "wall_s": wall,
                     "cpu_s_median": statistics.median(cpu), "cpu_s": cpu})
        print(f"{case:<25} {mode:<5} {statistics.median(wall):>10.3f}s {min(wall):>5.2f}s {max(wall):>5.2f}s "
              f"{statistics.median(cpu):>9.3f}s")
    if args.baseline:
        for case in [c for c in {r["case"] for r in rows} if not c.endswith("(baseline)")]:
            for mode in ("warm", "cold"):
                mine, base = (next(r for r in rows if r["case"] == c and r["cache"] == mode)
                              for c in (case, case + " (baseline)"))
                wall, cpu = (mine[k] / base[k] for k in ("wall_s_median", "cpu_s_median"))
                print(f"{case:<14} {mode:<5} this / baseline: wall {wall:.2f}, CPU {cpu:.2f}")
    bars = []
    for case, bar in BARS.items():
        got = next(r["wall_s_median"] for r in rows if r["case"] == case and r["cache"] == "warm")
        bars.append({"case": case, "bar_s": bar, "wall_s_median": got, "met": got <= bar})
        print(f"bar: {case} warm {got:.3f} s <= {bar} s: {'met' if got <= bar else 'NOT met'}")
    load = os.getloadavg()
    out = {"commit": git_commit(), "rounds": args.rounds, "cpus": os.cpu_count(), "loadavg": load, "rows": rows,
           "bars": bars, "baseline": args.baseline}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"load average {load[0]:.1f} on {os.cpu_count()} CPUs; wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
