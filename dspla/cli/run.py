"""dspla run FILE --input NAME=PATH ... --out result.npz [--np P --plan NAME ...]"""
from __future__ import annotations

import json
import os
import sys
import time

from ..errors import DsplaError, say_warning
from ..formats.files import check_outputs
from ..formats.specs import input_path, is_generated
from ..plan.plans import check_choices
from ..runtime.launch import in_mpi_job, relaunch, world
from .arguments import (
    NP,
    POSITIVE,
    SEED,
    add_plan_option,
    add_plan_tuning,
    add_plugin_option,
    input_files,
    load_plugins,
    number,
    parse_dims,
    parse_inputs,
    parse_plan,
    partition_ids,
    without_options,
    work_begins,
)


def register(sub, common):
    p = sub.add_parser("run", parents=[common], help="run a .dspla program on data files, on 1 or P processes")
    p.add_argument("file", help="the program: an expression file (.dspla; lang/README.md)")
    add_plugin_option(p)
    p.add_argument("--input", "-i", action="append", metavar="NAME=PATH",
                   help="an input: .mtx/.mtx.gz, .npy, FILE.npz:ARRAY, an edge list (a third column is the weight; "
                        "reader options after a colon: FILE.txt:unweighted,undirected,duplicates=sum), or made to the "
                        "declared shape: full:VALUE (every entry VALUE), unit:ID (one entry, 1, in the row of node "
                        "ID: its id in the edge list, else the row number) (repeatable, each NAME once; default: none)")
    p.add_argument("--dim", action="append", metavar="NAME=SIZE",
                   help="size of a symbolic dim that no input read from a file gives (for generated inputs: "
                        "-i x=full:1 --dim n=100); repeatable, each NAME once (default: the inputs' sizes)")
    p.add_argument("--out", "-o", metavar="FILE.npz", help="write every output to this .npz, once: a full one as "
                   "the array NAME, one with missing entries as NAME.rows, .cols, .values, .shape; node ids as "
                   "NAME.ids (docs/user-guide.md) (default: not written)")
    g = p.add_argument_group("distributed execution")
    g.add_argument("--np", type=NP, metavar="P", help="run on this many processes: 1 in this process, more under "
                   "mpiexec (default: 1, or the job's size under mpiexec/srun)")
    g.add_argument("--mpiexec", help="the launcher to use (default: $DSPLA_MPIEXEC, else the mpich wheel's)")
    add_plan_option(g)
    g.add_argument("--partition", default="auto", help="row partition method: auto (the one whose time this run "
                   "repays, docs/partitioning.md), block, random, graph, hypergraph (the quality opt-in), "
                   "stochastic-hypergraph")
    g.add_argument("--partition-file", metavar="FILE.npy", help="a saved partition: a 1-D .npy of process ids "
                   "(0..P-1), one per row (default: none; --partition decides)")
    g.add_argument("--shards", metavar="DIR", help="load the inputs in this shard set (dspla shard) on every rank, "
                   "each rank reading its own rows; other inputs come with -i (default: none)")
    g.add_argument("--seed", type=SEED, default=0, help="seed of the random partitioners and of random partitions")
    g.add_argument("--eps", type=number(0, 1, hi_open=True), default=0.03,
                   help="allowed partition imbalance, from 0 to below 1")
    add_plan_tuning(g)
    g.add_argument("--no-cache", action="store_true", help="do not reuse or store partitions on disk")
    g.add_argument("--rank0-planning", action="store_true", help="rank 0 plans every rank's program and sends "
                   "them (the way before SPMD planning; for comparison)")
    g.add_argument("--stats", metavar="FILE.json", help="write what moved (words, messages, times per rank and "
                   "product) as JSON (default: not written)")
    g.add_argument("--repeat", type=POSITIVE, metavar="N", help="run N times after one planning (benchmarks: each "
                   "repeat moves the inputs as new ones would be; also the run length --partition auto plans for, "
                   "else it assumes 100) (default: 1)")
    p.add_argument("--allow-nonfinite", action="store_true",
                   help="accept NaN and infinite values in data files (with a warning) instead of refusing them")
    p.set_defaults(func=run)


