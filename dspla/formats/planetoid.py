"""The Planetoid citation datasets (Cora, Citeseer, Pubmed) in the Kipf & Welling files
``ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}``.

The pickles are read only through :mod:`dspla.formats.unpickle`. What the files hold:

- ``allx``/``ally``: features and one-hot labels of the first ``len(allx)`` nodes, whose first
  ``len(x)`` rows (= ``x``/``y``) are the labelled training nodes;
- ``tx``/``ty``: features and labels of the test nodes, row k belonging to node ``test.index[k]``
  (the test index file is *not* sorted);
- ``graph``: dict node -> list of neighbours (with some duplicate and self-loop entries).

Assembled as GCN training code expects (the split and reordering of Kipf & Welling's loader):
nodes 0..len(allx)-1 take the ``allx`` rows, node ``test.index[k]`` takes row k of ``tx``; train
= ``range(len(y))``, val = the next 500, test = ``sorted(test.index)``. Citeseer's test index
has gaps (isolated nodes missing from the test set): like the reference, those nodes exist with
all-zero features; their label is -1 here (no class) and they are in no split.

The adjacency is built by node id: symmetric, duplicates collapsed to 1.0, self loops kept with
value 1.0 as the reference's networkx graph does (``self_loops=False`` drops them). For Cora:
2708 nodes, 10556 off-diagonal entries (5278 undirected edges) and no self loops; the
graph dict lists 10858 neighbour entries (duplicates collapse).
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from ._textfile import INT, loadtxt, locate, parse_int
from .files import note_input
from .limits import check_sparse_dims
from .snap import edges_to_csr
from .unpickle import restricted_load

N_VAL = 500  # the reference's validation split size (override with n_val=)


@dataclass(frozen=True)
class PlanetoidData:
    adjacency: sp.csr_array   # n x n, symmetric, values 1.0
    features: sp.csr_array    # n x f (dtype as stored, float32 for the Kipf files)
    labels: np.ndarray        # int64 class ids, -1 for a node with no label
    train_idx: np.ndarray     # int64 node ids
    val_idx: np.ndarray
    test_idx: np.ndarray
    name: str

    @property
    def n_nodes(self) -> int:
        return self.adjacency.shape[0]

    @property
    def n_classes(self) -> int:
        return int(self.labels.max()) + 1


def load_planetoid(directory, name: str = "cora", *, self_loops: bool = True,
                   n_val: int = N_VAL) -> PlanetoidData:
    """Load ``<directory>/ind.<name>.*`` (e.g. ``load_planetoid(".../planetoid", "cora")``)."""
    prefix = os.path.join(str(directory), f"ind.{name}.")
    parts = {}
    for part in ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index"):
        if not os.path.isfile(prefix + part):
            raise DsplaError(f"Planetoid file not found: {prefix + part}")
    for part in ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index"):
        note_input(prefix + part)
    for part in ("x", "y", "tx", "ty", "allx", "ally", "graph"):
        parts[part] = restricted_load(prefix + part)
    x, tx, allx = (_features(prefix + p, parts[p]) for p in ("x", "tx", "allx"))
    y, ty, ally = (_onehot(prefix + p, parts[p]) for p in ("y", "ty", "ally"))
    _agree(prefix, x, y, "x", "y")
    _agree(prefix, tx, ty, "tx", "ty")
    _agree(prefix, allx, ally, "allx", "ally")
    for p, m in (("x", x), ("tx", tx)):
        if m.shape[1] != allx.shape[1]:
            raise DataFormatError(prefix + p, f"has {m.shape[1]} feature columns, allx has {allx.shape[1]}")
    for p, m in (("y", y), ("ty", ty)):
        if m.shape[1] != ally.shape[1]:
            raise DataFormatError(prefix + p, f"has {m.shape[1]} classes, ally has {ally.shape[1]}")
    n_train, n_all = x.shape[0], allx.shape[0]
    if n_train + n_val > n_all:
        raise DataFormatError(prefix + "allx", f"has {n_all} rows, fewer than the {n_train} "
                              f"training + {n_val} validation nodes")

    test = _test_index(prefix + "test.index", tx.shape[0], n_all)
    n = max(n_all + tx.shape[0], int(test.max(initial=-1)) + 1)
    # a test id far past the nodes the files hold would make every per-node array that long
    check_sparse_dims(prefix + "test.index", n, n, n_all + tx.shape[0])
    # Stacked row r (allx rows, then tx rows) belongs to node row_node[r].
    row_node = np.concatenate([np.arange(n_all), test])
    place = sp.csr_array((np.ones(len(row_node), dtype=allx.dtype),
                          (row_node, np.arange(len(row_node)))), shape=(n, len(row_node)))
    features = sp.csr_array(place @ sp.vstack([allx, tx], format="csr"))
    features.sort_indices()
    onehot = np.vstack([ally, ty])
    labels = np.full(n, -1, dtype=np.int64)
    labels[row_node] = np.where(onehot.any(axis=1), onehot.argmax(axis=1), -1)

    adjacency = _adjacency(prefix + "graph", parts["graph"], n, self_loops)
    return PlanetoidData(adjacency, features, labels,
                         np.arange(n_train, dtype=np.int64),
                         np.arange(n_train, n_train + n_val, dtype=np.int64),
                         np.sort(test), name)


def _features(path, obj) -> sp.csr_array:
    if not sp.issparse(obj):
        raise DataFormatError(path, f"expected a scipy sparse feature matrix, found {type(obj).__name__}")
    # Rebuild from the raw arrays rather than trusting state restored from a pickle: it may be
    # from an old scipy, or incomplete (a class created without its state) or inconsistent.
    try:
        shape = tuple(int(d) for d in obj.__dict__["_shape"])
        if len(shape) != 2 or min(shape) < 0:
            raise ValueError(f"shape {shape}")
        if obj.format == "csr":
            parts = [np.asarray(obj.__dict__[k]) for k in ("data", "indices", "indptr")]
            check_sparse_dims(path, shape[0], shape[1], parts[0].size)
            m = sp.csr_array(tuple(parts), shape=shape)
        elif obj.format == "lil":
            rows, data = obj.__dict__["rows"], obj.__dict__["data"]
            if len(rows) != shape[0] or len(data) != shape[0]:
                raise ValueError(f"{len(rows)} row lists for {shape[0]} rows")
            check_sparse_dims(path, shape[0], shape[1], sum(map(len, rows)))
            m = sp.csr_array(obj.tocsr())
        else:
            raise ValueError(f"unexpected sparse format {obj.format!r}")
        m.check_format(full_check=True)
    except DataFormatError:
        raise
    except (KeyError, AttributeError, TypeError, ValueError, IndexError, OverflowError) as e:
        raise DataFormatError(path, f"incomplete or inconsistent sparse matrix ({type(e).__name__}: {e})") from None
    return m


def _onehot(path, obj) -> np.ndarray:
    if not isinstance(obj, np.ndarray) or obj.ndim != 2:
        raise DataFormatError(path, f"expected a 2-D one-hot label array, found {type(obj).__name__}"
                              f"{'' if not isinstance(obj, np.ndarray) else f' of shape {obj.shape}'}")
    if obj.size and not np.isin(obj, (0, 1)).all():
        raise DataFormatError(path, "labels must be one-hot (0/1 entries)")
    if (obj.sum(axis=1) > 1).any():
        row = int(np.flatnonzero(obj.sum(axis=1) > 1)[0])
        raise DataFormatError(path, f"row {row} has more than one class set")
    return obj


def _agree(prefix, feats, labels, fp, lp):
    if feats.shape[0] != labels.shape[0]:
        raise DataFormatError(prefix + lp, f"has {labels.shape[0]} rows but {fp} has {feats.shape[0]}")


def _test_index(path, n_test: int, n_all: int) -> np.ndarray:
    def check(no, line):
        tok = line.split("#", 1)[0].strip()
        if tok:
            parse_int(path, no, tok, "test node id")
    try:
        idx = loadtxt(path, 0, np.int64, "#")
    except ValueError:
        idx = None
    if idx is None or idx.ndim != 1:
        locate(path, check, rf"[ \t]*(?:{INT}[ \t]*)?(?:#[^\n]*)?",
               fallback="expected one integer node id per line")
    if len(idx) != n_test:
        raise DataFormatError(path, f"lists {len(idx)} test nodes but tx has {n_test} rows")
    if len(idx) and idx.min() < n_all:
        raise DataFormatError(path, f"test node {int(idx.min())} is below {n_all}: test nodes "
                              f"must come after the allx nodes", line=int(np.argmin(idx)) + 1)
    if len(np.unique(idx)) != len(idx):
        first = int(np.flatnonzero(np.bincount(idx - idx.min()) > 1)[0] + idx.min())
        raise DataFormatError(path, f"test node {first} is listed twice",
                              line=int(np.flatnonzero(idx == first)[1]) + 1)
    return idx


def _adjacency(path, graph, n: int, self_loops: bool) -> sp.csr_array:
    if not isinstance(graph, dict):
        raise DataFormatError(path, f"expected a dict node -> neighbour list, found {type(graph).__name__}")
    try:
        nodes = np.fromiter(graph.keys(), dtype=np.int64, count=len(graph))
        counts = np.fromiter(map(len, graph.values()), dtype=np.int64, count=len(graph))
        nbrs = np.fromiter(itertools.chain.from_iterable(graph.values()), dtype=np.int64,
                           count=int(counts.sum()))
    except (TypeError, ValueError, OverflowError) as e:
        raise DataFormatError(path, f"node ids and neighbour lists must be integers ({e})") from None
    src = np.repeat(nodes, counts)
    for ids in (nodes, nbrs):
        if len(ids) and (ids.min() < 0 or ids.max() >= n):
            bad = int(ids[(ids < 0) | (ids >= n)][0])
            raise DataFormatError(path, f"node {bad} is outside 0..{n - 1} (the dataset has {n} nodes)")
    return edges_to_csr(src, nbrs, n, directed=False, self_loops=self_loops)
