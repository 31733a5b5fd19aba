"""dspla shard -i A=graph.mtx -i X=features.npy -P 64 --method hypergraph --out DIR

Partition once (any method, or --partition-file) and write a shard set a P-process job loads in
parallel (``dspla run/train --shards DIR``, ``dspla.load_shards(DIR)``): docs/cluster.md."""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import scipy.sparse as sp

from ..errors import DsplaError, UnknownNameError
from ..formats import read_input
from ..formats.files import check_writable_dir
from ..formats.graph import Graph
from ..formats.inputs import input_path
from ..formats.npy import load_npy
from ..formats.shards import write_shards
from ..models.data import load_node_data, shard_inputs
from ..partition import METHODS, partition
from ..partition.partitioner import as_pattern
from ..partition.vertex_owners import EDGE_OF, edge_table
from .arguments import NP, add_dataset_options, input_files, parse_inputs
from .partition import add_partition_args, method_params


def register(sub, common):
    p = sub.add_parser("shard", parents=[common], help="partition inputs once and write per-process shards",
                       description="Partition the rows of a graph over P processes and write, per process, its "
                                   "rows of every row-distributed input (docs/cluster.md).")
    p.add_argument("--input", "-i", action="append", metavar="NAME=PATH",
                   help="an input whose rows are the graph's rows: the graph (.mtx[.gz], edge list, .npz) or "
                        "node data (.npy, FILE.npz:ARRAY) (repeatable, each NAME once; default: none)")
    p.add_argument("-P", type=NP, required=True, help="number of processes the shards are for (1: a binary "
                   "CSR set any job can read by blocks of rows) (required)")
    p.add_argument("--method", "-m", default="hypergraph", help="partition method: block, random, graph, "
                   "hypergraph, stochastic-hypergraph")
    p.add_argument("--partition-file", help="a saved partition (.npy of process ids per row) instead of --method "
                   "(default: none)")
    p.add_argument("--graph", help="the input to partition (default: the first square sparse one)")
    p.add_argument("--dim", default="n", help="the name of the partitioned dim")
    p.add_argument("--out", "-o", required=True, help="the shard directory to write (required)")
    d = p.add_argument_group("a training dataset (for dspla train --shards): its A, X, Y, T, labels and split")
    add_dataset_options(d)
    add_partition_args(p)
    p.set_defaults(func=run)


