"""Algebraic identities that are always valid under GraphBLAS semantics."""
from __future__ import annotations

from ..ir import Node, Op, Program
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
    return None


def simplify(program: Program) -> Program:
    return rewrite(program, _rule, sub=simplify)
