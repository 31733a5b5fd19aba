"""Run-time values: converting user data to GraphBLAS matrices and results back.

``Array`` is what a program returns: a GraphBLAS matrix with conversions that respect
GraphBLAS semantics (a missing entry is not a zero: to_numpy() refuses to invent values for
missing entries unless given ``fill``).
"""
from __future__ import annotations

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..ir import DType, Kind, Node
from .gbops import dtype_of


class Array:
    __slots__ = ("gb", "name")
    __array_priority__ = 10

    def __init__(self, matrix, name: str | None = None):
        self.gb = matrix
        self.name = name

    @property
    def shape(self) -> tuple[int, int]:
        return (self.gb.nrows, self.gb.ncols)

    @property
    def dtype(self) -> np.dtype:
        return dtype_of(self.gb).np

    @property
    def nvals(self) -> int:
        return self.gb.nvals

    @property
    def is_full(self) -> bool:
        return self.gb.nvals == self.gb.nrows * self.gb.ncols

    def to_coo(self):
        """(rows, cols, values) of the present entries, rows/cols as int64, row-major order."""
        r, c, v = self.gb.to_coo()
        return r.astype(np.int64), c.astype(np.int64), v

    def to_numpy(self, fill=None) -> np.ndarray:
        """Dense array. Missing entries are an error unless ``fill`` says what to put there."""
        if fill is None:
            if not self.is_full:
                raise ValueError(f"{self.name or 'result'} has {self.shape[0] * self.shape[1] - self.nvals} "
                                 "missing entries; call to_numpy(fill=...) or use to_coo()/to_scipy()")
            return self.gb.to_dense()
        return self.gb.to_dense(fill_value=fill)

    def present(self) -> np.ndarray:
        """Boolean array: where an entry is present."""
        out = np.zeros(self.shape, dtype=bool)
        r, c, _ = self.to_coo()
        out[r, c] = True
        return out

    def to_scipy(self, format: str = "csr"):
        return gb.io.to_scipy_sparse(self.gb, format=format)

    def __array__(self, dtype=None, copy=None):
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        return (f"Array({self.name or ''}{'' if self.name is None else ': '}{self.shape[0]}x{self.shape[1]} "
                f"{self.dtype}, {self.nvals} present)")


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    if sp.issparse(value):
        return f"a scipy sparse {value.format} matrix of shape {value.shape}"
    return f"a {type(value).__module__}.{type(value).__name__}"


def to_matrix(value, decl: Node):
    """Convert one input to a GraphBLAS matrix of the declared kind and dtype, or raise
    InputError saying which input and why. Does not check the shape (see bind_dims)."""
    name, t = decl.attr("name"), decl.type
    if isinstance(value, Array):
        value = value.gb
    if isinstance(value, gb.Vector):
        value = value._as_matrix()
    if isinstance(value, gb.Matrix):
        m = value
        data_dtype = dtype_of(m)
    elif sp.issparse(value):
        if t.kind is Kind.dense:
            raise InputError(f"input {name!r} is declared {t} but got {_describe(value)}; dense inputs have every "
                             "entry present: pass value.toarray() if that is what you mean")
        csr = value.tocsr()
        data_dtype = _dtype(name, csr.dtype, t)
        if not csr.has_canonical_format:  # scipy semantics: duplicates add up
            csr = csr.copy()
            csr.sum_duplicates()
        m = gb.io.from_scipy_sparse(csr)
    elif isinstance(value, (np.ndarray, list, tuple)) or np.isscalar(value):
        arr = np.asarray(value)
        if t.kind is Kind.sparse:
            raise InputError(f"input {name!r} is declared {t} but got {_describe(arr)}; a dense array cannot say "
                             "which entries are missing: pass scipy.sparse.csr_array(value) (zeros become missing)")
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1) if t.shape[1] == 1 or t.shape[0] != 1 else arr.reshape(1, -1)
        if arr.ndim != 2:
            raise InputError(f"input {name!r} is declared {t} but got an array with {arr.ndim} dimensions")
        data_dtype = _dtype(name, arr.dtype, t)
        if arr.dtype != data_dtype.np:
            arr = arr.astype(data_dtype.np)
        m = gb.Matrix.from_dense(arr, dtype=data_dtype.gb)
    else:
        raise InputError(f"input {name!r} is declared {t} but got {_describe(value)}")
    if t.kind is Kind.dense and m.nvals != m.nrows * m.ncols:
        raise InputError(f"input {name!r} is declared {t} (every entry present) but {m.nrows * m.ncols - m.nvals} "
                         f"of its {m.nrows}x{m.ncols} entries are missing")
    want = t.dtype
    if dtype_of(m) is not want:
        if not np.can_cast(dtype_of(m).np, want.np, "same_kind"):
            raise InputError(f"input {name!r} is declared {want} but got {dtype_of(m)} data, which does not "
                             f"convert safely; cast it or change the declaration")
        m = m.dup(dtype=want.gb)
    return m


def _dtype(name, npdtype, t) -> DType:
    try:
        return DType.of_numpy(npdtype)
    except TypeError:
        raise InputError(f"input {name!r}: dtype {npdtype} is not supported (float64, float32, int64, bool)") \
            from None


def bind_dims(decls, mats) -> dict[str, int]:
    """Bind symbolic dims from the inputs' shapes; raise InputError on any disagreement."""
    dims: dict[str, int] = {}
    where: dict[str, str] = {}
    for decl in decls:
        name = decl.attr("name")
        m = mats[name]
        got = (m.nrows, m.ncols)
        for axis, (want, have) in enumerate(zip(decl.type.shape, got)):
            what = ("rows", "columns")[axis]
            if isinstance(want, int):
                if want != have:
                    raise InputError(f"input {name!r} is declared {decl.type} but has {have} {what} "
                                     f"(shape {got[0]}x{got[1]})")
            elif want in dims and dims[want] != have:
                raise InputError(f"dimension {want!r} is {dims[want]} from {where[want]} but input {name!r} has "
                                 f"{have} {what} (shape {got[0]}x{got[1]})")
            else:
                dims[want] = have
                where.setdefault(want, f"the {what} of {name!r}")
    return dims


def concrete(dim, dims: dict[str, int], what: str = "") -> int:
    if isinstance(dim, int):
        return dim
    if dim not in dims:
        raise InputError(f"dimension {dim!r}{' of ' + what if what else ''} is not bound by any input")
    return dims[dim]


__all__ = ["Array", "bind_dims", "concrete", "to_matrix", "DType"]
