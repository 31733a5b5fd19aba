"""A user's operators as SuiteSparse:GraphBLAS objects, through python-graphblas's UDFs.

python-graphblas compiles a registered function with numba for all thirteen of its types at
once (10 s on this machine for a tropical semiring); registered as a "UDT" operator it compiles
one dtype when that dtype is first asked for. Its UDT path makes monoids with
``GrB_Monoid_new_UDT``, which SuiteSparse refuses for built-in types, so the typed monoid and
semiring are made here with ``GrB_Monoid_new_<T>`` and ``GrB_Semiring_new``, as python-graphblas
itself makes them for non-UDT operators (``graphblas.core.operator.monoid.Monoid._build``).
"""
from __future__ import annotations

import threading
from functools import lru_cache

import graphblas as gb
from graphblas.core import ffi, lib
from graphblas.core.operator import BinaryOp as _GbBinary
from graphblas.core.operator import Monoid as _GbMonoid
from graphblas.core.operator import Semiring as _GbSemiring
from graphblas.core.operator import UnaryOp as _GbUnary
from graphblas.core.operator.monoid import TypedUserMonoid
from graphblas.core.operator.semiring import TypedUserSemiring
from graphblas.core.utils import libget
from graphblas.exceptions import check_status_carg

from ..algebra import BinaryOp, Monoid, Semiring, UnaryOp
from ..ir.types import DType

_LOCK = threading.RLock()   # simulated ranks are threads: make each object once


@lru_cache(maxsize=None)
def _untyped_binary(op: BinaryOp):
    return _GbBinary.register_anonymous(op.func, op.name, is_udt=True)


@lru_cache(maxsize=None)
def _untyped_unary(op: UnaryOp):
    return _GbUnary.register_anonymous(op.func, op.name, is_udt=True)


@lru_cache(maxsize=None)
def _binary(op: BinaryOp, dtype: DType):
    if op.func is None:
        return getattr(gb.binary, op.gb)[dtype.gb]
    return _untyped_binary(op)[dtype.gb]


def binary(op: BinaryOp, dtype: DType):
    with _LOCK:
        return _binary(op, dtype)


def unary(op: UnaryOp, dtype: DType):
    with _LOCK:
        return _untyped_unary(op)[dtype.gb]


@lru_cache(maxsize=None)
def _monoid(m: Monoid, dtype: DType):
    if m.builtin:
        return getattr(gb.monoid, m.gb)[dtype.gb]
    op, ident = _binary(m.op, dtype), m.identity(dtype)
    t = gb.dtypes.lookup_dtype(dtype.gb)
    new = ffi.new("GrB_Monoid*")
    check_status_carg(libget(f"GrB_Monoid_new_{t.name}")(new, op.gb_obj, ffi.cast(t.c_type, ident)), "Monoid",
                      new[0])
    parent = _GbMonoid.register_anonymous(_untyped_binary(m.op), ident, m.name)
    return TypedUserMonoid(parent, m.name, t, op.return_type, new[0], op, ident)


def monoid(m: Monoid, dtype: DType):
    with _LOCK:
        return _monoid(m, dtype)


@lru_cache(maxsize=None)
def _semiring(sr: Semiring, dtype: DType):
    mon, op = _monoid(sr.monoid, dtype), _binary(sr.mult, dtype)
    t = gb.dtypes.lookup_dtype(dtype.gb)
    new = ffi.new("GrB_Semiring*")
    check_status_carg(lib.GrB_Semiring_new(new, mon.gb_obj, op.gb_obj), "Semiring", new[0])
    parent = _GbSemiring.register_anonymous(mon.parent, op.parent, sr.name)
    return TypedUserSemiring(parent, sr.name, t, mon.return_type, new[0], mon, op, dtype2=t)


def semiring(sr: Semiring, dtype: DType):
    """A typed semiring of a user's operators (or of built-in ones combined with them)."""
    with _LOCK:
        return _semiring(sr, dtype)
