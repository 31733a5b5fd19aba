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
    add_plan_tuning,
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
    add_plan_tuning(p)
    p.add_argument("--cluster", metavar="FILE", help="predict on this described cluster (a TOML file or summit | "
                   "perlmutter) for any --np, counting each candidate without lowering it (docs/planner.md; "
                   "default: none)")
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
    if args.cluster:
        return _on_cluster(args, f, kinds, given, dims)
    try:
        plan = parse_plan(args.plan)
        check_choices(plan, args.partition, f.program)
        options = dict(plan=plan, partition=args.partition, seed=args.seed, replication=args.replication,
                       stripe_width=args.stripe_width, memory_cap=args.memory_cap, iterations=args.iterations,
                       message_bytes=args.message_bytes, grid=args.grid,
                       ranks_per_node=args.ranks_per_node)
        out = f.explain(np=args.np, dims=dims, density=args.density, json=args.json, dump_after=args.dump_after,
                        timings=args.timings, options=options, **given)
    except MissingDims as e:   # said in the command line's terms
        raise DsplaError(e.cli_message()) from None
    print(json.dumps(out, indent=1) if args.json else out)
    return 0


def _on_cluster(args, f, kinds: dict, given: dict, dims: dict) -> int:
    """Each sparse x dense product of the program (found by planning it for two processes) counted
    at P on the described cluster, every candidate, the fastest chosen; nothing is lowered for P."""
    import scipy.sparse as sp

    from ..costmodel import cluster as clusters
    from ..costmodel.scaling import Shape, product_candidates
    cl = clusters.load(args.cluster)
    graphs = [k for k in given if kinds.get(k) == "sparse"]
    if not graphs:
        raise DsplaError("explain --cluster counts on the graph: give it with -i NAME=FILE (a sparse input of "
                         f"{args.file})")
    g = given[graphs[0]]
    shape = Shape.of(graphs[0], sp.csr_array(getattr(g, "matrix", g)))   # (an edge list reads as a Graph)
    # the products and their widths: planned for two processes, one cheap plan and partition
    one = f.explain(np=2, dims=dims, density=args.density, json=True, options=dict(plan="allgather1d",
                    partition="random"), **given)
    out = {"P": args.np, "cluster": cl.name, "graph": graphs[0], "products": []}
    for prod in one["products"]:
        cands = product_candidates(shape, args.np, int(prod["K"]), cl, seed=args.seed)
        out["products"].append({"expr": prod["expr"], "K": prod["K"], "chosen": cands[0]["plan"], "candidates": cands})
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"P = {args.np} on {cl.name} ({cl.ranks_per_node} ranks/node), graph {graphs[0]}: n = {shape.n:,}, "
          f"nnz = {shape.nnz:,} (pattern, symmetrised); predicted, nothing lowered")
    for prod in out["products"]:
        print(f"\n{prod['expr']}   (K = {prod['K']})")
        for c in prod["candidates"]:
            mark = "  <- chosen" if c["plan"] == prod["chosen"] else ""
            print(f"  {c['plan']:<18} {c['predicted_s'] * 1e3:>10.4g} ms  words/rank {c['words_max']:>10.4g}  "
                  f"msgs/rank {c['messages_max']:>7.4g}  {c['memory_bytes'] / 1e6:>8.3g} MB  ({c['count']}){mark}")
    return 0
