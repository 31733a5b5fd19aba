"""Handlers of local work: element-wise steps, products, fills, rows dropped, packed for sending
or taken, casts, frees."""
from __future__ import annotations

import sys
import time
from time import perf_counter as _clock

import graphblas as gb
import numpy as np
from graphblas.ss import concat  # (imported here: python-graphblas loads gb.ss lazily, racing under threads)
from suitesparse_graphblas import ffi, lib

from ...instr import (
    CastTo,
    DropRows,
    Fill,
    Free,
    Local,
    MxM,
    Pack,
    StackedMxM,
    TakeCols,
    TakeRows,
    Unpermute,
)
from ...ir.types import DType
from ...kernels import buffers as local
from ...kernels import gbops, item, overflow, prepared, spmspv
from ...ops import update
from ...reference import EVAL, INTO
from . import shm
from .interpreter import Runtime, _dt, handler


@handler(Local)
def _local(rt: Runtime, i: Local):
    t0 = _clock()
    s = rt.slots
    args = [s[a] for a in i.args]
    if i.in_place:
        cleared = _writable(rt, i, args)
        if cleared is not None:
            s[i.out] = M = update.in_place(i.node, args)
            if rt.magnitudes is not None:   # (M was written into: what was known of it no longer holds)
                rt.magnitudes.set(M, cleared) if id(i) in rt.risky else rt.magnitudes.forget(M)
            return rt.timed("compute_s", t0)
    key = id(i)
    kind = rt.local_kinds.get(key)
    if kind is None:   # (what the step's op and checks are, found once: an Op's hash is a Python call)
        kind = rt.local_kinds[key] = (i.node.op in INTO, i.node.op.value in _SUBSET, key in rt.risky)
    into_ok, subset, risky = kind
    if into_ok:
        s[i.out] = None   # (lets go of the last result, so that the pool may hand it back)
        into = rt.pool.take(key)
        if into is not None and rt.magnitudes is not None:
            rt.magnitudes.forget(into)   # (written into again)
        M = rt.steps.run(key, i.node, args, into)   # the prepared C call (kernels/prepared.py), if one applies
        if M is None:
            M = EVAL[i.node.op](i.node, args, rt.env, into=into)
        if not _passed(M, args):   # (an operand passed through is not ours to reuse)
            rt.pool.keep(key, M)
        s[i.out] = M
    else:
        s[i.out] = M = EVAL[i.node.op](i.node, args, rt.env)
    if risky:
        _checked(rt, i, args, M)
    elif subset and rt.magnitudes is not None and M is not args[0]:
        b = rt.magnitudes.get(args[0])
        if b is not None:
            rt.magnitudes.set(M, b)
    rt.times["compute_s"] += _clock() - t0


def _passed(M, args: list) -> bool:
    """Whether M is one of the operands (a step may pass one through)."""
    for a in args:
        if M is a:
            return True
    return False


def _checked(rt: Runtime, i: Local, args: list, M):
    """A step whose int64 arithmetic may leave int64: compared with its true value (overflow.py)."""
    if i.out in rt.partials:   # a partial reduction: the combination over ranks is checked, with its true value
        S = overflow.shadow_of(i.node, args, lambda n, a: EVAL[n.op](n, a, rt.env))
        if S is not None:
            rt.shadows.partial(i.out, S, overflow.describe(i.node))
    else:
        b = overflow.verify(i.node, args, M, lambda n, a: EVAL[n.op](n, a, rt.env), rt.output_names.get(i.out),
                            rt.mag)
        if rt.magnitudes is not None and M is not args[0]:
            rt.magnitudes.set(M, b)


# ops whose entries are some of their first operand's, unchanged: its magnitude bound holds for them
_SUBSET = frozenset({"mask", "select", "transpose"})


