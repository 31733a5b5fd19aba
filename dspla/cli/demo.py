"""dspla demo: train the GCN of examples/gcn.dspla on a generated contextual SBM graph (about
100k nodes, seeded; nothing is downloaded) with 2 MPI processes and the default plan, showing the
plan, per-epoch progress, the final accuracy and what moved between the processes."""
from __future__ import annotations

import sys
import time

from ..errors import DsplaError
from ..models import TrainConfig, Trainer, gcn_step, load_node_data
from ..models.trainer import default_plan
from ..runtime.launch import in_mpi_job, relaunch, world
from .arguments import without_options


def register(sub, common):
    p = sub.add_parser("demo", parents=[common], help="train a GCN on a generated graph with 2 MPI processes",
                       description=__doc__)
    p.add_argument("--nodes", type=int, default=100_000, help="graph size (default 100000)")
    p.add_argument("--classes", type=int, default=7)
    p.add_argument("--features", type=int, default=32, help="feature width (default 32)")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--np", type=int, default=2, help="MPI processes (default 2)")
    p.add_argument("--plan", help="product plan (default: the runtime's default, auto when available)")
    p.add_argument("--seed", type=int, default=0, help="graph and training seed")
    p.add_argument("--mpiexec", help="the launcher (default: $DSPLA_MPIEXEC, else the mpich wheel's)")
    p.set_defaults(func=run)


def run(args):

    if args.np < 1 or args.nodes < 2000 or args.epochs < 1:
        raise DsplaError("need --np >= 1, --nodes >= 2000 and --epochs >= 1")
    if not in_mpi_job() and args.np > 1:
        print(f"dspla demo: re-launching on {args.np} MPI processes", file=sys.stderr, flush=True)
        argv = without_options(sys.argv[1:], {"--np", "--mpiexec"}) + ["--np", str(args.np)]
        return relaunch(args.np, argv, args.mpiexec)


    t_start = time.perf_counter()
    comm = world()
    rank = comm.rank if comm else 0
    P = comm.size if comm else 1
    data = None
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if rank == 0 else (lambda *a: None)
    if rank == 0:
        t0 = time.perf_counter()
        data = load_node_data("sbm", nodes=args.nodes, classes=args.classes, feature_dim=args.features,
                              data_seed=args.seed)
        s = data.summary()
        say(f"generated a contextual SBM graph: {s['nodes']} nodes, {s['edges']} edges, {s['classes']} classes, "
            f"{s['features']} features ({s['description']}) in {time.perf_counter() - t0:.1f} s")
        say(f"training the 2-layer GCN of examples/gcn.dspla (hidden 16, dropout 0.5, Adam lr 0.01) for "
            f"{args.epochs} epochs on P = {P} process(es), plan {args.plan or default_plan()}")
    cfg = TrainConfig(epochs=args.epochs, seed=args.seed, plan=args.plan, log_every=1, explain=True)
    # examples/gcn.dspla's step with X declared dense (the generated features are dense)
    result = Trainer(gcn_step(sparse_features=False).source_program, data, cfg, comm).fit()
    if rank != 0:
        return 0
    c = result["comm"]
    print(f"\nfinal accuracy: test {result['test_accuracy']:.3f}, validation {result['val_accuracy']:.3f}, "
          f"train {result['train_accuracy']:.3f}")
    print(f"P = {result['P']}, plan {result['plan']}, partition {result['partition']}; "
          f"{result['epoch_time_s_median'] * 1e3:.0f} ms per epoch (median), planning {result['planning_s']:.1f} s")
    print(f"communication per process and epoch: words sent avg {c['words_sent_avg']:,.0f} max "
          f"{c['words_sent_max']:,.0f}; messages avg {c['messages_sent_avg']:.1f} max {c['messages_sent_max']:.0f}")
    for p in result["products"]:
        print(f"  {p['expr']}: {p['plan']}, words avg {p['words_sent_avg']:,.0f} max {p['words_sent_max']:,.0f}, "
              f"messages avg {p['messages_sent_avg']:.1f} max {p['messages_sent_max']:.0f}")
    print(f"total {time.perf_counter() - t_start:.1f} s")
    return 0
