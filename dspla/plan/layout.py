"""Row distributions of partitioned dims, and the layout of each distributed value.

A partitioned dim d (a symbol such as ``n``) has an owner for each index. A value whose rows
are on a partitioned dim is row-distributed (ROW: each rank holds its rows, in ascending
original order); else if its columns are, column-distributed (COL); else every rank holds all
of it (REP). The other axis always keeps original indexing. Plans may relabel internally.
"""
from __future__ import annotations

from dataclasses import dataclass

import graphblas as gb
import numpy as np


@dataclass(frozen=True)
class Layout:
    kind: str            # "row" | "col" | "rep"
    dim: str | None = None

    def __str__(self) -> str:
        return self.kind if self.kind == "rep" else f"{self.kind}({self.dim})"


REP = Layout("rep")


class DimPart:
    """The owners of the indices of one partitioned dim."""

    def __init__(self, dim: str, parts: np.ndarray, P: int, method: str = "?"):
        parts = np.asarray(parts, dtype=np.int64)
        self.dim, self.parts, self.P, self.method = dim, parts, P, method
        self.size = parts.size
        self.order = np.argsort(parts, kind="stable")              # rank order -> original id
        self.counts = np.bincount(parts, minlength=P).astype(np.int64)
        self.offsets = np.r_[0, np.cumsum(self.counts)]
        self.owned = [self.order[self.offsets[r]:self.offsets[r + 1]] for r in range(P)]
        self.permpos = np.empty(self.size, dtype=np.int64)         # original id -> rank-order position
        self.permpos[self.order] = np.arange(self.size)
        self.pos = self.permpos - self.offsets[parts]               # original id -> position on its owner

    @property
    def is_block(self) -> bool:
        return bool(np.all(self.order == np.arange(self.size)))


def canonical(type_, dims: dict) -> Layout:
    r, c = type_.shape
    if isinstance(r, str) and r in dims:
        return Layout("row", r)
    if isinstance(c, str) and c in dims:
        return Layout("col", c)
    return REP


def piece(M, layout: Layout, dims: dict, rank: int):
    """This rank's piece of a whole matrix M in ``layout``."""
    if layout.kind == "row":
        return M[dims[layout.dim].owned[rank], :].new()
    if layout.kind == "col":
        return M[:, dims[layout.dim].owned[rank]].new()
    return M


def assemble(pieces: list, layout: Layout, dims: dict, shape, dtype):
    """The whole matrix from every rank's piece (rank 0 gathers outputs with this)."""
    if layout.kind == "rep":
        r, c, v = pieces[0]
        return gb.Matrix.from_coo(r, c, v, nrows=shape[0], ncols=shape[1], dtype=dtype)
    d = dims[layout.dim]
    rows, cols, vals = [], [], []
    for rank, (r, c, v) in enumerate(pieces):
        if layout.kind == "row":
            rows.append(d.owned[rank][r]); cols.append(c)  # noqa: E702
        else:
            rows.append(r); cols.append(d.owned[rank][c])  # noqa: E702
        vals.append(v)
    return gb.Matrix.from_coo(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), nrows=shape[0],
                              ncols=shape[1], dtype=dtype)
