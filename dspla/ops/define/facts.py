"""What planning proves of a value, as fact rules compute it: full (every entry present), every row
(column) holding an entry, and which static values bound its missing rows.

Messages of a full operand carry values only; others carry a presence bitmap too. The receiver
must know which before the message arrives, so the proof is made once, from one rule per op
and the actual static data (plan/facts.py reads the static values), never per iteration.

A value with missing entries can still be full wherever a product reads it: PageRank's
r / outdeg misses the dangling nodes, whose columns of Aᵀ are empty. ``over`` records which
static values bound its missing rows (every row full in all of them is full in it).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from ...ir.node import Node, Op
from .registry import DEFINITIONS


class Facts:
    """full: every entry present; rows: every row has an entry; cols: every column has one;
    over: ids of static values such that every row full in all of them is full in this one
    (None: no such bound; empty when full)."""
    __slots__ = ("full", "rows", "cols", "over")

    def __init__(self, full=False, rows=False, cols=False, over: frozenset | None = None):
        self.full, self.rows, self.cols = full, rows or full, cols or full
        self.over = frozenset() if full else over

    def __repr__(self) -> str:
        text = "full" if self.full else "+".join(k for k in ("rows", "cols") if getattr(self, k)) or "-"
        return text if self.full or not self.over else f"{text} (full where {len(self.over)} static value(s) are)"

    def __eq__(self, other) -> bool:
        return isinstance(other, Facts) and (self.full, self.rows, self.cols, self.over) == \
            (other.full, other.rows, other.cols, other.over)

    __hash__ = None


NOTHING = Facts(False)

# the dims' sizes while a proof runs (loop bodies are proved inside a rule, which has no sizes)
_SIZES: ContextVar[dict | None] = ContextVar("sizes", default=None)


@contextmanager
def sizes_known(sizes: dict | None):
    """The dims' sizes for the proofs made inside (those of loop bodies included)."""
    token = _SIZES.set(sizes) if sizes is not None else None
    try:
        yield _SIZES.get()
    finally:
        if token is not None:
            _SIZES.reset(token)


def sized(f: Facts, n: Node, sizes: dict | None) -> Facts:
    """``f`` of node ``n`` once its shape is known: a full value with no columns has no entry in
    any of its rows (and one with no rows none in its columns), so 'every row has an entry'
    does not follow from 'full' there (a reduction of it, a product with it, is empty)."""
    r, c = (d if isinstance(d, int) else (sizes or {}).get(d) for d in n.type.shape)
    if not ((f.rows and c == 0 and r != 0) or (f.cols and r == 0 and c != 0)):
        return f
    out = Facts(f.full, over=f.over)
    out.rows, out.cols = f.rows and not (c == 0 and r != 0), f.cols and not (r == 0 and c != 0)
    return out


def meet(x: Facts, y: Facts) -> Facts:
    """What holds of both."""
    over = None if x.over is None or y.over is None else x.over | y.over
    return Facts(x.full and y.full, x.rows and y.rows, x.cols and y.cols, over)


def elementwise_over(n: Node, args: list, both: bool):
    """The ``over`` bound of an element-wise result from its operands': their union where every
    one must hold (an intersection: ``both``), else the tighter one's (a union's result is full
    wherever either operand is). An operand broadcast along the columns (n x 1 against n x k)
    bounds the rows as it is; one broadcast along the rows bounds nothing unless it is full."""
    bounds = [f.over if f.full or x.type.nrows == n.type.nrows else None for x, f in zip(n.args, args)]
    if both:
        return None if any(b is None for b in bounds) else frozenset().union(*bounds)
    known = [b for b in bounds if b is not None]
    return min(known, key=len) if known else None


def prove_sub(order: list[Node], given: dict) -> dict:
    """The facts of a sub-program (a loop's body) from those of its inputs, by name."""
    f: dict[int, Facts] = {}
    sizes = _SIZES.get()
    for n in order:
        if n.op is Op.INPUT and n.attr("name") in given:
            f[id(n)] = given[n.attr("name")]
        else:
            f[id(n)] = DEFINITIONS[n.op].facts(n, [f[id(x)] for x in n.args])
        if isinstance(f[id(n)], Facts):   # (a loop's is a tuple of its carried values')
            f[id(n)] = sized(f[id(n)], n, sizes)
    return f
