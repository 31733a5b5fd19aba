"""``load_graph``: a graph file, or a networkx graph, -> a ``Graph``: the adjacency matrix and the
original node ids (what ``dspla partition``, ``dspla comm-stats`` and a program's inputs read).

Formats by extension:

- ``.mtx``, ``.mtx.gz``: MatrixMarket (symmetric files come back mirrored; array-format files
  are converted to sparse, dropping zeros); the rows are the ids (1-based in the file, 0-based
  here), so ``ids`` is None;
- ``.txt``, ``.txt.gz``, ``.edges``, ``.el`` (and their ``.gz``): edge lists, see
  :mod:`dspla.formats.snap` (directed by default; a third column is the weight; ids relabelled to
  0..n-1 in increasing order, the original ids kept in ``ids``; duplicates by ``duplicates``);
- ``.npz``: a ``scipy.sparse.save_npz`` file (or an .npz holding one 2-D array); ``ids`` None.

A ``networkx`` graph is read with its nodes in networkx's order (``list(G.nodes)``, the order they
were added) unless ``nodelist`` says another: row k is node ``nodelist[k]``, kept in ``ids``; the
value of an edge is its attribute ``weight`` (1.0 for every edge when no edge has it,
``weight=None`` for 1.0 always); a directed graph gives A[i, j] for an edge i -> j, an
undirected one a symmetric A; a multigraph's parallel edges are added up (networkx's rule,
counted in ``merged``).

``directed``: ``None`` keeps the source's own meaning (edge lists: directed; MatrixMarket/npz: the
matrix as stored). ``False`` symmetrises (a matrix: the pattern of A + A^T, values the larger of
A[i,j] and A[j,i]). ``True`` on an edge list is the default; on a matrix it is a no-op.
``weighted=False`` makes every entry 1.0 (a pattern), whatever the source holds.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import DataFormatError, DsplaError
from .files import note_input
from .mtx import load_mtx
from .npz import load_npz
from .snap import DUPLICATES, edges_to_csr, read_snap
from .specs import EDGE_LIST_EXTS, MTX_EXTS, graph_format  # noqa: F401 (also read from here)

REPORT_AFTER_S = 2.0  # loads slower than this print their timing on stderr


class Graph:
    """A graph as dspla reads it: ``matrix``, its n x n adjacency (a ``scipy.sparse.csr_array``;
    row and column k are node ``ids[k]``), ``ids`` (the original node ids, an array of n; None
    when the positions are the ids, as in a MatrixMarket file), ``merged`` (edges listed more
    than once that reading merged) and ``source`` (the file, or "networkx").

    Pass it as a program's input (``f(A=g)``): its results carry the ids (``Array.ids``);
    ``g.index([5, 77777])`` gives the rows of original ids."""

    __slots__ = ("matrix", "ids", "merged", "source")

    def __init__(self, matrix: sp.csr_array, ids: NDArray[Any] | None = None, merged: int = 0,
                 source: str = "") -> None:
        if ids is not None and len(ids) != matrix.shape[0]:
            raise DsplaError(f"{source or 'graph'}: {len(ids)} ids for {matrix.shape[0]} rows")
        self.matrix, self.ids, self.merged, self.source = matrix, ids, merged, source

    @property
    def shape(self) -> tuple[int, int]:
        return self.matrix.shape

    @property
    def nnz(self) -> int:
        return int(self.matrix.nnz)

    def index(self, ids: Any) -> NDArray[np.int64]:
        """The rows of these original ids (an error names the first id the graph lacks)."""
        return positions(self.ids, ids, self.matrix.shape[0], self.source or "the graph")

    def __repr__(self) -> str:
        n = self.matrix.shape[0]
        ids = "positional ids" if self.ids is None else \
            f"ids {self.ids[0]}..{self.ids[-1]}" if n else "no nodes"
        merged = f", {self.merged} duplicate{'s' if self.merged != 1 else ''} merged" if self.merged else ""
        return f"Graph({self.source + ': ' if self.source else ''}{n} nodes, {self.nnz} entries, {ids}{merged})"


def positions(ids: NDArray[Any] | None, wanted: Any, n: int, what: str) -> NDArray[np.int64]:
    """Rows of original ids ``wanted`` in a graph of n nodes whose row k is ``ids[k]`` (None: the
    rows are the ids)."""
    try:
        want = np.atleast_1d(np.asarray(wanted))
    except ValueError:   # ids of several shapes (tuples): one object each
        want = np.empty(len(wanted), dtype=object)
        want[:] = list(wanted)
    if ids is None:
        if want.dtype.kind not in "iu" or (want.size and (want.min() < 0 or want.max() >= n)):
            bad = next((x for x in want.tolist() if not isinstance(x, int) or not 0 <= x < n), want[0])
            raise DsplaError(f"{what} has no node {_shown(bad)}: its nodes are its rows, 0..{n - 1}")
        return want.astype(np.int64)
    if ids.dtype.kind == "O" or want.dtype.kind == "O" or ids.dtype.kind != want.dtype.kind and \
            not (ids.dtype.kind in "iu" and want.dtype.kind in "iu"):
        where = {x: k for k, x in enumerate(ids.tolist())}
        out = [where.get(x, -1) for x in want.tolist()]
        missing = [x for x, k in zip(want.tolist(), out) if k < 0]
        if missing:
            raise DsplaError(f"{what} has no node {_shown(missing[0])} ({n} nodes)")
        return np.asarray(out, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    ranked = ids[order]
    at = np.searchsorted(ranked, want).clip(0, max(n - 1, 0))
    found = ranked[at] == want if n else np.zeros(want.shape, dtype=bool)
    if not found.all():
        bad = want[int(np.argmin(found))]
        span = f"; its ids run {_shown(ranked[0])}..{_shown(ranked[-1])}" if n else ""
        raise DsplaError(f"{what} has no node {_shown(bad)} ({n} nodes{span})")
    return order[at].astype(np.int64)


def _shown(x: Any) -> str:
    """A node id as a message shows it: a number as written, a string quoted."""
    x = x.item() if isinstance(x, np.generic) else x
    return repr(x) if isinstance(x, str) else str(x)


def is_networkx(value: Any) -> bool:
    """Whether ``value`` is a networkx graph (networkx is not imported to tell)."""
    return type(value).__module__.startswith("networkx") and hasattr(value, "adj")


def load_graph(source: Any, *, directed: bool | None = None, weighted: bool | None = None,
               duplicates: str = "first", weight: str | None = "weight", nodelist: Any = None,
               quiet: bool = False, **opts: Any) -> Graph:
    """Read a graph file (by its extension) or a networkx graph into a ``Graph`` (the module
    docstring has the rules).

    ``weighted``: None keeps the values the source has (an edge list's third column, a
    MatrixMarket file's values, a networkx attribute ``weight``); False makes every entry 1.0.
    ``duplicates`` (edge lists): "first", "sum" or "error"; how many were merged is ``.merged``,
    said on stderr unless ``quiet``. ``opts`` go to the edge-list reader (``self_loops``,
    ``relabel``, ``ids``: the ids to number the rows by)."""
    t0 = time.perf_counter()
    if is_networkx(source):
        if opts:
            raise DsplaError(f"options {', '.join(sorted(opts))} apply to edge lists, not to a networkx graph")
        g = from_networkx(source, weight=None if weighted is False else weight, nodelist=nodelist)
        if directed is False and g.matrix.shape[0]:
            g = Graph(symmetrize(g.matrix, "networkx graph"), g.ids, g.merged, g.source)
        return g
    if not isinstance(source, (str, os.PathLike)):
        raise DsplaError(f"load_graph reads a file path or a networkx graph, not a {type(source).__name__}")
    path = str(source)
    fmt = graph_format(path)
    note_input(path)
    if fmt == "edgelist":
        got = read_snap(path, directed=True if directed is None else directed, weighted=weighted,
                        duplicates=duplicates, **opts)
        g = Graph(got.matrix, got.ids, got.merged, path)
    else:
        if opts or duplicates != "first":
            given = sorted(opts) + (["duplicates"] if duplicates != "first" else [])
            raise DsplaError(f"options {', '.join(given)} apply to edge lists, not to {path}")
        A = load_mtx(path) if fmt == "mtx" else load_npz(path)
        if not sp.issparse(A):
            A = np.asarray(A)
            if A.ndim != 2:
                raise DataFormatError(path, f"a graph needs a 2-D matrix, this holds a {A.ndim}-D array")
        A = sp.csr_array(A)
        if directed is False:
            A = symmetrize(A, path)
        if weighted is False:
            A = sp.csr_array(A, dtype=np.float64)
            A.data[:] = 1.0
        g = Graph(A, None, 0, path)
    elapsed = time.perf_counter() - t0
    if not quiet:
        if g.merged:
            print(f"dspla: {path}: {merged_note(g.merged, duplicates)}", file=sys.stderr)
        if elapsed > REPORT_AFTER_S:
            print(f"dspla: loaded {path}: {g.shape[0]} x {g.shape[1]}, {g.nnz} entries "
                  f"in {elapsed:.1f} s", file=sys.stderr)
    return g


def merged_note(merged: int, duplicates: str, spec: str | None = None) -> str:
    """What a run says of the duplicate edges it merged (``spec``: the command line's input spec
    up to the reader option that chooses the rule; else the keyword's)."""
    how = {"first": "the first value of each kept", "sum": "their values added up"}[duplicates]
    others = [d for d in DUPLICATES if d != duplicates]
    choose = f"-i {spec}duplicates={'|'.join(others)}" if spec else \
        f"duplicates={' or '.join(repr(d) for d in others)}"
    return f"{merged} edge{'s' if merged != 1 else ''} listed more than once, merged ({how}; {choose} to choose)"


def from_networkx(G: Any, *, weight: str | None = "weight", nodelist: Any = None) -> Graph:
    """A networkx graph -> ``Graph`` (rules in the module docstring)."""
    import networkx as nx

    nodes = list(G.nodes) if nodelist is None else list(nodelist)
    if nodelist is not None and (len(set(nodes)) != len(nodes) or set(nodes) != set(G.nodes)):
        raise DsplaError(f"nodelist must hold every node of the graph once ({G.number_of_nodes()} nodes), "
                         f"got {len(nodes)} entries")
    if weight is not None:
        has = sum(1 for *_, d in G.edges(data=True) if weight in d)
        if has == 0 and weight != "weight":
            raise DsplaError(f"no edge of the networkx graph has the attribute {weight!r}")
        if 0 < has < G.number_of_edges():
            raise DsplaError(f"{G.number_of_edges() - has} of the networkx graph's {G.number_of_edges()} edges have "
                             f"no {weight!r}: give every edge one, or weight=None (every edge 1.0)")
        weight = weight if has else None
    A = nx.to_scipy_sparse_array(G, nodelist=nodes, weight=weight, format="csr")
    if weight is None:
        A = sp.csr_array(A, dtype=np.float64)
    merged = 0
    if G.is_multigraph():   # parallel edges become one entry, their weights added up
        distinct = {(u, v) if G.is_directed() else frozenset((u, v)) for u, v in G.edges()}
        merged = G.number_of_edges() - len(distinct)
    if len({type(x) for x in nodes}) > 1 or nodes and isinstance(nodes[0], tuple):   # one object each (numpy
        ids = np.empty(len(nodes), dtype=object)                  # would make 1 and "a" both strings)
        ids[:] = nodes
    else:
        ids = np.asarray(nodes) if nodes else np.zeros(0, dtype=np.int64)
    return Graph(sp.csr_array(A), ids, merged, "networkx")


def to_networkx(M: sp.csr_array, ids: NDArray[Any] | None, *, directed: bool = True, weight: str = "weight",
                name: str = "result") -> Any:
    """An n x n sparse matrix -> a networkx DiGraph (``directed``) or Graph: a node for every row
    (``ids[k]``, or k), an edge i -> j with attribute ``weight`` for every present entry. An
    undirected graph needs a symmetric matrix (checked)."""
    try:
        import networkx as nx
    except ImportError:
        raise DsplaError("to_networkx needs networkx (pip install networkx)") from None
    if M.shape[0] != M.shape[1]:
        raise DsplaError(f"{name} is {M.shape[0]}x{M.shape[1]}: a graph's adjacency matrix is square")
    C = M.tocoo()
    if not directed:
        P = sp.csr_array((np.ones(M.nnz), M.indices, M.indptr), shape=M.shape)   # the pattern
        if abs(P - P.T).count_nonzero() or (M != M.T).nnz:
            raise DsplaError(f"{name} is not symmetric: to_networkx(directed=False) needs A[i, j] == A[j, i] "
                             "(use directed=True for a DiGraph)")
        keep = C.row <= C.col
        C = sp.coo_array((C.data[keep], (C.row[keep], C.col[keep])), shape=C.shape)
    G = nx.DiGraph() if directed else nx.Graph()
    labels = np.arange(M.shape[0]) if ids is None else ids
    G.add_nodes_from(labels.tolist())
    G.add_weighted_edges_from(zip(labels[C.row].tolist(), labels[C.col].tolist(), C.data.tolist()), weight=weight)
    return G


def symmetrize(A: sp.csr_array, path="matrix") -> sp.csr_array:
    """The undirected version of a square matrix: entry (i,j) present if (i,j) or (j,i) is,
    with the larger of the two values."""
    if A.shape[0] != A.shape[1]:
        raise DataFormatError(path, f"an undirected graph needs a square matrix, this one is "
                              f"{A.shape[0]} x {A.shape[1]}")
    C = A.tocoo()
    return edges_to_csr(C.row.astype(np.int64), C.col.astype(np.int64), A.shape[0],
                        C.data.astype(np.float64), directed=False)
