"""Local steps prepared once, then run as one GraphBLAS C call.

A loop runs the same element-wise steps on the same kinds of values at every iteration. Through
the evaluation rules (exec/reference.py) each step re-derives its dtypes, operator objects and
broadcast case, then goes through python-graphblas's expression machinery: 20-90 us of Python per
step on soc-Slashdot0902's PageRank, as much as the arithmetic on the whole vector, and the same
at every P, so it was most of what kept P = 2 from halving P = 1's iteration (issue 12).

A prepared step resolves all of that the first time it sees its operands' dtypes and shapes (its
signature): the typed ``GrB_*`` function, the operator object, the bound value as a C scalar.
Later calls with the same signature make the one C call, writing into the free earlier result
when the runtime has one. What the table does not cover (user operators, unions of operands that
need a cast, broadcasts of vectors) returns None and takes the evaluation rule (tests check
every covered case against the numpy oracle).
"""
from __future__ import annotations

from typing import Callable

import graphblas as gb
from suitesparse_graphblas import ffi, lib

from ..ir import Node, Op
from ..ir.types import DType
from ..ir.typing import scalar_dtype
from . import gbops
from .item import _TYPED, check, fill, new_matrix, reader, writer
from .reference import scalar_function, scalar_value

NULL = ffi.NULL
Step = Callable[[list, object], object]   # (operands, a free matrix or None) -> result, or None: not here

PREPARE: dict[Op, Callable[[Node, tuple], Step | None]] = {}


def rule(op: Op):
    def register(fn):
        PREPARE[op] = fn
        return fn
    return register


def signature(args) -> tuple:
    return tuple((a.dtype, a._nrows, a._ncols) for a in args)


class Steps:
    """One runtime's prepared steps: instruction -> (signature, step or None)."""

    __slots__ = ("_by", "taken")

    def __init__(self):
        self._by: dict = {}
        self.taken = 0   # results a prepared step gave (the tests check that the table is used)

    def run(self, key, node: Node, args: list, into):
        """The step's result, or None when no prepared step applies (the caller evaluates)."""
        try:
            sig = signature(args)
        except AttributeError:   # an operand that is not a matrix (an index op's global ids)
            return None
        got = self._by.get(key)
        if got is None or got[0] != sig:
            make = PREPARE.get(node.op)
            got = (sig, make(node, sig) if make is not None else None)
            self._by[key] = got
        step = got[1]
        if step is None:
            return None
        M = step(args, into)
        if M is not None:
            self.taken += 1
        return M


# ------------------------------------------------------------------------------- helpers
def _dtype(gdt) -> DType | None:
    try:
        return DType.of_numpy(gdt.np_type)
    except (KeyError, ValueError, TypeError):   # a user-defined type
        return None


def _typed_name(dt: DType) -> str | None:
    name = dt.gb
    return name if name in _TYPED and name not in ("FC32", "FC64") else None


def output(into, gdt, nrows: int, ncols: int):
    """``into`` when it has this dtype and shape, else a new empty matrix (its contents are
    replaced by the call that writes it)."""
    if into is not None and into.dtype is gdt and into._nrows == nrows and into._ncols == ncols:
        return into
    return new_matrix(gdt, nrows, ncols)


def _binary_call(op, compute: DType):
    """The typed operator object of a built-in op computing in ``compute``; None for others."""
    if op.func is not None or getattr(op, "builtin", True) is False:
        return None
    try:
        return gbops.binary(op, compute)
    except (AttributeError, KeyError, TypeError):
        return None


def _apply_bound(gop, compute: DType, side: str):
    """C call applying ``gop`` with a bound scalar on ``side``: f(C, A, value)."""
    name = _typed_name(compute)
    if name is None:
        return None
    if side == "left":
        fn = getattr(lib, f"GrB_Matrix_apply_BinaryOp1st_{name}")
        return lambda C, A, v: fn(C, NULL, NULL, gop.gb_obj, v, A, NULL)
    fn = getattr(lib, f"GrB_Matrix_apply_BinaryOp2nd_{name}")
    return lambda C, A, v: fn(C, NULL, NULL, gop.gb_obj, A, v, NULL)


