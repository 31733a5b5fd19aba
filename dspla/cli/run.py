"""dspla run FILE --input NAME=PATH ... --out result.npz [--np P --plan NAME ...]"""
from __future__ import annotations

import json
import os
import sys
import time

from ..errors import DsplaError, say_warning
from ..formats import generate_inputs, is_generated, read_input, write_results
from ..formats.files import atomic_write, check_writable, jsonable
from ..formats.inputs import input_path
from ..formats.npy import load_npy
from ..formats.shards import read_manifest
from ..frontend.parser import parse_file
from ..function import Function
from ..plan.explain import partition_lines
from ..runtime import faults
from ..runtime.failure import on_root
from ..runtime.launch import in_mpi_job, one_process, relaunch, world
from ..runtime.shards import load_shards
from ..session import check_choices
from ..values import Array
from .arguments import add_plugin_option, load_plugins, parse_dims, parse_inputs, without_options


def register(sub, common):
    p = sub.add_parser("run", parents=[common], help="run a .dspla program on data files, on 1 or P processes")
    p.add_argument("file")
    add_plugin_option(p)
    p.add_argument("--input", "-i", action="append", metavar="NAME=PATH",
                   help="an input: .mtx/.mtx.gz, .npy, FILE.npz:ARRAY, an edge list, or made to the declared "
                        "shape: full:VALUE (every entry VALUE), unit:I (one entry, 1, in row I) (repeatable)")
    p.add_argument("--dim", action="append", metavar="NAME=SIZE",
                   help="size of a symbolic dim that no input read from a file gives (for generated inputs: "
                        "-i x=full:1 --dim n=100)")
    p.add_argument("--out", "-o", help="write every output to this .npz, once, as its present entries "
                   "(NAME.rows, .cols, .values, .shape; docs/user-guide.md)")
    g = p.add_argument_group("distributed execution")
    g.add_argument("--np", type=int, help="run on this many MPI processes (re-launches under mpiexec)")
    g.add_argument("--mpiexec", help="the launcher to use (default: $DSPLA_MPIEXEC, else the mpich wheel's)")
    g.add_argument("--plan", default="auto", help="product plan: auto (lowest predicted time), p2p1d, allgather1d, "
                                                 "shift1d, twoface, 15d, 2d")
    g.add_argument("--partition", default="auto", help="row partition method: auto (the default: the one whose "
                   "time this run repays, docs/partitioning.md), block, random, graph, hypergraph (the quality "
                   "opt-in), ...")
    g.add_argument("--partition-file", help="a saved partition (.npy of process ids per row)")
    g.add_argument("--shards", metavar="DIR", help="load the inputs in this shard set (dspla shard) on every rank, "
                   "each rank reading its own rows; other inputs come with -i")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--eps", type=float, default=0.03, help="allowed partition imbalance")
    g.add_argument("--replication", "-c", type=int, help="replication factor c of shift1d / 15d (default: 2 when it "
                   "divides P, else 1; 15d: 2 only from P = 4)")
    g.add_argument("--stripe-width", type=int, help="twoface stripe width W")
    g.add_argument("--memory-cap", type=float, help="bytes per process a product's buffers may use (auto skips plans "
                   "over it; twoface turns sync stripes async to stay under it)")
    g.add_argument("--message-bytes", type=int, default=32 << 20, help="p2p1d: rows bigger than this travel in "
                   "chunks of it, two posted at a time (bounds what a rank holds of the rows it receives)")
    g.add_argument("--no-cache", action="store_true", help="do not reuse or store partitions on disk")
    g.add_argument("--rank0-planning", action="store_true", help="rank 0 plans every rank's program and sends "
                   "them (the way before SPMD planning; for comparison)")
    g.add_argument("--stats", help="write what moved (words, messages, times per rank and product) as JSON")
    g.add_argument("--repeat", type=int, help="run N times after one planning (benchmarks: each repeat moves "
                   "the inputs as new ones would be; also the run length --partition auto plans for, else it "
                   "assumes 100)")
    p.add_argument("--allow-nonfinite", action="store_true",
                   help="accept NaN and infinite values in data files (with a warning) instead of refusing them")
    p.set_defaults(func=run)


