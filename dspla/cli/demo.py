"""dspla demo: train the GCN of examples/gcn.dspla on a generated contextual SBM graph (about
100k nodes, seeded; nothing is downloaded) with 2 MPI processes and the default plan, showing
per-epoch progress, the final accuracy and what moved between the processes (--explain: also the
program after the passes and the distributed plan)."""
from __future__ import annotations

import sys
import time

from ..runtime.launch import in_mpi_job, relaunch, world
from .arguments import NP, POSITIVE, SEED, add_plan_option, integer, parse_plan, without_options


def register(sub, common):
    p = sub.add_parser("demo", parents=[common], help="train a GCN on a generated graph with 2 MPI processes",
                       description=__doc__)
    p.add_argument("--nodes", type=integer(2000), default=100_000, help="graph size, at least 2000")
    p.add_argument("--classes", type=integer(2), default=7, help="number of classes (communities), at least 2")
    p.add_argument("--features", type=POSITIVE, default=32, help="feature width")
    p.add_argument("--epochs", type=POSITIVE, default=30, help="training epochs")
    p.add_argument("--np", type=NP, default=2, metavar="P", help="processes")
    add_plan_option(p)
    p.add_argument("--seed", type=SEED, default=0, help="graph and training seed")
    p.add_argument("--mpiexec", help="the launcher (default: $DSPLA_MPIEXEC, else the mpich wheel's)")
    p.add_argument("--explain", action="store_true", help="also print the program and the distributed plan")
    p.set_defaults(func=run)


def run(args):
    if not in_mpi_job() and args.np > 1:   # (the ranks say what happens: this process only launches)
        argv = without_options(sys.argv[1:], {"--np", "--mpiexec"}) + ["--np", str(args.np)]
        return relaunch(args.np, argv, args.mpiexec)
    from ..models import TrainConfig, Trainer, gcn_step, load_node_data

    t_start = time.perf_counter()
    comm = world()
    rank = comm.rank if comm else 0
    P = comm.size if comm else 1
    data = None
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if rank == 0 else (lambda *a: None)
    plan = parse_plan(args.plan)
    if rank == 0:
        say(f"dspla demo: the 2-layer GCN of examples/gcn.dspla, trained on a generated graph by {P} "
            f"process{'es' if P > 1 else ''} (--explain: the program and the plan)")
        t0 = time.perf_counter()
        data = load_node_data("sbm", nodes=args.nodes, classes=args.classes, feature_dim=args.features,
                              data_seed=args.seed)
        s = data.summary()
        say(f"graph: {s['nodes']:,} nodes, {s['edges']:,} edges, {s['classes']} classes, {s['features']} features "
            f"(a contextual stochastic block model, made in {time.perf_counter() - t0:.1f} s)")
        say(f"model: hidden 16, dropout 0.5, Adam with learning rate 0.01, {args.epochs} epochs"
            + ("" if plan == "auto" else f", plan {args.plan[0] if len(args.plan) == 1 else plan}"))
    cfg = TrainConfig(epochs=args.epochs, seed=args.seed, plan=plan, log_every=1, explain=args.explain,
                      partition_notes=args.explain)
    # examples/gcn.dspla's step with X declared dense (the generated features are dense)
    result = Trainer(gcn_step(sparse_features=False).source_program, data, cfg, comm).fit()
    if rank != 0:
        return 0
    print(summary(result, time.perf_counter() - t_start))
    return 0


def summary(result: dict, total_s: float) -> str:
    """The demo's last lines: accuracy, time per epoch, the plan of each product, what moved."""
    c = result["comm"]
    by_plan: dict = {}
    for p in result["products"]:
        by_plan.setdefault(p["plan"], []).append(p["expr"].split(" =")[0])
    plans = "; ".join(f"{', '.join(names)} by {plan}" for plan, names in by_plan.items())
    P = result["P"]
    lines = [f"final accuracy: test {result['test_accuracy']:.3f}, validation {result['val_accuracy']:.3f}, "
             f"train {result['train_accuracy']:.3f}",
             f"{P} process{'es' if P > 1 else ''}, partition {result['partition']}: "
             f"{result['epoch_time_s_median'] * 1e3:.0f} ms per epoch (median), planning {result['planning_s']:.1f} s"]
    if P > 1:
        lines.append(f"products: {plans}")
        lines.append(f"per process and epoch: {c['words_sent_avg']:,.0f} words sent on average (max "
                     f"{c['words_sent_max']:,.0f}), {c['messages_sent_avg']:.0f} messages")
    lines.append(f"total {total_s:.1f} s")
    return "\n".join(lines)
