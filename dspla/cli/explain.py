"""dspla explain FILE [--np P] [--input NAME=PATH ...] [--json] | dspla explain --compare stats.json"""
from __future__ import annotations

import json

from ..compiler import step_names
from ..errors import DsplaError
from ..formats import generate_inputs, is_generated, read_input
from ..frontend.parser import parse_file
from ..function import Function
from ..plan.explain import MissingDims, compare
from ..plan.plans import check_choices
from .arguments import (
    NP,
    POSITIVE,
    SEED,
    add_plan_option,
    add_plugin_option,
    load_plugins,
    number,
    parse_dims,
    parse_inputs,
    parse_plan,
)


def register(sub, common):
    p = sub.add_parser("explain", parents=[common], help="show the program after passes and, with --np, the plans "
                                                         "considered for each product and the choice")
    p.add_argument("file", nargs="?", help="the program: an expression file (.dspla; not needed with --compare)")
    add_plugin_option(p)
    p.add_argument("--np", type=NP, metavar="P", help="plan for this many processes, no MPI needed (default: the "
                   "program after passes only, no plan)")
    p.add_argument("--input", "-i", action="append", metavar="NAME=PATH", help="plan against this data, as dspla run "
                   "takes it (repeatable; default: stand-ins of the declared shapes)")
    p.add_argument("--dim", action="append", metavar="NAME=SIZE", help="size of a symbolic dim of inputs not given "
                   "(repeatable, each NAME once; default: the inputs' sizes)")
    p.add_argument("--density", type=number(0, 1, lo_open=True),
                   help="density of stand-in sparse inputs, above 0 and at most 1 (default: 16 entries per row)")
    add_plan_option(p)
    p.add_argument("--partition", default="auto", help="row partition method: auto (see docs/partitioning.md), "
                   "block, random, graph, hypergraph, stochastic-hypergraph")
    p.add_argument("--iterations", type=POSITIVE, help="how many times the plan will run (what --partition auto "
                   "repays; default 100)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the random partitioners and of stand-in inputs")
    p.add_argument("--replication", "-c", type=POSITIVE,
                   help="replication factor c of shift1d / 15d (default: 2 when it divides P, else 1; "
                        "15d: 2 only from P = 4)")
    p.add_argument("--stripe-width", type=POSITIVE, metavar="W", help="twoface stripe width W, at least 1 (default: "
                   "the plan's choice from the graph)")
    p.add_argument("--memory-cap", type=number(0, lo_open=True), metavar="BYTES",
                   help="bytes per process a product may use (default: half the machine's memory over P)")
    p.add_argument("--message-bytes", type=POSITIVE, default=32 << 20, metavar="BYTES",
                   help="p2p1d: largest message (bigger row sets travel in chunks)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--compare", metavar="STATS", help="predicted next to measured, from a run's --stats file "
                   "(default: none)")
    p.add_argument("--dump-after", metavar="STEP", choices=step_names(),
                   help="print what this compiler step produced instead: " + ", ".join(step_names())
                   + " (default: none)")
    p.add_argument("--timings", action="store_true", help="also print the time each compiler step took")
    p.set_defaults(func=run)


def run(args):
    load_plugins(args.plugin)
    if args.compare:
        with open(args.compare) as f:
            stats = json.load(f)
        print(json.dumps(stats["products"], indent=1) if args.json else compare(stats))
        return 0
    if not args.file:
        raise DsplaError("explain needs a FILE (or --compare STATS)")

    f = Function(parse_file(args.file))
    if args.np is None:
        print(f.explain(dump_after=args.dump_after, timings=args.timings))
        return 0

    kinds = {n.attr("name"): n.type.kind.value for n in f.inputs}
    specs = parse_inputs(args.input)
    dims = parse_dims(args.dim)
    # the inputs `dspla run` takes: read from files, or made (full:VALUE, unit:I) to the sizes they give
    given = {k: read_input(v, kinds.get(k, "dense"), name=k) for k, v in specs.items() if not is_generated(v)}
    given.update(generate_inputs({k: v for k, v in specs.items() if is_generated(v)},
                                 {n.attr("name"): n.type for n in f.inputs}, given, dims,
                                 {d: size for d, (size, _) in f.bound_dims.items()}))
    try:
        plan = parse_plan(args.plan)
        check_choices(plan, args.partition, f.program)
        options = dict(plan=plan, partition=args.partition, seed=args.seed, replication=args.replication,
                       stripe_width=args.stripe_width, memory_cap=args.memory_cap, iterations=args.iterations,
                       message_bytes=args.message_bytes)
        out = f.explain(np=args.np, dims=dims, density=args.density, json=args.json, dump_after=args.dump_after,
                        timings=args.timings, options=options, **given)
    except MissingDims as e:   # said in the command line's terms
        raise DsplaError(e.cli_message()) from None
    print(json.dumps(out, indent=1) if args.json else out)
    return 0
