"""``load_graph``: any supported graph file -> scipy csr_array (what ``dspla partition`` and
``dspla comm-stats`` read).

Formats by extension:

- ``.mtx``, ``.mtx.gz``: MatrixMarket (symmetric files come back mirrored; array-format files
  are converted to sparse, dropping zeros);
- ``.txt``, ``.txt.gz``, ``.edges``, ``.el`` (and their ``.gz``): edge lists, see
  :mod:`dspla.io.snap` (directed by default, ids relabelled to 0..n-1);
- ``.npz``: a ``scipy.sparse.save_npz`` file (or an .npz holding one 2-D array).

``directed``: ``None`` keeps the file's own meaning (edge lists: directed; MatrixMarket/npz: the
matrix as stored). ``False`` symmetrises (the pattern of A + A^T; values: the larger of A[i,j] and
A[j,i]). ``True`` on an edge list is the default; on a matrix it is a no-op.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from .files import note_input
from .mtx import load_mtx
from .npz import load_npz
from .snap import edges_to_csr, load_snap

EDGE_LIST_EXTS = (".txt", ".edges", ".el")
MTX_EXTS = (".mtx",)
REPORT_AFTER_S = 2.0  # loads slower than this print their timing on stderr


def graph_format(path) -> str:
    """'mtx', 'edgelist' or 'npz', from the file name (``.gz`` is looked through)."""
    low = str(path).lower()
    base = low[:-3] if low.endswith(".gz") else low
    if base.endswith(MTX_EXTS):
        return "mtx"
    if base.endswith(EDGE_LIST_EXTS):
        return "edgelist"
    if low.endswith(".npz"):
        return "npz"
    raise DsplaError(f"{path}: unknown graph format; use .mtx[.gz], an edge list "
                     f"(.txt[.gz], .edges, .el) or a scipy .npz")


def load_graph(path, *, directed: bool | None = None, quiet: bool = False, **opts) -> sp.csr_array:
    """Read a graph or sparse matrix file into a ``scipy.sparse.csr_array``.

    ``opts`` go to the format's loader (edge lists: ``self_loops``, ``weighted``, ``relabel``).
    """
    t0 = time.perf_counter()
    fmt = graph_format(path)
    note_input(path)
    if fmt == "edgelist":
        A = load_snap(path, directed=True if directed is None else directed, **opts)
    else:
        if opts:
            raise DsplaError(f"options {', '.join(sorted(opts))} apply to edge lists, not to {path}")
        if fmt == "mtx":
            A = load_mtx(path)
        else:
            A = load_npz(path)
        if not sp.issparse(A):
            A = np.asarray(A)
            if A.ndim != 2:
                raise DataFormatError(path, f"a graph needs a 2-D matrix, this holds a {A.ndim}-D array")
        A = sp.csr_array(A)
        if directed is False:
            A = symmetrize(A, path)
    elapsed = time.perf_counter() - t0
    if elapsed > REPORT_AFTER_S and not quiet:
        print(f"dspla: loaded {path}: {A.shape[0]} x {A.shape[1]}, {A.nnz} entries "
              f"in {elapsed:.1f} s", file=sys.stderr)
    return A


def symmetrize(A: sp.csr_array, path="matrix") -> sp.csr_array:
    """The undirected version of a square matrix: entry (i,j) present if (i,j) or (j,i) is,
    with the larger of the two values (the edge-list rule for duplicate edges)."""
    if A.shape[0] != A.shape[1]:
        raise DataFormatError(path, f"an undirected graph needs a square matrix, this one is "
                              f"{A.shape[0]} x {A.shape[1]}")
    C = A.tocoo()
    return edges_to_csr(C.row.astype(np.int64), C.col.astype(np.int64), A.shape[0],
                        C.data.astype(np.float64), directed=False)
