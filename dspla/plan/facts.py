"""Which values are provably full (every entry present), proved at planning time.

Messages of a full operand carry values only (zero-copy into GraphBLAS); others carry a
presence bitmap too. The receiver must know which before the message arrives, so the proof is
made once, from one rule per op (the FACTS table) and the actual static data, never per
iteration.

A value with missing entries can still be full wherever a product reads it: PageRank's
r / outdeg misses the dangling nodes, whose columns of Aᵀ are empty. ``over`` records which
static values bound its missing rows (every row full in all of them is full in it), and
``covers`` checks, against the static operand itself, that the product reads no other row.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable

import graphblas as gb

from ..exec.gbops import occupied
from ..ir import Node, Op


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


def _over(n: Node, args: list, both: bool):
    """The ``over`` bound of an element-wise result from its operands': their union where every
    one must hold (an intersection: ``both``), else the tighter one's (a union's result is full
    wherever either operand is). An operand broadcast along the columns (n x 1 against n x k)
    bounds the rows as it is; one broadcast along the rows bounds nothing unless it is full."""
    bounds = [f.over if f.full or x.type.nrows == n.type.nrows else None for x, f in zip(n.args, args)]
    if both:
        return None if any(b is None for b in bounds) else frozenset().union(*bounds)
    known = [b for b in bounds if b is not None]
    return min(known, key=len) if known else None

FACTS: dict[Op, Callable] = {}


def fact_rule(*ops: Op):
    def register(fn):
        for op in ops:
            FACTS[op] = fn
        return fn
    return register


def of_matrix(M, lines: bool = True) -> Facts:
    """M's facts; without ``lines``, whether it is full only (no reductions over it)."""
    if M.nvals == M.nrows * M.ncols:
        return Facts(True)
    if not lines:
        return Facts(False)
    return Facts(False, occupied(M, "rows").nvals == M.nrows, occupied(M, "cols").nvals == M.ncols)


def full_rows(M):
    """The rows of M with every entry present, as a sparse vector of their positions."""
    if M.ncols == 1:
        return occupied(M, "rows")
    counts = M.reduce_rowwise(gb.agg.count).new()
    return counts.select("==", M.ncols).new()


def covers(S, bounds: list) -> bool:
    """Whether every column of S with an entry is a row full in every matrix of ``bounds``: then
    S ⊕.⊗ B reads only present entries of a B whose ``over`` they are."""
    need = occupied(S, "cols")
    for Z in bounds:
        if Z.nrows != S.ncols:
            return False
        if need.ewise_mult(full_rows(Z), gb.binary.first).new().nvals != need.nvals:
            return False
    return True


@fact_rule(Op.INPUT)
def _input(n: Node, a):
    return Facts(n.type.kind.value == "dense")   # dense inputs are checked full at bind time


def meet(x: Facts, y: Facts) -> Facts:
    """What holds of both."""
    over = None if x.over is None or y.over is None else x.over | y.over
    return Facts(x.full and y.full, x.rows and y.rows, x.cols and y.cols, over)


@fact_rule(Op.MXM)
def _mxm(n, a):
    if n.attr("mask") is not None:
        return NOTHING   # only entries inside the mask
    x, y = a
    return Facts((x.rows and y.full) or (x.full and y.cols), rows=x.rows and y.full, cols=x.full and y.cols)


@fact_rule(Op.EWISE_ADD)
def _union(n, a):
    x, y = a
    return Facts(x.full or y.full, x.rows or y.rows, x.cols or y.cols, _over(n, a, both=False))


@fact_rule(Op.EWISE_MULT)
def _intersection(n, a):
    return Facts(a[0].full and a[1].full, over=_over(n, a, both=True))


@fact_rule(Op.APPLY, Op.APPLY_BIND, Op.CAST)
def _same_pattern(n, a):
    return a[0]


@fact_rule(Op.NVALS)
def _nvals(n, a):
    return Facts(True)   # a count is always present (0 for an empty value)


@fact_rule(Op.TRANSPOSE)
def _transpose(n, a):
    return Facts(a[0].full, a[0].cols, a[0].rows)


@fact_rule(Op.REDUCE)
def _reduce(n, a):
    axis = n.attr("axis")
    # (a row full in X has an entry: its reduction is present)
    over = a[0].over if axis == "rows" and n.args[0].type.nrows == n.type.nrows else None
    return Facts(a[0].rows if axis == "rows" else a[0].cols if axis == "cols" else a[0].rows, over=over)


@fact_rule(Op.SELECT, Op.MASK, Op.DROPOUT_MASK, Op.IDENTITY, Op.ARGBEST, Op.ROUTE)
def _unknown(n, a):
    return NOTHING   # they drop entries by value or position (IDENTITY is static anyway)


@fact_rule(Op.UPDATE)
def _update(n, a):
    if n.attr("mask") is not None:
        return NOTHING
    c, t = a[0], a[1]
    return _union(n, (c, t)) if n.attr("accum") is not None else t   # without a mask: T, or C ⊕ T


@fact_rule(Op.WHILE)
def _while(n, a):
    """The carried values' facts: what holds at the start and still holds after the body, given
    that it holds before it (a fixed point from the start's facts, which can only shrink)."""
    body, k = n.attr("body"), n.attr("carried")
    carried = list(a[:k])
    for _ in range(_ROUNDS):
        given = {p.attr("name"): f for p, f in zip(body.declared, carried + list(a[k:]))}
        out = prove(body.toposort(), {}, given)
        new = [meet(c, out[id(v)]) for c, (_, v) in zip(carried, body.outputs)]
        if new == carried:
            break
        carried = new
    else:   # (each round weakens some fact, so this is not reached; if it were, claim nothing)
        carried = [NOTHING] * k
    return tuple(carried) + (Facts(True),)


_ROUNDS = 64


@fact_rule(Op.ITEM)
def _item(n, a):
    return a[0][n.attr("index")]


assert set(FACTS) == set(Op), f"ops without a fact rule: {set(Op) - set(FACTS)}"


def prove(order: list[Node], static: dict, given: dict | None = None, lines: bool = True,
          sizes: dict | None = None) -> dict[int, Facts]:
    """``static``: id(node) -> its computed GraphBLAS value, for the nodes computed at planning;
    ``given``: facts of a sub-program's inputs, by name; ``lines``: prove of the static values
    whether every row / column has an entry (two reductions over each), not only fullness;
    ``sizes``: the dims' sizes (default: those of the proof this one is part of)."""
    with sizes_known(sizes) as sizes:
        f: dict[int, Facts] = {}
        for n in order:
            if id(n) in static:
                f[id(n)] = of_matrix(static[id(n)], lines)
                f[id(n)].over = frozenset() if f[id(n)].full else frozenset({id(n)})
            elif given is not None and n.op is Op.INPUT and n.attr("name") in given:
                f[id(n)] = given[n.attr("name")]
            else:
                f[id(n)] = FACTS[n.op](n, [f[id(x)] for x in n.args])
            if isinstance(f[id(n)], Facts):   # (a loop's is a tuple of its carried values')
                f[id(n)] = sized(f[id(n)], n, sizes)
        return f
