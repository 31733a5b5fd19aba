"""The reference executor: interprets a Program node by node with SuiteSparse:GraphBLAS.

One evaluation rule per op in the EVAL table. Every value is a graphblas Matrix; operands
are cast to the dtype the op's algebra row asks for, so mixed-dtype programs mean the same
thing here and in the distributed runtime.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import graphblas as gb
import numpy as np

from ..errors import DsplaError
from ..io.limits import check_memory
from ..ir import Node, Op, Program
from ..ir.types import DType, promote
from ..ir.typing import scalar_dtype
from . import gbops, overflow, udfmxm, winners
from .item import item, scalar
from .values import concrete

EVAL: dict[Op, Callable] = {}
# ops whose rule takes ``into=``: a free matrix (exec/recycle.py: nothing else holds it) that it
# may write its result into instead of allocating one; a loop's element-wise steps then reuse
# last iteration's memory (a new 82k-row vector per step cost 2-3x the step's arithmetic)
INTO: set[Op] = set()


def eval_rule(op: Op, into: bool = False):
    def register(fn):
        EVAL[op] = fn
        if into:
            INTO.add(op)
        return fn
    return register


class Env:
    """What evaluation rules may look at besides their operands: bound inputs and dims; and
    what integer overflow does (exec/overflow.py)."""

    def __init__(self, inputs: dict, dims: dict, overflow: str = "error"):
        self.inputs, self.dims, self.overflow = inputs, dims, overflow


def evaluate(node: Node, args: list, env: Env):
    """``node``'s rule on ``args``; an int64 result checked for overflow unless it may wrap."""
    out = EVAL[node.op](node, args, env)
    if env.overflow == "error" and overflow.risky(node):
        overflow.verify(node, args, out, lambda n, a: EVAL[n.op](n, a, env))
    return out


@eval_rule(Op.INPUT)
def _input(node: Node, args, env: Env):
    return env.inputs[node.attr("name")]


@eval_rule(Op.IDENTITY)
def _identity(node, args, env):
    n = concrete(node.type.nrows, env.dims, "an identity matrix")
    try:   # row pointers, column indices and the coordinates it is built from: ~40 bytes a row (measured)
        check_memory(40 * n, f"the {n} x {n} identity matrix")
    except DsplaError as e:
        raise e.at(node.span) if node.span else e from None
    return gbops.identity(n, node.type.dtype)


def _output_mask(node, args, first: int):
    return gbops.mask_of(args[first], node.attr("mask"), node.attr("complement")) if node.attr("mask") else None


@eval_rule(Op.MXM)
def _mxm(node, args, env):
    a, b = args[0], args[1]
    sr = node.attr("semiring")
    da, db = gbops.dtype_of(a), gbops.dtype_of(b)
    compute, out = sr.dtypes(da, db)
    ca, cb = sr.operand_dtypes(da, db, compute)
    a, b = gbops.cast(a, ca), gbops.cast(b, cb)
    return gbops.cast(gbops.mxm(a, b, sr, compute, mask=_output_mask(node, args, 2)), out)


@eval_rule(Op.UPDATE)
def _update(node, args, env):
    c, t = args[0], args[1]
    want = node.type.dtype
    accum = node.attr("accum")
    compute = accum.dtypes(gbops.dtype_of(c), gbops.dtype_of(t))[0] if accum is not None else want
    out = gbops.cast(c, compute).dup()
    t = gbops.cast(t, compute)
    mask = _output_mask(node, args, 2)
    kw = {"mask": mask, "replace": node.attr("replace")} if mask is not None else {}
    if accum is not None:
        out(accum=gbops.binary(accum, compute), **kw) << t
    else:
        out(**kw) << t
    return gbops.cast(out, want)