def _writable(rt: Runtime, i: Local, args: list) -> int | None:
    """Whether in-place update i may write into its C now: a temporary's object held nowhere
    else; a checked one (int64 arithmetic) only when the bound on its operands as they are
    proves that no entry leaves int64 (else it is computed apart and compared). The bound on
    its result's entries (LIMIT when unchecked), or None: not in place."""
    if i.temporary and not rt.exclusive(i.args[0]):
        return None
    if rt.shadows.by_slot and any(rt.slots[s] is args[0] for s in rt.shadows.by_slot):
        return None   # (C's int64 value is still to be compared with its float64 copy, as it is)
    if id(i) not in rt.risky:
        return overflow.LIMIT
    if i.out in rt.partials:
        return None
    got = overflow.clearing_bound(i.node, args, rt.mag)
    return got if got < overflow.LIMIT else None


def _dtypes(a, b, sr) -> tuple:
    """(a's and b's operand dtypes, the compute and output dtypes) of sr on a and b."""
    da, db = _dt(a), _dt(b)
    compute, out = sr.dtypes(da, db)
    return (*sr.operand_dtypes(da, db, compute), compute, out)


def _multiply(a, b, sr):
    ca, cb, compute, out = _dtypes(a, b, sr)
    return gbops.cast(a, ca), gbops.cast(b, cb), gbops.semiring(sr, compute), compute, out


def _typed(rt: Runtime, i: MxM, a, b) -> tuple:
    """(a, b in the semiring's operand dtypes, the semiring run (_unit's), its typed object, the
    compute and output dtypes, whether int64 is checked, the typed ⊕ to accumulate with): found
    once per instruction and operand dtypes (sr.dtypes, the typed lookups and a frozen row's hash
    cost ~10 us a call)."""
    got = rt.typed.get(id(i))
    if got is None or got[0] is not a.dtype or got[1] is not b.dtype:
        ca, cb, compute, out = _dtypes(a, b, i.semiring)
        checked = rt.checked and overflow.int_product(i.semiring, compute)
        accum = gbops.binary(i.semiring.monoid.op, compute) if i.accumulate else None
        got = rt.typed[id(i)] = (a.dtype, b.dtype, ca, cb, compute, out, checked, accum, {})
    _, _, ca, cb, compute, out, checked, accum, ops = got
    a, b = gbops.cast(a, ca), gbops.cast(b, cb)
    sr = _unit(rt, i, a)
    got = ops.get(id(sr))
    if got is None or got[0] is not sr:   # (i's semiring, or its ⊕.second)
        got = ops[id(sr)] = (sr, gbops.semiring(sr, compute))
    return a, b, sr, got[1], compute, out, checked, accum


def _output_mask(rt: Runtime, i):
    return gbops.mask_of(rt.slots[i.mask], i.mask_kind, i.complement) if i.mask is not None else None


@handler(MxM)
def _mxm(rt: Runtime, i: MxM):
    t0 = time.perf_counter()
    if i.vxm:
        return _vxm(rt, i, t0)
    if i.push is not None:   # a frontier pushed or pulled by its size (kernels/spmspv.py)
        rt.slots[i.out] = frontier(rt, i, rt.slots[i.a], rt.slots[i.b])
        rt.timed("compute_s", t0)
        return
    b = rt.slots[i.b]
    if i.b_transposed:   # (b holds Bᵀ: read through the descriptor where the masked route takes it)
        a, x, op, compute, out = _multiply(rt.slots[i.a], b, i.semiring)
        if not i.accumulate and not (rt.checked and overflow.int_product(i.semiring, compute)):
            C = gb.Matrix(compute.gb, a.shape[0], x.shape[0])
            C(mask=_output_mask(rt, i)) << a.mxm(x.T, op)
            rt.took("masked")   # (SuiteSparse's masked product, b read through the descriptor)
            rt.slots[i.out] = gbops.cast(C, out)
            rt.timed("compute_s", t0)
            return
        b = b.T.new()   # (not reached: ops/mxm.transposed_operand flips no checked or accumulating product)
    a, b, sr, op, compute, out, checked, accum = _typed(rt, i, rt.slots[i.a], b)
    mask = _output_mask(rt, i)
    if i.accumulate:  # into the output: SuiteSparse's in-place C ⊕= A ⊗ B (inside the mask)
        C = rt.slots[i.out]
        if rt.magnitudes is not None:
            rt.magnitudes.forget(C)
        follow = checked and rt.shadows.before_accumulating(i.out, C, a, b, i.semiring, rt.product_name(i))
        if a.shape[1] == 0:
            pass   # nothing to add (and SuiteSparse refuses to accumulate a product over no inner dim)
        elif mask is None and gbops.accumulate_full(C, a, b, i.semiring):
            rt.took("udf-full")
        else:
            gbops.accumulate(C, a, b, op, accum, mask)
            rt.took("accumulate")
        if follow:
            rt.shadows.accumulated(i.out, a, b, i.semiring, mask)
    else:
        C = gbops.mxm(a, b, sr, compute, a_empty_rows=i.a_empty_rows, mask=mask, into=rt.reusable(i),
                      taken=rt.routes, b_covered=i.b_covered)
        bound = rt.shadows.product(i.out, [(a, b)], i.semiring, rt.product_name(i), mask, rt.mag) if checked \
            else overflow.LIMIT
        rt.pool.keep(id(i), C)
        rt.slots[i.out] = C = gbops.cast(C, out)
        if rt.magnitudes is not None:
            rt.magnitudes.set(C, bound)
    rt.timed("compute_s", t0)


