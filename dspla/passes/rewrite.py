"""The one traversal passes share: rebuild a program bottom-up, letting a rule replace nodes."""
from __future__ import annotations

from typing import Callable, Optional

from ..ir import Node, Program


def rewrite(program: Program, rule: Callable[[Node], Optional[Node]],
            sub: Callable[[Program], Program] | None = None) -> Program:
    """Apply ``rule`` to every node after its arguments were rewritten; a rule returns a
    replacement node or None to keep the node. Metadata (name, span) stays with the value.
    ``sub``: the pass to apply to sub-programs (a loop's condition and body), each on its own."""
    memo: dict[int, Node] = {}
    for node in program.toposort():
        args = tuple(memo[id(a)] for a in node.args)
        cur = node if all(x is y for x, y in zip(args, node.args)) else node.replace(args=args)
        if sub is not None and any(isinstance(v, Program) for _, v in cur.attrs):
            attrs = tuple((k, sub(v) if isinstance(v, Program) else v) for k, v in cur.attrs)
            if any(x is not y for (_, x), (_, y) in zip(attrs, cur.attrs)):
                cur = cur.replace(attrs=attrs)
        new = rule(cur)
        if new is not None and new is not cur:
            if new.name is None and cur.name is not None:
                new = new.replace(name=cur.name)
            cur = new
        memo[id(node)] = cur
    declared = tuple(memo.get(id(d), d) for d in program.declared)
    if all(memo[id(v)] is v for _, v in program.outputs) and all(x is y for x, y in zip(declared, program.declared)):
        return program   # nothing replaced: the same program (its verification and caches stand)
    return Program(tuple((k, memo[id(v)]) for k, v in program.outputs), declared, program.source)
