"""allgather1d — the sparsity-unaware 1D baseline (CAGNET 1D, Two-Face "Allgather"): every
rank gathers all of B, then multiplies its rows of A."""
from __future__ import annotations

import scipy.sparse as sp

from ...instr import AllgatherRows, Free, MxM
from . import register_plan
from .p2p1d import narrow_only


def _check(ctx):
    return narrow_only(ctx)


@register_plan("allgather1d", check=_check, spmd=True)
def lower(ctx):
    """Gather all of B on every rank (MPI_Allgatherv), then a local product."""
    cols, K = ctx.cols, ctx.K

    def local_block(r):
        # columns renumbered to the rank order in which the gathered rows arrive
        A_r = ctx.rows_of(r)
        return ctx.gb(sp.csr_array((A_r.data, cols.permpos[A_r.indices], A_r.indptr), shape=A_r.shape))

    a = ctx.const_all(local_block)
    full = ctx.slot()
    ctx.emit(AllgatherRows(full, ctx.b, cols.counts, K, ctx.b_dtype.value, presence=not ctx.b_full,
                           product=ctx.index))
    ctx.emit(MxM(ctx.out, a, full, ctx.semiring, **ctx.mask, product=ctx.index))
    ctx.emit(Free((full,)))
