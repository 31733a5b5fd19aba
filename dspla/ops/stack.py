"""stack, push, top, pop, height: a stack of values of one type, as a loop keeps each
iteration's value for a later loop (the levels of a breadth-first search, walked back deepest
first: LAGraph's betweenness keeps its frontiers so). Python: ``dp.stack(x)`` (a stack holding
x), ``dp.push(s, x)``, ``dp.top(s)``, ``dp.pop(s)``, ``dp.height(s)``; files: the same.

A stack is a value like any other: ``push`` and ``pop`` give new stacks and leave theirs as they
were. Its type is its values' (their shape, dtype, storage) with the form ``stack of ...``: only
these functions and loops take one, and a program's outputs are not stacks. Each process holds
its pieces of every value pushed, laid out as the values are, so nothing moves: pushing costs a
copy of the value (none when it is fresh: ``fresh`` below), the others nothing. ``top`` or
``pop`` of an empty stack is an error."""
from __future__ import annotations

from ..errors import DomainMismatch, DsplaError, NoGradient, Span
from ..instr.layout import REP
from ..ir.node import Op
from ..ir.types import DType, Kind, Type
from .define import EXPR, NOTHING, Expr, Facts, define, make, node_of, same_type, span_or_caller, spelling
from .define.lazy import kernel
from .define.registry import TAKES_STACKS

_item = kernel("item")

STACK = define("stack")
PUSH = define("push", attrs=("shared",))
TOP = define("top")
TOP.views = True
POP = define("pop")
HEIGHT = define("height")
TAKES_STACKS.update({STACK.op, PUSH.op, TOP.op, POP.op, HEIGHT.op, Op("while"), Op("item")})


class Stack:
    """A stack's value at run time: its values, the top last (immutable; push and pop share)."""
    __slots__ = ("values",)

    def __init__(self, values: tuple) -> None:
        self.values = values

    def __repr__(self) -> str:
        return f"Stack({len(self.values)} values)"


def _a_stack(x, where, span):
    if not x.type.is_stack:
        raise DomainMismatch(f"{where}: {x.label} is {x.type}, not a stack (make one with stack(x))", span)


@STACK.type_rule
def _type_stack(args, attrs, given, where, span):
    (x,) = args
    if x.type.is_stack:
        raise DomainMismatch(f"{where}: a stack holds matrices, vectors or scalars, not stacks", span)
    return x.type.stacked()


@PUSH.type_rule
def _type_push(args, attrs, given, where, span):
    s, x = args
    _a_stack(s, where, span)
    if x.type.is_stack or not same_type(s.type.element(), x.type, where):
        raise DomainMismatch(f"{where}: {s.label} holds {s.type.element()} values, {x.label} is {x.type}", span)
    return s.type


@TOP.type_rule
def _type_top(args, attrs, given, where, span):
    _a_stack(args[0], where, span)
    return args[0].type.element()


@POP.type_rule
def _type_pop(args, attrs, given, where, span):
    _a_stack(args[0], where, span)
    return args[0].type


@HEIGHT.type_rule
def _type_height(args, attrs, given, where, span):
    _a_stack(args[0], where, span)
    return Type(Kind.dense, (1, 1), DType.int64, "scalar")


def _values(node, s: Stack) -> tuple:
    if not s.values:
        raise DsplaError(f"{node.label}: the stack is empty", node.span)
    return s.values


@STACK.eval_rule()
def _evaluate_stack(node, args, env):
    return Stack((args[0].dup(),))   # (a copy: a loop may later write into its carried value in place)


@PUSH.eval_rule()
def _evaluate_push(node, args, env):
    x = args[1]
    return Stack(args[0].values + (x if node.attr("shared") else x.dup(),))


@TOP.eval_rule()
def _evaluate_top(node, args, env):
    return _values(node, args[0])[-1]


@POP.eval_rule()
def _evaluate_pop(node, args, env):
    return Stack(_values(node, args[0])[:-1])


@HEIGHT.eval_rule()
def _evaluate_height(node, args, env):
    return _item.scalar(len(args[0].values), DType.int64)


