"""update: GraphBLAS's write into an existing value, as a new value: ``C<M, replace> accum= T``
(attributes: accum, mask, complement, replace; arguments: c, t and the mask). Python:
``dp.update``; files: the same."""
from __future__ import annotations

from .. import algebra
from .._types import BinaryOpLike
from ..errors import NoGradient, Span
from .define import (
    BINARY,
    BOOL,
    EXPR,
    MASKED,
    NOTHING,
    Expr,
    Facts,
    bool_mask,
    check_mask,
    define,
    dims_differ,
    elementwise_over,
    make,
    mask_args,
    named,
    node_of,
    span_or_caller,
    spelling,
    touched,
    unify_shapes,
)
from .define.lazy import kernel, library
from .mxm import output_mask

gbops = kernel("gbops")
item = kernel("item")
gb = library("graphblas")
ssgb = library("suitesparse_graphblas")

UPDATE = define("update", attrs=("accum", "mask", "complement", "replace"))


@UPDATE.type_rule
def _type(args, attrs, given, where, span):
    c, t = args[0], args[1]
    if unify_shapes(c.type.shape, t.type.shape, where) is None and tuple(t.type.shape) != (1, 1):
        dims_differ(where, "an update writes a value of its own shape", c, t, c.type.shape, t.type.shape, span)
    check_mask(args, attrs, c.type.shape, where, span, 2)
    if attrs["accum"] is not None:
        attrs["accum"].dtypes(c.type.dtype, t.type.dtype, where)
    return c.type   # GraphBLAS: the result keeps C's type (T is cast to it)


@UPDATE.eval_rule()
def _evaluate(node, args, env):
    c, t = args[0], args[1]
    want = node.type.dtype
    accum = node.attr("accum")
    compute = accum.dtypes(gbops.dtype_of(c), gbops.dtype_of(t))[0] if accum is not None else want
    out = gbops.cast(c, compute).dup()
    _write(node, out, _source(t, out, compute), output_mask(node, args, 2), compute)
    return gbops.cast(out, want)


def _source(t, c, dtype):
    """What is written: T, or a 1 x 1 T's entry as a scalar (GrB_assign of a scalar: every
    position inside the mask), or, when that entry is missing, a C-shaped T with no entries."""
    if t.shape == c.shape:
        return gbops.cast(t, dtype)
    v = item.item(t)
    return gb.Matrix(dtype.gb, *c.shape) if v is None else gb.Scalar.from_value(v, dtype=dtype.gb)


def _write(node, c, t, mask, dtype):
    kw = {"mask": mask, "replace": node.attr("replace")} if mask is not None else {}
    accum = node.attr("accum")
    if accum is not None:
        c(accum=gbops.binary(accum, dtype), **kw) << t
    else:
        c(**kw) << t


def in_place(node, args):
    """The update written into C itself (``C<M> accum= T`` as GraphBLAS does it): for a
    loop-carried C that no later step reads (ops/loop.py proves it, the loop owns C's object),
    work in T's entries instead of a copy of C."""
    c, t = args[0], args[1]
    if c.ncols == 1:   # a vector as a bitmap: a write costs the mask's entries, not C's
        lib = ssgb.lib
        item.check(lib.GxB_Matrix_Option_set_INT32(c.gb_obj[0], lib.GxB_SPARSITY_CONTROL, lib.GxB_BITMAP), "set")
    v = item.item(t) if t.shape != c.shape and t.dtype is c.dtype else None
    typed = item.typed_assign(c.dtype.name)
    if v is not None and node.attr("mask") is not None and node.attr("accum") is None and typed is not None:
        # a scalar written inside a mask, as one C call (python-graphblas's expression: ~60 us)
        m = args[2]
        if c.ncols == 1 and node.attr("mask") == "structure" and not node.attr("complement") and \
                not node.attr("replace") and item.write_on_pattern(c, m, v):
            return c
        kind = ("R" if node.attr("replace") else "") + ("S" if node.attr("mask") == "structure" else "") + \
            ("C" if node.attr("complement") else "")
        lib, null = ssgb.lib, ssgb.ffi.NULL
        item.check(typed(c.gb_obj[0], m.gb_obj[0], null, v, lib.GrB_ALL, c._nrows, lib.GrB_ALL, c._ncols,
                         getattr(lib, f"GrB_DESC_{kind}") if kind else null), "assign")
        return c
    dt = gbops.dtype_of(c)
    if t.shape == c.shape and t.dtype is c.dtype and _assign(node, c, t, args[2] if len(args) > 2 else None, dt):
        return c
    _write(node, c, _source(t, c, dt), output_mask(node, args, 2), dt)
    return c


