"""while: a loop (attributes: cond and body, sub-programs; max_iter, an integer or a dim; carried,
the number of loop-carried values; arguments: their starting values, then the values from
outside the loop the sub-programs use) giving a tuple: the carried values' last and the number
of iterations run. item: one value of such a tuple (attribute: index). Python:
``dp.while_loop``; files: ``while COND max N { ... }``."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Union, overload

from ..errors import DimensionMismatch, DomainMismatch, DsplaError, NoGradient, Span
from ..instr import Local, Loop
from ..ir.node import Node, Op
from ..ir.program import Program
from ..ir.types import Dim, DType, Kind, TupleType, Type, concrete
from .define import (
    NOTHING,
    Expr,
    Facts,
    define,
    definition,
    make,
    meet,
    node_of,
    prove_sub,
    same_type,
    span_or_caller,
    spelling,
)
from .define.lazy import kernel
from .stack import fresh
from .update import writes_into

gbops = kernel("gbops")
_item = kernel("item")

WHILE = define("while", attrs=("cond", "body", "max_iter", "carried"))
ITEM = define("item", attrs=("index",))


@WHILE.type_rule
def _type(args, attrs, given, where, span):
    cond, body, n = attrs["cond"], attrs["body"], attrs["carried"]
    m = attrs["max_iter"]
    if not (isinstance(m, str) and m.isidentifier()) and (not isinstance(m, int) or isinstance(m, bool) or m < 0):
        raise DomainMismatch(f"{where}: max_iter is a non-negative integer or a dim, got {m!r}", span)
    for prog, what in ((cond, "condition"), (body, "body")):
        if len(prog.declared) != len(args):
            raise DomainMismatch(f"{where}: the {what} takes {len(prog.declared)} values, the loop gives {len(args)}",
                                 span)
        for p, a in zip(prog.declared, args):
            # a carried value may be stored sparse in the loop though it starts dense
            if not same_type(p.type, a.type, where) and not same_type(p.type, a.type.with_(kind=Kind.sparse), where):
                raise DomainMismatch(f"{where}: {p.attr('name')} is {p.type} in the {what} but {a.type} outside",
                                     span)
    (_, c), = cond.outputs
    if tuple(c.type.shape) != (1, 1) or c.type.dtype is not DType.bool:
        raise DomainMismatch(f"{where}: a loop condition is a 1 x 1 bool value (a comparison such as "
                             f"delta > 1e-6), got {c.type}", c.span or span)
    if len(body.outputs) != n:
        raise DomainMismatch(f"{where}: the body gives {len(body.outputs)} values for {n} loop-carried ones", span)
    for (name, v), p in zip(body.outputs, body.declared[:n]):
        if not same_type(v.type, p.type, where):
            _carried_changes(where, name, p.type, v.type, v.span or span)
    return TupleType(tuple(p.type for p in body.declared[:n]) + (Type(Kind.dense, (1, 1), DType.int64),))


def _carried_changes(where, name, before: Type, after: Type, span):
    """A loop body gave a carried value another type: the error names what changed, since only
    a dtype change has a fix in the body (a cast)."""
    if tuple(before.shape) != tuple(after.shape):
        raise DimensionMismatch(f"{where}: loop-carried {name} changes shape in the body: {before} before it and "
                                f"{after} after; a loop-carried value must keep its shape", span)
    hint = "; cast it (cast(x, dtype)) so both agree" if before.dtype is not after.dtype else ""
    raise DomainMismatch(f"{where}: loop-carried {name} is {before} before the body and {after} after it{hint}",
                         span)


@ITEM.type_rule
def _type_item(args, attrs, given, where, span):
    (t,) = args
    if not isinstance(t.type, TupleType) or not 0 <= attrs["index"] < len(t.type.items):
        raise DomainMismatch(f"{where}: no value {attrs['index']} in {t.type}", span)
    return t.type.items[attrs["index"]]


# ----------------------------------------------------------------------------- evaluation
@WHILE.eval_rule()
def _evaluate(node, args, env):
    """The loop, run by the reference executor on its sub-programs (``env.evaluate``)."""
    cond, body = node.attr("cond"), node.attr("body")
    n, names = node.attr("carried"), [p.attr("name") for p in body.declared]
    vals = list(args)
    it = 0
    limit = concrete(node.attr("max_iter"), env.dims, "a loop bound")
    while it < limit:
        c = env.evaluate(cond, dict(zip(names, vals)))["cond"]
        if not truth(c):
            break
        new = env.evaluate(body, dict(zip(names, vals)))
        vals[:n] = [new[k] for k, _ in body.outputs]
        it += 1
    count = gbops.empty(1, 1, DType.int64)
    count[0, 0] = it
    return tuple(vals[:n]) + (count,)


def truth(c) -> bool:
    """A 1 x 1 condition: true when its entry is present and true (a missing entry is false)."""
    v = _item.item(c)
    return v is not None and bool(v)


@ITEM.eval_rule()
def _evaluate_item(node, args, env):
    return args[0][node.attr("index")]


# --------------------------------------------------------------------------------- facts
_ROUNDS = 64


@WHILE.fact_rule
def _facts(n, a):
    """The carried values' facts: what holds at the start and still holds after the body, given
    that it holds before it (a fixed point from the start's facts, which can only shrink)."""
    body, k = n.attr("body"), n.attr("carried")
    carried = list(a[:k])
    for _ in range(_ROUNDS):
        given = {p.attr("name"): f for p, f in zip(body.declared, carried + list(a[k:]))}
        out = prove_sub(body.toposort(), given)
        new = [meet(c, out[id(v)]) for c, (_, v) in zip(carried, body.outputs)]
        if new == carried:
            break
        carried = new
    else:   # (each round weakens some fact, so this is not reached; if it were, claim nothing)
        carried = [NOTHING] * k
    return tuple(carried) + (Facts(True),)


@ITEM.fact_rule
def _facts_item(n, a):
    return a[0][n.attr("index")]


# ------------------------------------------------------------------------------ lowering
@WHILE.lower_rule
def _lower(pl, n):
    """One Loop instruction: the condition and the body lowered once, into their own blocks, on
    the slots of the carried values; values from outside are read from their outside slots
    (converted, when needed, before the loop)."""
    cond, body, k = n.attr("cond"), n.attr("body"), n.attr("carried")
    holders = body.declared
    depth = len(pl.stack) - 1
    init = tuple(pl.value(a, pl.layout(h)) for a, h in zip(n.args[:k], holders))
    carry = tuple(pl.slot() for _ in range(k))
    for h, s in zip(holders[:k], carry):
        pl.set(h, s)
    for prog in (cond, body):
        for h, a in zip(prog.declared[k:], n.args[k:]):
            pl.alias[id(h)] = (a, depth)
    # facts inside: the carried values' (the loop's fixed point), the outside values' own
    given = {h.attr("name"): f for h, f in zip(holders, list(pl.facts[id(n)][:k]) +
                                               [pl.facts[id(pl.resolve(a))] for a in n.args[k:]])}
    order = body.toposort()
    outs = [v for _, v in body.outputs]
    carried = {id(h) for h, v in zip(holders[:k], outs) if _owns(h, v, holders, outs)}
    pl.in_place.update(id(m) for m in order if m.op is Op.UPDATE and id(m.args[0]) in carried
                       and writes_into(m, order, outs))
    written = {id(m.args[0]) for m in order if id(m) in pl.in_place}   # (the next iteration's carried matrix)
    pl.overwritten.update(id(v) for h, v in zip(holders[:k], outs) if id(h) in written)
    pl.fresh.update(id(h) for h, a, v in zip(holders[:k], n.args[:k], outs)
                    if id(h) not in written and fresh(pl, a) and fresh(pl, v))
    index, outer = pl.loops, pl.in_loop
    pl.loops += 1
    pl.in_loop = index
    try:
        with pl.block() as cond_block:
            cond_slot = pl.lower_sub(cond, given)[0]
        with pl.block() as body_block:
            results = tuple(pl.lower_sub(body, given))
    finally:
        pl.in_loop = outer
    count = pl.slot()
    limit = pl.concrete(n.attr("max_iter"))
    where = str(n.span) if n.span is not None else ""
    pl.emit(lambda r: Loop(init, carry, cond_block[r], cond_slot, body_block[r], results, count, limit, loop=index,
                           where=where, owned=_owned(body_block[r], carry)))
    pl.set(n, carry + (count,), tuple(pl.layout_of(t) for t in n.type.items))


def _owns(h, v, holders, outs) -> bool:
    """Whether the loop owns carried h's matrix in every iteration, so a step may write into it in
    place: the body's next h is h itself or a value the body computes, and no other carried
    value's next value is the same. Not when the next h is a value from outside the loop or
    another carried one, or is shared (the write would change that value too), nor one that
    views another's storage (a stack's top)."""
    if sum(o is v for o in outs) > 1:
        return False
    return v is h or (not any(v is x for x in holders) and not definition(v.op).views)


def _owned(block, carry) -> tuple:
    """The carried values the body writes into in place: the loop starts them as copies of
    their starting values, which may be held elsewhere (an input, a value computed once)."""
    written = {i.args[0] for i in block if type(i) is Local and i.in_place}
    return tuple(j for j, c in enumerate(carry) if c in written)


@ITEM.lower_rule
def _lower_item(pl, n):
    slots, layouts = pl.slots_of(n.args[0])
    i = n.attr("index")
    pl.set(n, slots[i], layouts[i])


@WHILE.work_rule
def _work(n, args, out):
    return 0   # (its body's instructions are counted, each for itself)


@ITEM.work_rule
def _work_item(n, args, out):
    return 0   # (a slot of the loop's)


@WHILE.vjp_rule()
def _vjp(n, g, needs, b):
    raise NoGradient("loops are not differentiated; unroll the iterations in Python (a for loop building the "
                     "expression) to differentiate them")


ITEM.vjp_rule()(_vjp)


# ------------------------------------------------------------------------------ spellings
LoopBody = Callable[..., Union[Expr, Sequence[Expr]]]
"""A loop body: takes the carried values (expressions), gives their new values (one, or a
tuple/list in the carried order)."""


@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: dict[str, Expr], max_iter: Dim, *,
               count: Literal[False] = False, span: Span | None = None) -> dict[str, Expr]: ...