def run(args):
    checked = _checked(args)   # everything that can be checked without reading the data, first
    if args.np is not None and not in_mpi_job():
        argv = without_options(sys.argv[1:], {"--np", "--mpiexec"})
        return relaunch(args.np, argv, args.mpiexec)
    program, specs, dims, shard_read = checked
    f = Function(program)
    comm = world()
    rank = comm.rank if comm else 0
    faults.inject(rank, "start")
    kinds = {n.attr("name"): n.type.kind.value for n in f.inputs}

    def read():   # rank 0 reads; the others learn of any error before waiting for data
        data = {name: read_input(spec, kinds.get(name, "dense"), allow_nonfinite=args.allow_nonfinite)
                for name, spec in specs.items() if not is_generated(spec)}
        data.update(generate_inputs({k: v for k, v in specs.items() if is_generated(v)},
                                    {n.attr("name"): n.type for n in f.inputs}, data, dims))
        parts = load_npy(args.partition_file) if args.partition_file else None
        return data, parts

    data, parts = on_root(comm, read) or (None, None)
    load_s = 0.0
    if args.shards:   # every rank reads its own rows
        t_load = time.perf_counter()
        data = {**(data or {}), **load_shards(args.shards, comm or one_process(), partition=shard_read,
                                              seed=args.seed)}
        load_s = time.perf_counter() - t_load
    t0 = time.perf_counter()
    if comm is None:
        out = f(**data)
        stats, choice = dict(f.last_stats), []
    else:
        out, stats, choice = _run_on(comm, f, data, parts, load_s, args)
    dt = time.perf_counter() - t0
    # collectives (every rank): the results gathered to rank 0 only when they are written
    summary = {name: (arr.shape, arr.dtype, arr.nvals) for name, arr in out.items()}
    nonfinite = {name: arr.nonfinite() for name, arr in out.items()}   # (not an error: IEEE arithmetic)
    whole = {name: arr.to_graphblas(root=0) for name, arr in out.items()} if args.out else {}
    # a 1 x 1 result (a count, a norm, a loop's last change) is shown with its value
    scalars = {name: whole[name] if name in whole else arr.to_graphblas(root=0) for name, arr in out.items()
               if arr.shape in ((1, 1), ())}
    if rank != 0:
        return 0
    _report(args, comm, {name: Array(M, name) for name, M in whole.items()}, stats, choice, summary, nonfinite,
            scalars, dt)
    return 0


def _checked(args) -> tuple:
    """(program, input specs, dims, the shards' partition) once every argument that can be
    checked without reading data is: before any process is started."""
    load_plugins(args.plugin)
    program = parse_file(args.file)
    specs = parse_inputs(args.input)
    dims = parse_dims(args.dim)
    for spec in specs.values():
        if not is_generated(spec):
            input_path(spec)
    for path, what in ((args.out, "results (--out)"), (args.stats, "stats (--stats)")):
        if path:
            check_writable(path, what)
    if args.partition_file and not os.path.isfile(args.partition_file):
        raise DsplaError(f"partition file not found: {args.partition_file}")
    shard_read = _check_shards(args, program, specs) if args.shards else None
    check_choices(args.plan, args.partition)   # on one process too, where they are not used: a typo now
    if args.repeat is not None and args.repeat < 1:
        raise DsplaError(f"--repeat must be at least 1, got {args.repeat}")
    if args.np is not None and not in_mpi_job() and args.np < 1:
        raise DsplaError(f"--np must be at least 1, got {args.np}")
    return program, specs, dims, shard_read


def _run_on(comm, f: Function, data, parts, load_s: float, args) -> tuple:
    """(results, stats, the partition's description) of a run on the job's ranks with the
    command line's options; rank 0's stats carry every rank's load and start-up times."""
    options = {"plan": args.plan, "partition": args.partition, "seed": args.seed, "eps": args.eps,
               "replication": args.replication, "stripe_width": args.stripe_width, "cache": not args.no_cache,
               "memory_cap": args.memory_cap, "iterations": args.repeat, "spmd": not args.rank0_planning,
               "message_bytes": args.message_bytes}
    if args.partition_file:
        options["parts"] = parts
        options["partition"] = "file"
    out = f.run(data, repeat=args.repeat or 1, **options)
    stats = f.last_stats
    choice = partition_lines(f.session(comm, **options).plan) if comm.rank == 0 else []
    loads = comm.gather(load_s, 0) if comm.size > 1 else [load_s]
    if comm.rank == 0:
        for r, seconds in enumerate(loads):
            stats["per_rank"][r]["load_s"] = seconds
        stats["startup_s"] = {k: max(r.get(k, 0.0) for r in stats["per_rank"])
                              for k in ("load_s", "planning_s", "first_iteration_s")}
    return out, stats, choice


