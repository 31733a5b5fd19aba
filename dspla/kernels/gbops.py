"""Turning algebra-table rows into SuiteSparse:GraphBLAS objects, and small GraphBLAS helpers
shared by the reference executor and the distributed runtime's local compute."""
from __future__ import annotations

from functools import lru_cache

import graphblas as gb
import numpy as np
from graphblas.core import mask as _mask
from graphblas.core import operator as _Op
from suitesparse_graphblas import ffi, lib

from ..algebra import SEMIRINGS, BinaryOp, Monoid, Semiring, UnaryOp
from ..ir.types import DType
from . import gbudf, lend, recycle, routes, udfmxm
from .buffers import from_values, pack_bitmap, unpack_bitmap, unpack_full, values_of
from .item import check, item, new_matrix, nvals


def _user(*ops) -> bool:
    return any(getattr(o, "func", None) is not None or getattr(o, "builtin", True) is False for o in ops)


def builtin_ops(*ops) -> bool:
    """Whether every operator is GraphBLAS's own (none a user's Python function or monoid)."""
    return not _user(*ops)


@lru_cache(maxsize=None)
def semiring(sr: Semiring, dtype: DType):
    if _user(sr.monoid, sr.mult):
        return gbudf.semiring(sr, dtype)
    name = f"{sr.monoid.gb}_{sr.mult.gb}"
    if sr.builtin and hasattr(gb.semiring, name):
        try:
            return getattr(gb.semiring, name)[dtype.gb]
        except KeyError:  # python-graphblas lacks some typed instances (min_max, max_min on BOOL)
            pass
    anon = _Op.Semiring.register_anonymous(getattr(gb.monoid, sr.monoid.gb), getattr(gb.binary, sr.mult.gb),
                                           sr.name)
    return anon[dtype.gb]


@lru_cache(maxsize=None)
def binary(op: BinaryOp, dtype: DType):
    return gbudf.binary(op, dtype) if _user(op) else getattr(gb.binary, op.gb)[dtype.gb]


@lru_cache(maxsize=None)
def monoid(m: Monoid, dtype: DType):
    return gbudf.monoid(m, dtype) if _user(m) else getattr(gb.monoid, m.gb)[dtype.gb]


def unit_times(a, sr: Semiring) -> Semiring:
    """sr, or its ⊕.second when ⊗ is times and the sparse a holds 1 in every entry (an adjacency
    matrix of ones, which SuiteSparse keeps iso-valued): 1 × b is b exactly in every built-in
    type, and the product then reads a's pattern alone, not its values (PageRank's Aᵀ w:
    0.47 against 0.69 ms on email-Enron, one thread). A full a keeps sr (its dense route)."""
    if sr.mult.name != "times" or not sr.builtin or _user(sr.monoid, sr.mult):
        return sr
    nv = a.nvals
    if nv == 0 or nv == a.nrows * a.ncols or not a.ss.is_iso or a.ss.iso_value.value != 1:
        return sr
    return SEMIRINGS.get(f"{sr.monoid.name}_second", sr)


def dtype_of(M) -> DType:
    return DType.of_numpy(M.dtype.np_type)


def cast(M, dtype: DType):
    return M if dtype_of(M) is dtype else M.dup(dtype=dtype.gb)


def apply_unary(M, op: UnaryOp, compute: DType, out: DType, into=None):
    """``into``: a free matrix (kernels/recycle.py) the last step may write into instead of a new one."""
    M = cast(M, compute)
    last = len(op.steps) - 1
    for k, step in enumerate(op.steps):
        if step[0] == "unary":
            expr = M.apply(getattr(gb.unary, step[1])[compute.gb])
        elif step[0] == "udf":
            expr = M.apply(gbudf.unary(op, compute))
        else:
            _, name, value = step
            expr = M.apply(getattr(gb.binary, name)[compute.gb], right=value)
        M = new(expr, compute, into if k == last else None)
    return cast(M, out)