def _vxm(rt: Runtime, i: MxM, t0: float):
    """out = (uᵀ ⊕.⊗ b)ᵀ for the column u in a: GrB_vxm on u as a vector (SuiteSparse holds a
    column held by column as a vector), into a new column; int64 checked as the product uᵀ b."""
    u, b, op, compute, out = _multiply(rt.slots[i.a], rt.slots[i.b], i.semiring)
    m = rt.slots[i.mask] if i.mask is not None else None
    if not (_by_col(u) and (m is None or _by_col(m)) and hasattr(op, "gb_obj")):   # (a user's semiring)
        uT = u.T.new()
        C = uT.mxm(b, op).new() if m is None else gbops.mxm(uT, b, i.semiring, compute,
                                                               mask=gbops.mask_of(m.T.new(), i.mask_kind, i.complement))
        C = C.T.new()
    else:
        # (into the free earlier result: a product without a mask replaces all of it, one with a
        # mask clears what is outside it)
        C = prepared.output(rt.reusable(i), gb.dtypes.lookup_dtype(compute.gb), b._ncols, 1)
        rt.pool.keep(id(i), C)
        desc = ffi.NULL if m is None else _VXM_DESC[(i.mask_kind == "structure", i.complement)]
        item.check(lib.GrB_vxm(ffi.cast("GrB_Vector", C.gb_obj[0]), ffi.NULL if m is None else
                               ffi.cast("GrB_Vector", m.gb_obj[0]), ffi.NULL, op.gb_obj,
                               ffi.cast("GrB_Vector", u.gb_obj[0]), b.gb_obj[0], desc), "vxm")
    rt.took("vxm")
    bound = overflow.LIMIT
    if rt.checked and overflow.int_product(i.semiring, compute):
        bound = overflow.product_bound(u, b, i.semiring, inner=u._nrows, mag=rt.mag)
        if bound >= overflow.LIMIT:   # (the float64 true value, made as for uᵀ b, held as a column)
            rt.shadows.product(i.out, [(u.T.new(), b)], i.semiring, rt.product_name(i))
            shadow, what = rt.shadows.by_slot.get(i.out, (None, ""))
            if shadow is not None:
                rt.shadows.by_slot[i.out] = (shadow.T.new(), what)
        else:
            rt.shadows.by_slot.pop(i.out, None)
    rt.slots[i.out] = C = gbops.cast(C, out)
    if rt.magnitudes is not None:
        rt.magnitudes.set(C, bound)
    rt.timed("compute_s", t0)


_VXM_DESC = {(s, c): getattr(lib, "GrB_DESC_R" + ("S" if s else "") + ("C" if c else ""))
             for s in (False, True) for c in (False, True)}


def _by_col(M) -> bool:
    """Whether M is held by column (as every n x 1 matrix is unless made otherwise)."""
    cell = ffi.new("int32_t*")
    item.check(lib.GxB_Matrix_Option_get_INT32(M.gb_obj[0], lib.GxB_FORMAT, cell), "format")
    return cell[0] == lib.GxB_BY_COL


