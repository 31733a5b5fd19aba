"""dspla train STEP.dspla --dataset cora --data-dir DIR [--np P] [--epochs ...] [--json result.json]

Trains the parameters of a step program (one forward + backward pass written in the language,
e.g. examples/gcn.dspla) with Adam or SGD, full-batch or on sampled mini-batches. See docs/gcn.md.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

from ..errors import DsplaError, say_warning
from ..formats.files import atomic_write, check_outputs, check_writable_dir, jsonable
from ..formats.shards import read_manifest
from ..frontend.parser import parse_file
from ..models import TrainConfig, Trainer, load_node_data
from ..models import checkpoint as ckpt
from ..models.data import ShardedData
from ..models.minibatch import MiniBatchTrainer
from ..models.program import check_step, differentiate
from ..plan.plans import check_plan_option
from ..runtime.failure import on_root
from ..runtime.launch import in_mpi_job, one_process, relaunch, world
from ..runtime.shards import load_shards
from .arguments import (
    NON_NEGATIVE,
    NP,
    POSITIVE,
    SEED,
    add_dataset_options,
    add_plan_option,
    input_files,
    number,
    parse_plan,
    without_options,
    work_begins,
)
from .run import shard_reading


def register(sub, common):
    p = sub.add_parser("train", parents=[common], help="train a GCN step program (forward + backward in dspla)",
                       description="Train the parameters of a step program (examples/gcn.dspla) on a node "
                                   "classification dataset, on 1 or P processes.")
    p.add_argument("file", help="the step program (.dspla): inputs A, X, Y, T[, seed]; params; outputs loss, "
                                "logits, d<param>")
    d = p.add_argument_group("data")
    add_dataset_options(d, train=True)
    d.add_argument("--graph", help="a graph file (.mtx, edge list, .npz) instead of --dataset (default: none)")
    d.add_argument("--features", help="with --graph: node features (.npy, n x f); default random Gaussian")
    d.add_argument("--labels", help="with --graph: node labels (.npy, n ints); default random")
    d.add_argument("--shards", metavar="DIR", help="a dataset sharded by dspla shard --dataset: every rank reads "
                   "its own rows (instead of --dataset/--graph; default: none)")
    t = p.add_argument_group("training")
    t.add_argument("--epochs", type=POSITIVE, default=200, help="training epochs (full passes over the graph)")
    t.add_argument("--lr", type=number(0, lo_open=True), default=0.01,
                   help="learning rate of the optimizer")
    t.add_argument("--weight-decay", type=number(0), default=5e-4,
                   help="L2 on the first parameter (Kipf & Welling)")
    t.add_argument("--weight-decay-all", action="store_true", help="apply --weight-decay to every parameter")
    t.add_argument("--hidden", type=POSITIVE, default=16, help="size of parameter dims the data does not fix (h)")
    t.add_argument("--dropout", type=number(0, 1, hi_open=True),
                   help="dropout probability of every dropout_mask, from 0 to below 1 (default: as written)")
    t.add_argument("--seed", type=SEED, default=0, help="initialisation and dropout seed")
    t.add_argument("--optimizer", default="adam", choices=["adam", "sgd"], help="adam or sgd")
    t.add_argument("--momentum", type=number(0, 1, hi_open=True), default=0.0,
                   help="sgd momentum, from 0 to below 1")
    t.add_argument("--early-stopping", type=NON_NEGATIVE, default=0, metavar="N",
                   help="stop when the validation loss exceeds the mean of the previous N epochs (0: off)")
    t.add_argument("--checkpoint", metavar="DIR", help="write DIR/checkpoint.npz (atomically) every "
                                                       "--checkpoint-every epochs and at the end (default: none)")
    t.add_argument("--checkpoint-every", type=POSITIVE, default=10, metavar="N", help="epochs between checkpoints")
    t.add_argument("--resume", action="store_true", help="continue from the checkpoint in --checkpoint DIR")
    m = p.add_argument_group("mini-batch")
    m.add_argument("--minibatch", type=POSITIVE, metavar="SIZE", help="train on sampled batches of SIZE target "
                   "nodes (default: full-batch)")
    m.add_argument("--sampler", default="neighbor", choices=["neighbor", "node"],
                   help="neighbor: the batch's 2-hop neighbourhood, up to --fanout random neighbours per node per "
                        "hop; node: the batch's whole 2-hop neighbourhood (every neighbour kept, no --fanout)")
    m.add_argument("--fanout", help="neighbor sampler: neighbours kept per node per hop (default 10,10; the node "
                                    "sampler keeps them all)")
    g = p.add_argument_group("distributed execution")
    g.add_argument("--np", type=NP, metavar="P", help="run on this many processes: 1 in this process, more under "
                   "mpiexec (default: 1, or the job's size under mpiexec/srun)")
    g.add_argument("--mpiexec", help="the launcher (default: $DSPLA_MPIEXEC, else the mpich wheel's)")
    add_plan_option(g)
    g.add_argument("--partition", default="auto", help="row partition method: auto (the one the epochs repay, "
                   "docs/partitioning.md), hypergraph (the quality opt-in), graph, random, block, "
                   "stochastic-hypergraph")
    o = p.add_argument_group("output")
    o.add_argument("--json", help="write the result (per-epoch loss/accuracy, final accuracies, plan, "
                                  "communication) to this file (default: not written)")
    o.add_argument("--save-logits", metavar="FILE.npy", help="write the final (no-dropout) logits (default: not "
                   "written)")
    o.add_argument("--log-every", type=POSITIVE, metavar="N", help="progress line every N epochs when stderr is not "
                   "a terminal (default: about 20 lines per run)")
    o.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    o.add_argument("--explain", action="store_true", help="print the distributed plan once it is made")
    d.add_argument("--allow-nonfinite", action="store_true",
                   help="accept NaN and infinite feature values (with a warning) instead of refusing them")
    p.set_defaults(func=run)


def _check_args(args):

    def bad(msg):
        raise DsplaError(msg)
    if not os.path.exists(args.file):
        bad(f"step program not found: {args.file}")
    if args.epochs < 1:
        bad(f"--epochs must be at least 1, got {args.epochs}")
    if not args.lr > 0:
        bad(f"--lr must be positive, got {args.lr}")
    if args.weight_decay < 0:
        bad(f"--weight-decay must be >= 0, got {args.weight_decay}")
    if args.hidden < 1:
        bad(f"--hidden must be at least 1, got {args.hidden}")
    if args.dropout is not None and not 0 <= args.dropout < 1:
        bad(f"--dropout must be in [0, 1), got {args.dropout}")
    if args.np is not None and args.np < 1:
        bad(f"--np must be at least 1, got {args.np}")
    if args.resume and not args.checkpoint:
        bad("--resume needs --checkpoint DIR")
    if args.minibatch is not None and args.minibatch < 1:
        bad(f"--minibatch must be at least 1, got {args.minibatch}")
    if args.dataset in ("cora", "citeseer", "pubmed"):
        if not args.data_dir:
            bad(f"--dataset {args.dataset} needs --data-dir (the folder with ind.{args.dataset}.*)")
        if not os.path.exists(os.path.join(args.data_dir, f"ind.{args.dataset}.graph")):
            bad(f"no Planetoid files for {args.dataset} in {args.data_dir}")
    if args.graph and not os.path.exists(args.graph):
        bad(f"graph file not found: {args.graph}")
    if args.shards and (args.dataset or args.graph):
        bad("--shards holds the dataset: give it without --dataset or --graph")
    if args.shards and args.minibatch:
        bad("--minibatch samples the whole graph on rank 0: not with --shards")
    if not args.dataset and not args.graph and not args.shards:
        bad("give --dataset (cora, citeseer, pubmed, sbm), --graph FILE or --shards DIR")
    check_plan_option(parse_plan(args.plan))
    planetoid = args.data_dir if args.dataset in ("cora", "citeseer", "pubmed") else None
    check_outputs({"result (--json)": args.json, "logits (--save-logits)": args.save_logits},
                  input_files(args.file, args.graph, args.features, args.labels,
                              dirs=[planetoid, args.shards, args.checkpoint]))
    if args.checkpoint:
        check_writable_dir(args.checkpoint, "checkpoint directory (--checkpoint)")
        if args.resume:
            ckpt.load(args.checkpoint)   # a truncated or foreign file is found before any work


def _check_shards(args, program) -> str | None:
    """The shard set against the step program before any process starts: a dataset set (A, X, Y,
    T, labels, split) whose kinds are the program's, for this job's P (or P = 1: read by rows)."""
    m = read_manifest(args.shards)
    need = ("A", "X", "Y", "T", "labels", "split")
    missing = [k for k in need if k not in m["inputs"]]
    if missing:
        raise DsplaError(f"{args.shards} is not a training dataset (no {', '.join(missing)}): write it with "
                         "dspla shard --dataset ...")
    decl = {n.attr("name"): n.type for n in program.inputs}
    for name in ("A", "X", "Y", "T"):
        if name in decl and decl[name].kind.value != m["inputs"][name]["kind"]:
            raise DsplaError(f"{args.file} declares {name} as {decl[name]} but {args.shards} holds it "
                             f"{m['inputs'][name]['kind']}")
    return shard_reading(args, m)


def _fanout(text):
    try:
        out = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise DsplaError(f"--fanout takes comma-separated integers, got {text!r}") from None
    if not out or min(out) < 1:
        raise DsplaError(f"--fanout values must be >= 1, got {text!r}")
    return out


def run(args):

    _check_args(args)
    program = parse_file(args.file)
    check_step(differentiate(program), args.file)
    shard_read = _check_shards(args, program) if args.shards else None
    if args.np is not None and args.np > 1 and not in_mpi_job():   # (one process trains here)
        return relaunch(args.np, without_options(sys.argv[1:], {"--np", "--mpiexec"}), args.mpiexec)

    comm = world()
    rank = comm.rank if comm else 0

    def load():   # rank 0 reads; a bad file stops every rank before any waits for data
        return load_node_data(args.dataset, data_dir=args.data_dir, graph=args.graph, features=args.features,
                              labels=args.labels, nodes=args.nodes, classes=args.classes,
                              feature_dim=args.feature_dim, avg_degree=args.avg_degree, data_seed=args.data_seed,
                              allow_nonfinite=args.allow_nonfinite)

    sharded = None
    if args.shards:   # every rank reads its rows; rank 0 keeps the labels and the split for the metrics
        one = comm or one_process()
        sharded = load_shards(args.shards, one, names=["A", "X", "Y", "T"], partition=shard_read, seed=args.seed)
        meta = load_shards(args.shards, one, names=["labels", "split"], partition=shard_read, seed=args.seed)
        labels, split = (meta[k].to_numpy(root=0) for k in ("labels", "split"))
        data = ShardedData.of(labels, split, read_manifest(args.shards)) if rank == 0 else None
    else:
        data = on_root(comm, load)
    if rank == 0:
        if not args.quiet:
            s = data.summary()
            print(f"{s['name']}: {s['nodes']} nodes, {s['edges']} edges, {s['features']} features, "
                  f"{s['classes']} classes; train/val/test {s['train']}/{s['val']}/{s['test']}"
                  + (f" ({s['description']})" if s["description"] else ""), file=sys.stderr)
    cfg = TrainConfig(epochs=args.epochs, lr=args.lr, weight_decay=args.weight_decay,
                      weight_decay_on="all" if args.weight_decay_all else "first", hidden=args.hidden,
                      dropout=args.dropout, seed=args.seed, optimizer=args.optimizer, momentum=args.momentum,
                      early_stopping=args.early_stopping, checkpoint=args.checkpoint,
                      checkpoint_every=args.checkpoint_every, resume=args.resume, plan=parse_plan(args.plan),
                      partition=args.partition, progress=not args.quiet, log_every=args.log_every,
                      explain=args.explain)
    if args.minibatch:
        if args.fanout is not None and args.sampler == "node" and rank == 0:
            say_warning(f"--fanout {args.fanout} has no effect with --sampler node (it keeps every neighbour)")
        trainer = MiniBatchTrainer(program, data, cfg, comm, batch_size=args.minibatch, sampler=args.sampler,
                                   fanout=_fanout(args.fanout or "10,10"))
    else:
        trainer = Trainer(program, data, cfg, comm, sharded=sharded)
    work_begins()
    result = trainer.fit()
    if rank != 0:
        return 0
    if args.save_logits:   # the files first: a closed stdout must not lose them
        with atomic_write(args.save_logits) as fh:
            np.save(fh, result["logits"])
    if args.json:
        write_json(args.json, result)
    print_summary(result)
    return 0


def print_summary(r: dict, out=None):
    out = out or sys.stdout
    c = r.get("comm") or {}
    resumed = r.get("resumed_from_epoch")
    how = f" ({r['epochs_trained']} in this run, resumed from epoch {resumed})" if resumed is not None else ""
    ms = f", {r['epoch_time_s_median'] * 1e3:.1f} ms/epoch (median)" if r.get("epoch_time_s_median") is not None else ""
    print(f"test accuracy {r['test_accuracy']:.4f} (train {r['train_accuracy']:.4f}, val {r['val_accuracy']:.4f}) "
          f"after {r['epochs_run']} epochs{how}{ms}", file=out)
    if c.get("words_sent_avg") is not None:
        print(f"P={r['P']} plan {r['plan']}, partition {r['partition']}: per process and step, words sent "
              f"avg {c['words_sent_avg']:.0f} max {c['words_sent_max']:.0f}, messages avg "
              f"{c['messages_sent_avg']:.1f} max {c['messages_sent_max']:.0f}", file=out)


def write_json(path: str, result: dict):
    clean = {k: v for k, v in result.items() if k not in ("logits", "params")}
    with atomic_write(path, "w") as fh:
        json.dump(clean, fh, indent=1, default=jsonable)
