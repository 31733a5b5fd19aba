"""Concrete values as eager operations take them: which arguments are values (dspla ``Array``s,
numpy arrays, scipy sparse matrices, python-graphblas matrices and vectors), the matrix each is
on one process, and its signature (kind, rows, columns, dtype) that keys the cache of traced
operations."""
from __future__ import annotations

from typing import Any

import graphblas as gb
import numpy as np
import scipy.sparse as sp
from suitesparse_graphblas import ffi, lib

from ..errors import InputError
from ..ir.types import DType, Kind
from ..kernels.buffers import from_values
from ..kernels.gbops import dtype_of
from ..values import Array
from .dispatch import is_value


def _dtype(np_dtype: np.dtype) -> DType:
    try:
        return DType.of_numpy(np_dtype)
    except TypeError:
        raise InputError(f"dtype {np_dtype} is not supported (float64, float32, int64, bool); "
                         "cast the value first") from None


def matrix(x: Any) -> gb.Matrix:
    """The value as one GraphBLAS matrix (a vector as an n x 1 column); numpy and scipy data are
    copied into a matrix the result may share, never the caller's buffers."""
    if isinstance(x, Array):
        return x.gb
    if isinstance(x, gb.Matrix):
        return x
    if isinstance(x, gb.Vector):
        return x._as_matrix()
    if isinstance(x, gb.Scalar):
        some = [0] * (not x.is_empty)
        return gb.Matrix.from_coo(some, some, [x.value] * len(some), nrows=1, ncols=1, dtype=x.dtype)
    if sp.issparse(x):
        csr = sp.csr_array(x)
        _dtype(csr.dtype)
        if not csr.has_canonical_format:   # scipy semantics: duplicates add up
            csr = csr.copy()
            csr.sum_duplicates()
        return gb.io.from_scipy_sparse(csr)
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise InputError(f"a value has one or two dimensions, got a numpy array of shape {arr.shape}")
    dt = _dtype(arr.dtype)
    if not arr.size:
        return gb.Matrix(dt.gb, *arr.shape)
    return from_values(np.array(arr, dtype=dt.np, order="C"), dt)


def form_of(x: Any) -> str:
    """How the value presents itself: 'vector' (python-graphblas's Vector, a 1-D numpy array, a
    vector result), 'scalar' (a graphblas Scalar, a scalar result) or 'matrix'."""
    if isinstance(x, Array):
        return getattr(x, "form", "matrix")
    if isinstance(x, gb.Vector) or isinstance(x, np.ndarray) and x.ndim == 1:
        return "vector"
    return "scalar" if isinstance(x, gb.Scalar) else "matrix"


def _counts(M: gb.Matrix) -> tuple[int, int, int]:
    """(rows, columns, entries) by the C calls (python-graphblas's properties make a Scalar each:
    most of a small eager call's time)."""
    cells = ffi.new("GrB_Index[3]")
    m = M.gb_obj[0]
    if lib.GrB_Matrix_nrows(cells, m) or lib.GrB_Matrix_ncols(cells + 1, m) or lib.GrB_Matrix_nvals(cells + 2, m):
        return M.nrows, M.ncols, M.nvals   # (the properties raise what the calls reported)
    return cells[0], cells[1], cells[2]


def signature(x: Any, form: str) -> tuple[str, Kind, int, int, DType]:
    """(form, kind, rows, columns, dtype) of a converted value: dense when every entry is present.
    A distributed ``Array`` counts its entries over the job (a collective: every rank calls the
    operation)."""
    if isinstance(x, Array):
        r, c = x._shape
        return form, (Kind.dense if x.nvals == r * c else Kind.sparse), r, c, _dtype(x.dtype)
    if isinstance(x, gb.Matrix):
        r, c, n = _counts(x)
        return form, (Kind.dense if n == r * c else Kind.sparse), r, c, dtype_of(x)
    raise AssertionError(f"not converted: {type(x).__name__}")   # (host data is converted first)


def array(data: Any, name: str | None = None) -> Array:
    """A value operations run on at once (``dp.array``): numpy (a 1-D array is a vector), scipy
    sparse (zeros stored are entries; missing ones are not), both copied, or python-graphblas
    data, shared (a change to that matrix is a change to the value)."""
    if isinstance(data, Array):
        return data
    if not is_value(data):
        raise TypeError(f"dp.array takes numpy, scipy sparse or python-graphblas data, got {type(data).__name__}")
    form = form_of(data)
    if form == "matrix" or "form" not in Array.__slots__:   # (values that know no vector form hold it n x 1)
        return Array(matrix(data), name)
    return Array(matrix(data), name, form=form)  # type: ignore[call-arg]
