"""1 x 1 values read and written by SuiteSparse's typed element calls.

A loop's scalars (a convergence test, PageRank's dangling sum, a reduction's result) are 1 x 1
matrices. python-graphblas reads one entry through its indexing machinery, ``M[0, 0].new().value``,
about 50 us; the typed ``GrB_Matrix_extractElement_<T>`` call behind it takes under 1 us. A loop
iteration reads and writes several such values, so these go straight to the C calls. Types the
typed calls do not cover (user-defined ones) take python-graphblas's route.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import graphblas as gb
import numpy as np
from suitesparse_graphblas import ffi, lib

from ..ir.types import DType

_NO_VALUE = lib.GrB_NO_VALUE
_NULL = ffi.NULL


class _Typed(NamedTuple):
    """SuiteSparse's calls for one built-in type, and its C type."""
    extract: Any
    set: Any
    ctype: str
    assign: Any   # a scalar to all of a matrix
    apply2nd: Any   # GrB_Matrix_apply_BinaryOp2nd (an operator with its scalar second)
    second: Any     # the SECOND operator


# python-graphblas dtype name -> its typed calls
_TYPED: dict[str, _Typed] = {}
for _prefix, _names in (("GrB", ("BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
                                 "FP32", "FP64")), ("GxB", ("FC32", "FC64"))):
    for _name in _names:
        _TYPED[_name] = _Typed(getattr(lib, f"{_prefix}_Matrix_extractElement_{_name}"),
                               getattr(lib, f"{_prefix}_Matrix_setElement_{_name}"),
                               gb.dtypes.lookup_dtype(_name).c_type, getattr(lib, f"{_prefix}_Matrix_assign_{_name}"),
                               getattr(lib, f"{_prefix}_Matrix_apply_BinaryOp2nd_{_name}"),
                               getattr(lib, f"{_prefix}_SECOND_{_name}"))


def check(info: int, what: str):
    """Raise for a GraphBLAS C call's error code (GrB_NO_VALUE, a missing entry, is none)."""
    if info and info != _NO_VALUE:   # (GrB_SUCCESS is 0, the C API says; a BFS level checks five calls)
        raise RuntimeError(f"GraphBLAS {what} failed with code {info}")


def item(M, i: int = 0, j: int = 0):
    """M's entry (i, j) as a Python value, None when it is missing."""
    typed = _TYPED.get(M.dtype.name)
    if typed is None:
        s = M[i, j].new()
        return None if s.is_empty else s.value
    out = ffi.new(f"{typed.ctype}*")
    info = typed.extract(out, M.gb_obj[0], i, j)
    check(info, "extractElement")
    if info == _NO_VALUE:
        return None
    v = out[0]
    return bool(v) if M.dtype.name == "BOOL" else v


def set_item(M, value, i: int = 0, j: int = 0):
    """M's entry (i, j) made ``value`` (None: made missing)."""
    typed = _TYPED.get(M.dtype.name)
    if value is None:
        check(lib.GrB_Matrix_removeElement(M.gb_obj[0], i, j), "removeElement")
    elif typed is None:
        M[i, j] = value
    else:
        check(typed.set(M.gb_obj[0], value, i, j), "setElement")
    return M


def nvals(M) -> int:
    """M's number of entries by the C call (python-graphblas's ``nvals`` makes a Scalar for it:
    ~5 us); other values (a transposed view) are asked."""
    if type(M) is not gb.Matrix:
        return M.nvals
    n = ffi.new("GrB_Index*")
    check(lib.GrB_Matrix_nvals(n, M.gb_obj[0]), "Matrix_nvals")
    return n[0]


def reader(dtype: DType):
    """M -> its (0, 0) entry as a Python value (None when missing), for matrices of ``dtype``: the
    typed call and a cell of its own bound once (``item`` looks both up on every call). One
    reader per user at a time: the cell is shared by its calls."""
    typed = _TYPED.get(dtype.gb)
    if typed is None:
        return item
    extract, cell = typed.extract, ffi.new(f"{typed.ctype}*")
    as_bool = dtype.gb == "BOOL"

    def read(M):
        info = extract(cell, M.gb_obj[0], 0, 0)
        check(info, "extractElement")
        if info == _NO_VALUE:
            return None
        return bool(cell[0]) if as_bool else cell[0]
    return read


def writer(dtype: DType):
    """(value or None, a free matrix or None) -> a 1 x 1 matrix of ``dtype`` holding it (None:
    missing), ``into`` written when it is one: ``scalar`` with the typed call bound once."""
    typed = _TYPED.get(dtype.gb)
    if typed is None:
        return lambda v, into: scalar(v, dtype, into)
    put, gdt, conv = typed.set, gb.dtypes.lookup_dtype(dtype.gb), dtype.np.type
    plain = {"FP64": float, "BOOL": bool, "INT64": int}.get(dtype.gb)   # (a Python value of the C type: as it is)

    def write(v, into):
        M = into if into is not None and into.dtype is gdt and into._nrows == 1 and into._ncols == 1 \
            else new_matrix(gdt, 1, 1)
        if v is None:
            check(lib.GrB_Matrix_removeElement(M.gb_obj[0], 0, 0), "removeElement")
        else:
            check(put(M.gb_obj[0], v if type(v) is plain else conv(v).item(), 0, 0), "setElement")
        return M
    return write


def typed_assign(name: str):
    """GrB_Matrix_assign of a scalar of python-graphblas dtype ``name`` (a C call), or None."""
    typed = _TYPED.get(name)
    return typed.assign if typed is not None else None