@eval_rule(Op.WHILE)
def _while(node, args, env):
    """The loop, run by this executor on its sub-programs (scheduled once per loop node)."""
    cond, body = node.attr("cond"), node.attr("body")
    n, names = node.attr("carried"), [p.attr("name") for p in body.declared]
    cs, bs = schedule_of(cond), schedule_of(body)
    vals = list(args)
    it = 0
    limit = concrete(node.attr("max_iter"), env.dims, "a loop bound")
    while it < limit:
        c = run(cs, Env(dict(zip(names, vals)), env.dims))["cond"]
        if not truth(c):
            break
        new = run(bs, Env(dict(zip(names, vals)), env.dims))
        vals[:n] = [new[k] for k, _ in body.outputs]
        it += 1
    count = gbops.empty(1, 1, DType.int64)
    count[0, 0] = it
    return tuple(vals[:n]) + (count,)


def truth(c) -> bool:
    """A 1 x 1 condition: true when its entry is present and true (a missing entry is false)."""
    v = item(c)
    return v is not None and bool(v)


@eval_rule(Op.ITEM)
def _item(node, args, env):
    return args[0][node.attr("index")]


# Built-in operators on two 1 x 1 values as numpy scalars compute them, which is what SuiteSparse
# computes: on floats IEEE arithmetic (udfmxm's table, whose min and max follow SuiteSparse's,
# plus division and comparisons); on int64 wrapping arithmetic and comparisons (not division,
# whose x / 0 is GraphBLAS's own); on bool the logical operators and comparisons. A loop's 1 x 1
# values (a dangling sum, a count, a convergence test) go through these: a GraphBLAS call on a
# 1 x 1 matrix costs 40-130 us of Python, this about 1.
_COMPARE = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
            "le": np.less_equal}


def _pair(x, y):
    return type(x)(1)


_FLOAT_OPS = {**udfmxm.BUILTIN, "div": np.true_divide, "rdiv": lambda x, y: y / x, "pair": _pair, **_COMPARE}
_INT_OPS = {**udfmxm.BUILTIN, "pair": _pair, **_COMPARE}
_BOOL_OPS = {"first": udfmxm.BUILTIN["first"], "second": udfmxm.BUILTIN["second"], "lor": np.logical_or,
             "land": np.logical_and, "lxor": np.logical_xor, "min": np.logical_and, "max": np.logical_or,
             "pair": _pair, **_COMPARE}
_SCALAR_OPS = {DType.float64: _FLOAT_OPS, DType.float32: _FLOAT_OPS, DType.int64: _INT_OPS, DType.bool: _BOOL_OPS}


def scalar_function(op, compute: DType):
    """The numpy function computing built-in ``op`` on two scalars of ``compute``; None when the
    table has none."""
    return _SCALAR_OPS.get(compute, {}).get(op.name) if op.func is None else None


def scalar_value(f, t, x, y, union: bool):
    """f (a scalar_function) on two values given as Python values (None: missing), in the numpy
    scalar type ``t``: None when missing (an intersection with a missing one; a union keeps the
    present one alone, as GraphBLAS's does)."""
    if x is not None and y is not None:
        with np.errstate(all="ignore"):
            return f(t(x), t(y))
    if union:
        return t(x) if x is not None else (t(y) if y is not None else None)
    return None


def _scalar_binary(op, compute: DType, out: DType, x, y, union: bool, into):
    """op on two 1 x 1 values given as Python values (None: missing), a 1 x 1 matrix of ``out``
    (``into`` written when it fits); None when the operator is not in the table for ``compute``."""
    f = scalar_function(op, compute)
    if f is None:
        return None
    return scalar(scalar_value(f, compute.np.type, x, y, union), out, into)


