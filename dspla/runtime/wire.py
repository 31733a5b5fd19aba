"""Matrices as plain numpy tuples for planning-time and gather-time transfers (never per iteration)."""
from __future__ import annotations

import graphblas as gb
import numpy as np


def to_wire(M):
    if M.nvals == M.nrows * M.ncols and M.nvals:
        return ("full", M.to_dense(), M.dtype.name)
    r, c, v = M.to_coo()
    return ("coo", r.astype(np.int64), c.astype(np.int64), v, (M.nrows, M.ncols), M.dtype.name)


def from_wire(w):
    if w[0] == "full":
        return gb.Matrix.from_dense(w[1], dtype=w[2])
    _, r, c, v, shape, dt = w
    return gb.Matrix.from_coo(r, c, v, nrows=shape[0], ncols=shape[1], dtype=dt)


def coo(M):
    r, c, v = M.to_coo()
    return r.astype(np.int64), c.astype(np.int64), v
