"""Whole-number floats as integers: a "real" MatrixMarket file or a float array holding whole
numbers feeds an int64 input exactly; any other value is an error naming its entry."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

INT64_LIMIT = 2.0**63   # floats at or above it (or below -it) do not fit in int64


def whole_to_int(value: Any, error: Callable[[tuple[int, ...], float], Exception]) -> Any:
    """``value`` (a numpy array or scipy sparse matrix of floats) as int64, when every value is a
    whole number that fits; else ``error((row, col), value)`` of the first other one is raised."""
    if sp.issparse(value):
        C = sp.csr_array(value)
        C.sum_duplicates()
        vals = C.data
        where = lambda k: (int(np.searchsorted(C.indptr, k, side="right") - 1), int(C.indices[k]))  # noqa: E731
    else:
        arr = np.asarray(value)
        vals = arr.reshape(-1)
        where = lambda k: tuple(int(i) for i in np.unravel_index(k, arr.shape))  # noqa: E731
    bad = ~(np.isfinite(vals) & (vals == np.trunc(vals)) & (vals < INT64_LIMIT) & (vals >= -INT64_LIMIT))
    if bad.any():
        k = int(np.argmax(bad))
        raise error(where(k), float(vals[k]))
    if sp.issparse(value):
        return sp.csr_array((vals.astype(np.int64), C.indices, C.indptr), shape=C.shape)
    return np.asarray(value).astype(np.int64)


def what(value: float) -> str:
    """Why a float is no int64, as an error says it."""
    whole = np.isfinite(value) and value == np.trunc(value)
    return "a whole number too large for int64" if whole else "not a whole number"