def _unit(rt: Runtime, i, a):
    """i's semiring, its ⊗ = times dropped when the static a holds only ones (gbops.unit_times):
    decided once per operand object (a static value is never written into)."""
    if i.a not in rt.static_slots:
        return i.semiring
    got = rt.units.get(id(i))
    if got is None or got[0] is not a:
        got = rt.units[id(i)] = (a, gbops.unit_times(a, i.semiring))
    return got[1]


@handler(StackedMxM)
def _stacked_mxm(rt: Runtime, i: StackedMxM):
    t0 = time.perf_counter()
    A = concat([[rt.slots[s] for s in i.a_parts]]) if len(i.a_parts) > 1 else rt.slots[i.a_parts[0]]
    B = concat([[rt.slots[s]] for s in i.b_parts]) if len(i.b_parts) > 1 else rt.slots[i.b_parts[0]]
    for s in i.a_parts + i.b_parts:   # (the stacks hold them now)
        rt.slots[s] = None
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    a, b, op, compute, out = _multiply(A, B, i.semiring)
    del A, B
    mask = _output_mask(rt, i)
    if i.batches:   # made batch by batch as AlltoallSparse returns them (collectives.py)
        if rt.checked and overflow.int_product(i.semiring, compute):
            rt.shadows.product(i.out, [(a, b)], i.semiring, rt.product_name(i), mask)
        rt.slots[i.out] = Batched(a, b, op, compute, out, mask, i.batches)
        rt.timed("compute_s", t0)
        return
    C = gbops.sparse_output(a.shape[0], b.shape[1], compute)
    C(mask=mask) << a.mxm(b, op)
    if rt.checked and overflow.int_product(i.semiring, compute):
        rt.shadows.product(i.out, [(a, b)], i.semiring, rt.product_name(i), mask)
    rt.slots[i.out] = gbops.cast(C, out)
    rt.timed("compute_s", t0)


class Batched:
    """A sparse x sparse product held as its operands, made one column batch at a time
    (``positions``: B's columns in each) so that only one batch of C exists at once."""

    def __init__(self, a, b, op, compute, out, mask, positions):
        self.a, self.b, self.op, self.compute, self.out, self.mask = a, b, op, compute, out, mask
        self.positions = positions

    def batch(self, k: int):
        """Batch k of C: a ⊕.⊗ b[:, positions[k]] (inside the mask's same columns), in out's dtype."""
        pos = self.positions[k]
        b = self.b[:, pos].new()
        mask = None
        if self.mask is not None:   # (a Mask of a value's columns: the same columns of its parent)
            m = self.mask.parent[:, pos].new()
            mask = m.S if self.mask.structure else m.V
            mask = ~mask if self.mask.complement else mask
        C = gbops.sparse_output(self.a.nrows, b.ncols, self.compute)
        C(mask=mask) << self.a.mxm(b, self.op)
        return gbops.cast(C, self.out)


def typed_frontier(fr, i, a, b) -> tuple:
    """fr.typed for the operands a and b of i's product, resolved once per run's operand dtypes:
    (their python-graphblas dtypes, the typed semiring, the compute type's, the operands' casts,
    the compute and output dtypes)."""
    sig = (a.dtype, b.dtype)
    if fr.typed is None or fr.typed[0] != sig:
        da, db = _dt(a), _dt(b)
        compute, out = i.semiring.dtypes(da, db)
        ca, cb = i.semiring.operand_dtypes(da, db, compute)
        fr.typed = (sig, gbops.semiring(i.semiring, compute), gb.dtypes.lookup_dtype(compute.gb), ca, cb, compute, out)
    return fr.typed


def frontier(rt: Runtime, i, a, b):
    """a ⊕.⊗ b under i's complemented mask, pushed or pulled (kernels/spmspv.py) by b's size over
    all ranks (i.count's, or b's own in one process); the choice counted in the stats' routes."""
    fr, m = rt.slots[i.push], rt.slots[i.mask]
    _, op, gdt, ca, cb, compute, out = typed_frontier(fr, i, a, b)
    a, b = gbops.cast(a, ca), gbops.cast(b, cb)
    pull = spmspv.pulls_by_edges(fr, b, fr.entries(b)) if i.count is None else \
        spmspv.pulls(fr, item.item(rt.slots[i.count]))
    rt.took("spmspv-pull" if pull else "spmspv-push")
    C = spmspv.product(fr, a, b, op, gdt, m, i.mask_kind == "structure", pull)
    return C if out is compute else gbops.cast(C, out)