def _scalar_step(op, compute: DType, out: DType, union: bool, order: Callable):
    """Two 1 x 1 values by numpy's scalar arithmetic (``order(x, y)`` puts the operands' values
    in the operator's order); None when the operator is not in the scalar table."""
    f = scalar_function(op, compute)
    if f is None:
        return None
    t, write = compute.np.type, writer(out)
    return lambda x, y, into: write(scalar_value(f, t, *order(x, y), union), into)


def _bound_step(call, value, odt, nrows: int, ncols: int) -> Step:
    """A step applying ``call`` (_apply_bound's) with ``value`` bound, into a matrix of ``odt``."""
    def step(args, into):
        C = output(into, odt, nrows, ncols)
        check(call(C.gb_obj[0], args[0].gb_obj[0], value), "apply")
        return C
    return step


def _counter():
    """M -> its number of entries, by the C call with a cell of its own."""
    n = ffi.new("GrB_Index*")

    def count(M) -> int:
        check(lib.GrB_Matrix_nvals(n, M.gb_obj[0]), "Matrix_nvals")
        return n[0]
    return count


# ------------------------------------------------------------------------------ the table
@rule(Op.APPLY_BIND)
def _apply_bind(node: Node, sig: tuple):
    ((gdt, nr, nc),) = sig
    x = _dtype(gdt)
    if x is None:
        return None
    op, bound, side = node.attr("op"), node.attr("scalar"), node.attr("side")
    s = scalar_dtype(bound, x)
    compute, out = op.dtypes(*((s, x) if side == "left" else (x, s)))
    if (nr, nc) == (1, 1):
        read = reader(x)
        one = _scalar_step(op, compute, out, False, (lambda v, b: (b, v)) if side == "left" else (lambda v, b: (v, b)))
        if one is not None:
            return lambda args, into: one(read(args[0]), bound, into)
    # an operand of another dtype is cast by SuiteSparse on the way in, as gbops.cast would,
    # and the result on the way out into C's dtype
    gop = _binary_call(op, compute)
    call = gop and _apply_bound(gop, compute, side)
    if call is None:
        return None
    return _bound_step(call, compute.np.type(bound).item(), gb.dtypes.lookup_dtype(out.gb), nr, nc)


@rule(Op.APPLY)
def _apply(node: Node, sig: tuple):
    ((gdt, nr, nc),) = sig
    x = _dtype(gdt)
    op = node.attr("op")
    if x is None or op.result == "index" or len(op.steps) != 1 or op.steps[0][0] not in ("unary", "bind"):
        return None
    compute, out = op.dtypes(x)
    odt = gb.dtypes.lookup_dtype(out.gb)
    kind, name, *bound = op.steps[0]
    try:
        gop = getattr(gb.unary if kind == "unary" else gb.binary, name)[compute.gb]
    except (AttributeError, KeyError, TypeError):
        return None
    if kind == "bind":   # e.g. neg: times -1
        call = _apply_bound(gop, compute, "right")
        return None if call is None else _bound_step(call, compute.np.type(bound[0]).item(), odt, nr, nc)

    def step(args, into):
        C = output(into, odt, nr, nc)
        check(lib.GrB_Matrix_apply(C.gb_obj[0], NULL, NULL, gop.gb_obj, args[0].gb_obj[0], NULL), "apply")
        return C
    return step


