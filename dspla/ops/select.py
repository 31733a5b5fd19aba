"""select: keep the entries where a predicate holds (attributes: op, a select predicate; thunk, the
value it compares with or the diagonal offset, a number, or None when it is a value of the program:
then a 1 x 1 second argument, as GrB_select takes a GrB_Scalar). Python: ``dp.select(X, ">", 0)``,
``dp.select(A, "tril")``, ``dp.select(C, ">=", k - 2)``; files: the same; ``tril(A, k)`` and
``triu(A, k)`` spell select by position."""
from __future__ import annotations

import numpy as np

from .. import algebra
from .._types import Scalar, SelectLike
from ..errors import DimensionMismatch, DomainMismatch, DsplaError, Span
from ..ir.types import DType, promote
from .define import (
    EXPR,
    NOTHING,
    SELECT,
    THUNK,
    Expr,
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

gb = library("graphblas")
_ss = library("suitesparse_graphblas")
gbops = kernel("gbops")
_item = kernel("item")
_prepared = kernel("prepared")

SELECT_OP = define("select", attrs=("op", "thunk"))


@SELECT_OP.type_rule
def _type(args, attrs, given, where, span):
    x, *given_thunk = args
    op = attrs["op"]  # nonzero takes no thunk: it applies to bool values whatever the thunk
    if given_thunk:
        (t,) = given_thunk
        if tuple(t.type.shape) != (1, 1):
            raise DimensionMismatch(f"{where}: the thunk is a number or a 1 x 1 value, got {t.type}", span)
        if op.on != "value" and (t.type.dtype.is_float or t.type.dtype is DType.bool):
            raise DomainMismatch(f"{where}: {op.name} takes an integer offset, got a {t.type.dtype} value", span)
        if op.on == "value" and op.name != "nonzero" and (x.type.dtype is DType.bool) != (t.type.dtype is DType.bool):
            raise DomainMismatch(f"{where}: comparing {x.type.dtype} values with a {t.type.dtype} thunk", span)
    elif op.on == "value" and op.name != "nonzero" and x.type.dtype is DType.bool \
            and not isinstance(attrs["thunk"], bool):
        raise DomainMismatch(f"{where}: comparing bool values with {attrs['thunk']!r}", span)
    return x.type


@SELECT_OP.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
    # a distributed piece of a position predicate passes its global row/column ids (None: identity)
    given = len(node.args)
    x, row_ids, col_ids = (list(args[:1]) + list(args[given:]) + [None, None])[:3]
    op, thunk = node.attr("op"), node.attr("thunk")
    if given == 2:
        thunk = _item.item(args[1])
        if thunk is None:   # (GrB_select refuses an empty thunk too: GrB_EMPTY_OBJECT)
            raise DsplaError(f"{node.label}: the thunk has no entry")
    if op.on == "user" or op.on == "index" and (row_ids is not None or col_ids is not None):
        r, c, v = x.to_coo()
        gr = (r if row_ids is None else np.asarray(row_ids)[r]).astype(np.int64)
        gc = (c if col_ids is None else np.asarray(col_ids)[c]).astype(np.int64)
        keep = _kept(op, v, gr, gc, thunk)
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


@SELECT_OP.prepare_rule
def _prepare(node, sig):
    """A value predicate against a number, or a 1 x 1 thunk of x's own dtype (int64, float64:
    the comparison _evaluate makes in x's dtype), as one typed GrB_select into a free earlier
    result; a missing thunk takes the evaluation rule (its error)."""
    op, thunk = node.attr("op"), node.attr("thunk")
    dt = _prepared.dtype_of_type(sig[0][0])
    if op.on != "value" or op.name == "nonzero" or dt is None or len(sig) > 2:
        return None
    name = _prepared.typed_name(dt)
    if len(sig) == 2:
        if dt not in (DType.int64, DType.float64) or sig[1] != (sig[0][0], 1, 1):
            return None
        read = _item.reader(dt)
    elif promote(dt, scalar_dtype(thunk, dt)) is not dt or name is None:
        return None
    else:
        fixed = dt.np.type(thunk).item()
        read = None
    try:
        gop = getattr(gb.select, op.gb)[dt.gb]
    except (AttributeError, KeyError, TypeError):
        return None
    call, (gdt, nr, nc) = getattr(_ss.lib, f"GrB_Matrix_select_{name}"), sig[0]

    def step(args, into):
        value = fixed if read is None else read(args[1])
        if value is None:
            return None
        C = _prepared.output(into, gdt, nr, nc)
        _item.check(call(C.gb_obj[0], _prepared.NULL, _prepared.NULL, gop.gb_obj, args[0].gb_obj[0], value,
                         _prepared.NULL), "select")
        return C
    return step


def _kept(op, v, gr, gc, thunk):
    """Which entries (values v at global rows gr, columns gc) the predicate keeps."""
    if op.on == "user":
        keep = np.asarray(op.func(v, gr, gc, thunk))
        if keep.shape != v.shape:
            raise ValueError(f"select predicate {op.name} returned shape {keep.shape} for {v.size} entries: it takes "
                             "numpy arrays (values, rows, cols, thunk) and returns one bool per entry")
        return keep.astype(bool)
    d, k = gc - gr, int(thunk)   # the diagonal an entry is on
    return {"tril": d <= k, "triu": d >= k, "diag": d == k, "offdiag": d != k, "rowle": gr <= k, "rowgt": gr > k,
            "colle": gc <= k, "colgt": gc > k}[op.name]


@SELECT_OP.fact_rule
def _facts(n, a):
    return NOTHING   # it drops entries by value or position


@SELECT_OP.lower_rule
def _lower(pl, n):
    if n.attr("op").on in ("index", "user") and not pl.replicated(n):
        return pl.with_global_ids(n)  # tril/triu/diag need global positions: the piece's ids go along
    pl.local(n)


@SELECT_OP.work_rule
def _work(n, args, out):
    return touched(args, out)


@SELECT_OP.vjp_rule()
def _vjp(n, g, needs, b):
    """G on the kept entries, none on those dropped (G may hold entries where the value is
    missing, and X is present at a dropped one); none for a thunk given as a value."""
    return (b.mask(g, n, structure=True),) + (None,) * (len(n.args) - 1)


@spelling(file=(("x", EXPR), ("op", SELECT), ("thunk", THUNK)))
def select(x: Expr, op: SelectLike, thunk: Scalar | Expr = 0, *, span: Span | None = None) -> Expr:
    """Keep entries where a predicate holds: ``select(X, ">", 0)``, ``select(A, "tril")``,
    ``select(A, "rowle", 3)``, or a Python predicate ``f(values, rows, cols, thunk)`` of numpy
    arrays returning one bool per entry. The thunk is a number or a 1 x 1 value of the program
    (``select(C, ">=", k - 2)`` with ``k`` a scalar input)."""
    pred = named(algebra.get_select, op, span)
    if isinstance(thunk, Expr):
        if pred.on == "user":
            raise DomainMismatch(f"select[{pred.name}]: a Python predicate takes a number as its thunk", span)
        return Expr(make(SELECT_OP.op, (node_of(x), node_of(thunk)), (("op", pred), ("thunk", None)),
                         span=span_or_caller(span)))
    if not is_scalar(thunk) and not hasattr(thunk, "item"):
        raise DomainMismatch(f"select[{pred.name}]: the thunk is a number or a 1 x 1 value, got "
                             f"{type(thunk).__name__}", span)
    return Expr(make(SELECT_OP.op, (node_of(x),), (("op", pred), ("thunk", scalar(thunk))),
                     span=span_or_caller(span)))


@spelling(file=(("x", EXPR), ("k", THUNK)))
def tril(x: Expr, k: Scalar | Expr = 0, *, span: Span | None = None) -> Expr:
    """The entries on and below the k-th diagonal (``j - i <= k``; numpy's ``tril``):
    ``select(x, "tril", k)``."""
    return select(x, "tril", k, span=span_or_caller(span))


@spelling(file=(("x", EXPR), ("k", THUNK)))
def triu(x: Expr, k: Scalar | Expr = 0, *, span: Span | None = None) -> Expr:
    """The entries on and above the k-th diagonal (``j - i >= k``): ``select(x, "triu", k)``."""
    return select(x, "triu", k, span=span_or_caller(span))
