"""Integer inputs computed in float64: the ``overflow='float64'`` choice (exec/overflow.py).

Every input declared int64 is cast to float64 where it is used, and every node is typed again
from its promoted operands: sums and products of them are float64 (exact up to 2^53, never
wrapping). Values a program makes integers itself (a count, an explicit cast) stay so."""
from __future__ import annotations

from ..errors import DsplaError
from ..ir import Node, Op, Program
from ..ir.types import DType
from ..ops import make


def promote_ints(program: Program) -> Program:
    memo: dict[int, Node] = {}
    casts: dict[int, Node] = {}

    def use(a: Node) -> Node:
        if a.op is Op.INPUT and getattr(a.type, "dtype", None) is DType.int64:
            if id(a) not in casts:
                casts[id(a)] = make(Op.CAST, (a,), (("dtype", DType.float64),), span=a.span)
            return casts[id(a)]
        return memo[id(a)]

    for node in program.toposort():
        if not node.args:
            memo[id(node)] = node
            continue
        args = tuple(use(a) for a in node.args)
        if all(x is y for x, y in zip(args, node.args)):
            memo[id(node)] = node
            continue
        try:
            memo[id(node)] = make(node.op, args, node.attrs, span=node.span, name=node.name)
        except DsplaError as e:
            raise DsplaError(f"overflow='float64' cannot compute {node.label} in float64 ({e}); cast its integer "
                             "values with cast(x, float64) in the program instead") from None
    return Program(tuple((k, memo[id(v)]) for k, v in program.outputs), program.declared, program.source)


__all__ = ["promote_ints"]