def _assign(node, c, t, m, dt) -> bool:
    """``C<M, replace> accum= T`` as one GrB_Matrix_assign (python-graphblas's expression costs
    ~60 us a call); False when the accumulator has no typed built-in operator."""
    lib, null = ssgb.lib, ssgb.ffi.NULL
    accum = node.attr("accum")
    if accum is not None:
        if accum.func is not None:
            return False
        try:
            op = gbops.binary(accum, dt).gb_obj
        except (AttributeError, KeyError, TypeError):
            return False
    else:
        op = null
    desc = null
    if m is not None:
        kind = ("R" if node.attr("replace") else "") + ("S" if node.attr("mask") == "structure" else "") + \
            ("C" if node.attr("complement") else "")
        desc = getattr(lib, f"GrB_DESC_{kind}") if kind else null
    item.check(lib.GrB_Matrix_assign(c.gb_obj[0], m.gb_obj[0] if m is not None else null, op, t.gb_obj[0],
                                     lib.GrB_ALL, c._nrows, lib.GrB_ALL, c._ncols, desc), "assign")
    return True


def writes_into(n, body_order, outputs) -> bool:
    """Whether update n may write into its C, a loop-carried value: same dtype through, C not
    an output of the body, and every other step of the body reading C computed before n (an
    ancestor of n)."""
    c = n.args[0]
    accum = n.attr("accum")
    if c.type.dtype is not n.type.dtype or any(o is c for o in outputs) or any(a is c for a in n.args[1:]):
        return False
    if accum is not None and accum.dtypes(c.type.dtype, n.args[1].type.dtype)[0] is not c.type.dtype:
        return False
    before, stack = set(), list(n.args[1:])
    while stack:
        m = stack.pop()
        if id(m) not in before:
            before.add(id(m))
            stack.extend(m.args)
    return all(m is n or id(m) in before for m in body_order if any(a is c for a in m.args))


@UPDATE.fact_rule
def _facts(n, a):
    c, t = a[0], a[1]
    if n.attr("mask") is not None or tuple(n.args[1].type.shape) != tuple(n.type.shape):
        return NOTHING   # (a scalar written everywhere: its own facts do not carry over)
    if n.attr("accum") is None:
        return t   # without a mask: T
    return Facts(c.full or t.full, c.rows or t.rows, c.cols or t.cols, elementwise_over(n, (c, t), both=False))


@UPDATE.lower_rule
def _lower(pl, n):
    pl.local(n)


@UPDATE.work_rule
def _work(n, args, out):
    return touched(args, out)


@UPDATE.vjp_rule()
def _vjp(n, g, needs, b):
    raise NoGradient("update (C<M> accum= T) has no gradient rule; write it with ewise_add and mask")


@spelling(file=(("c", EXPR), ("t", EXPR), ("accum", BINARY), *MASKED, ("replace", BOOL)))
def update(c: Expr, t: Expr, *, accum: BinaryOpLike | None = None, mask: Expr | None = None,
           complement: bool = False, structure: bool = False, replace: bool = False,
           span: Span | None = None) -> Expr:
    """GraphBLAS's write into an existing value, as a new value: ``C<M, replace> accum= T``.

    Inside the mask (everywhere without one) the result is accum(C, T) where both have an
    entry, else whichever has one (T alone without accum); outside the mask it is C, or
    nothing with ``replace=True``. A 1 x 1 T is a scalar written at every position inside the
    mask (GrB_assign of a scalar). E.g. BFS levels: ``update(levels, depth, mask=frontier,
    structure=True)``."""
    extra, mattrs = mask_args(mask, complement, structure)
    acc = None if accum is None else named(algebra.get_binary, accum, span)
    return Expr(bool_mask(make(UPDATE.op, (node_of(c), node_of(t), *extra), (("accum", acc), *mattrs,
                                                                            ("replace", bool(replace))),
                               span=span_or_caller(span))))