@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: Sequence[Expr], max_iter: Dim, *,
               count: Literal[False] = False, span: Span | None = None) -> tuple[Expr, ...]: ...
@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: dict[str, Expr], max_iter: Dim, *,
               count: Literal[True], span: Span | None = None) -> tuple[dict[str, Expr], Expr]: ...
@overload
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: Sequence[Expr], max_iter: Dim, *,
               count: Literal[True], span: Span | None = None) -> tuple[tuple[Expr, ...], Expr]: ...


@spelling()
def while_loop(cond: Callable[..., Expr], body: LoopBody, init: dict[str, Expr] | Sequence[Expr],
               max_iter: Dim, *, count: bool = False, span: Span | None = None
               ) -> dict[str, Expr] | tuple[Expr, ...] | tuple[dict[str, Expr] | tuple[Expr, ...], Expr]:
    """Repeat ``body`` while ``cond`` holds, at most ``max_iter`` times, as one loop of the
    program (planned once, run without returning to Python; on P processes every rank runs it).

    ``max_iter``: an integer, or a dim name (``"n"``: as many as that dim's size).
    ``init``: the loop-carried values, a tuple/list of expressions or a dict name -> expression
    (names show in explain). ``cond(*carried)`` gives a 1 x 1 bool value (a missing entry
    counts as false), checked before each iteration; ``body(*carried)`` gives the new values,
    one per carried value, of the same shapes and dtypes. Values the body uses that do not
    change in the loop (the graph, degree vectors, ...) are computed once, outside it.
    Returns the final values (a tuple, or a dict for a dict ``init``), and with
    ``count=True`` also the number of iterations run (1 x 1 int64)."""
    span = span_or_caller(span)
    named = isinstance(init, dict)
    if isinstance(init, dict):
        names, carried = list(init), list(init.values())
    else:
        names, carried = [f"x{i}" for i in range(len(init))], list(init)
    values = [node_of(v, "a loop-carried value") for v in carried]
    node = loop_node(names, values, lambda *xs: cond(*(Expr(x) for x in xs)),
                     lambda *xs: body(*(Expr(x) for x in xs)), max_iter, span)
    outs = [Expr(make(ITEM.op, (node,), (("index", i),), span=span, name=nm)) for i, nm in enumerate(names)]
    result = dict(zip(names, outs)) if named else tuple(outs)
    if count:
        return result, Expr(make(ITEM.op, (node,), (("index", len(names)),), span=span))
    return result