@handler(Fill)
def _fill(rt: Runtime, i: Fill):
    t0 = time.perf_counter()
    if rt.shadows.by_slot:   # (the product the slot held is complete)
        rt.shadows.flush(i.out, rt.slots[i.out])
    into = rt.reusable(i)
    if i.value is None:
        # the slot's last DropRows left a presence bitmap that the next one can use again
        rt.bitmaps[i.out] = gbops.take_bitmap(into)
        C = gbops.identity_full(i.nrows, i.k, i.monoid, DType(i.dtype), into=into)
    else:   # (no DropRows follows: A @ x + s keeps s in A's empty rows)
        C = gbops.constant_full(i.nrows, i.k, item.item(rt.slots[i.value]), DType(i.dtype), into=into)
    rt.pool.keep(id(i), C)
    rt.slots[i.out] = C
    rt.timed("compute_s", t0)


@handler(DropRows)
def _drop_rows(rt: Runtime, i: DropRows):
    t0 = time.perf_counter()
    if rt.magnitudes is not None:
        rt.magnitudes.forget(rt.slots[i.out])
    rt.slots[i.out] = gbops.drop_rows(rt.slots[i.out], i.rows, rt.bitmaps.pop(i.out, None))
    rt.timed("compute_s", t0)


@handler(Pack)
def _pack(rt: Runtime, i: Pack):
    t0 = time.perf_counter()
    M = rt.slots[i.src]
    rt.slots[i.out] = None
    # an input unchanged since this Pack last packed it: the rows it packed then are the same
    # (values that depend only on unchanged inputs are computed once)
    same = rt.unchanged_since(i, i.src)
    end = rt.shm.sends.get(id(i))
    if end is not None:   # into the receiver's memory (shm.py), where the last round's rows stay
        rt.slots[i.out] = shm.repack(end) if same else shm.pack(end, M, i.rows, _dt(M), i.presence)
        rt.packs_reused += same
        rt.timed("pack_s", t0)
        return
    # the last iteration's buffer, once its send is done and dropped (the dict, last, the call
    # hold it) and it still owns its memory (a buffer made into a matrix, as a values-only
    # receive is, would have handed it over; no plan does that with a Pack's today)
    last = rt.sendbufs.get(id(i))
    free = last if last is not None and sys.getrefcount(last) == 3 and last.flags.owndata else None
    if same and free is not None:   # sent again as it is
        rt.slots[i.out] = free
        rt.packs_reused += 1
    else:
        rt.slots[i.out] = rt.sendbufs[id(i)] = local.pack_rows(M, i.rows, _dt(M), i.presence, out=free)
    rt.timed("pack_s", t0)


@handler(Unpermute)
def _unpermute(rt: Runtime, i: Unpermute):
    t0 = time.perf_counter()
    M = rt.slots[i.src]
    # rows of the gathered matrix are in rank order; order[i] is the global row of stacked row i
    inv = np.empty_like(i.order)
    inv[i.order] = np.arange(i.order.size)
    rt.slots[i.out] = local.take(M, rows=inv)
    rt.timed("pack_s", t0)


@handler(TakeRows)
def _take_rows(rt: Runtime, i: TakeRows):
    t0 = time.perf_counter()
    rt.slots[i.out] = local.take(rt.slots[i.src], rows=i.rows)
    rt.timed("pack_s", t0)


@handler(TakeCols)
def _take_cols(rt: Runtime, i: TakeCols):
    t0 = time.perf_counter()
    rt.slots[i.out] = local.take(rt.slots[i.src], cols=i.cols)
    rt.timed("pack_s", t0)


@handler(CastTo)
def _cast_to(rt: Runtime, i: CastTo):
    rt.slots[i.out] = gbops.cast(rt.slots[i.src], DType(i.dtype))


@handler(Free)
def _free(rt: Runtime, i: Free):
    for s in i.slots:
        if rt.shadows.by_slot:
            rt.shadows.flush(s, rt.slots[s])
        rt.slots[s] = None