def new(expr, dtype: DType, into=None):
    """expr's value as a matrix of ``dtype``: written into ``into`` (a free matrix, kernels/recycle.py)
    when it has that dtype and shape, else a new one."""
    if into is not None and into.dtype == dtype.gb and into.shape == expr.shape:
        into << expr
        return into
    return expr.new(dtype=dtype.gb)


def empty(nrows: int, ncols: int, dtype: DType):
    return gb.Matrix(dtype.gb, nrows, ncols)


def reduced(x, op, axis: str):
    """x's rows (``axis`` 'rows': a vector of x.nrows) or columns reduced by a monoid or an
    aggregator. A reduction over no entries is missing, which SuiteSparse 9.4 gets wrong for an
    iso-valued matrix with no columns (rows): it gives every row (column) an entry; such a
    matrix has no entries, so its reduction is an empty vector here."""
    expr = x.reduce_rowwise(op) if axis == "rows" else x.reduce_columnwise(op)
    if (x.ncols if axis == "rows" else x.nrows) == 0:
        return gb.Vector(expr.dtype, expr.size)
    return expr.new()


def identity(n: int, dtype: DType):
    ones = gb.Vector(dtype.gb, n)
    ones << 1   # iso and full: O(1)
    return ones.diag()


def column(v, n: int):
    """A graphblas Vector as an n x 1 matrix: SuiteSparse's vector is one (a view that keeps the
    vector alive; rebuilding it from coordinates took 1 ms at 82K rows)."""
    assert v.size == n
    return v._as_matrix()


def row(v, n: int):
    idx, vals = v.to_coo()
    return gb.Matrix.from_coo(np.zeros(len(idx), np.uint64), idx, vals, nrows=1, ncols=n, dtype=v.dtype)


def full(nrows: int, ncols: int, value, dtype: DType):
    return from_values(np.full((nrows, ncols), value, dtype=dtype.np), dtype)


def expand(M, shape, like=None):
    """Broadcast M (n x 1, 1 x m or 1 x 1) to ``shape``. With ``like`` (a matrix of that shape),
    only onto like's pattern, which is all an intersection needs; otherwise to every position
    of the rows/columns where M has an entry, which is what a union needs."""
    r, c = M.shape
    R, C = shape
    if (r, c) == (R, C):
        return M
    dt = dtype_of(M)
    any_first, any_second = (gb.semiring.any_first[dt.gb], gb.semiring.any_second[dt.gb])
    if r == R and c == 1 and C != 1:      # column vector across columns
        if like is not None:
            return M[:, 0].new().diag().mxm(like, any_first).new()
        return M.mxm(full(1, C, True, DType.bool), any_first).new()
    if c == C and r == 1 and R != 1:      # row vector down rows
        if like is not None:
            return like.mxm(M[0, :].new().diag(), any_second).new()
        return full(R, 1, True, DType.bool).mxm(M, any_second).new()
    # 1 x 1 to R x C (R or C may also be 1)
    if M.nvals == 0:
        return empty(R, C, dt)
    value = item(M)
    if like is not None:
        return like.apply(gb.binary.second[dt.gb], right=value).new(dtype=dt.gb)
    return full(R, C, value, dt)


def is_full(M) -> bool:
    return M.nvals == M.shape[0] * M.shape[1]


def identity_full(nrows: int, ncols: int, m: Monoid, dtype: DType, into=None):
    """A full matrix holding the monoid's identity: ``into`` refilled when it fits (a free matrix,
    kernels/recycle.py), else new (zeros come from calloc: nearly free).

    Built-in min and max over floats start at NaN, not at ±inf: SuiteSparse's min and max ignore
    a NaN, so NaN is as neutral as the identity for every other value, and an entry whose terms
    are all NaN stays NaN (as GraphBLAS's own product gives) instead of becoming ±inf."""
    ident = m.identity(dtype)
    if m.builtin and m.name in ("min", "max") and dtype.is_float:
        ident = np.nan
    C = recycle.refill(into, nrows, ncols, ident, dtype)
    if C is not None:
        return C
    vals = np.zeros((nrows, ncols), dtype=dtype.np) if not ident else np.full((nrows, ncols), ident, dtype=dtype.np)
    return from_values(vals, dtype)


