"""Algebraic identities that are always valid under GraphBLAS semantics, and mask(X ⊕ Y, M) as
the element-wise op computed inside the mask (ops/masked.py) where nothing else reads X ⊕ Y."""
from __future__ import annotations

from ..ir import Node, Op, Program
from ..ops.masked import fold
from .accumulate import accumulate
from .rewrite import rewrite


def _rule(n: Node):
    if n.op is Op.TRANSPOSE and n.args[0].op is Op.TRANSPOSE:        # (X.T).T -> X
        return n.args[0].args[0]
    if n.op is Op.CAST and n.args[0].type.dtype is n.attr("dtype"):  # cast to its own dtype
        return n.args[0]
    if n.op is Op.APPLY and n.attr("op").name == "identity":
        return n.args[0]
    if n.op is Op.TRANSPOSE and n.args[0].op is Op.IDENTITY:         # I.T -> I
        return n.args[0]
    if n.op is Op.CAST and n.args[0].op is Op.IDENTITY:              # cast(I) -> I of that dtype (1 cast is 1)
        return n.args[0].replace(type=n.type)
    if n.op is Op.CAST and n.args[0].op is Op.SELECT and n.args[0].attr("op").on == "index" \
            and n.args[0].args[0].op in (Op.EWISE_ADD, Op.EWISE_MULT):
        # cast(select(A + Aᵀ, offdiag)) -> select(cast(A + Aᵀ), offdiag): a selection by position
        # keeps the same entries in any dtype, and the sum is then made in the cast's dtype in
        # one pass (static evaluation's ewise_cast), the selection reading the narrower values
        s = n.args[0]
        cast = n.replace(args=(s.args[0],), type=s.args[0].type.with_(dtype=n.type.dtype), name=None)
        return s.replace(args=(cast, *s.args[1:]), type=n.type)
    return accumulate(n)   # a loop's x = x ⊕ y as x ⊕= y (passes/accumulate.py)


def simplify(program: Program) -> Program:
    return _fold_masks(rewrite(program, _rule, sub=simplify))


def _fold_masks(program: Program) -> Program:
    order = program.toposort()
    if not any(_maybe(n) for n in order):   # (most programs: no rebuilding)
        return program
    uses = program.use_counts()
    return rewrite(program, lambda n: fold(n, uses), sub=_fold_masks)


def _maybe(n: Node) -> bool:
    """n is a mask of an element-wise op, or holds a sub-program that may have one."""
    return (n.op is Op.MASK and n.args[0].op in (Op.EWISE_ADD, Op.EWISE_MULT)) or \
        any(isinstance(v, Program) and any(_maybe(m) for m in v.toposort()) for _, v in n.attrs)