def _ewise(node, args, union: bool, cast_to=None, into=None):
    """``cast_to``: the dtype a cast right after wants (the op's output typecast, one pass)."""
    a, b = args
    op = node.attr("op")
    compute, out = op.dtypes(gbops.dtype_of(a), gbops.dtype_of(b))
    out = cast_to or out
    if a.shape == b.shape == (1, 1):
        res = _scalar_binary(op, compute, out, item(a), item(b), union, into)
        if res is not None:
            return res
    a, b = gbops.cast(a, compute), gbops.cast(b, compute)
    (ar, ac), (br, bc) = a.shape, b.shape
    # numpy's rule: a unit axis takes the other operand's size, 0 included
    shape = (br if ar == 1 else ar, bc if ac == 1 else ac)
    scalar = _scalar_operand(a, b, shape)
    if scalar is not None:   # a 1 x 1 operand over a whole-shape one: no broadcast copy
        x, value, side = scalar
        if value is None:   # a missing 1 x 1: a union leaves x, an intersection is empty
            return gbops.cast(x if union else gbops.empty(shape[0], shape[1], compute), out)
        if not union or gbops.is_full(x):   # every position is op(x, s), as the broadcast gives: one apply
            return gbops.cast(gbops.new(x.apply(gbops.binary(op, compute), **{side: value}), compute, into), out)
        if op.commutative:
            # x's missing positions get s alone: a full matrix of s with x accumulated into it,
            # one pass (PageRank's teleport term; broadcasting s took a product and a union)
            res = gbops.full(shape[0], shape[1], value, compute)
            res(accum=gbops.binary(op, compute)) << x
            return gbops.cast(res, out)
    if union:
        a, b = gbops.expand(a, shape), gbops.expand(b, shape)
        res = gbops.new(a.ewise_add(b, gbops.binary(op, compute)), out, into)
    else:  # an intersection only needs the broadcast operand on the other one's pattern
        if a.shape == shape:
            b = gbops.expand(b, shape, like=a)
        elif b.shape == shape:
            a = gbops.expand(a, shape, like=b)
        else:
            a, b = gbops.expand(a, shape), gbops.expand(b, shape)
        res = gbops.new(a.ewise_mult(b, gbops.binary(op, compute)), out, into)
    return gbops.cast(res, out)


def ewise_cast(node, args, dtype):
    """An element-wise op whose result is cast to ``dtype``, in one GraphBLAS call."""
    return _ewise(node, args, node.op is Op.EWISE_ADD, cast_to=dtype)


def _scalar_operand(a, b, shape):
    """(the whole-shape operand, the 1 x 1 one's value or None when missing, the side it binds
    on) when one operand is 1 x 1 and the other holds the shape; else None."""
    for x, s, side in ((a, b, "right"), (b, a, "left")):
        if s.shape == (1, 1) and x.shape == shape and shape != (1, 1):
            return x, item(s), side
    return None


@eval_rule(Op.EWISE_ADD, into=True)
def _ewise_add(node, args, env, into=None):
    return _ewise(node, args, union=True, into=into)


@eval_rule(Op.EWISE_MULT, into=True)
def _ewise_mult(node, args, env, into=None):
    return _ewise(node, args, union=False, into=into)


@eval_rule(Op.APPLY, into=True)
def _apply(node, args, env, into=None):
    # a distributed piece of an index op passes its global row/column ids (None: its own)
    x, row_ids, col_ids = (list(args) + [None, None])[:3]
    op = node.attr("op")
    if op.result == "index":
        axis = op.steps[0][1]
        if (row_ids if axis == "row" else col_ids) is None:   # its own positions: GraphBLAS's index op
            return x.apply(gb.indexunary.rowindex if axis == "row" else gb.indexunary.colindex, 0).new(dtype="INT64")
        r, c, _ = x.to_coo(values=False)
        ids = (r if row_ids is None else row_ids[r]) if axis == "row" else (c if col_ids is None else col_ids[c])
        return gb.Matrix.from_coo(r, c, ids.astype(np.int64), nrows=x.shape[0], ncols=x.shape[1], dtype="INT64")
    compute, out = op.dtypes(gbops.dtype_of(x))
    return gbops.apply_unary(x, op, compute, out, into=into)


@eval_rule(Op.APPLY_BIND, into=True)
def _apply_bind(node, args, env, into=None):
    (x,) = args
    op, scalar, side = node.attr("op"), node.attr("scalar"), node.attr("side")
    s = scalar_dtype(scalar, gbops.dtype_of(x))
    compute, out = op.dtypes(*((s, gbops.dtype_of(x)) if side == "left" else (gbops.dtype_of(x), s)))
    if x.shape == (1, 1):   # (missing stays missing: an apply keeps the pattern)
        v = item(x)
        res = _scalar_binary(op, compute, out, *((scalar, v) if side == "left" else (v, scalar)), False, into)
        if res is not None:
            return res
    x = gbops.cast(x, compute)
    value = compute.np.type(scalar)
    kw = {"left": value} if side == "left" else {"right": value}
    return gbops.cast(gbops.new(x.apply(gbops.binary(op, compute), **kw), compute, into), out)


