"""The GCN propagation matrix  Â = D^-1/2 (A + I) D^-1/2  (Kipf & Welling, eq. 2), written as dspla
expressions so it runs wherever the program runs (the planner computes it once, at planning,
because it depends only on the sparse input A).

    deg  = reduce_rows(A + I)          # n x 1: row sums of A + I (every row has the self loop)
    dinv = deg ** -0.5                 # n x 1
    Â    = (A + I) * dinv * dinv.T     # row scaling by the n x 1, column scaling by the 1 x n

``+`` is the element-wise union with plus, so an existing self loop of weight w becomes w + 1 (as
in Kipf's ``adj + I``); ``*`` with an n x 1 / 1 x n operand is an intersection that broadcasts,
i.e. a diagonal scaling that keeps A's pattern. For a directed graph (A not symmetric) D holds the
row sums (out-degrees + 1) and Â is not symmetric: the backward pass then uses Âᵀ (Demirci et al.
§3.1, CAGNET §III).

:func:`gcn_norm_scipy` is the same matrix computed directly in scipy: the independent oracle the
tests compare the expression against.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..frontend import dsl


def gcn_norm(A: "dsl.Expr", self_loops: bool = True) -> "dsl.Expr":
    """Â = D^-1/2 (A + I) D^-1/2 as an expression of the sparse n x n input ``A``.

    With ``self_loops=False``: D^-1/2 A D^-1/2 (rows without entries stay empty: their degree
    is missing, not zero, so nothing divides by zero)."""
    n = A.shape[0]
    At = A + dsl.eye(n, A.dtype.value) if self_loops else A
    deg = dsl.reduce_rows(At)              # n x 1 (missing where a row is empty)
    dinv = deg ** -0.5
    return (At * dinv) * dinv.T


def gcn_norm_scipy(A, self_loops: bool = True) -> sp.csr_array:
    """The oracle: D^-1/2 (A + I) D^-1/2 with scipy/numpy, CSR float64."""
    A = sp.csr_array(A, dtype=np.float64)
    if self_loops:
        A = (A + sp.eye_array(A.shape[0], format="csr")).tocsr()
    deg = np.asarray(A.sum(axis=1)).ravel()
    with np.errstate(divide="ignore"):
        d = np.where(deg > 0, deg ** -0.5, 0.0)
    return sp.csr_array(sp.diags_array(d) @ A @ sp.diags_array(d))