def pattern_writer(name: str):
    """``write(C, M, value)``: ``C<struct(M)> = value`` for C of python-graphblas dtype ``name``,
    written as ``C second= (value on M's pattern)``, one GrB_apply with an accumulator and no
    mask; both set value where M has an entry and keep C's other entries. On a bitmap C (a
    vector held so) SuiteSparse 9.4 runs it through its bitmap subassign, which took 0.90 of the
    masked scalar assign's time over a BFS's levels (email-Enron, soc-Slashdot0902). None for a
    type without a typed call."""
    typed = _TYPED.get(name)
    if typed is None:
        return None
    apply2nd, second = typed.apply2nd, typed.second

    def write(C, M, value):
        check(apply2nd(C.gb_obj[0], _NULL, second, second, M.gb_obj[0], value, _NULL), "apply")
    return write


def write_on_pattern(C, M, value) -> bool:
    """``C<struct(M)> = value`` (``pattern_writer``'s); False (nothing done) when C's or M's type
    has no typed call (M's values are cast to C's type, then dropped)."""
    write = pattern_writer(C.dtype.name)
    if write is None or M.dtype.name not in _TYPED:
        return False
    write(C, M, value)
    return True


def fill(M, value):
    """Every entry of M made ``value`` (a Python value of M's dtype): SuiteSparse's assignment of
    a scalar to all of M, which leaves M full and iso-valued at once. The typed C call; python-
    graphblas's ``M[:, :] << value`` spent 30 us building the expression around it."""
    typed = _TYPED.get(M.dtype.name)
    if typed is None:
        M[:, :] << value
    else:
        check(typed.assign(M.gb_obj[0], _NULL, _NULL, value, lib.GrB_ALL, M._nrows, lib.GrB_ALL, M._ncols, _NULL),
              "assign")
    return M


def new_matrix(gdt, nrows: int, ncols: int):
    """A new empty matrix of python-graphblas dtype ``gdt`` (gb.Matrix() parses its arguments for
    12 us; this, 3 us)."""
    obj = ffi.new("GrB_Matrix*")
    check(lib.GrB_Matrix_new(obj, gdt.gb_obj, nrows, ncols), "Matrix_new")
    return gb.Matrix._from_obj(obj, gdt, nrows, ncols)


def copy(M):
    """A copy of M by the C call (python-graphblas's ``dup`` spent 13-17 us around its 1-4; a
    loop copies the values it writes in place at every run)."""
    if type(M) is not gb.Matrix:
        return M.dup()
    obj = ffi.new("GrB_Matrix*")
    check(lib.GrB_Matrix_dup(obj, M.gb_obj[0]), "Matrix_dup")
    return gb.Matrix._from_obj(obj, M.dtype, M._nrows, M._ncols)


def empty(dtype: DType):
    """A new 1 x 1 matrix with no entry."""
    return new_matrix(gb.dtypes.lookup_dtype(dtype.gb), 1, 1)


def scalar(value, dtype: DType, into=None):
    """A 1 x 1 matrix of ``dtype`` holding ``value`` (None: missing): ``into`` (a free earlier
    result) written when it is one of that dtype, else a new one."""
    if into is not None and into.shape == (1, 1) and into.dtype == dtype.gb:
        return set_item(into, None if value is None else dtype.np.type(value).item())
    M = empty(dtype)
    return M if value is None else set_item(M, dtype.np.type(value).item())


class Packed:
    """Several 1 x 1 values in one byte buffer for one collective (a loop's SmallAllreduce):
    each a value (its dtype's bytes) then a presence byte. The buffers, every view into them and
    the typed readers and writers are made once per dtype signature (``gdts``, python-graphblas's
    dtypes); packing is then one typed read per value, and combining the ranks' copies one ufunc
    reduction per value, in rank order (as the general path does). ``counts``: every rank's
    bytes, for the allgather."""

    __slots__ = ("dtypes", "gdts", "send", "recv", "counts", "_sv", "_sp", "_rv", "_rp", "_read", "_write")

    def __init__(self, dtypes: tuple, ranks: int):
        self.dtypes = dtypes
        self.gdts = tuple(gb.dtypes.lookup_dtype(dt.gb) for dt in dtypes)
        size = sum(dt.np.itemsize + 1 for dt in dtypes)
        self.send = np.zeros(size, dtype=np.uint8)
        self.recv = np.zeros(size * ranks, dtype=np.uint8)
        self.counts = (size,) * ranks
        every = self.recv.reshape(ranks, size)
        self._sv, self._sp, self._rv, self._rp = [], [], [], []
        at = 0
        for dt in dtypes:
            nb = dt.np.itemsize
            self._sv.append(self.send[at:at + nb].view(dt.np))
            self._sp.append(self.send[at + nb:at + nb + 1].view(bool))
            self._rv.append(every[:, at:at + nb].view(dt.np))          # (ranks, 1)
            self._rp.append(every[:, at + nb:at + nb + 1].view(bool))  # (ranks, 1)
            at += nb + 1
        self._read = [reader(dt) for dt in dtypes]
        self._write = [writer(dt) for dt in dtypes]

    def pack(self, values: list, fills: list):
        for k, M in enumerate(values):
            v = self._read[k](M)
            self._sv[k][0] = fills[k] if v is None else v
            self._sp[k][0] = v is not None

    def ranks_values(self, k: int):
        """Value k of every rank (ranks x 1; a missing one holds its monoid's identity)."""
        return self._rv[k]

    def combined(self, k: int, ufunc, into=None):
        """Value k combined over the ranks, as a 1 x 1 matrix (missing when no rank had it)."""
        if not self._rp[k].any():
            return self._write[k](None, into)
        return self._write[k](ufunc.reduce(self._rv[k], axis=0)[0], into)