def _ewise(node: Node, sig: tuple, union: bool):
    (adt, ar, ac), (bdt, br, bc) = sig
    a, b = _dtype(adt), _dtype(bdt)
    if a is None or b is None:
        return None
    op = node.attr("op")
    compute, out = op.dtypes(a, b)
    if (ar, ac) == (br, bc) == (1, 1):
        read_a, read_b = reader(a), reader(b)
        one = _scalar_step(op, compute, out, union, lambda x, y: (x, y))
        return None if one is None else lambda args, into: one(read_a(args[0]), read_b(args[1]), into)
    gop = _binary_call(op, compute)
    if gop is None or (union and (a is not compute or b is not compute)):
        return None   # (a union copies a lone entry straight into C's dtype, not through compute's)
    odt = gb.dtypes.lookup_dtype(out.gb)
    if (ar, ac) == (br, bc):
        fn = lib.GrB_Matrix_eWiseAdd_BinaryOp if union else lib.GrB_Matrix_eWiseMult_BinaryOp

        def step(args, into):
            C = output(into, odt, ar, ac)
            check(fn(C.gb_obj[0], NULL, NULL, gop.gb_obj, args[0].gb_obj[0], args[1].gb_obj[0], NULL), "eWise")
            return C
        return step
    # one operand 1 x 1 over the other's whole shape: an apply with its value bound
    if (br, bc) == (1, 1):
        whole, one, side, (nr, nc) = 0, 1, "right", (ar, ac)
    elif (ar, ac) == (1, 1):
        whole, one, side, (nr, nc) = 1, 0, "left", (br, bc)
    else:
        return None   # a vector across a matrix: the rule's broadcast
    call = _apply_bound(gop, compute, side)
    if call is None:
        return None
    t, read, count = compute.np.type, reader(b if one == 1 else a), _counter()
    n = nr * nc
    # a union over a matrix with missing entries: those positions take v alone, so it is the
    # union with a full matrix holding v, kept iso-valued (refilled in O(1)); one pass, operands
    # in their order (PageRank's teleport term over a product with empty rows: 132 -> 33 us at
    # 41K rows, where the rule built a new full matrix and accumulated into it)
    full_v = gb.Matrix(gb.dtypes.lookup_dtype(compute.gb), nr, nc) if union else None
    add = lib.GrB_Matrix_eWiseAdd_BinaryOp

    def step(args, into):
        x, v = args[whole], read(args[one])
        if v is None:   # a union leaves x as it is; an intersection with nothing is empty
            if union:
                return x if x.dtype is odt else None   # (else the rule casts it)
            C = output(into, odt, nr, nc)
            C.clear()
            return C
        C = output(into, odt, nr, nc)
        if union and count(x) != n:
            fill(full_v, t(v).item())
            pair = (x, full_v) if whole == 0 else (full_v, x)
            check(add(C.gb_obj[0], NULL, NULL, gop.gb_obj, pair[0].gb_obj[0], pair[1].gb_obj[0], NULL), "eWiseAdd")
            return C
        check(call(C.gb_obj[0], x.gb_obj[0], t(v).item()), "apply")
        return C
    return step


@rule(Op.EWISE_ADD)
def _ewise_add(node: Node, sig: tuple):
    return _ewise(node, sig, union=True)


@rule(Op.EWISE_MULT)
def _ewise_mult(node: Node, sig: tuple):
    return _ewise(node, sig, union=False)


@rule(Op.REDUCE)
def _reduce(node: Node, sig: tuple):
    ((gdt, _, _),) = sig
    m, dt = node.attr("monoid"), node.type.dtype
    name = _typed_name(dt)
    if node.attr("axis") != "all" or _dtype(gdt) is not dt or name is None or gbops._user(m):
        return None
    mon = gbops.monoid(m, dt)
    fn = getattr(lib, f"GrB_Matrix_reduce_{name}")
    cell = ffi.new(f"{_TYPED[name].ctype}*")
    count, write = _counter(), writer(dt)

    def step(args, into):
        if not count(args[0]):   # an empty reduction leaves the result missing
            return write(None, into)
        check(fn(cell, NULL, mon.gb_obj, args[0].gb_obj[0], NULL), "reduce")
        return write(cell[0], into)
    return step


@rule(Op.NVALS)
def _nvals_rule(node: Node, sig: tuple):
    count, write = _counter(), writer(DType.int64)
    return lambda args, into: write(count(args[0]), into)