def run(args):
    specs = parse_inputs(args.input)
    if not specs and not args.dataset:
        raise DsplaError("give the inputs to shard (-i NAME=PATH ...) or a training dataset (--dataset)")
    for spec in specs.values():
        input_path(spec)
    if args.P < 1:
        raise DsplaError(f"-P must be at least 1, got {args.P}")
    if args.partition_file is None and args.method not in METHODS:
        raise UnknownNameError("partitioning method", args.method, METHODS)
    if args.partition_file and not os.path.isfile(args.partition_file):
        raise DsplaError(f"partition file not found: {args.partition_file}")
    check_writable_dir(args.out, "shard directory (--out)")
    out = os.path.realpath(args.out)
    for path in input_files(args.partition_file, *(input_path(s) for s in specs.values()),
                            dirs=[args.data_dir if args.dataset else None]):
        if os.path.realpath(path).startswith(out + os.sep):
            raise DsplaError(f"the input {path} is inside the shard directory {args.out}, which writing the set "
                             "replaces: choose another --out")
    t0 = time.perf_counter()
    data, dataset, graphs = {}, None, {}
    if args.dataset:
        nd = load_node_data(args.dataset, data_dir=args.data_dir, nodes=args.nodes, classes=args.classes,
                            feature_dim=args.feature_dim, avg_degree=args.avg_degree, data_seed=args.data_seed)
        data = shard_inputs(nd)
        dataset = {"name": nd.name, "description": nd.description}
        clash = sorted(set(specs) & set(data))
        if clash:
            raise DsplaError(f"--dataset gives {', '.join(data)}; -i {clash[0]} clashes with it")
    for name, spec in specs.items():
        if not args.quiet:
            print(f"dspla shard: reading {name} from {spec}", file=sys.stderr, flush=True)
        data[name] = read_input(spec, "sparse" if not spec.lower().endswith(".npy") else "dense", name=name)
        if isinstance(data[name], Graph):   # the rows by position; the graph's node ids go to ids.npy
            graphs[name] = data[name]
            data[name] = data[name].matrix
        if not sp.issparse(data[name]):
            data[name] = np.asarray(data[name])
            if data[name].ndim == 1:
                data[name] = data[name].reshape(-1, 1)
    graph = args.graph or next((k for k, v in data.items() if sp.issparse(v) and v.shape[0] == v.shape[1]), None)
    if graph is None or graph not in data:
        raise DsplaError("no graph to partition: give a square sparse input (or name one with --graph)"
                         if graph is None else f"--graph {graph}: not one of the inputs ({', '.join(data)})")
    n = data[graph].shape[0]
    if args.partition_file:
        parts = np.asarray(load_npy(args.partition_file))
        if parts.shape != (n,) or not np.issubdtype(parts.dtype, np.integer) or \
                (n and (parts.min() < 0 or parts.max() >= args.P)):
            raise DsplaError(f"{args.partition_file}: a partition of {n} rows into process ids 0..{args.P - 1} "
                             f"is needed, got shape {parts.shape} {parts.dtype}"
                             + (f" with ids {parts.min()}..{parts.max()}" if parts.size else ""))
        method, params = "file", {"file": os.path.abspath(args.partition_file)}
    elif args.P == 1:   # one process holds every row: nothing to partition (any job reads it by rows)
        parts, method, params = np.zeros(n, dtype=np.int64), "none", {}
    else:
        res = partition(as_pattern(data[graph]), args.P, args.method, eps=args.eps, seed=args.seed,
                        backend=args.backend, cache=args.cache, progress=False if args.quiet else None,
                        **method_params(args))
        parts, method = res.parts, args.method
        params = {"eps": args.eps, "seed": args.seed, "imbalance": float(res.imbalance), **method_params(args)}
        if args.backend:
            params["backend"] = args.backend
    ids = _node_ids(graphs, graph, n)
    # an edge partition's parts go with the set: each rank plans vertexcut from its share of them
    edges = edge_table(as_pattern(data[graph]), args.P, method, args.eps, args.seed) if method in EDGE_OF else None
    m = write_shards(args.out, data, parts, args.P, dim=args.dim, method=method, params=params,
                     progress=not args.quiet, extra={"dataset": dataset} if dataset else None, ids=ids, edges=edges)
    size = sum(f["bytes"] for f in m["files"].values())
    ins = ", ".join(f"{k} {v['kind']}[{v['shape'][0]}x{v['shape'][1]}] {v['dtype']}" for k, v in m["inputs"].items())
    print(f"wrote {args.out}: {ins}; P={args.P}, partition {method}, rows per process "
          f"{min(m['counts'])}..{max(m['counts'])}, {size / 2**20:.1f} MB in {len(m['files'])} files "
          f"({time.perf_counter() - t0:.1f} s)")
    return 0


def _node_ids(graphs: dict, graph: str, n: int):
    """The node ids of the partitioned rows: the graph's (an edge list's), which the other graphs
    read must share."""
    have = {k: g.ids for k, g in graphs.items() if g.ids is not None and g.shape[0] == n}
    ids = have.get(graph, next(iter(have.values()), None))
    for k, other in have.items():
        if not np.array_equal(other, ids):
            raise DsplaError(f"the edge lists number their nodes differently ({k} and {graph}): their rows are not "
                             "the same nodes")
    if ids is not None and ids.dtype.kind not in "iuU":
        return None
    return ids
