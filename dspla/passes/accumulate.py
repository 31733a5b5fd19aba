"""A loop's carried value grown by an element-wise union, ``x = ewise_add(x, y, op)``, as the
update ``x accum= y`` (ops/update.py), which the loop's lowering writes into x's own matrix when
the loop owns it (ops/loop.py): GraphBLAS then works in y's entries (a bitmap x takes each of
them in place) instead of building x ∪ y anew, O(x's size), every iteration. Luby's maximal
independent set grows its set this way: ``iset = ewise_add(iset, new, lor)``.

The same values: ``C accum= T`` is accum(c, t) where both have an entry and whichever has one
elsewhere, ewise_add(C, T, accum)'s definition, when C, T and the op's result share one dtype
and shape (no cast, no broadcast). ``ewise_add(y, x, op)`` qualifies when op is commutative."""
from __future__ import annotations

from ..ir import Node, Op, Program
from ..ops.define import make, mask_args
from ..ops.update import UPDATE


def accumulate(n: Node) -> Node | None:
    """A loop node with such steps rewritten, or None."""
    if n.op is not Op.WHILE:
        return None
    body, k = n.attr("body"), n.attr("carried")
    order = body.toposort()
    outs = list(body.outputs)
    changed = False
    unmasked = mask_args(None, False, False)[1]   # (update's own attributes without a mask)
    for j, h in enumerate(body.declared[:k]):
        name, v = outs[j]
        y = _grown(h, v)
        if y is None or sum(o is v for _, o in outs) > 1 or any(a is v for m in order for a in m.args):
            continue   # (v also read by another step or output: it stays, computed once)
        outs[j] = (name, make(UPDATE.op, (h, y), (("accum", v.attr("op")), *unmasked, ("replace", False)),
                              span=v.span, name=v.name))
        changed = True
    if not changed:
        return None
    body = Program(tuple(outs), body.declared, body.source)
    return n.replace(attrs=tuple((a, body if a == "body" else x) for a, x in n.attrs))


def _grown(h: Node, v: Node) -> Node | None:
    """y when v = ewise_add(h, y, op) (or (y, h) with op commutative) of one dtype and shape."""
    if v.op is not Op.EWISE_ADD:
        return None
    a, b = v.args
    op = v.attr("op")
    y = b if a is h else a if (b is h and op.commutative) else None
    if y is None or y is h or v.type != h.type or y.type.shape != h.type.shape or y.type.dtype is not h.type.dtype:
        return None
    compute, out = op.dtypes(h.type.dtype, y.type.dtype)
    return y if compute is h.type.dtype and out is h.type.dtype else None
