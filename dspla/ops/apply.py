"""apply (attribute: op, a unary operator on the present entries) and apply_bind (op, scalar,
side: a binary operator with a bound scalar, ``x * 2.0``). Python: ``dp.apply``, ``dp.relu`` and
the other element-wise functions, a scalar operand of ``+ - * / **`` and of comparisons, ``-x``;
files: the same."""
from __future__ import annotations

from typing import Protocol

import numpy as np

from .. import algebra
from .._types import BinaryOpLike, Scalar, UnaryOpLike
from ..errors import NoGradient, Span
from ..ir.node import Node, Op
from ..ir.types import DType
from .define import (
    EXPR,
    OPERATOR,
    SCALAR,
    Expr,
    Family,
    define,
    is_scalar,
    make,
    named,
    node_of,
    scalar,
    scalar_dtype,
    span_or_caller,
    spelling,
    touched,
)
from .define.lazy import kernel, library

_ss = library("suitesparse_graphblas")
gb = library("graphblas")
gbops = kernel("gbops")
_item = kernel("item")
_prepared = kernel("prepared")
_scalars = kernel("scalars")

APPLY = define("apply", attrs=("op",))
APPLY_BIND = define("apply_bind", attrs=("op", "scalar", "side"))


@APPLY.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    _, out = attrs["op"].dtypes(x.type.dtype, where)
    return x.type.with_(dtype=out)


@APPLY_BIND.type_rule
def _type_bind(args, attrs, given, where, span):
    (x,) = args
    s = scalar_dtype(attrs["scalar"], x.type.dtype)
    a, b = (s, x.type.dtype) if attrs["side"] == "left" else (x.type.dtype, s)
    _, out = attrs["op"].dtypes(a, b, where)
    return x.type.with_(dtype=out)


@APPLY.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
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


@APPLY_BIND.eval_rule(into=True)
def _evaluate_bind(node, args, env, into=None):
    (x,) = args
    op, bound, side = node.attr("op"), node.attr("scalar"), node.attr("side")
    compute, out = bound_dtypes(node, gbops.dtype_of(x))
    if x.shape == (1, 1):   # (missing stays missing: an apply keeps the pattern)
        v = _item.item(x)
        res = _scalars.scalar_binary(op, compute, out, *((bound, v) if side == "left" else (v, bound)), False, into)
        if res is not None:
            return res
    x = gbops.cast(x, compute)
    value = compute.np.type(bound)
    kw = {"left": value} if side == "left" else {"right": value}
    return gbops.cast(gbops.new(x.apply(gbops.binary(op, compute), **kw), compute, into), out)


def bound_dtypes(node, x: DType) -> tuple:
    """(compute, out) dtypes of apply_bind ``node`` on an operand of dtype x (its scalar typed by x)."""
    op, bound, side = node.attr("op"), node.attr("scalar"), node.attr("side")
    s = scalar_dtype(bound, x)
    return op.dtypes(*((s, x) if side == "left" else (x, s)))


def on_scalar(node, x: DType):
    """(value, out): ``value(v)`` is apply_bind ``node`` on a 1 x 1 operand of dtype x holding v
    (None: missing, and so is the result), as its step computes it (kernels/scalars.py), before
    the result is made ``out``; None when the scalar table lacks the operator."""
    compute, out = bound_dtypes(node, x)
    f = _scalars.scalar_function(node.attr("op"), compute)
    if f is None:
        return None
    t, k = compute.np.type, node.attr("scalar")
    if node.attr("side") == "left":
        return (lambda v: _scalars.scalar_value(f, t, k, v, False)), out
    return (lambda v: _scalars.scalar_value(f, t, v, k, False)), out


# -------------------------------------------------------------------- the prepared C calls
@APPLY_BIND.prepare_rule
def _prepare_bind(node, sig):
    ((gdt, nr, nc),) = sig
    x = _prepared.dtype_of_type(gdt)
    if x is None:
        return None
    op, bound, side = node.attr("op"), node.attr("scalar"), node.attr("side")
    compute, out = bound_dtypes(node, x)
    if (nr, nc) == (1, 1):
        one = on_scalar(node, x)
        if one is not None:
            read, write, value = _item.reader(x), _item.writer(out), one[0]
            return lambda args, into: write(value(read(args[0])), into)
    # an operand of another dtype is cast by SuiteSparse on the way in, as gbops.cast would,
    # and the result on the way out into C's dtype
    gop = _prepared.binary_call(op, compute)
    call = gop and _prepared.apply_bound(gop, compute, side)
    if call is None:
        return None
    return _prepared.bound_step(call, compute.np.type(bound).item(), gb.dtypes.lookup_dtype(out.gb), nr, nc)


@APPLY.prepare_rule
def _prepare(node, sig):
    ((gdt, nr, nc),) = sig
    x = _prepared.dtype_of_type(gdt)
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
        call = _prepared.apply_bound(gop, compute, "right")
        return None if call is None else _prepared.bound_step(call, compute.np.type(bound[0]).item(), odt, nr, nc)

    def step(args, into):
        C = _prepared.output(into, odt, nr, nc)
        null = _prepared.NULL
        _item.check(_ss.lib.GrB_Matrix_apply(C.gb_obj[0], null, null, gop.gb_obj, args[0].gb_obj[0], null), "apply")
        return C
    return step


# --------------------------------------------------------------------------------- facts
@Family(APPLY, APPLY_BIND).fact_rule
def _facts(n, a):
    return a[0]   # the pattern is kept