@eval_rule(Op.SELECT)
def _select(node, args, env):
    # a distributed piece of a position predicate passes its global row/column ids (None: identity)
    x, row_ids, col_ids = (list(args) + [None, None])[:3]
    op, thunk = node.attr("op"), node.attr("thunk")
    if op.on == "index" and (row_ids is not None or col_ids is not None):
        r, c, v = x.to_coo()
        gr = r if row_ids is None else np.asarray(row_ids)[r]
        gc = c if col_ids is None else np.asarray(col_ids)[c]
        d, k = gc.astype(np.int64) - gr.astype(np.int64), int(thunk)   # the diagonal an entry is on
        keep = {"tril": d <= k, "triu": d >= k, "diag": d == k, "offdiag": d != k}[op.name]
        return gb.Matrix.from_coo(r[keep], c[keep], v[keep], nrows=x.shape[0], ncols=x.shape[1], dtype=x.dtype)
    if op.on == "index":
        return x.select(getattr(gb.select, op.gb), int(thunk)).new()
    dt = gbops.dtype_of(x)
    if op.name == "nonzero":
        return x.select(gb.select.valuene, dt.np.type(0)).new()
    # The thunk is a weak Python scalar (as in numpy 2): int64 values compared with 0.5 or
    # -1.5 compare in float64, not against a thunk truncated to 0 or -1.
    cmp = promote(dt, scalar_dtype(thunk, dt))
    if cmp is dt:
        return x.select(getattr(gb.select, op.gb), dt.np.type(thunk)).new()
    keep = gbops.cast(x, cmp).select(getattr(gb.select, op.gb), cmp.np.type(thunk)).new()
    return x.dup(mask=keep.S)


@eval_rule(Op.MASK)
def _mask(node, args, env):
    x, m = args
    mask = m.S if node.attr("structure") else m.V
    if node.attr("complement"):
        mask = ~mask
    return x.dup(mask=mask)


@eval_rule(Op.TRANSPOSE)
def _transpose(node, args, env):
    return args[0].T.new()


@eval_rule(Op.REDUCE, into=True)
def _reduce(node, args, env, into=None):
    (x,) = args
    m, axis = node.attr("monoid"), node.attr("axis")
    dt = node.type.dtype
    x = gbops.cast(x, dt)
    mon = gbops.monoid(m, dt)
    if axis == "rows":
        return gbops.column(x.reduce_rowwise(mon).new(), x.shape[0])
    if axis == "cols":
        return gbops.row(x.reduce_columnwise(mon).new(), x.shape[1])
    s = x.reduce_scalar(mon).new()
    return scalar(None if s.is_empty else s.value, dt, into)   # (an empty reduction leaves it missing)


@eval_rule(Op.NVALS, into=True)
def _nvals(node, args, env, into=None):
    return scalar(args[0].nvals, DType.int64, into)   # (GraphBLAS keeps the count: O(1))


@eval_rule(Op.CAST)
def _cast(node, args, env):
    return gbops.cast(args[0], node.attr("dtype"))