def constant_full(nrows: int, ncols: int, value, dtype: DType, into=None):
    """A full matrix holding ``value`` (``into`` refilled when it fits); None as the value: a
    matrix with no entries (a missing 1 x 1 broadcasts to nothing)."""
    if value is None:
        return gb.Matrix(dtype.gb, nrows, ncols)
    C = recycle.refill(into, nrows, ncols, value, dtype)
    return C if C is not None else from_values(np.full((nrows, ncols), value, dtype=dtype.np), dtype)


def occupied(a, axis: str = "rows"):
    """The rows (or columns) of a that hold an entry, as a sparse vector: a structural reduction
    (~2 ms for a million entries, where np.unique of the indices took 100 ms)."""
    reduce = a.reduce_rowwise if axis == "rows" else a.reduce_columnwise
    return reduce(gb.monoid.any).new()


def empty_rows(a) -> np.ndarray:
    """Rows of a with no entries."""
    present = occupied(a)
    if present.nvals == a.shape[0]:
        return np.zeros(0, dtype=np.int64)
    mask = np.ones(a.shape[0], dtype=bool)
    mask[present.to_coo(values=False)[0]] = False
    return np.flatnonzero(mask)


def take_bitmap(M):
    """(presence bitmap, entry count) of M when it is held as a bitmap, as drop_rows leaves its
    output, M left empty (a refill makes it full again); else None and M untouched. The bitmap
    goes back to drop_rows, which uses it again instead of building one per call (at K = 256 on
    soc-Slashdot0902, a fresh 21 MB bitmap)."""
    if M is None:
        return None
    taken = lend.take_bitmap(M)   # (by the C calls; python-graphblas's unpack below otherwise)
    if taken is not None or not lend.is_bitmap(M):   # (M.ss.format below costs 8 us: a full M is the rule)
        return taken
    held = unpack_bitmap(M)
    return None if held is None else (held[1], held[2])


def drop_rows(C, rows: np.ndarray, spare=None):
    """C (full) with ``rows`` (distinct) made missing. ``spare``: a take_bitmap result, used when it
    is exactly that pattern (checked: the count, and nothing present in ``rows``)."""
    if rows.size == 0:
        return C
    nrows, ncols = C.shape
    nvals = (nrows - rows.size) * ncols
    bitmap = None
    if spare is not None:
        bitmap, count = spare
        # count equal and nothing in ``rows``: every other position is present
        if bitmap.shape != (nrows, ncols) or count != nvals or np.take(bitmap, rows, axis=0).any():
            bitmap = None
    if bitmap is None:
        bitmap = np.ones((nrows, ncols), dtype=bool)
        bitmap[rows] = False
    if not lend.give_bitmap(C, bitmap, nvals):
        pack_bitmap(C, bitmap, unpack_full(C), nvals=nvals)
    return C


def mask_of(m, kind: str, complement: bool):
    """A GraphBLAS mask object: m's values (kind 'value') or its pattern ('structure'), maybe
    complemented."""
    mask = m.S if kind == "structure" else m.V
    return ~mask if complement else mask


def accumulate_full(C, a, b, sr: Semiring, rows=None) -> bool:
    """C[rows, :] ⊕= a ⊕.⊗ b in place by the compiled kernel of a user's semiring (kernels/udfmxm.py),
    when it applies: C and b full, of one dtype (the compute dtype). False: the caller asks
    SuiteSparse."""
    if not (udfmxm.applies(sr) and is_full(C) and is_full(b) and b.nvals and C.nvals) or C is b \
            or dtype_of(C) is not dtype_of(b):
        return False
    if a.nvals:
        with values_of(C) as cv, values_of(b) as bv:
            udfmxm.accumulate(cv, a, bv, sr, rows)
    return True


