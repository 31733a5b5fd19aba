"""allgather1d — the sparsity-unaware 1D baseline (CAGNET 1D, Two-Face "Allgather"): every
rank gathers all of B, then multiplies its rows of A."""
from __future__ import annotations

import scipy.sparse as sp

from ...instr import AllgatherRows, Free, MxM
from ...ops.mxm import frontier
from . import register_plan
from .p2p1d import narrow_only


def _check(ctx):
    return narrow_only(ctx)


@register_plan("allgather1d", check=_check, spmd=True)
def lower(ctx):
    """Gather all of B on every rank (MPI_Allgatherv), then a local product."""
    cols, K = ctx.cols, ctx.K
    blocks: dict = {}

    def local_block(r):
        # columns renumbered to the rank order in which the gathered rows arrive
        if r not in blocks:
            A_r = ctx.rows_of(r)
            blocks[r] = ctx.gb(sp.csr_array((A_r.data, cols.permpos[A_r.indices], A_r.indptr), shape=A_r.shape))
        return blocks[r]

    a = ctx.const_all(local_block)
    # a frontier (ops/mxm.pushes): pushed over the block's transpose or pulled, alike on every rank
    push = None if ctx.frontier is None else \
        ctx.const_all(lambda r: frontier(local_block(r), ctx.pl.concrete(ctx.node.type.shape[0])))
    full = ctx.slot()
    ctx.emit(AllgatherRows(full, ctx.b, cols.counts, K, ctx.b_dtype.value, presence=not ctx.b_full,
                           product=ctx.index))
    ctx.emit(MxM(ctx.out, a, full, ctx.semiring, **ctx.mask, push=push,
                 count=ctx.frontier if push is not None else None, product=ctx.index))
    ctx.emit(Free((full,)))