def run(args):
    # what can be checked without loading the language or reading data, before any process starts
    specs = parse_inputs(args.input)
    dims = parse_dims(args.dim)
    files = [input_path(spec) for spec in specs.values() if not is_generated(spec)]
    check_outputs({"results (--out)": args.out, "stats (--stats)": args.stats},
                  input_files(args.file, args.partition_file, *files, *(args.plugin or ()), dirs=[args.shards]))
    if args.partition_file and not os.path.isfile(args.partition_file):
        raise DsplaError(f"partition file not found: {args.partition_file}")
    plan = parse_plan(args.plan)
    launch = args.np is not None and args.np > 1 and not in_mpi_job()
    if launch and not args.shards:
        # This process only launches: the program, the plugins and the plans per product are
        # checked by the ranks, before any communication (a mistake ends the job with one
        # message); loading the language here too would add its start-up to every job's.
        if not os.path.isfile(args.file):
            why = "not a file" if os.path.exists(args.file) else "No such file or directory"
            raise DsplaError(f"cannot read {args.file}: {why}")
        check_choices(plan, args.partition)
        return relaunch(args.np, without_options(sys.argv[1:], {"--np", "--mpiexec"}), args.mpiexec)
    from ..frontend.parser import parse_file

    load_plugins(args.plugin)
    program = parse_file(args.file)
    # (a shard set is checked against the program and the job here, launcher or not: a set made
    # for another P is a mistake to report before starting P processes)
    shard = _check_shards(args, program, specs) if args.shards else (None, [], {}, {})
    check_choices(plan, args.partition, program)   # on one process too, where they are not used: a typo now
    if launch:
        return relaunch(args.np, without_options(sys.argv[1:], {"--np", "--mpiexec"}), args.mpiexec)
    return run_here(args, program, specs, dims, plan, shard)


def run_here(args, program, specs: dict, dims: dict, plan, shard: tuple) -> int:
    """The run, in this process: alone, or as one rank of an MPI job. ``shard`` is what
    _check_shards returns (how ranks read the set, its inputs, their dims and node ids)."""
    from ..formats import generate_inputs, read_input
    from ..formats.npy import load_npy
    from ..function import Function
    from ..runtime import faults
    from ..runtime.failure import on_root
    from ..runtime.launch import one_process
    from ..values import Array

    # one process runs here, through the same runtime as P (no relaunch: it costs a second start-up)
    f = Function(program)
    comm = world()
    rank, P = (comm.rank, comm.size) if comm else (0, 1)
    faults.inject(rank, "start")
    kinds = {n.attr("name"): n.type.kind.value for n in f.inputs}
    dtypes = {n.attr("name"): n.type.dtype.value for n in f.inputs}
    shard_read, shard_names, shard_dims, shard_ids = shard

    def read():   # rank 0 reads; the others learn of any error before waiting for data
        data = {name: read_input(spec, kinds.get(name, "dense"), allow_nonfinite=args.allow_nonfinite,
                                 dtype=dtypes.get(name), name=name)
                for name, spec in specs.items() if not is_generated(spec)}
        bound = {d: size for d, (size, _) in f.bound_dims.items()}   # sizes the program fixes (X + Y: c = 4)
        data.update(generate_inputs({k: v for k, v in specs.items() if is_generated(v)},
                                    {n.attr("name"): n.type for n in f.inputs}, data, dims, {**bound, **shard_dims},
                                    shard_ids))
        parts = partition_ids(load_npy(args.partition_file), args.partition_file, P) if args.partition_file else None
        return data, parts

    data, parts = on_root(comm, read) or (None, None)
    load_s = 0.0
    if args.shards:   # every rank reads its own rows
        from ..runtime.shards import load_shards

        t_load = time.perf_counter()
        data = {**(data or {}), **load_shards(args.shards, comm or one_process(), partition=shard_read,
                                              seed=args.seed, names=shard_names)}
        load_s = time.perf_counter() - t_load
    options = _options(args, plan, parts)
    work_begins()
    t0 = time.perf_counter()
    out = f.run(data, repeat=args.repeat or 1, **options)
    stats = f.last_stats
    choice = []
    if rank == 0 and P > 1:
        from ..plan.explain import partition_lines

        choice = partition_lines(f.session(comm, **options).plan)
    loads = comm.gather(load_s, 0) if P > 1 else [load_s]
    if rank == 0:
        _startup(stats, loads)
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
    out = {name: Array(M, name, ids=out[name].ids, col_ids=out[name].col_ids) for name, M in whole.items()}
    return _report(args, out, stats, nonfinite, summary, scalars, choice, dt)


def _report(args, out: dict, stats, nonfinite: dict, summary: dict, scalars: dict, choice: list, dt: float) -> int:
    """Rank 0: the output files, then what the run made and moved."""
    from ..formats import write_results
    from ..formats.files import atomic_write, jsonable

    # the files first: a closed stdout must not lose them
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
    print(summary_line(stats))
    for line in choice:
        print(line)
    if args.stats:
        print(memory_line(stats))
    if args.out:
        print(f"wrote {args.out} ({dt:.3f} s)")
    return 0


