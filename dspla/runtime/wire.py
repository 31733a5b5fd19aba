"""Matrices as plain numpy tuples for planning-time and gather-time transfers (never per iteration).

A sparse piece travels as its CSR arrays (one value when it is iso-valued, as a graph of ones
is): a rank's rows of soc-Slashdot0902 are 4 MB that way against 11 MB as coordinates, and the
receiver imports them without sorting."""
from __future__ import annotations

import graphblas as gb
import numpy as np


def to_wire(M):
    if M.nvals == M.nrows * M.ncols and M.nvals:
        return ("full", M.to_dense(), M.dtype.name)
    d = M.ss.export("csr", sort=True)   # (a copy: M stays as it is)
    return ("csr", d["indptr"], d["col_indices"], d["values"], d["is_iso"], (M.nrows, M.ncols), M.dtype.name)


def from_wire(w):
    if w[0] == "full":
        return gb.Matrix.from_dense(w[1], dtype=w[2])
    _, indptr, cols, values, iso, (nrows, ncols), dt = w
    return gb.Matrix.ss.import_csr(nrows=nrows, ncols=ncols, indptr=indptr, col_indices=cols, values=values,
                                   is_iso=iso, sorted_cols=True, dtype=dt, take_ownership=True)


def coo(M):
    r, c, v = M.to_coo()
    return r.astype(np.int64), c.astype(np.int64), v