def _report(args, comm, out: dict, stats, choice: list, summary: dict, nonfinite: dict, scalars: dict,
            dt: float) -> None:
    """Rank 0: the files first (a closed stdout must not lose them), then what the run gave."""
    if args.out:
        write_results(args.out, out)
    if args.stats:
        with atomic_write(args.stats, "w") as fh:
            json.dump(stats, fh, indent=1, default=jsonable)
    for name, bad in nonfinite.items():
        if bad and not args.allow_nonfinite:   # (allowed in the inputs: expected in the outputs)
            say_warning(f"output {name} has {bad} NaN or infinite entries (a 0 / 0 or inf - inf in the program)")
    for name, (shape, dtype, nvals) in summary.items():
        if name in scalars:
            v = scalars[name][0, 0].value
            print(f"{name}: {'1x1' if shape else 'scalar'} {dtype} = {'missing (no entry)' if v is None else v}")
        else:
            size = f"{shape[0]}x{shape[1]}" if len(shape) == 2 else f"vector[{shape[0]}]"
            print(f"{name}: {size} {dtype}, {nvals} present")
    if comm is not None:
        print(f"P={stats['P']} plan {stats['plan']}, partition {stats['partition']}: words sent "
              f"total {stats['words_sent_total']} (avg {stats['words_sent_avg']:.1f}, max {stats['words_sent_max']}), "
              f"messages total {stats['messages_sent_total']}; iteration {stats['iteration_s_median']:.4f} s "
              f"(median of {len(stats['iteration_s'])}), planning {stats['planning_s']:.3f} s")
        for line in choice:
            print(line)
        if stats["requested_plan"] != "auto":   # a plan asked for by name but not run: say why
            for p in stats["products"]:
                if p["plan"] != stats["requested_plan"]:
                    for note in p["notes"]:
                        print(f"product {p['index']} ({p['expr']}): {note}")
        if args.stats:
            print(memory_line(stats))
    if args.out:
        print(f"wrote {args.out} ({dt:.3f} s)")


def memory_line(stats: dict) -> str:
    """One line: every rank's peak resident memory, and the start-up split (slowest rank)."""
    per = stats["per_rank"]
    mb = [r["peak_rss_bytes"] / 2**20 for r in per]
    med = sorted(mb)[len(mb) // 2] if mb else 0
    s = stats.get("startup_s", {})
    return (f"peak RSS per rank (MB): {' '.join(f'{x:.0f}' for x in mb)} (max/median {max(mb) / med:.2f}, sum "
            f"{sum(mb):.0f}); start-up: load {s.get('load_s', 0):.2f} s, plan {s.get('planning_s', 0):.2f} s, first "
            f"iteration {s.get('first_iteration_s', 0):.2f} s; planning {stats.get('planning', '?')}")


def _check_shards(args, program, specs) -> str | None:
    """The shard set against the job, before any process starts: a set, its inputs declared by the
    program with the same kind and not also given with -i, its P the job's (or 1: read by rows).
    Returns how ranks read it (None: as written; 'block'/'random': a one-process set by rows)."""
    m = read_manifest(args.shards)
    decl = {n.attr("name"): n.type for n in program.inputs}
    for name, info in m["inputs"].items():
        if name not in decl:
            raise DsplaError(f"{args.shards} holds input {name!r}, which {args.file} does not declare (it takes "
                             f"{', '.join(decl)})")
        if name in specs:
            raise DsplaError(f"input {name} is given twice: with -i and in {args.shards}")
        if decl[name].kind.value != info["kind"]:
            raise DsplaError(f"{args.file} declares {name} as {decl[name]} but {args.shards} holds it "
                             f"{info['kind']}")
    if args.partition_file:
        raise DsplaError("--partition-file and --shards: the shard set is partitioned already")
    return shard_reading(args, m)


def shard_reading(args, m: dict) -> str | None:
    """How this job reads the shard set of manifest ``m``: None, each rank its own shard; for a
    P = 1 set, by 'block' or 'random' rows; any other P is an error naming both."""
    P = args.np if args.np is not None else (world().size if in_mpi_job() else 1)
    if m["P"] == P:
        return None
    if m["P"] == 1:
        if args.partition not in ("auto", "block", "random"):   # (would need the whole graph on one rank)
            raise DsplaError(f"{args.shards} is a one-process set, read by rows: --partition block (the default) or "
                             f"random, not {args.partition}; to partition by {args.partition}, shard with -P {P} "
                             f"--method {args.partition}")
        return "random" if args.partition == "random" else "block"
    raise DsplaError(f"{args.shards} was sharded for P = {m['P']} processes but this job has {P}: run with --np "
                     f"{m['P']}, or shard again with -P {P}")
