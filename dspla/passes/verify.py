"""The IR verifier, run after every pass.

It re-derives every node's type with the op's rule (its definition's, dspla/ops), checks that
it carries the op's attributes and that input names are used consistently. Nodes are immutable,
so a node that passed once is not checked again: after a pass, only the nodes it made are. A
failure names the node, shows its arguments and users and its source span.
"""
from __future__ import annotations

from ..errors import DsplaError, VerificationError
from ..ir import Node, Op, Program
from ..ops import DEFINITIONS
from ..ops.define import Where


def verify(program: Program, after: str = "") -> Program:
    inputs: dict[str, Node] = {}

    def fail(node: Node, why: str):
        names, users = program.names(), program.users()   # (only a failure needs them)
        ctx = [f"after pass {after!r}: " if after else "", f"{names.get(id(node), '?')} = {node!r}: {why}"]
        for a in node.args:
            ctx.append(f"\n    argument {names.get(id(a), '?')} = {a!r}")
        for u in users.get(id(node), []):
            ctx.append(f"\n    used by  {names.get(id(u), '?')} = {u!r}")
        raise VerificationError("".join(ctx), node.span)

    for node in program.toposort():
        if node.op is Op.INPUT:
            prev = inputs.setdefault(node.attr("name"), node)
            if prev is not node and prev.type != node.type:
                fail(node, f"input {node.attr('name')!r} used with two types: {prev.type} and {node.type}")
        if node.__dict__.get("_verified"):
            continue   # (checked by an earlier verification: nodes are immutable, a pass rebuilds what it changes)
        keys = {k for k, _ in node.attrs}
        d = DEFINITIONS[node.op]
        if keys != d.attrs:
            fail(node, f"attributes {sorted(keys)} but {node.op.value} takes {sorted(d.attrs)}")
        if node.op is Op.INPUT:
            object.__setattr__(node, "_verified", True)
            continue
        try:
            want = d.type(node.args, dict(node.attrs), node.type, Where(node.op, node.args, node.attrs), node.span)
        except DsplaError as e:
            fail(node, f"ill-typed: {e.message}")
        if want != node.type:
            fail(node, f"type is {node.type} but its rule gives {want}")
        for k, v in node.attrs:   # sub-programs (a loop's condition and body) are verified too
            if isinstance(v, Program):
                verify(v, after=f"{after} (in the {k} of {program.names().get(id(node), '?')})" if after else "")
        object.__setattr__(node, "_verified", True)
    for name, _ in program.outputs:
        if not name.isidentifier():
            raise VerificationError(f"output name {name!r} is not an identifier")
    return program
