"""cast: the values in another dtype (attribute: dtype). Python: ``dp.cast``; files: the same."""
from __future__ import annotations

from .._types import DTypeLike
from ..errors import NoGradient, Span
from ..ir.types import DType
from .define import DTYPE, EXPR, Expr, define, make, named, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel, library

_ss = library("suitesparse_graphblas")
gb = library("graphblas")
gbops = kernel("gbops")
_prepared = kernel("prepared")
_item = kernel("item")

CAST = define("cast", attrs=("dtype",))


@CAST.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    return x.type.with_(dtype=attrs["dtype"])


@CAST.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
    return gbops.cast(args[0], node.attr("dtype"))


@CAST.prepare_rule
def _prepare(node, sig):
    """SuiteSparse's identity of the target dtype applied (it casts on the way in, as a dup into
    that dtype does): one C call, where python-graphblas's dup spends ~60 us around it."""
    ((gdt, nr, nc),) = sig
    want = node.attr("dtype")
    if _prepared.dtype_of_type(gdt) is want:
        return lambda args, into: args[0]
    name = _prepared.typed_name(want)
    if name is None or _prepared.dtype_of_type(gdt) is None:
        return None
    odt, op = gb.dtypes.lookup_dtype(want.gb), getattr(_ss.lib, f"GrB_IDENTITY_{name}")

    def step(args, into):
        C = _prepared.output(into, odt, nr, nc)
        _item.check(_ss.lib.GrB_Matrix_apply(C.gb_obj[0], _prepared.NULL, _prepared.NULL, op, args[0].gb_obj[0],
                                             _prepared.NULL), "apply")
        return C
    return step


@CAST.fact_rule
def _facts(n, a):
    return a[0]   # the pattern is kept


@CAST.lower_rule
def _lower(pl, n):
    pl.local(n)


@CAST.work_rule
def _work(n, args, out):
    return touched(args, out)


@CAST.vjp_rule()
def _vjp(n, g, needs, b):
    x = n.args[0]
    if not x.type.dtype.is_float:
        name = x.name + " = " if x.name else ""
        raise NoGradient(f"its argument {name}{x.op_text()} has {x.type.dtype} values, which have no gradient"
                         + (" (a comparison is piecewise constant; use it as a mask instead)"
                            if x.type.dtype.value == "bool" else ""))
    return (b.cast(g, x.type.dtype),)


@spelling(file=(("x", EXPR), ("dtype", DTYPE)))
def cast(x: Expr, dtype: DTypeLike, *, span: Span | None = None) -> Expr:
    return Expr(make(CAST.op, (node_of(x),), (("dtype", named(DType.parse, dtype, span)),), span=span_or_caller(span)))