def mxm(a, b, sr: Semiring, compute: DType, a_empty_rows=None, mask=None, into=None, taken: dict | None = None,
        b_covered: bool = False):
    """a ⊕.⊗ b in the compute dtype, by the first route of kernels/routes.py's table that applies.
    ``a_empty_rows``: a's empty rows when the caller knows them (planning-time matrices).
    ``mask`` (a mask_of object): SuiteSparse's masked product, computing only entries inside it.
    ``into``: a free matrix (kernels/recycle.py) whose memory a full route may write into.
    ``taken``: a Counter of route names, counted in (the run stats). ``b_covered``: planning proved
    b full wherever a reads it (plan/facts.covers)."""
    (ar, ac), (br, bc) = a.shape, b.shape
    a_nv, b_nv = nvals(a), nvals(b)
    route = routes.choose(sr, compute, a_full=a_nv == ar * ac, b_full=b_nv == br * bc, masked=mask is not None,
                          a_any=a_nv > 0, b_any=b_nv > 0, b_covered=b_covered, k=bc)
    if taken is not None:   # (a Counter)
        taken[route.name] += 1
    return _RUN[route.name](a, b, sr, compute, a_empty_rows, mask, into)


_SPARSE = frozenset({"csr", "csc", "hypercsr", "hypercsc"})
_SPARSE_STATUS = (lib.GxB_SPARSE, lib.GxB_HYPERSPARSE)
_TypedSemiring, _TypedBinary = type(gb.semiring.plus_times[gb.dtypes.FP64]), type(gb.binary.plus[gb.dtypes.FP64])


def sparse_output(nrows: int, ncols: int, compute: DType):
    """An empty matrix for a sparse x sparse product that stays sparse: SuiteSparse turns a
    matrix denser than its bitmap switch (a few %) into a bitmap of nrows x ncols bytes plus
    values, 9.6 GB for a rank's 16K rows of R-MAT 16's A @ A where its 41M entries need 0.7."""
    C = gb.Matrix(compute.gb, nrows, ncols)
    C.ss.config["sparsity_control"] = ["sparse", "hypersparse"]
    return C


def accumulate(C, a, b, op, accum, mask=None):
    """C ⊕= a ⊕.⊗ b in place (inside ``mask``, a mask_of object), operands in the typed
    semiring's dtypes: one C call where python-graphblas's expression around it cost 25 us
    (PageRank's teleport fill and product, once per iteration), its expression with a mask."""
    if mask is not None or type(op) is not _TypedSemiring or type(accum) is not _TypedBinary:
        C(accum=accum, mask=mask) << a.mxm(lookup_operand(a, b), op)
        return C
    B = lookup_operand(a, b)
    check(lib.GrB_mxm(C.gb_obj[0], ffi.NULL, accum.gb_obj, op.gb_obj, a.gb_obj[0], B.gb_obj[0], ffi.NULL), "mxm")
    return C


def lookup_operand(a, b):
    """b as SuiteSparse should read it in a ⊕.⊗ b: a sparse column (a BFS frontier, SSSP's
    distances while they spread) copied into a bitmap, else b itself.

    With a held by row, SuiteSparse takes a dot product per output row, and against a sparse b
    each one merges two sorted lists; against a bitmap it looks b's entries up. Measured on
    soc-Slashdot0902, one thread: a BFS level with 60 nodes in its frontier took 16 ms masked
    by the unvisited nodes, 0.14 ms with the frontier a bitmap; the whole BFS 52 -> 5.3 ms and
    SSSP 56-75 -> 34-36 ms, no level slower. The copy is O(rows of b) (15-65 us at 82K rows), so
    it is made only when a has at least that many entries. SuiteSparse already holds a column
    denser than its bitmap switch (4%) as a bitmap; wider operands are left to it."""
    if b._ncols != 1 or lend.layout(b)[0] not in _SPARSE_STATUS or a.nvals < b._nrows:
        return b
    B = b.dup()
    B.ss.config["sparsity_control"] = ["bitmap"]
    return B


