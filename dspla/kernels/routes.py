"""How a local product C = A ⊕.⊗ B is computed: one table of routes, tried in order, chosen per
semiring, dtype and operand formats. ``gbops.mxm`` runs the chosen row, ``explain`` shows the
choice it expects from the types, the runtime counts the routes it took (run stats), and the
cost model prices a route that starts its output full with the fill term.

Why these routes (soc-Slashdot0902, one process): accumulating into a full output,
``C(plus) << A.mxm(X)``, ran K = 16 in 5.4 ms against 13-15 ms for ``A.mxm(X).new()`` and
22 ms for scipy, and stayed ahead at K = 64 and 256; two full float operands under plus_times
are a dense matmul (BLAS); a masked product must never be computed unmasked first. The
accumulation pays only where SuiteSparse's in-place kernel beats its own product (one dot
product per output row): IN_PLACE below says where, per semiring, dtype and K.

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
    k: int = 0                # b's columns (0: not known, as in explain from symbolic types)


# Where SuiteSparse's in-place accumulation (saxpy5, C ⊕= A ⊗ B with C full) is faster than its
# own product into a new matrix, with B full: (monoid, multiply) -> {dtype: the least K}. Measured
# on soc-Slashdot0902 and a 1M-entry random matrix, 1 and 2 threads, K = 1-64, every built-in
# semiring and dtype (`dspla bench routes`, docs/local.md): in place took 0.1-0.8x the time
# here (plus_times float32 K = 16: 0.10-0.14x), and 1.0-5x everywhere else (lor_land / land_lor
# 2-5x, min_second / max_second on floats 1.1-2.3x, plus_pair 2.5-6x; the semirings SuiteSparse
# has no compiled kernel for, ~1.0-1.1x). At K = 1 with B full the dot product won for every
# semiring (1.03-2.3x); with B missing entries that A never reads (a bitmap: PageRank's r / outdeg)
# in place won again (0.65-0.94x), so there it needs no least K. plus_second reads no values of A
# (a matrix of ones runs as it: gbops.unit_times), and in place it won at K = 1 too: 0.69-0.78x
# on email-Enron and soc-Slashdot0902's Aᵀ w, one thread (SuiteSparse's dot4 into the output).
_FLOATS = (DType.float64, DType.float32)
IN_PLACE: dict[tuple[str, str], dict[DType, int]] = {
    ("plus", "times"): {DType.float64: 2, DType.float32: 4, DType.int64: 3},
    ("plus", "second"): {DType.float64: 1, DType.float32: 1, DType.int64: 3},
    ("plus", "first"): {DType.float64: 4, DType.float32: 4, DType.int64: 4},
    ("min", "first"): dict.fromkeys(_FLOATS, 4),
    ("max", "first"): dict.fromkeys(_FLOATS, 4),
}


def in_place_pays(sr: Semiring, compute: DType, k: int = 0, covered: bool = False) -> bool:
    """Whether accumulating into a full output beats GraphBLAS's own product for this semiring,
    compute dtype and K (0: not known, taken as wide); ``covered``: b proved full wherever a reads
    it, any K. A user's semiring accumulates by its compiled kernel (kernels/udfmxm.py) whatever the K."""
    if udfmxm.applies(sr):
        return True
    least = IN_PLACE.get((sr.monoid.name, sr.mult.name), {}).get(compute)
    return least is not None and (covered or k == 0 or k >= least)


@dataclass(frozen=True)
class Route:
    name: str
    says: str
    applies: Callable[[Case], bool]
    fills: bool = False   # the output starts full at the monoid's identity (a memset of rows x K)


def _blas(c: Case) -> bool:
    return c.sr.monoid.name == "plus" and c.sr.mult.name == "times" and c.dtype.is_float and c.a_full and \
        c.b_full and c.a_any and c.b_any


def _fillable(c: Case) -> bool:
    # (b full where a reads it: every row of a with an entry gets a product term, so C started
    # at the identity ends as GraphBLAS's product)
    return c.sr.monoid.identity(c.dtype) is not None and (c.b_full or c.b_covered) and c.a_any and c.b_any


def _full_c(c: Case) -> bool:
    # (proved full wherever a reads it: that case's measurement, even when b happens to be full,
    # as p2p1d's stack of PageRank's r / outdeg is: there the new route took PageRank at P = 2
    # from 1.52-1.72 to 1.75-2.20 ms per iteration)
    return _fillable(c) and in_place_pays(c.sr, c.dtype, c.k, covered=c.b_covered)


ROUTES = (
    Route("masked", "SuiteSparse's masked product: only the entries inside the mask are computed",
          lambda c: c.masked),
    Route("blas", "both operands full, plus_times over floats: a dense matmul (BLAS) on the values arrays",
          _blas),
    Route("udf-full", "a user's semiring with B full: the compiled kernel accumulates into a full C in place",
          lambda c: udfmxm.applies(c.sr) and _fillable(c), fills=True),
    Route("full-c", "B full (or full wherever A reads it), a semiring, dtype and K where it pays (IN_PLACE): C "
          "starts full at the monoid's identity and SuiteSparse accumulates C ⊕= A ⊗ B in place (then A's empty "
          "rows are made missing)", _full_c, fills=True),
    # chosen by the plan, not here: products whose output the plan made full beforehand (a Fill),
    # as p2p1d's blocks of local and received rows; listed so the stats name every route one way
    Route("accumulate", "into the plan's full output (a Fill): SuiteSparse's C ⊕= A ⊗ B in place",
          lambda c: False, fills=True),
    Route("new", "GraphBLAS's own C = A ⊕.⊗ B into a new matrix (B has missing entries, the monoid has no "
          "identity, or accumulating in place would be slower)", lambda c: True),
)
BY_NAME = {r.name: r for r in ROUTES}


def choose(sr: Semiring, compute: DType, *, a_full: bool, b_full: bool, masked: bool = False,
           a_any: bool = True, b_any: bool = True, b_covered: bool = False, k: int = 0) -> Route:
    """The first route of the table that applies (``k``: b's columns, 0 if not known)."""
    case = Case(sr, compute, a_full, b_full, masked, a_any, b_any, b_covered, k)
    for r in ROUTES:
        if r.applies(case):
            return r
    raise AssertionError("the last route applies to every product")


def expected(sr: Semiring, compute: DType, a_dense: bool, b_dense: bool, masked: bool,
             k: int = 0) -> tuple[Route, Route | None, Route | None]:
    """What explain shows from the types alone: the route when the dense operands are full at run
    time, the one taken if they are not, and the one taken when b's missing entries are only
    where a reads none (planning proves it: PageRank's r / outdeg); None where it is one already
    named. ``k``: b's columns when the types fix them, else 0."""
    full = choose(sr, compute, a_full=a_dense, b_full=b_dense, masked=masked, k=k)
    gaps = choose(sr, compute, a_full=False, b_full=False, masked=masked)
    covered = choose(sr, compute, a_full=False, b_full=False, b_covered=True, masked=masked, k=k) if b_dense else None
    return full, (gaps if gaps is not full else None), (covered if covered not in (full, gaps) else None)
