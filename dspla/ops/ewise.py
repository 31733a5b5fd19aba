"""ewise_add and ewise_mult: element-wise union and intersection with a binary operator (attribute:
op); an entry present in one operand only passes through a union unchanged (GraphBLAS eWiseAdd).
A vector or 1 x 1 operand broadcasts. Python: ``dp.ewise_add``, ``dp.ewise_mult``, ``+ - * /``
and comparisons of two expressions; files: the same."""
from __future__ import annotations

from .. import algebra
from .._types import BinaryOpLike
from ..errors import NoGradient, Span
from ..ir.types import Kind, Type, joined
from .define import (
    BINARY,
    EXPR,
    Expr,
    Facts,
    Family,
    broadcast_shape,
    define,
    elementwise_over,
    make,
    named,
    node_of,
    same_dims,
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

EWISE_ADD = define("ewise_add", attrs=("op",))
EWISE_MULT = define("ewise_mult", attrs=("op",))
BOTH = Family(EWISE_ADD, EWISE_MULT)


@EWISE_ADD.type_rule
def _type_add(args, attrs, given, where, span):
    a, b = args
    shape = broadcast_shape(a, b, where, span)
    _, out = attrs["op"].dtypes(a.type.dtype, b.type.dtype, where)
    # a union is as full as its fullest operand
    kind = Kind.dense if any(x.type.kind is Kind.dense for x in args) else Kind.sparse
    return Type(kind, shape, out, joined(shape, a.type, b.type))


@EWISE_MULT.type_rule
def _type_mult(args, attrs, given, where, span):
    a, b = args
    shape = broadcast_shape(a, b, where, span)
    _, out = attrs["op"].dtypes(a.type.dtype, b.type.dtype, where)
    # an intersection is as sparse as its sparsest full-shape operand
    full = [x for x in args if all(same_dims(d, e) for d, e in zip(x.type.shape, shape))]
    kind = Kind.sparse if any(x.type.kind is Kind.sparse for x in full) else Kind.dense
    return Type(kind, shape, out, joined(shape, a.type, b.type))


# ----------------------------------------------------------------------------- evaluation
def _ewise(node, args, union: bool, cast_to=None, into=None):
    """``cast_to``: the dtype a cast right after wants (the op's output typecast, one pass)."""
    a, b = args
    op = node.attr("op")
    compute, out = op.dtypes(gbops.dtype_of(a), gbops.dtype_of(b))
    out = cast_to or out
    if a.shape == b.shape == (1, 1):
        res = _scalars.scalar_binary(op, compute, out, _item.item(a), _item.item(b), union, into)
        if res is not None:
            return res
    a, b = gbops.cast(a, compute), gbops.cast(b, compute)
    (ar, ac), (br, bc) = a.shape, b.shape
    # numpy's rule: a unit axis takes the other operand's size, 0 included
    shape = (br if ar == 1 else ar, bc if ac == 1 else ac)
    one = _scalar_operand(a, b, shape)
    if one is not None:   # a 1 x 1 operand over a whole-shape one: no broadcast copy
        x, value, side = one
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
    """An element-wise op whose result is cast to ``dtype``, in one GraphBLAS call (static
    evaluation's ``cast(A + Aᵀ, bool)``)."""
    return _ewise(node, args, node.op is EWISE_ADD.op, cast_to=dtype)


def _scalar_operand(a, b, shape):
    """(the whole-shape operand, the 1 x 1 one's value or None when missing, the side it binds
    on) when one operand is 1 x 1 and the other holds the shape; else None."""
    for x, s, side in ((a, b, "right"), (b, a, "left")):
        if s.shape == (1, 1) and x.shape == shape and shape != (1, 1):
            return x, _item.item(s), side
    return None


@EWISE_ADD.eval_rule(into=True)
def _evaluate_add(node, args, env, into=None):
    return _ewise(node, args, union=True, into=into)


@EWISE_MULT.eval_rule(into=True)
def _evaluate_mult(node, args, env, into=None):
    return _ewise(node, args, union=False, into=into)


# -------------------------------------------------------------------- the prepared C call
def _prepared_step(node, sig, union):
    (adt, ar, ac), (bdt, br, bc) = sig
    a, b = _prepared.dtype_of_type(adt), _prepared.dtype_of_type(bdt)
    if a is None or b is None:
        return None
    op = node.attr("op")
    compute, out = op.dtypes(a, b)
    if (ar, ac) == (br, bc) == (1, 1):
        read_a, read_b = _item.reader(a), _item.reader(b)
        one = _prepared.scalar_step(op, compute, out, union, lambda x, y: (x, y))
        return None if one is None else lambda args, into: one(read_a(args[0]), read_b(args[1]), into)
    gop = _prepared.binary_call(op, compute)
    if gop is None or (union and (a is not compute or b is not compute)):
        return None   # (a union copies a lone entry straight into C's dtype, not through compute's)
    odt = gb.dtypes.lookup_dtype(out.gb)
    if (ar, ac) == (br, bc):
        fn = _ss.lib.GrB_Matrix_eWiseAdd_BinaryOp if union else _ss.lib.GrB_Matrix_eWiseMult_BinaryOp

        def step(args, into):
            C = _prepared.output(into, odt, ar, ac)
            null = _prepared.NULL
            _item.check(fn(C.gb_obj[0], null, null, gop.gb_obj, args[0].gb_obj[0], args[1].gb_obj[0], null), "eWise")
            return C
        return step
    # one operand 1 x 1 over the other's whole shape: an apply with its value bound
    if (br, bc) == (1, 1):
        whole, one, side, (nr, nc) = 0, 1, "right", (ar, ac)
    elif (ar, ac) == (1, 1):
        whole, one, side, (nr, nc) = 1, 0, "left", (br, bc)
    else:
        return None   # a vector across a matrix: the rule's broadcast
    call = _prepared.apply_bound(gop, compute, side)
    if call is None:
        return None
    return _bound_scalar_step(call, gop, compute, odt, _item.reader(b if one == 1 else a), whole, one, (nr, nc), union)


def _bound_scalar_step(call, gop, compute, odt, read, whole: int, one: int, shape: tuple, union: bool):
    """A 1 x 1 operand over the other's whole shape, by one C call.

    A union over a matrix with missing entries: those positions take v alone, so it is the
    union with a full matrix holding v, kept iso-valued (refilled in O(1)); one pass, operands in
    their order (PageRank's teleport term over a product with empty rows: 132 -> 33 us at 41K
    rows, where the rule built a new full matrix and accumulated into it)."""
    (nr, nc), t, count = shape, compute.np.type, _prepared.counter()
    n = nr * nc
    full_v = gb.Matrix(gb.dtypes.lookup_dtype(compute.gb), nr, nc) if union else None
    add = _ss.lib.GrB_Matrix_eWiseAdd_BinaryOp

    def step(args, into):
        x, v = args[whole], read(args[one])
        if v is None:   # a union leaves x as it is; an intersection with nothing is empty
            if union:
                return x if x.dtype is odt else None   # (else the rule casts it)
            C = _prepared.output(into, odt, nr, nc)
            C.clear()
            return C
        C = _prepared.output(into, odt, nr, nc)
        if union and count(x) != n:
            _item.fill(full_v, t(v).item())
            pair = (x, full_v) if whole == 0 else (full_v, x)
            null = _prepared.NULL
            _item.check(add(C.gb_obj[0], null, null, gop.gb_obj, pair[0].gb_obj[0], pair[1].gb_obj[0], null),
                        "eWiseAdd")
            return C
        _item.check(call(C.gb_obj[0], x.gb_obj[0], t(v).item()), "apply")
        return C
    return step


@EWISE_ADD.prepare_rule
def _prepare_add(node, sig):
    return _prepared_step(node, sig, union=True)


@EWISE_MULT.prepare_rule
def _prepare_mult(node, sig):
    return _prepared_step(node, sig, union=False)


# --------------------------------------------------------------------------------- facts
@EWISE_ADD.fact_rule
def _facts_add(n, a):
    x, y = a
    return Facts(x.full or y.full, x.rows or y.rows, x.cols or y.cols, elementwise_over(n, a, both=False))


@EWISE_MULT.fact_rule
def _facts_mult(n, a):
    return Facts(a[0].full and a[1].full, over=elementwise_over(n, a, both=True))


@BOTH.lower_rule
def _lower(pl, n):
    emit = pl.takeover.pop(id(n), None)
    if emit is not None:   # a product folded into this union waited for its other operand (ops/mxm.py)
        return emit()
    pl.local(n)


@BOTH.work_rule
def _work(n, args, out):
    return touched(args, out)


# ------------------------------------------------------------------------------ gradient
def _same_shape(n, why):
    A, B = n.args
    if tuple(A.type.shape) != tuple(B.type.shape):
        raise NoGradient(f"{why} is differentiated for operands of one shape (here {A.type} and {B.type})")


def _losers(n, b, selects: str):
    """(where A loses, where B loses) where both are present; ties go to A."""
    A, B = n.args
    if selects == "min":
        return b.mul(A, B, "gt"), b.mul(A, B, "le")
    return b.mul(A, B, "lt"), b.mul(A, B, "ge")


@EWISE_ADD.vjp_rule()
def _vjp_add(n, g, needs, b):
    """Union: an entry present in one operand only passes through (its cotangent is G there)."""
    A, B = n.args
    op = n.attr("op")
    d = op.grad
    if op.selects is not None:
        loseA, loseB = _losers(n, b, op.selects)
        gA, gB = b.mask(g, loseA, complement=True), b.mask(g, loseB, complement=True)
    elif d is not None and d.union is not None:
        if d.union_same_shape:
            _same_shape(n, f"ewise_add with {op.name}")
        gA, gB = d.union(b, g, A, B)
    else:
        raise NoGradient(f"ewise_add with {op.name} has no gradient rule (differentiable: plus, minus, min, max, "
                         "first, second)")
    return (b.unbroadcast(gA, A, n) if needs[0] else None, b.unbroadcast(gB, B, n) if needs[1] else None)


def _linked_mult(n):
    op = n.attr("op")   # first / second read one operand's value only
    return op.reads if op.grad is not None else (True, True)


@EWISE_MULT.vjp_rule(linked=_linked_mult)
def _vjp_mult(n, g, needs, b):
    """Intersection: every entry of the result has both operands."""
    A, B = n.args
    op = n.attr("op")
    d = op.grad
    if op.selects is not None:
        loseA, loseB = _losers(n, b, op.selects)
        gA, gB = (lambda: b.mask(g, loseA, complement=True)), (lambda: b.mask(g, loseB, complement=True))
    elif d is not None and d.intersection is not None:
        gA, gB = (lambda: d.intersection[0](b, g, A, B, n)), (lambda: d.intersection[1](b, g, A, B, n))
    else:
        raise NoGradient(f"ewise_mult with {op.name} has no gradient" + (
            " (a comparison is piecewise constant; use its result as a mask)" if op.kind == "compare" else ""))
    return (b.unbroadcast(gA(), A, n) if needs[0] else None, b.unbroadcast(gB(), B, n) if needs[1] else None)


# ------------------------------------------------------------------------------ spellings
@spelling(file=(("a", EXPR), ("b", EXPR), ("op", BINARY)))
def ewise_add(a: Expr, b: Expr, op: BinaryOpLike = "plus", *, span: Span | None = None) -> Expr:
    """Element-wise union with a binary operator or monoid; entries present in one operand pass
    through unchanged (GraphBLAS eWiseAdd). A vector or 1 x 1 operand broadcasts."""
    return Expr(make(EWISE_ADD.op, (node_of(a), node_of(b)), (("op", named(algebra.get_binary, op, span)),),
                     span=span_or_caller(span)))


@spelling(file=(("a", EXPR), ("b", EXPR), ("op", BINARY)))
def ewise_mult(a: Expr, b: Expr, op: BinaryOpLike = "times", *, span: Span | None = None) -> Expr:
    """Element-wise intersection with a binary operator (GraphBLAS eWiseMult)."""
    return Expr(make(EWISE_MULT.op, (node_of(a), node_of(b)), (("op", named(algebra.get_binary, op, span)),),
                     span=span_or_caller(span)))
