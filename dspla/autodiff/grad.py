"""Reverse mode over the IR: ``grad(loss, [W1, W2])`` builds the gradient of a 1 x 1 loss with
respect to inputs (parameters) as ordinary IR nodes, from the VJP table. The result goes through
the same passes (CSE merges what the backward pass shares with the forward pass, chain order)
and the same planner as anything the user writes.

Only nodes on a path from a parameter to the loss are differentiated: a structural op off that
path (the graph's normalisation, a comparison used as a mask) needs no rule. An op on it without
a gradient stops with a NoGradientError naming the op, where it was written and the path from it
to the loss.
"""
from __future__ import annotations

from ..errors import DsplaError, NoGradient, Span
from ..ir import Node, Op, Program
from ..ir.types import Kind
from ..ops import COMPOSITES
from .builders import Builder, constant, one
from .vjp import VJP


class NoGradientError(DsplaError):
    """The loss depends on a parameter through an op that has no gradient."""


def _where(n: Node) -> str:
    at = f" at {n.span}" if n.span else ""
    return f"{n.label} ({n.op_text()}{at})" if n.name or n.op is Op.INPUT else f"{n.op_text()}{at}"


def grad(loss: Node, wrt, span: Span | None = None) -> list[Node]:
    """The gradients of ``loss`` (a 1 x 1 float value) with respect to each input in ``wrt``,
    each of its input's type: present exactly where the input has entries."""
    wrt = list(wrt)
    if tuple(loss.type.shape) != (1, 1):
        raise DsplaError(f"grad: the loss must be a 1 x 1 value (reduce_all(...)), {loss.label} is {loss.type}",
                         span or loss.span)
    if not loss.type.dtype.is_float:
        raise DsplaError(f"grad: the loss must be a float value, {loss.label} is {loss.type}", span or loss.span)
    for w in wrt:
        if w.op is not Op.INPUT:
            raise DsplaError(f"grad: differentiate with respect to inputs (param W : dense[...]), not {_where(w)}",
                             span or w.span)
        if not w.type.dtype.is_float:
            raise DsplaError(f"grad: {w.label} is {w.type}: only float inputs have gradients", span or w.span)
    names = {w.attr("name") for w in wrt}
    order = Program((("loss", loss),)).toposort()

    # which nodes depend differentiably on a parameter
    dep: dict[int, bool] = {}
    links: dict[int, tuple] = {}
    for n in order:
        if n.op is Op.INPUT:
            dep[id(n)] = n.attr("name") in names
            continue
        links[id(n)] = VJP[n.op].linked(n)
        dep[id(n)] = any(dep[id(a)] and ln for a, ln in zip(n.args, links[id(n)]))

    cot: dict[int, Node] = {id(loss): one(loss.type.dtype)} if dep[id(loss)] else {}
    parent: dict[int, Node] = {}
    for n in reversed(order):
        g = cot.get(id(n))
        if g is None or n.op is Op.INPUT:
            continue
        if not n.type.dtype.is_float:
            _fail(n, f"its values are {n.type.dtype}, which have no gradient", parent, loss)
        if n.name and constant(g) is None and g.name is None:
            g = g.replace(name="d" + n.name)
        whole = _composite(n)
        if whole is not None and dep[id(whole[1])]:   # softmax, log_softmax: one rule for the whole
            kind, x, vjp = whole
            args, needs, outs = (x,), (True,), (vjp(kind, n, g, Builder(n.span)),)
        else:
            args, needs = n.args, [dep[id(a)] and ln for a, ln in zip(n.args, links[id(n)])]
            try:
                outs = VJP[n.op].vjp(n, g, needs, Builder(n.span))
            except NoGradient as e:
                _fail(n, str(e), parent, loss)
        for a, need, ga in zip(args, needs, outs):
            if not need or ga is None:
                continue
            prev = cot.get(id(a))
            cot[id(a)] = ga if prev is None else Builder(n.span).add(prev, ga)
            parent.setdefault(id(a), n)

    by_name = {n.attr("name"): n for n in order if n.op is Op.INPUT}
    out = []
    for w in wrt:
        node = by_name.get(w.attr("name"), w)
        b = Builder(span or w.span)
        g = cot.get(id(node))
        zeros = b.bind(w, "times", 0.0)
        if g is None:   # the loss does not depend on w: zero on its entries
            out.append(zeros)
            continue
        g = b.cast(g, w.type.dtype)
        # exactly the parameter's entries: zeros where no term reached, nothing where it is missing
        g = b.add(g, zeros)
        if w.type.kind is Kind.sparse:
            g = b.mask(g, w, structure=True)
        out.append(b.as_form(g, w))
    return out


def _composite(n: Node):
    """(kind, x, its vjp) when n is a composite the front ends build (ops/softmax.py), else None."""
    for match, vjp in COMPOSITES:
        got = match(n)
        if got is not None:
            return got[0], got[1], vjp
    return None


def _fail(n: Node, why: str, parent: dict, loss: Node):
    path, cur, seen = [n], n, {id(n)}
    while id(cur) in parent and cur is not loss:
        cur = parent[id(cur)]
        if id(cur) in seen:
            break
        seen.add(id(cur))
        path.append(cur)
    text = " -> ".join(_where(p) for p in path)
    raise NoGradientError(f"no gradient through {n.op_text()}: {why}. The loss depends on a parameter through it: "
                          f"{text}", n.span)
