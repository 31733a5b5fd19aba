"""dspla calibrate --np P [--out FILE]: fit the cost model on this machine."""
from __future__ import annotations

import sys
import time

from ..calibration import calibrate
from ..costmodel import save
from ..runtime.launch import in_mpi_job, relaunch, world
from .run import _strip


def register(sub, common):
    p = sub.add_parser("calibrate", parents=[common], help="measure this machine and fit the cost-model coefficients")
    p.add_argument("--np", type=int, default=2, help="processes to calibrate with (default 2)")
    p.add_argument("--mpiexec", help="the launcher to use")
    p.add_argument("--out", help="where to write the calibration JSON (default: the user cache, used automatically)")
    p.add_argument("--quick", action="store_true", help="fewer sizes (tests)")
    p.add_argument("--no-plans", action="store_true",
                   help="microbenchmarks only (skip the end-to-end refit on plan runs)")
    p.set_defaults(func=run)


def run(args):

    if not in_mpi_job():
        return relaunch(args.np, _strip(sys.argv[1:], {"--np", "--mpiexec"}), args.mpiexec)

    comm = world()
    t0 = time.perf_counter()
    if comm.rank == 0:
        print(f"calibrating on {comm.size} processes ...", file=sys.stderr)
    res = calibrate(comm, quick=args.quick, plans=not args.no_plans)
    if comm.rank != 0:
        return 0
    coefs, fits = res
    path = save(coefs, fits, args.out)
    print(f"{'family':<6} {'R^2(log)':>8} {'median |rel. residual|':>23} {'max':>8}  coefficients")
    for fam, f in fits.items():
        if fam == "plans":
            b, a = f["before"], f["after"]
            print(f"plans  {f['samples']} runs of every plan: predicted/measured in [0.67, 1.5] "
                  f"{b['within_0.67_1.5']:.0%} (microbenchmarks alone) -> {a['within_0.67_1.5']:.0%} (refit); "
                  f"median |log ratio| {b['median_abs_log_ratio']:.2f} -> {a['median_abs_log_ratio']:.2f}")
            continue
        cs = ", ".join(f"{k}={v:.3g}" for k, v in f["coefficients"].items())
        print(f"{fam:<6} {f['r2']:>8.3f} {f['median_rel_residual']:>23.3f} {f['max_rel_residual']:>8.3f}  {cs}")
    note = "used automatically from now on" if not args.out else "use it with DSPLA_CALIBRATION=" + path
    print(f"wrote {path} ({time.perf_counter() - t0:.1f} s); {note}")
    return 0
