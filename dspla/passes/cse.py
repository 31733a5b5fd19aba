"""Common subexpressions: structurally equal nodes become one node, computed once."""
from __future__ import annotations

from ..ir import Node, Program
from .rewrite import rewrite


def cse(program: Program) -> Program:
    canon: dict[Node, Node] = {}  # Node hashing/equality is structural

    def rule(n: Node):
        return canon.setdefault(n, n)

    return rewrite(program, rule, sub=cse)