def _masked(a, b, sr, compute, a_empty_rows, mask, into):
    op, B = semiring(sr, compute), lookup_operand(a, b)
    desc = _MASK_DESC.get(type(mask))
    if desc is None or type(op) is not _TypedSemiring or type(mask.parent) is not gb.Matrix:
        C = gb.Matrix(compute.gb, a.shape[0], b.shape[1])
        C(mask=mask) << a.mxm(B, op)
        return C
    # one C call into a new matrix (python-graphblas's output and expression: ~25 us a product,
    # twice a Luby iteration)
    C = new_matrix(gb.dtypes.lookup_dtype(compute.gb), a._nrows, b._ncols)
    check(lib.GrB_mxm(C.gb_obj[0], mask.parent.gb_obj[0], ffi.NULL, op.gb_obj, a.gb_obj[0], B.gb_obj[0], desc), "mxm")
    return C


_MASK_DESC = {_mask.StructuralMask: lib.GrB_DESC_S, _mask.ValueMask: ffi.NULL,
              _mask.ComplementedStructuralMask: lib.GrB_DESC_SC, _mask.ComplementedValueMask: lib.GrB_DESC_C}


def _blas(a, b, sr, compute, a_empty_rows, mask, into):
    if a is b:   # X @ X: a matrix's values can be lent out only once at a time
        with values_of(a) as av:
            return from_values(av @ av, compute)
    with values_of(a) as av, values_of(b) as bv:
        out = av @ bv
    return from_values(out, compute)


def _full_c(a, b, sr, compute, a_empty_rows, mask, into):
    return _accumulated([(a, b)], sr, compute, empty_rows(a) if a_empty_rows is None else a_empty_rows, into)


def _accumulated(pairs, sr, compute, a_empty_rows, into):
    # identity ⊕ x = x: starting C full at the identity changes nothing but speed; A's empty rows
    # are then made missing again
    spare = take_bitmap(into)
    C = identity_full(pairs[0][0].shape[0], pairs[0][1].shape[1], sr.monoid, compute, into=into)
    for a, b in pairs:
        # (an inner dim of 0 adds nothing, and SuiteSparse 9.4 refuses to accumulate such a product:
        # GrB_DIMENSION_MISMATCH, "input is 0-by-0")
        if a.ncols and not (udfmxm.applies(sr) and accumulate_full(C, a, b, sr)):
            accumulate(C, a, b, semiring(sr, compute), binary(sr.monoid.op, compute))
    return drop_rows(C, a_empty_rows, spare)


def full_c_route(sr: Semiring, compute: DType, k: int):
    """The route a product with a full b of k columns takes when it starts its output full
    (full-c, udf-full), else None."""
    route = routes.choose(sr, compute, a_full=False, b_full=True, k=k)
    return route if route.name in ("full-c", "udf-full") else None


def mxm_blocks(pairs, route, sr: Semiring, compute: DType, a_empty_rows, into=None, taken: dict | None = None):
    """Σ a_k ⊕.⊗ b_k over column blocks a_k of one matrix a and the matching row blocks b_k (full)
    of b, into one output as ``route`` (full_c_route's) makes one product: C starts full at the
    identity, each product accumulates into it in place, a's empty rows made missing at the end."""
    if taken is not None:
        taken[route.name] += 1
    return _accumulated(pairs, sr, compute, a_empty_rows, into)


def _new(a, b, sr, compute, a_empty_rows, mask, into):
    return a.mxm(lookup_operand(a, b), semiring(sr, compute)).new()


_RUN = {"masked": _masked, "blas": _blas, "udf-full": _full_c, "full-c": _full_c, "new": _new}
assert set(_RUN) == set(routes.BY_NAME) - {"accumulate"}, "every route of kernels/routes.py has a runner here"