def _no_gradient(n, g, needs, b):
    raise NoGradient("stacks have no gradient rule: unroll the loop in Python to differentiate it")


def _local(pl, n, node=None):
    """n computed on each process's pieces, laid out as the values are (nothing moves); ``node``:
    the node the instruction runs instead (n's, with attributes lowering chose)."""
    lay = pl.layout(n)
    layouts = tuple(pl.layout(a) if pl.layout(a) in (lay, REP) else REP for a in n.args)
    out = pl.slot()
    pl.emit_local(out, node or n, tuple(pl.value(a, al) for a, al in zip(n.args, layouts)), layouts, lay)
    pl.set(n, out, lay)


def fresh(pl, x) -> bool:
    """Whether x's matrix is a product's own result on one process that nothing writes into
    later: a fresh matrix (recycling one takes only what nobody holds, kernels/recycle.py) that
    no loop writes into in place, or a loop-carried value that is always one (ops/loop.py)."""
    return pl.P == 1 and ((x.op is Op.MXM and id(x) not in pl.overwritten) or id(x) in pl.fresh)


@PUSH.lower_rule
def _lower_push(pl, n):
    """The value pushed is kept itself, not a copy, when it is fresh (above)."""
    _local(pl, n, n.replace(attrs=(("shared", True),)) if fresh(pl, n.args[1]) else None)


for _d in (STACK, PUSH, TOP, POP):
    _d.fact_rule(lambda n, a: NOTHING)   # (what holds of every value pushed is not tracked)
    _d.vjp_rule()(_no_gradient)
for _d in (STACK, TOP, POP):
    _d.lower_rule(_local)
HEIGHT.fact_rule(lambda n, a: Facts(True))   # (a count, always present)
HEIGHT.vjp_rule(linked=lambda n: (False,))(lambda n, g, needs, b: (None,))


@HEIGHT.lower_rule
def _lower_height(pl, n):
    """Read on the stack's pieces: every process pushed and popped alike, so its count is all's."""
    (s,) = n.args
    out = pl.slot()
    pl.emit_local(out, n, (pl.value(s),), (pl.layout(s),), REP)
    pl.set(n, out, REP)


@PUSH.work_rule
def _work_push(n, args, out):
    return int(args[1][0]) * int(args[1][1])   # (the copy of the value pushed)


STACK.work_rule(lambda n, args, out: int(args[0][0]) * int(args[0][1]))
for _d in (TOP, POP, HEIGHT):
    _d.work_rule(lambda n, args, out: 1)


@spelling(file=(("x", EXPR),))
def stack(x: Expr, *, span: Span | None = None) -> Expr:
    """A stack holding only x (``push`` adds values of x's type, ``top`` reads the last)."""
    return Expr(make(STACK.op, (node_of(x),), (), span=span_or_caller(span)))


@spelling(file=(("s", EXPR), ("x", EXPR)))
def push(s: Expr, x: Expr, *, span: Span | None = None) -> Expr:
    """The stack s with x on top (s itself is unchanged)."""
    return Expr(make(PUSH.op, (node_of(s), node_of(x)), (("shared", False),), span=span_or_caller(span)))


@spelling(file=(("s", EXPR),))
def top(s: Expr, *, span: Span | None = None) -> Expr:
    """The value on top of the stack s (the last pushed); an error when s is empty."""
    return Expr(make(TOP.op, (node_of(s),), (), span=span_or_caller(span)))


@spelling(file=(("s", EXPR),))
def pop(s: Expr, *, span: Span | None = None) -> Expr:
    """The stack s without its top value; an error when s is empty."""
    return Expr(make(POP.op, (node_of(s),), (), span=span_or_caller(span)))


@spelling(file=(("s", EXPR),))
def height(s: Expr, *, span: Span | None = None) -> Expr:
    """How many values the stack s holds, a scalar (int64)."""
    return Expr(make(HEIGHT.op, (node_of(s),), (), span=span_or_caller(span)))


for _f in (stack, push, top, pop, height):   # (no eager form: a stack lives in a program, dspla/eager)
    _f.traced_only = True  # type: ignore[attr-defined]
