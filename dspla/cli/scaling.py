"""dspla scaling GRAPH --np 16,64,256,1024,4096 --cluster summit [--f 128,16,16,8] [--json F] [--plot F]

Predicted scaling of one GCN epoch on a described cluster, without running anything: per P and
plan the words and messages per rank, memory per rank, predicted time, and the plan chosen
(dspla/costmodel/scaling.py says how each is counted). GRAPH is a graph file, or a shape:
``reddit``, ``amazon``, ``protein`` (the sizes of the CAGNET paper's Table III) or ``rmat:N:NNZ``.
"""
from __future__ import annotations

import json
import sys

from ..costmodel import cluster as clusters
from ..costmodel.scaling import EDGE_METHODS, Shape, scaling
from ..errors import DsplaError
from ..formats.files import atomic_write, check_writable
from ..formats.graph import load_graph
from ..generate import rmat
from .arguments import SEED

# Table III of "Reducing Communication in Graph Neural Network Training": n, edges, features, labels
SHAPES = {"reddit": (232_965, 114_848_857, 602, 41), "amazon": (14_249_639, 230_788_269, 300, 24),
          "protein": (8_745_542, 2_116_240_124, 128, 256)}
BUILD_LIMIT = 30_000_000   # nonzeros up to which an rmat:N:NNZ shape is built and counted exactly


def register(sub, common):
    p = sub.add_parser("scaling", parents=[common], help="predicted GCN scaling on a described cluster",
                       description="Per P and plan: words, messages and memory per rank and the predicted time of "
                                   "one GCN epoch on the cluster; the chosen plan and its ratio to the best of "
                                   "CAGNET's four (1D, 1.5D, 2D, 3D). Nothing runs.")
    p.add_argument("graph", metavar="GRAPH", help="a graph file, or reddit | amazon | protein | rmat:N:NNZ")
    p.add_argument("--np", default="16,64,256,1024,4096", help="process counts (default 16,64,256,1024,4096)")
    p.add_argument("--cluster", default="summit", help="cluster description: a TOML file or summit | perlmutter")
    p.add_argument("--f", default=None, help="layer widths f0,f1,...,fL (default: the shape's features,16,16,"
                   "labels; 128,16,16,8 for a graph file)")
    p.add_argument("--partition", default="random", help="row partition for the sparsity-aware plans (random, "
                   "graph, hypergraph; default random)")
    p.add_argument("--edge-partition", choices=EDGE_METHODS, help="also count vertexcut on this edge partition "
                   "(a graph file only; default: not counted)")
    p.add_argument("--weak", action="store_true", help="weak scaling: n and nnz grow with P (shapes only)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the random partition and of generated graphs")
    p.add_argument("--json", help="write the rows to this file (default: none)")
    p.add_argument("--plot", help="draw predicted time vs P per plan (.png or .svg; default: none)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _ints(text: str, what: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise DsplaError(f"{what} takes comma-separated integers, got {text!r}") from None
    if not out or min(out) < 1:
        raise DsplaError(f"{what} needs integers >= 1, got {text!r}")
    return out


def shape_of(spec: str) -> tuple[Shape, list | None]:
    """(the shape, its default widths or None)."""
    if spec in SHAPES:
        n, nnz, f0, labels = SHAPES[spec]
        return Shape(spec, n, nnz), [f0, 16, 16, labels]
    if spec.startswith("rmat:"):
        try:
            n, nnz = (int(float(x)) for x in spec[5:].split(":"))
        except ValueError:
            raise DsplaError(f"rmat shape is rmat:N:NNZ (e.g. rmat:262144:8000000), got {spec!r}") from None
        if n < 2 or nnz < 1:
            raise DsplaError(f"rmat shape needs N >= 2 and NNZ >= 1, got {spec!r}")
        if nnz <= BUILD_LIMIT:   # small enough to build here: counted exactly
            scale = max(1, (n - 1).bit_length())
            A = rmat(scale, max(1, round(nnz / 2 / 2 ** scale)), seed=0)
            return Shape.of(spec, A), None
        return Shape(spec, n, nnz), None
    return Shape.of(spec, load_graph(spec, quiet=True).matrix), None


def run(args):
    Ps = _ints(args.np, "--np")
    cl = clusters.load(args.cluster)
    for path in (args.json, args.plot):
        if path:
            check_writable(path, "output")
    shape, widths = shape_of(args.graph)
    if args.edge_partition and shape.A is None:
        raise DsplaError(f"--edge-partition needs a graph file (vertexcut is counted on its edges), not the shape "
                         f"{args.graph!r}")
    f = _ints(args.f, "--f") if args.f else (widths or [128, 16, 16, 8])
    if len(f) < 2:
        raise DsplaError("--f needs at least two widths (f0,f1: one layer)")
    say = None if args.quiet else (lambda P: print(f"  P={P} counted", file=sys.stderr, flush=True))
    rows = scaling(shape, Ps, f, cl, weak=args.weak, seed=args.seed, method=args.partition, progress=say,
                   edge=args.edge_partition)
    print(f"{shape.name}: n={shape.n:,} nnz={shape.nnz:,} f={','.join(map(str, f))} on {cl.name} "
          f"({cl.ranks_per_node} ranks/node); one epoch, predicted")
    print(f"{'P':>6} {'plan':<18} {'count':<9} {'time s':>10} {'compute':>9} {'latency':>9} {'bandwidth':>9} "
          f"{'words/rank':>11} {'msgs/rank':>10} {'MB/rank':>9}")
    for r in rows:
        for c in sorted(r["candidates"], key=lambda c: c["predicted_s"]):
            mark = " <- chosen" if c["plan"] == r["chosen"] else ""
            print(f"{r['P']:>6} {c['plan']:<18} {c['count']:<9} {c['predicted_s']:>10.4g} {c['compute_s']:>9.3g} "
                  f"{c['latency_s']:>9.3g} {c['bandwidth_s']:>9.3g} {c['words_max']:>11.4g} {c['messages_max']:>10.4g} "
                  f"{c['memory_bytes'] / 1e6:>9.3g}{mark}")
        print(f"{r['P']:>6} chosen {r['chosen']} / best of CAGNET's four {r['best_cagnet']}: {r['ratio']:.2f}x")
    doc = {"graph": shape.name, "n": shape.n, "nnz": shape.nnz, "f": f, "cluster": cl.name, "weak": args.weak,
           "partition": args.partition, "edge_partition": args.edge_partition, "rows": rows}
    if args.json:
        with atomic_write(args.json, "w") as fh:
            json.dump(doc, fh, indent=1)
        print(f"wrote {args.json}")
    if args.plot:
        from .. import plot as plots  # matplotlib only when drawing
        plots.save(plots.scaling(doc), args.plot)
        print(f"wrote {args.plot}")
    return 0