def loop_node(names: list[str], values: list[Node], cond_fn: Callable[..., Expr | Node],
              body_fn: Callable[..., Any], max_iter: Dim, span: Span | None) -> Node:
    """Trace the condition and body on placeholders and build the WHILE node. The functions take
    and return nodes (or expressions). A carried value whose kind the body changes (a dense
    start, a sparse result) is carried sparse."""
    if not (isinstance(max_iter, str) and max_iter.isidentifier()) and \
            (not isinstance(max_iter, int) or isinstance(max_iter, bool) or max_iter < 0):
        raise DsplaError(f"max_iter is a non-negative integer or a dim (such as 'n'), got {max_iter!r}", span)
    types = [v.type for v in values]
    for _ in range(2):   # a second trace only when a carried value's kind must widen
        holders = [make(Op.INPUT, (), (("name", nm), ("role", "loop"), ("default", None)), type=t, span=span, name=nm)
                   for nm, t in zip(names, types)]
        c = node_of(cond_fn(*holders), "the loop condition")
        new = body_fn(*holders)
        new = [node_of(x, "a loop body result") for x in (new if isinstance(new, (tuple, list)) else (new,))]
        if len(new) != len(holders):
            raise DsplaError(f"the loop body gives {len(new)} values for {len(holders)} loop-carried ones "
                             f"({', '.join(names)})", span)
        widened = [t.with_(kind=Kind.sparse) if n.type.kind is Kind.sparse and t.kind is Kind.dense else t
                   for t, n in zip(types, new)]
        if widened == types:
            break
        types = widened
    captured, cond_prog, body_prog = _close_over(holders, names, c, new)
    return make(WHILE.op, tuple(values) + tuple(captured), (("cond", cond_prog), ("body", body_prog),
                                                            ("max_iter", max_iter), ("carried", len(names))),
                span=span)


