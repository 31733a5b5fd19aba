"""nvals: the number of entries present, as a 1 x 1 int64 that is always present (0 when empty).
Python: ``dp.nvals``; files: the same."""
from __future__ import annotations

from .. import algebra
from ..errors import Span
from ..ir.types import DType, Kind, Type
from .define import EXPR, Expr, Facts, define, make, node_of, span_or_caller, spelling
from .define.lazy import kernel

_item = kernel("item")
_prepared = kernel("prepared")

NVALS = define("nvals")


@NVALS.type_rule
def _type(args, attrs, given, where, span):
    return Type(Kind.dense, (1, 1), DType.int64)


@NVALS.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
    return _item.scalar(args[0].nvals, DType.int64, into)   # (GraphBLAS keeps the count: O(1))


@NVALS.prepare_rule
def _prepare(node, sig):
    count, write = _prepared.counter(), _item.writer(DType.int64)
    return lambda args, into: write(count(args[0]), into)


@NVALS.fact_rule
def _facts(n, a):
    return Facts(True)   # a count is always present (0 for an empty value)


@NVALS.lower_rule
def _lower(pl, n):
    """A sum of the pieces' counts, over everything (one word across processes)."""
    pl.reduction(n, "all", algebra.MONOIDS["plus"])


@NVALS.work_rule
def _work(n, args, out):
    return 1   # (GraphBLAS keeps the count)


@NVALS.vjp_rule(linked=lambda n: (False,) * len(n.args))
def _vjp(n, g, needs, b):
    """A count of entries does not depend on their values: a constant of the step."""
    return (None,) * len(n.args)


@spelling(file=(("x", EXPR),))
def nvals(x: Expr, *, span: Span | None = None) -> Expr:
    """The number of entries present in x, as a 1 x 1 int64 that is always present (0 for an
    empty x; ``reduce_all(apply(x, one))`` is missing there). GraphBLAS keeps the count, so
    it costs nothing locally and one summed word across processes: a loop's test for growth
    (``nvals(new) > nvals(old)``) or for an empty frontier."""
    return Expr(make(NVALS.op, (node_of(x),), (), span=span_or_caller(span)))