def _options(args, plan, parts) -> dict:
    """The run's options (dspla.plan.options.Options) from the command line."""
    options = {"plan": plan, "partition": args.partition, "seed": args.seed, "eps": args.eps,
               "replication": args.replication, "stripe_width": args.stripe_width, "cache": not args.no_cache,
               "memory_cap": args.memory_cap, "iterations": args.repeat, "spmd": not args.rank0_planning,
               "message_bytes": args.message_bytes, "grid": args.grid,
               "ranks_per_node": args.ranks_per_node}
    if args.partition_file:
        options.update(parts=parts, partition="file")
    return options


def _startup(stats, loads: list) -> None:
    """Every rank's time to load its shards, and the start-up split of the slowest, into the stats."""
    for r, seconds in enumerate(loads):
        stats["per_rank"][r]["load_s"] = seconds
    stats["startup_s"] = {k: max(r.get(k, 0.0) for r in stats["per_rank"])
                          for k in ("load_s", "planning_s", "first_iteration_s")}


def summary_line(stats) -> str:
    """What the run did and what each figure times: the plan and what moved (P > 1), the run (the
    median of --repeat runs), planning, and each loop's iteration count."""
    times = stats["iteration_s"]
    run_s = f"run {stats['iteration_s_median']:.3f} s" + (f" (median of {len(times)} runs)" if len(times) > 1 else "")
    head = f"P={stats['P']}"
    if stats["P"] > 1:
        head += (f" plan {stats['plan']}, partition {stats['partition']}: words sent total "
                 f"{stats['words_sent_total']} (avg {stats['words_sent_avg']:.1f}, max {stats['words_sent_max']}), "
                 f"messages total {stats['messages_sent_total']}")
    loops = "".join(f"; loop{'' if len(stats['loops']) == 1 else ' ' + str(lp['loop'])}: {lp['iterations']} "
                    f"iteration{'s' if lp['iterations'] != 1 else ''}"
                    + (" (stopped at its bound)" if lp.get("stopped_at_bound") else "") for lp in stats["loops"])
    return f"{head}; {run_s}, planning {stats['planning_s']:.3f} s{loops}"


def memory_line(stats: dict) -> str:
    """One line: every rank's peak resident memory, and the start-up split (slowest rank)."""
    per = stats["per_rank"]
    mb = [r["peak_rss_bytes"] / 2**20 for r in per]
    med = sorted(mb)[len(mb) // 2] if mb else 0
    s = stats.get("startup_s", {})
    return (f"peak RSS per rank (MB): {' '.join(f'{x:.0f}' for x in mb)} (max/median {max(mb) / med:.2f}, sum "
            f"{sum(mb):.0f}); start-up: load {s.get('load_s', 0):.2f} s, plan {s.get('planning_s', 0):.2f} s, first "
            f"iteration {s.get('first_iteration_s', 0):.2f} s; planning {stats.get('planning', '?')}")


def _check_shards(args, program, specs) -> tuple[str | None, list[str], dict[str, int], dict]:
    """The shard set against the job, before any process starts: a set holding some of the
    program's inputs (those it does not take are not read), with the same kind and not also given
    with -i, its P the job's (or 1: read by rows). Returns how ranks read it (None: as written;
    'block'/'random': a one-process set by rows), the inputs to read, the sizes of the dims they
    give and the node ids of their rows, if the set has them (for inputs made with full: or unit:)."""
    from ..formats.shards import node_ids, read_manifest

    m = read_manifest(args.shards)
    decl = {n.attr("name"): n.type for n in program.inputs}
    names = [name for name in m["inputs"] if name in decl]
    if not names:
        raise DsplaError(f"{args.shards} holds {', '.join(m['inputs']) or 'no inputs'}, none of which {args.file} "
                         f"takes (it takes {', '.join(decl)})")
    for name in names:
        info = m["inputs"][name]
        if name in specs:
            raise DsplaError(f"input {name} is given twice: with -i and in {args.shards}")
        if decl[name].kind.value != info["kind"]:
            raise DsplaError(f"{args.file} declares {name} as {decl[name]} but {args.shards} holds it "
                             f"{info['kind']}")
    if args.partition_file:
        raise DsplaError("--partition-file and --shards: the shard set is partitioned already")
    sizes = {d: int(size) for name in names for d, size in zip(decl[name].shape, m["inputs"][name]["shape"])
             if isinstance(d, str)}
    ids = node_ids(args.shards, m, verify=False)
    rows = {decl[name].shape[0] for name in names if isinstance(decl[name].shape[0], str)}
    return shard_reading(args, m), names, sizes, {d: (ids, args.shards) for d in rows if ids is not None}


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
