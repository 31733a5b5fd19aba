"""Local steps prepared once, then run as one GraphBLAS C call.

A loop runs the same element-wise steps on the same kinds of values at every iteration. Through
the evaluation rules (exec/reference.py) each step re-derives its dtypes, operator objects and
broadcast case, then goes through python-graphblas's expression machinery: 20-90 us of Python per
step on soc-Slashdot0902's PageRank, as much as the arithmetic on the whole vector, and the same
at every P, so it was most of what kept P = 2 from halving P = 1's iteration.

A prepared step resolves all of that the first time it sees its operands' dtypes and shapes (its
signature): the typed ``GrB_*`` function, the operator object, the bound value as a C scalar.
Later calls with the same signature make the one C call, writing into the free earlier result
when the runtime has one. What the table does not cover (user operators, unions of operands that
need a cast, broadcasts of vectors) returns None and takes the evaluation rule (tests check
every covered case against the numpy oracle).

This module holds what the steps are made of and the cache of made steps; each op's own step
is its definition's ``prepare`` rule (dspla/ops), handed in as a table.
"""
from __future__ import annotations

from typing import Callable

from suitesparse_graphblas import ffi, lib

from ..ir.types import DType
from . import gbops
from .item import _TYPED, check, new_matrix, writer
from .scalars import scalar_function, scalar_value

NULL = ffi.NULL
Step = Callable[[list, object], object]   # (operands, a free matrix or None) -> result, or None: not here


def signature(args) -> tuple:
    return tuple((a.dtype, a._nrows, a._ncols) for a in args)


class Steps:
    """One runtime's prepared steps: instruction -> (signature, step or None). ``table``: op ->
    its prepare rule (node, signature) -> step or None."""

    __slots__ = ("_by", "taken", "by_op", "table")

    def __init__(self, table: dict):
        self.table = table
        self._by: dict = {}
        self.taken = 0   # results a prepared step gave (the tests check that the table is used)
        self.by_op: dict = {}   # op name -> results its prepared steps gave

    def run(self, key, node, args: list, into):
        """The step's result, or None when no prepared step applies (the caller evaluates)."""
        got = self._by.get(key)
        try:
            if got is not None and _same(got[0], args):
                step = got[1]
            else:
                sig = signature(args)
                make = self.table.get(node.op)
                got = self._by[key] = (sig, make(node, sig) if make is not None else None, node.op.value)
                step = got[1]
        except AttributeError:   # an operand that is not a matrix (an index op's global ids)
            return None
        if step is None:
            return None
        M = step(args, into)
        if M is not None:
            self.taken += 1
            by, name = self.by_op, got[2]
            by[name] = by.get(name, 0) + 1
        return M


def _same(sig: tuple, args: list) -> bool:
    """Whether the operands have the signature ``sig`` (``signature(args) == sig``, without
    building it)."""
    if len(sig) != len(args):
        return False
    for (dt, nr, nc), a in zip(sig, args):
        if (a.dtype is not dt and a.dtype != dt) or a._nrows != nr or a._ncols != nc:
            return False
    return True


# ------------------------------------------------------------------------------- helpers
def dtype_of_type(gdt) -> DType | None:
    try:
        return DType.of_numpy(gdt.np_type)
    except (KeyError, ValueError, TypeError):   # a user-defined type
        return None


def typed_name(dt: DType) -> str | None:
    name = dt.gb
    return name if name in _TYPED and name not in ("FC32", "FC64") else None


def output(into, gdt, nrows: int, ncols: int):
    """``into`` when it has this dtype and shape, else a new empty matrix (its contents are
    replaced by the call that writes it)."""
    if into is not None and into.dtype is gdt and into._nrows == nrows and into._ncols == ncols:
        return into
    return new_matrix(gdt, nrows, ncols)


def binary_call(op, compute: DType):
    """The typed operator object of a built-in op computing in ``compute``; None for others."""
    if op.func is not None or getattr(op, "builtin", True) is False:
        return None
    try:
        return gbops.binary(op, compute)
    except (AttributeError, KeyError, TypeError):
        return None


def apply_bound(gop, compute: DType, side: str):
    """C call applying ``gop`` with a bound scalar on ``side``: f(C, A, value)."""
    name = typed_name(compute)
    if name is None:
        return None
    if side == "left":
        fn = getattr(lib, f"GrB_Matrix_apply_BinaryOp1st_{name}")
        return lambda C, A, v: fn(C, NULL, NULL, gop.gb_obj, v, A, NULL)
    fn = getattr(lib, f"GrB_Matrix_apply_BinaryOp2nd_{name}")
    return lambda C, A, v: fn(C, NULL, NULL, gop.gb_obj, A, v, NULL)


def scalar_step(op, compute: DType, out: DType, union: bool, order: Callable):
    """Two 1 x 1 values by numpy's scalar arithmetic (``order(x, y)`` puts the operands' values
    in the operator's order); None when the operator is not in the scalar table."""
    f = scalar_function(op, compute)
    if f is None:
        return None
    t, write = compute.np.type, writer(out)
    return lambda x, y, into: write(scalar_value(f, t, *order(x, y), union), into)


def bound_step(call, value, odt, nrows: int, ncols: int) -> Step:
    """A step applying ``call`` (_apply_bound's) with ``value`` bound, into a matrix of ``odt``."""
    def step(args, into):
        C = output(into, odt, nrows, ncols)
        check(call(C.gb_obj[0], args[0].gb_obj[0], value), "apply")
        return C
    return step


def counter():
    """M -> its number of entries, by the C call with a cell of its own."""
    n = ffi.new("GrB_Index*")

    def count(M) -> int:
        check(lib.GrB_Matrix_nvals(n, M.gb_obj[0]), "Matrix_nvals")
        return n[0]
    return count
