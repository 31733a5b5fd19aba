"""dspla demo: train the GCN of examples/gcn.dspla on a generated contextual SBM graph (about
100k nodes, seeded; nothing is downloaded) with 2 MPI processes and the default plan, showing the
plan, per-epoch progress, the final accuracy and what moved between the processes."""
from __future__ import annotations

import sys
import time

from ..models import TrainConfig, Trainer, gcn_step, load_node_data
from ..models.trainer import default_plan
from ..runtime.launch import in_mpi_job, relaunch, world
from .common import NP, POSITIVE, SEED, add_plan_option, integer
from .run import _strip


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

    if not in_mpi_job() and args.np > 1:
        print(f"dspla demo: re-launching on {args.np} MPI processes", file=sys.stderr, flush=True)
        return relaunch(args.np, _strip(sys.argv[1:], {"--np", "--mpiexec"}) + ["--np", str(args.np)], args.mpiexec)


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
