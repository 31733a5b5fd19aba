"""transpose: Xᵀ. Python: ``dp.transpose(x)``, ``x.T``; files: ``transpose(x)``, ``x'``."""
from __future__ import annotations

from ..errors import Span
from ..instr import TransposeRows
from ..instr.layout import REP, Layout
from .define import EXPR, Expr, Facts, define, make, node_of, span_or_caller, spelling, touched
from .define.lazy import kernel, library

_ss = library("suitesparse_graphblas")
_item = kernel("item")
_prepared = kernel("prepared")

TRANSPOSE = define("transpose")


@TRANSPOSE.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    return x.type.with_(shape=(x.type.ncols, x.type.nrows))


@TRANSPOSE.eval_rule(into=True)
def _evaluate(node, args, env, into=None):
    return args[0].T.new()


@TRANSPOSE.prepare_rule
def _prepare(node, sig):
    """GrB_transpose into a free earlier result (python-graphblas's ``.T.new()``: ~40 us of
    expression around a loop's transpose of a few entries)."""
    ((gdt, nr, nc),) = sig
    lib, null = _ss.lib, _prepared.NULL

    def step(args, into):
        C = _prepared.output(into, gdt, nc, nr)
        _item.check(lib.GrB_transpose(C.gb_obj[0], null, null, args[0].gb_obj[0], null), "transpose")
        return C
    return step


@TRANSPOSE.fact_rule
def _facts(n, a):
    return Facts(a[0].full, a[0].cols, a[0].rows)


@TRANSPOSE.lower_rule
def _lower(pl, n):
    from .mxm import lower_vxm  # (mxm spells vxm with transpose)
    if lower_vxm(pl, n):
        return
    (x,) = n.args
    xl, nl = pl.layout(x), pl.layout(n)
    flip = {"row": "col", "col": "row", "rep": "rep"}
    # (one process holds the whole value in any layout: GrB_transpose, not an exchange of coordinates)
    if Layout(flip[xl.kind], xl.dim) == nl or (xl == REP and nl == REP) or pl.P == 1:
        out = pl.slot()
        pl.emit_local(out, n, (pl.value(x),), (xl,), nl)
        pl.set(n, out, nl)
    elif xl.kind == "row" and nl == xl and x.type.shape[0] == x.type.shape[1]:
        # a square value by rows (Aᵀ of a graph): entries travel to their new rows' owners
        d, src, out = pl.dims[xl.dim], pl.value(x), pl.slot()
        pl.emit(lambda r: TransposeRows(out, src, d.owned[r], d.parts, d.pos, int(d.counts[r]), d.size))
        pl.set(n, out, nl)
    else:
        pl.via_rep(n)


@TRANSPOSE.work_rule
def _work(n, args, out):
    return touched(args, out)


@TRANSPOSE.vjp_rule()
def _vjp(n, g, needs, b):
    return (b.T(g),)


@spelling(file=(("x", EXPR),))
def transpose(x: Expr, *, span: Span | None = None) -> Expr:
    return Expr(make(TRANSPOSE.op, (node_of(x),), (), span=span_or_caller(span)))
