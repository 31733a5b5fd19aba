"""``--input`` specs: a path (by extension) or FILE.npz:ARRAY, read into scipy/numpy."""
from __future__ import annotations

import os

import numpy as np

from ..errors import DataFormatError, DsplaError
from .graph import graph_format
from .mtx import load_mtx
from .npz import load_npz
from .snap import load_snap

FORMATS_HELP = ".mtx[.gz], an edge list (.txt[.gz], .edges, .el), .npy or FILE.npz[:ARRAY]"


def read_input(spec: str, kind: str = "dense"):
    """Read one program input. ``kind`` is the declared kind ('sparse'/'dense'), used for
    formats that can hold either."""
    path, key = spec, None
    if ".npz:" in spec:
        path, _, key = spec.rpartition(":")
    if not os.path.exists(path):
        raise DsplaError(f"input file not found: {path}")
    low = path.lower()
    if low.endswith(".npy"):
        try:
            return np.load(path, allow_pickle=False)
        except ValueError as e:
            raise DataFormatError(path, f"not a plain .npy array ({e})") from None
    if low.endswith(".npz"):
        return load_npz(path, key)
    try:
        fmt = graph_format(path)
    except DsplaError:
        raise DsplaError(f"{path}: unknown input format (use {FORMATS_HELP})") from None
    if fmt == "mtx":
        return load_mtx(path)
    # An edge list is a sparse matrix (directed: A[i, j] = 1 for an edge i -> j); as a dense
    # input it reaches the input checker, which says how to convert.
    return load_snap(path)