_M1, _M2, _M3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place."""
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _M2
        z ^= z >> np.uint64(27)
        z *= _M3
        z ^= z >> np.uint64(31)
    return z


def _threshold(p: float) -> np.uint64:
    # keep when the top 53 bits, as a fraction of 2^53, are >= p: compared as integers (exact)
    return np.uint64(int(np.ceil(p * (1 << 53))))


def dropout_keep(seed: int, rows: np.ndarray, cols: np.ndarray, p: float) -> np.ndarray:
    """Whether entry (row, col) survives dropout: a counter-based hash (splitmix64) of
    (seed, global row, global column), so the mask does not depend on how rows are distributed."""
    with np.errstate(over="ignore"):
        z = (np.uint64(seed) * _M1 + rows.astype(np.uint64) * _M2 + cols.astype(np.uint64) * _M3)
    return (_mix(z) >> np.uint64(11)) >= _threshold(p)


def dropout_keep_full(seed: int, rows: np.ndarray, cols: np.ndarray, p: float) -> np.ndarray:
    """dropout_keep for every (rows[i], cols[j]) pair: an len(rows) x len(cols) array, built by
    broadcasting (no coordinate lists; the same values as dropout_keep)."""
    out = np.empty((rows.size, cols.size), dtype=bool)
    thr = _threshold(p)
    with np.errstate(over="ignore"):
        r = np.uint64(seed) * _M1 + rows.astype(np.uint64) * _M2
        c = (cols.astype(np.uint64) * _M3)[None, :]
        step = max(1, (1 << 16) // max(1, cols.size))      # blocks of ~64k entries stay in cache
        z = np.empty((step, cols.size), dtype=np.uint64)
        for lo in range(0, rows.size, step):
            hi = min(rows.size, lo + step)
            zz = z[: hi - lo]
            np.add(r[lo:hi, None], c, out=zz)
            _mix(zz)
            zz >>= np.uint64(11)
            np.greater_equal(zz, thr, out=out[lo:hi])
    return out


@eval_rule(Op.DROPOUT_MASK)
def _dropout_mask(node, args, env):
    # a distributed piece passes its global row/column ids as two extra arguments (None: identity)
    x, seed, row_ids, col_ids = (list(args) + [None, None])[:4]
    p = node.attr("p")
    dt = node.type.dtype
    s = int(item(seed) or 0)
    scale = dt.np.type(1.0 / (1.0 - p))
    if x.nvals == x.shape[0] * x.shape[1] and x.nvals:   # full (dense features): a bitmap, no coordinates
        gr = np.arange(x.shape[0]) if row_ids is None else np.asarray(row_ids)
        gc = np.arange(x.shape[1]) if col_ids is None else np.asarray(col_ids)
        keep = dropout_keep_full(s, gr, gc, p)
        M = gb.Matrix(dt.gb, x.shape[0], x.shape[1])
        M.ss.pack_bitmapr(bitmap=keep.view(np.int8), values=np.array([scale], dtype=dt.np),
                          nvals=int(np.count_nonzero(keep)), is_iso=True, take_ownership=True)
        return M
    r, c, _ = x.to_coo(values=False)
    gr = r if row_ids is None else row_ids[r]   # global ids when x is a distributed piece
    gc = c if col_ids is None else col_ids[c]
    keep = dropout_keep(s, gr, gc, p)
    return gb.Matrix.from_coo(r[keep], c[keep], scale, nrows=x.shape[0], ncols=x.shape[1], dtype=dt.gb)


@eval_rule(Op.ARGBEST)
def _argbest(node, args, env):
    return winners.argbest(*args, node.attr("semiring"))


@eval_rule(Op.ROUTE)
def _route(node, args, env):
    return winners.route(*args, node.attr("axis"), node.attr("factor"))


assert set(EVAL) == set(Op), f"ops without an evaluation rule: {set(Op) - set(EVAL)}"


class Schedule:
    """The program in evaluation order with, for each step, which values die after it.
    Built once per compiled program; running it does no graph work."""

    def __init__(self, program: Program):
        self.order = program.toposort()
        index = {id(n): i for i, n in enumerate(self.order)}
        self.slot = index
        last = {}
        for i, n in enumerate(self.order):
            for a in n.args:
                last[id(a)] = i
        keep = {id(n) for _, n in program.outputs}
        self.free_after = [[] for _ in self.order]
        for nid, i in last.items():
            if nid not in keep:
                self.free_after[i].append(index[nid])
        self.arg_slots = [tuple(index[id(a)] for a in n.args) for n in self.order]
        self.outputs = [(name, index[id(n)]) for name, n in program.outputs]


@lru_cache(maxsize=256)
def schedule_of(program: Program) -> Schedule:
    """A sub-program's schedule, built once (programs compare and hash by structure)."""
    return Schedule(program)


def run(schedule: Schedule, env: Env) -> dict:
    vals: list = [None] * len(schedule.order)
    for i, node in enumerate(schedule.order):
        vals[i] = evaluate(node, [vals[j] for j in schedule.arg_slots[i]], env)
        for j in schedule.free_after[i]:
            vals[j] = None
    return {name: vals[i] for name, i in schedule.outputs}
