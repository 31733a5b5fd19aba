"""dspla generate --out DIR [--graph rmat|random|geometric|sbm] [--nodes N] ...: a seeded graph and
node arrays to run programs on, written to a folder (nothing downloaded):

- ``graph.mtx``: the n x n adjacency (MatrixMarket; undirected graphs stored both ways), values 1
  or, with ``--weights random``, whole numbers 1..9 (the same both ways);
- ``x.npy``: n x F node features (the SBM's class-dependent ones for ``--graph sbm``, else
  standard normal);
- ``w.npy``: F x WIDTH weights (standard normal / sqrt(F)): examples/gcn_layer.dspla's ``W``;
- ``labels.npy``: n class ids (``--graph sbm``: the communities; else uniform).

The same arguments give the same files.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from ..errors import DsplaError
from ..formats.files import atomic_write, check_writable_dir
from .arguments import POSITIVE, SEED, integer, number

GRAPHS = ("rmat", "random", "geometric", "sbm")


def register(sub, common):
    p = sub.add_parser("generate", parents=[common], help="write a generated graph and node arrays (R-MAT, random, "
                       "SBM) to a folder", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", "-o", required=True, metavar="DIR", help="the folder to write (created if missing; the "
                   "files in it are replaced) (required)")
    p.add_argument("--graph", default="rmat", choices=GRAPHS, help="rmat (power-law, Graph500's R-MAT), random "
                   "(Erdős–Rényi), geometric (points in the unit square: mesh-like), sbm (communities = classes)")
    p.add_argument("--nodes", "-n", type=integer(2, 1 << 30), default=1000,
                   help="number of nodes (rmat: rounded up to a power of two)")
    p.add_argument("--avg-degree", type=number(0, lo_open=True), default=8.0, help="average degree")
    p.add_argument("--features", "-f", type=POSITIVE, default=16, help="width F of x.npy")
    p.add_argument("--width", type=POSITIVE, default=7, help="width of w.npy (F x WIDTH)")
    p.add_argument("--classes", type=integer(2), default=7, help="number of classes of labels.npy")
    p.add_argument("--weights", default="unit", choices=("unit", "random"),
                   help="edge values: unit (1) or random (whole numbers 1..9)")
    p.add_argument("--directed", action="store_true", help="a directed graph (default: undirected, stored both "
                   "ways); not for sbm or geometric")
    p.add_argument("--seed", type=SEED, default=0, help="seed of everything generated")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing")
    p.set_defaults(func=run)


def run(args):
    from .. import generate as gen  # (scipy and the generators: loaded by this command only)

    if args.directed and args.graph in ("sbm", "geometric"):
        raise DsplaError(f"--directed: the {args.graph} graph is undirected")
    out = check_writable_dir(args.out, "output folder (--out)")
    rng = np.random.default_rng(args.seed)
    labels = X = None
    if args.graph == "rmat":
        scale = max(1, int(np.ceil(np.log2(args.nodes))))
        A = gen.rmat(scale, edge_factor=max(1, round(args.avg_degree / 2)), seed=args.seed, directed=args.directed)
        what = f"R-MAT, scale {scale}"
    elif args.graph == "random":
        A = gen.erdos_renyi(args.nodes, args.avg_degree, seed=args.seed, directed=args.directed)
        what = "Erdős–Rényi"
    elif args.graph == "geometric":
        A = gen.random_geometric(args.nodes, avg_degree=args.avg_degree, seed=args.seed)
        what = "random geometric"
    else:
        n = args.nodes   # (its train/validation/test split is not written: sized to fit any n)
        d = gen.contextual_sbm(n, n_classes=args.classes, avg_degree=args.avg_degree, n_features=args.features,
                               seed=args.seed, dtype=np.float64, n_val=min(500, n // 5), n_test=min(1000, n // 5),
                               train_per_class=max(1, min(20, n // (5 * args.classes))))
        A, X, labels = d.adjacency, d.features, d.labels
        what = f"contextual SBM, {args.classes} classes"
    n = A.shape[0]
    if args.weights == "random":
        A = _random_weights(A, rng, symmetric=not args.directed)
    if X is None:
        X = rng.standard_normal((n, args.features))
    if labels is None:
        labels = rng.integers(0, args.classes, n)
    W = rng.standard_normal((args.features, args.width)) / np.sqrt(args.features)
    os.makedirs(out, exist_ok=True)
    files = {"graph.mtx": f"{n} x {n}, {A.nnz} entries ({what}, {'directed' if args.directed else 'undirected'}"
                          f"{', weights 1..9' if args.weights == 'random' else ''})",
             "x.npy": f"{n} x {args.features} float64", "w.npy": f"{args.features} x {args.width} float64",
             "labels.npy": f"{n} int64, {args.classes} classes"}
    _write_mtx(os.path.join(out, "graph.mtx"), A)
    for name, value in (("x.npy", X), ("w.npy", W), ("labels.npy", np.asarray(labels, dtype=np.int64))):
        with atomic_write(os.path.join(out, name)) as fh:
            np.save(fh, np.ascontiguousarray(value))
    if not args.quiet:
        for name, text in files.items():
            print(f"{os.path.join(args.out, name)}: {text}")
    sys.stdout.flush()
    return 0


def _random_weights(A, rng, symmetric: bool):
    """A with whole-number values 1..9; the same both ways when ``symmetric``."""
    import scipy.sparse as sp

    C = sp.coo_array(A)
    w = rng.integers(1, 10, C.nnz).astype(np.float64)
    if symmetric:   # each edge's value from its (min, max) end pair, so (i, j) and (j, i) agree
        lo, hi = np.minimum(C.row, C.col).astype(np.int64), np.maximum(C.row, C.col).astype(np.int64)
        key = lo * A.shape[0] + hi
        _, first = np.unique(key, return_inverse=True)
        w = rng.integers(1, 10, first.max() + 1 if first.size else 0).astype(np.float64)[first]
    return sp.csr_array((w, (C.row, C.col)), shape=A.shape)


def _write_mtx(path: str, A) -> None:
    """MatrixMarket coordinate real general, 1-based, one entry a line (whole numbers as such)."""
    import scipy.sparse as sp

    C = sp.coo_array(A)
    with atomic_write(path, "w") as fh:
        fh.write("%%MatrixMarket matrix coordinate real general\n")
        fh.write("% written by dspla generate\n")
        fh.write(f"{A.shape[0]} {A.shape[1]} {C.nnz}\n")
        vals = C.data
        whole = bool(np.all(vals == np.round(vals)))
        rows = np.column_stack([C.row.astype(np.int64) + 1, C.col.astype(np.int64) + 1])
        for start in range(0, C.nnz, 1 << 20):   # (a million lines at a time: bounded memory)
            r = rows[start:start + (1 << 20)]
            v = vals[start:start + (1 << 20)]
            body = np.char.add(np.char.add(r[:, 0].astype(str), " "), np.char.add(r[:, 1].astype(str), " "))
            body = np.char.add(body, v.astype(np.int64).astype(str) if whole else np.char.mod("%.17g", v))
            fh.write("\n".join(body.tolist()) + "\n")