def _close_over(holders: list[Node], names: list[str], cond: Node,
                body: list[Node]) -> tuple[list[Node], Program, Program]:
    """Sub-programs for the condition and the body. Their inputs are the carried placeholders and
    one placeholder per value they use from outside the loop: each largest subexpression that
    does not depend on a carried value (computed once, before the loop)."""
    carried = {id(h) for h in holders}
    varies: dict[int, bool] = {}
    order = Program(tuple((f"o{i}", n) for i, n in enumerate([cond, *body]))).toposort()
    for n in order:
        varies[id(n)] = id(n) in carried or any(varies[id(a)] for a in n.args)
    outside: dict[int, Node] = {}       # id(outer node) -> its placeholder
    captured: list[Node] = []
    used = set(names)

    def cap(n: Node) -> Node:
        if id(n) not in outside:
            base = n.attr("name") if n.op is Op.INPUT else (n.name or n.op.value)
            nm, k = base, 2
            while nm in used:
                nm, k = f"{base}_{k}", k + 1
            used.add(nm)
            outside[id(n)] = make(Op.INPUT, (), (("name", nm), ("role", "loop"), ("default", None)), type=n.type,
                                  span=n.span, name=nm)
            captured.append(n)
        return outside[id(n)]

    memo: dict[int, Node] = {}
    for n in order:   # invariant nodes are captured where a varying node uses them, not before
        if id(n) in carried:
            memo[id(n)] = n
        elif varies[id(n)]:
            args = tuple(memo[id(a)] if varies[id(a)] else cap(a) for a in n.args)
            memo[id(n)] = n if all(x is y for x, y in zip(args, n.args)) else n.replace(args=args)
    declared = tuple(holders) + tuple(outside[id(n)] for n in captured)
    cond_prog = Program((("cond", memo[id(cond)] if varies[id(cond)] else cap(cond)),), declared)
    body_prog = Program(tuple((nm, memo[id(b)] if varies[id(b)] else cap(b)) for nm, b in zip(names, body)),
                        declared)
    # captures found while building the outputs join the declarations
    declared = tuple(holders) + tuple(outside[id(n)] for n in captured)
    return captured, Program(cond_prog.outputs, declared), Program(body_prog.outputs, declared)
