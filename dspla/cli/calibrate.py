"""dspla calibrate --np P [--out FILE] [--force]: fit the cost model on this machine;
dspla calibrate --show [--np P]: which calibration the cost model reads, and where it is kept;
dspla calibrate --cluster OUT.toml [--ranks-per-node R] [--sockets-per-node S]: a cluster description."""
from __future__ import annotations

import json
import os
import sys
import time

from ..calibration import calibrate
from ..calibration import cluster as cluster_levels
from ..calibration.microbench import spmm_rates
from ..calibration.quality import assess, notes, quality, warnings
from ..costmodel import cluster as clusters
from ..costmodel import load, save, user_path
from ..costmodel.coefficients import cache_dir, calibrations, in_use
from ..errors import DsplaError, say_warning
from ..formats.files import atomic_write, check_writable, check_writable_dir
from ..runtime.failure import on_root
from ..runtime.launch import in_mpi_job, relaunch, world
from .arguments import NP, POSITIVE, without_options


def register(sub, common):
    p = sub.add_parser("calibrate", parents=[common], help="measure this machine and fit the cost-model coefficients")
    p.add_argument("--np", type=NP, default=2, metavar="P", help="processes to calibrate with")
    p.add_argument("--mpiexec", help="the launcher to use (default: $DSPLA_MPIEXEC, else the mpich wheel's)")
    p.add_argument("--out", help="where to write the calibration JSON (default: the user cache, used automatically; "
                   "dspla calibrate --show says where)")
    p.add_argument("--quick", action="store_true", help="fewer sizes (tests)")
    p.add_argument("--no-plans", action="store_true",
                   help="microbenchmarks only (skip the end-to-end refit on plan runs)")
    p.add_argument("--force", action="store_true",
                   help="save the fit even when it fails the quality checks (docs/planner.md)")
    p.add_argument("--show", action="store_true", help="measure nothing: say which calibration the cost model "
                   "reads for --np processes, where calibrations are kept and how to remove them")
    p.add_argument("--cluster", metavar="OUT.toml", help="instead: measure this allocation's levels (latency, "
                   "bandwidth, overhead per level; injection bandwidth on several nodes) into a cluster "
                   "description (default: none)")
    p.add_argument("--ranks-per-node", type=POSITIVE, help="--cluster: ranks on one node (default: all of the job's)")
    p.add_argument("--sockets-per-node", type=POSITIVE, default=1, help="--cluster: sockets per node (default 1)")
    p.add_argument("--base", default="summit", help="--cluster: the description whose unmeasured levels are kept "
                   "(a TOML file or summit | perlmutter; default summit)")
    p.set_defaults(func=run)


def target(args) -> str:
    return os.path.abspath(args.out) if args.out else user_path(args.np)


def run(args):
    if args.show:
        return show(args.np)
    if args.cluster:
        return run_cluster(args)
    path = target(args)
    # found before minutes of measuring, not after
    if args.out:
        check_writable(path, "calibration (--out)")
    else:   # the user cache: created when missing
        check_writable_dir(os.path.dirname(path), "calibration directory")
        if os.path.exists(path):
            check_writable(path, "calibration")
    if not in_mpi_job():
        return relaunch(args.np, without_options(sys.argv[1:], {"--np", "--mpiexec"}), args.mpiexec)

    comm = world()
    t0 = time.perf_counter()
    if comm.rank == 0:
        print(f"calibrating on {comm.size} processes ...", file=sys.stderr)
    res = calibrate(comm, quick=args.quick, plans=not args.no_plans)
    on_root(comm, lambda: _report_and_save(res, path, args, time.perf_counter() - t0))
    return 0