@Family(APPLY, APPLY_BIND).work_rule
def _work(n, args, out):
    return touched(args, out)


@APPLY.lower_rule
def _lower(pl, n: Node):
    if n.attr("op").result == "index":   # global row/column numbers: the piece's ids go along
        return pl.with_global_ids(n)
    if n.attr("op").name == "neg" and _difference(pl, n):
        return None
    pl.local(n)


@APPLY_BIND.lower_rule
def _lower_bind(pl, n: Node):
    pl.local(n)


def _difference(pl, n: Node) -> bool:
    """``X + (-Y)`` (how ``X - Y`` is written: a lone Y entry becomes -Y) as one
    ``ewise_add[minus](X, Y)`` when X is proven full: then no position holds Y alone, so the
    two agree, and the negated copy of Y is never built (PageRank's convergence test)."""
    users = pl.uses.get(id(n), [])
    if len(users) != 1 or users[0] is None:
        return False
    u, y = users[0], n.args[0]
    if u.op is not Op.EWISE_ADD or u.attr("op").name != "plus" or u.args[1] is not n or u.args[0] is n:
        return False
    x = u.args[0]
    if not pl.computed(x):
        return False   # X comes later in the order
    fx = pl.facts.get(id(pl.resolve(x)))
    if fx is None or not fx.full or not (x.type.shape == y.type.shape == u.type.shape):
        return False
    if not (x.type.dtype == y.type.dtype == n.type.dtype == u.type.dtype and x.type.dtype.is_float):
        return False   # (integer negation and subtraction differ at the type's edges)
    lay = pl.layout(u)
    if pl.layout(x) != lay or pl.layout(y) != lay:
        return False
    out = pl.slot()
    minus = Node(Op.EWISE_ADD, (x, y), (("op", algebra.BINARY["minus"]),), u.type)
    pl.emit_local(out, minus, (pl.value(x, lay), pl.value(y, lay)), (lay, lay), lay)
    pl.set(u, out, lay)
    pl.fused.add(id(u))
    return True


# ------------------------------------------------------------------------------ gradient
@APPLY.vjp_rule()
def _vjp(n, g, needs, b):
    op = n.attr("op")
    if op.grad is None:
        raise NoGradient(f"{op.name} is piecewise constant (or an index): its gradient is zero wherever it exists; "
                         "compute it from values that do not depend on the parameters, or use it as a mask")
    return (op.grad(b, g, n.args[0], n),)


def _linked_bind(n):
    op, s, right = n.attr("op"), n.attr("scalar"), n.attr("side") == "right"
    d = op.grad
    if d is None:
        return (True,)
    if d.constant is not None and d.constant(s, right):
        return (False,)          # 0 * x, x ** 0: constants (the "+ 0 * X" pattern of dropout)
    return (op.reads[0 if right else 1],)   # first / second: the result may be the scalar


@APPLY_BIND.vjp_rule(linked=_linked_bind)
def _vjp_bind(n, g, needs, b):
    x = n.args[0]
    op, s, right = n.attr("op"), n.attr("scalar"), n.attr("side") == "right"
    if op.selects is not None:     # ties go to the scalar (relu at 0: 0)
        return (b.mask(g, b.bind(x, "gt" if op.selects == "max" else "lt", s)),)
    if op.grad is not None and op.grad.bound is not None:
        return (op.grad.bound(b, g, x, n, s, right),)
    raise NoGradient(f"apply with {op.name} has no gradient" + (
        " (a comparison is piecewise constant; use its result as a mask)" if op.kind == "compare" else ""))


# ------------------------------------------------------------------------------ spellings
@spelling(file=(("x", EXPR), ("op", OPERATOR), ("left", SCALAR), ("right", SCALAR)))
def apply(x: Expr, op: UnaryOpLike | BinaryOpLike, *, left: Scalar | None = None, right: Scalar | None = None,
          span: Span | None = None) -> Expr:
    """A unary operator on present entries, or a binary operator with a bound scalar
    (``apply(X, "times", left=2.0)`` is 2.0 * X)."""
    span = span_or_caller(span)
    if left is None and right is None:
        return Expr(make(APPLY.op, (node_of(x),), (("op", named(algebra.get_unary, op, span)),), span=span))
    if left is not None and right is not None:
        raise TypeError("apply binds one scalar: left= or right=, not both")
    side, value = ("left", left) if left is not None else ("right", right)
    value = scalar(value)
    if not is_scalar(value):
        raise TypeError(f"the bound operand must be a scalar, got {type(value).__name__}")
    return Expr(make(APPLY_BIND.op, (node_of(x),), (("op", named(algebra.get_binary, op, span)), ("scalar", value),
                                                     ("side", side)), span=span))


class ElementwiseFunction(Protocol):
    """``relu``, ``exp``, ...: a unary operator applied to an expression's present entries."""

    def __call__(self, x: Expr, *, span: Span | None = None) -> Expr: ...


def _unary(name: str) -> ElementwiseFunction:
    def fn(x: Expr, *, span: Span | None = None) -> Expr:
        return apply(x, name, span=span_or_caller(span))
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Apply {name} to the present entries."
    spelling(name, file=(("x", EXPR),))(fn)
    return fn


relu, relu_grad, sigmoid, tanh, exp, log = (_unary(n) for n in ("relu", "relu_grad", "sigmoid", "tanh", "exp",
                                                                 "log"))
abs_, neg, sqrt, step = (_unary(n) for n in ("abs", "neg", "sqrt", "step"))
