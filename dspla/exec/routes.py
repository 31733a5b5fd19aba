"""How a local product C = A ⊕.⊗ B is computed: one table of routes, tried in order, chosen per
semiring, dtype and operand formats. ``gbops.mxm`` runs the chosen row, ``explain`` shows the
choice it expects from the types, the runtime counts the routes it took (run stats), and the
cost model prices a route that starts its output full with the fill term.

Why these routes (soc-Slashdot0902, one process, issue 17): accumulating into a full output,
``C(plus) << A.mxm(X)``, ran K = 16 in 5.4 ms against 13-15 ms for ``A.mxm(X).new()`` and
22 ms for scipy, and stayed ahead at K = 64 and 256; two full float operands under plus_times
are a dense matmul (BLAS); a masked product must never be computed unmasked first.

Within the masked and new routes (and p2p1d's accumulations), a sparse column operand is read
from a bitmap copy (``gbops.lookup_operand``): a BFS on soc-Slashdot0902 went from 52 to 5.3 ms.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

from ..algebra import Semiring
from ..ir.types import DType
from . import udfmxm


class Case(NamedTuple):
    """What the choice reads of one product."""
    sr: Semiring
    dtype: DType      # the compute dtype
    a_full: bool
    b_full: bool
    masked: bool
    a_any: bool       # a has entries
    b_any: bool
    b_covered: bool = False   # b full wherever a reads it (plan/facts.covers: PageRank's r / outdeg)


@dataclass(frozen=True)
class Route:
    name: str
    says: str
    applies: Callable[[Case], bool]
    fills: bool = False   # the output starts full at the monoid's identity (a memset of rows x K)


def _blas(c: Case) -> bool:
    return c.sr.monoid.name == "plus" and c.sr.mult.name == "times" and c.dtype.is_float and c.a_full and \
        c.b_full and c.a_any and c.b_any


def _full_c(c: Case) -> bool:
    # (b full where a reads it: every row of a with an entry gets a product term, so C started
    # at the identity ends as GraphBLAS's product; 10-25% faster than `new` for PageRank's step)
    return c.sr.monoid.identity(c.dtype) is not None and (c.b_full or c.b_covered) and c.a_any and c.b_any


ROUTES = (
    Route("masked", "SuiteSparse's masked product: only the entries inside the mask are computed",
          lambda c: c.masked),
    Route("blas", "both operands full, plus_times over floats: a dense matmul (BLAS) on the values arrays",
          _blas),
    Route("udf-full", "a user's semiring with B full: the compiled kernel accumulates into a full C in place",
          lambda c: udfmxm.applies(c.sr) and _full_c(c), fills=True),
    Route("full-c", "B full (or full wherever A reads it): C starts full at the monoid's identity and SuiteSparse "
          "accumulates C ⊕= A ⊗ B in place (then A's empty rows are made missing)", _full_c, fills=True),
    # chosen by the plan, not here: products whose output the plan made full beforehand (a Fill),
    # as p2p1d's blocks of local and received rows; listed so the stats name every route one way
    Route("accumulate", "into the plan's full output (a Fill): SuiteSparse's C ⊕= A ⊗ B in place",
          lambda c: False, fills=True),
    Route("new", "GraphBLAS's own C = A ⊕.⊗ B into a new matrix (B has missing entries, or the monoid has "
          "no identity)", lambda c: True),
)
BY_NAME = {r.name: r for r in ROUTES}


def choose(sr: Semiring, compute: DType, *, a_full: bool, b_full: bool, masked: bool = False,
           a_any: bool = True, b_any: bool = True, b_covered: bool = False) -> Route:
    """The first route of the table that applies."""
    case = Case(sr, compute, a_full, b_full, masked, a_any, b_any, b_covered)
    for r in ROUTES:
        if r.applies(case):
            return r
    raise AssertionError("the last route applies to every product")


def expected(sr: Semiring, compute: DType, a_dense: bool, b_dense: bool, masked: bool) -> tuple[Route, Route | None]:
    """What explain shows from the types alone: the route when the dense operands are full at run
    time, and the one taken if they are not (None when it is the same)."""
    full = choose(sr, compute, a_full=a_dense, b_full=b_dense, masked=masked)
    gaps = choose(sr, compute, a_full=False, b_full=False, masked=masked)
    return full, (gaps if gaps is not full else None)