def show(P: int) -> int:
    """Which calibration a run on P processes reads, the ones kept, and how to remove them."""
    path, why = in_use(P)
    if path is None:
        print(f"in use for P = {P}: the shipped default, fitted on another machine ({why})")
    else:
        made = ""
        try:
            with open(path) as fh:
                d = json.load(fh)
            within = (d.get("fits", {}).get("plans") or {}).get("after", {}).get("within_0.67_1.5")
            made = f"made {d.get('made', '?')}" + (f", {within:.0%} of its plan runs predicted within [0.67, 1.5]"
                                                   if within is not None else "")
        except (OSError, ValueError, AttributeError) as e:
            made = f"unreadable: {e}"
        print(f"in use for P = {P}: {path} ({why}; {made})")
    print(f"dspla calibrate --np {P} would write {user_path(P)}")
    kept = calibrations()
    if kept:
        print(f"calibrations kept in {cache_dir()} (set DSPLA_CACHE_DIR or XDG_CACHE_HOME to move it):")
        for q, f in sorted(kept.items()):
            print(f"  P = {q}: {f}")
        print(f"to go back to the shipped default: rm {' '.join(f for _, f in sorted(kept.items()))}")
    else:
        print(f"no calibration kept in {cache_dir()}")
    if os.environ.get("DSPLA_CALIBRATION"):
        print("(unset DSPLA_CALIBRATION to use the calibrations kept)")
    return 0


def _report_and_save(res, path: str, args, seconds: float):
    coefs, fits = res
    final = coefs.as_dict()
    print(f"{'family':<6} {'R^2(log)':>8} {'median |rel. residual|':>23} {'max':>8}")
    for fam, f in fits.items():
        if fam == "plans":
            b, a = f["before"], f["after"]
            print(f"plans  {f['samples']} runs of every plan: predicted/measured in [0.67, 1.5] "
                  f"{b['within_0.67_1.5']:.0%} (microbenchmarks alone) -> {a['within_0.67_1.5']:.0%} (refit); "
                  f"median |log ratio| {b['median_abs_log_ratio']:.2f} -> {a['median_abs_log_ratio']:.2f}; "
                  f"R^2(log) {a.get('r2', float('nan')):.3f}")
            continue
        print(f"{fam:<6} {f['r2']:>8.3f} {f['median_rel_residual']:>23.3f} {f['max_rel_residual']:>8.3f}")
    for line in quality(final, fits):
        print(line)
    for note in notes(fits):
        print(f"note: {note}")
    for text in warnings(fits):
        say_warning(text)
    problems = assess(final, fits)
    if problems and not args.force:
        keep = path if os.path.exists(path) else f"the calibration in use ({load(coefs.P or None).source})"
        raise DsplaError("calibration not saved, the fit is not good enough: " + "; ".join(problems)
                         + f". Keeping {keep}; re-run on a quieter machine, or pass --force to save it anyway")
    written = save(coefs, fits, args.out)
    forced = " despite: " + "; ".join(problems) if problems else ""
    note = "used automatically from now on" if not args.out else "use it with DSPLA_CALIBRATION=" + written
    print(f"wrote {written} ({seconds:.1f} s); {note}{forced}")


def run_cluster(args):
    """``--cluster OUT``: the levels this job reaches, measured, over the base description."""
    base = clusters.load(args.base)
    check_writable(args.cluster, "cluster description (--cluster)")
    rpn, spn = args.ranks_per_node or args.np, args.sockets_per_node
    if rpn < 1 or spn < 1 or rpn % spn:
        raise DsplaError(f"--ranks-per-node ({rpn}) must be a positive multiple of --sockets-per-node ({spn})")
    if not in_mpi_job():
        return relaunch(args.np, without_options(sys.argv[1:], {"--np", "--mpiexec"}), args.mpiexec)
    comm = world()
    measured = cluster_levels.measure(comm, rpn, spn)
    rate = spmm_rates() if comm.rank == 0 else None

    def write():
        name = os.path.splitext(os.path.basename(args.cluster))[0]
        c = cluster_levels.described(base, measured, rpn, spn, rate, name)
        with atomic_write(args.cluster, "w") as f:
            f.write(clusters.dumps(c))
        for lv in ("socket", "node", "network"):
            L = c.levels[lv]
            tag = "measured" if lv in measured else ("as socket: one socket a node" if lv == "node" and spn == 1
                                                     and "socket" in measured else f"from {base.name}")
            print(f"{lv:<8} alpha {L.alpha:.3g} s  bandwidth {L.bandwidth:.3g} B/s  overhead {L.overhead:.3g} s"
                  f"  ({tag})")
        print(f"injection {c.injection:.3g} B/s per socket; SpMM {c.spmm_rate:.3g} nonzeros x columns/s, "
              f"{c.spmm_row:.3g} output rows x columns/s")
        print(f"wrote {args.cluster}")
    on_root(comm, write)
    return 0
