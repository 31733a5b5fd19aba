"""The sampled dense-dense product (SDDMM) on P processes: C = (G ⊕.⊗ Bᵀ) restricted to the
entries of a sparse M, with G, C and M by rows and B by rows over M's columns.

This is the gradient with respect to the values of a sparse parameter (edge weights Wg in
Wg @ B: dWg = (G Bᵀ)|Wg, autodiff/vjp.py). Entry (i, j) of C is one dot product of G's row i
with B's row j, so rank r needs exactly the rows of B named by the columns of its rows of M:
the receive set of the SpMM M @ B under p2p1d. The plan reuses those send sets (the analysis
layer's comm_plan, or under SPMD planning p2p1d's own_sets), so its communication equals the
SpMM's: the same rows of B travel, once per step, in one message per pair. Nothing is reduced
afterwards: every entry is computed whole where its row lives.

Planning needs M's pattern only: a static M (the graph), or a sparse parameter, whose values
change every step but whose pattern planning reads from the value it is given (the session
plans again when that pattern changes). The plan is one candidate, shown by explain and costed
by the cost model like a product's: Pack / Send / Recv carry its traffic, SampledMxM its work.
"""
from __future__ import annotations

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ..instr import Choice, Pack, Recv, SampledMxM, Send, WaitSends
from ..instr.layout import Layout, canonical
from ..ir import Node, Op
from ..ir.types import Kind
from .distplan import ProductInfo
from .product import ProductContext

NAME = "p2p1d-sddmm"


def pattern(pl, m: Node):
    """The planning-time value whose pattern M has (a static value, or a sparse parameter's
    value as given), or None when planning cannot know it."""
    if pl.is_static(m):
        return pl.static_value(m)
    return pl.patterns.get(id(pl.resolve(m)))


def applies(pl, n: Node) -> bool:
    """n is mxm(G, Bᵀ, mask=M, structure) with M's pattern known, M's rows and columns
    partitioned, G and the result by M's rows, B dense by M's columns, on more than one process."""
    if pl.P == 1 or n.attr("mask") != "structure" or n.attr("complement"):
        return False
    g, bt, m = n.args
    if bt.op is not Op.TRANSPOSE or bt.args[0].type.kind is not Kind.dense or m.type.kind is not Kind.sparse:
        return False
    r, c = m.type.shape
    if not (isinstance(r, str) and r in pl.dims and isinstance(c, str) and c in pl.dims):
        return False
    rows, B = Layout("row", r), bt.args[0]
    return (canonical(n.type, pl.dims) == rows and canonical(g.type, pl.dims) == rows
            and canonical(B.type, pl.dims) == Layout("row", c) and pattern(pl, m) is not None)


class _Sampled:
    """What a ProductContext forwards to: the lowering, P, B's width K, the compute dtype."""

    def __init__(self, pl, K: int, compute):
        self.pl, self.P, self.K, self.compute, self.opt = pl, pl.P, K, compute, pl.opt


def lower_sampled(pl, n: Node):
    """Every rank's instructions for the SDDMM n, as the one candidate of a product placeholder."""
    g, bt, m = n.args
    B = bt.args[0]
    sr = n.attr("semiring")
    rows, cols = pl.dims[m.type.nrows], pl.dims[m.type.ncols]
    K = pl.concrete(bt.type.nrows)
    compute, _ = sr.dtypes(g.type.dtype, B.type.dtype)
    index = len(pl.products)
    info = ProductInfo(index, f"{pl.label(n)} = sddmm[{sr}]({pl.label(g)}, {pl.label(B)}ᵀ) on {pl.label(m)}'s "
                              "entries", "?", f"pattern[{rows.size}x{cols.size}]", f"dense[{cols.size}x{K}]", K)
    ctx = ProductContext(_Sampled(pl, K, compute), NAME)
    S = _csr(pl, pattern(pl, m))
    slots = {"g": pl.value(g), "b": pl.value(B), "m": pl.value(m), "out": pl.slot(), "tag": 16 + 8 * index,
             "presence": not pl.facts[id(B)].full, "dtype": B.type.dtype.value}
    if pl.me is not None:   # SPMD: S is this rank's rows; the sends come from the peers
        from .plans.p2p1d import own_sets  # (the plans' modules: loaded when a product is planned)
        recvs, sends = own_sets(pl.comm, S, cols, pl.me, pl.P)
        ctx.emit_rank(pl.me, _rank_program(ctx, pl.me, S, recvs, sends, cols, sr, slots, index))
    else:
        from ..analysis import comm_plan  # (loaded by the plans that exchange rows, not by every run)
        plan = comm_plan(S, rows.parts, pl.P, b_parts=cols.parts)
        ctx.info.predicted = {"volume_rows": plan.volume_total}
        for r in range(pl.P):
            ctx.emit_rank(r, _rank_program(ctx, r, S[rows.owned[r]], plan.receives(r), plan.sends(r), cols, sr,
                                           slots, index))
    ctx.info.notes.append("the SpMM's p2p1d send sets: the rows of the dense operand this rank's entries name")
    info.loop = pl.in_loop
    pl.products.append(info)
    pl.candidates.append([ctx])
    pl.emit(Choice(product=index))
    pl.set(n, slots["out"], canonical(n.type, pl.dims))


def _rank_program(ctx, r: int, S_r: sp.csr_array, recvs: dict, sends: dict, cols, sr, s: dict, index: int) -> list:
    """Receives posted, B's rows each peer needs packed and sent, then the sampled product on
    the own and arriving rows."""
    K, presence, dtype = ctx.K, s["presence"], s["dtype"]
    prog, recv_slots, send_slots = [], [], []
    for q, lst in recvs.items():
        slot = ctx.slot()
        prog.append(Recv(slot, q, s["tag"], lst.size, K, dtype, presence=presence, product=index))
        recv_slots.append(slot)
    for q, lst in sends.items():
        slot = ctx.slot()
        prog.append(Pack(slot, s["b"], cols.pos[lst], presence=presence, product=index))
        prog.append(Send(slot, q, s["tag"], lst.size * K, dtype, presence, product=index))
        send_slots.append(slot)
    per_owner = np.bincount(cols.parts[S_r.indices], minlength=ctx.P)   # mask entries by B-row owner
    entries = (int(per_owner[r]),) + tuple(int(per_owner[q]) for q in recvs)
    prog.append(SampledMxM(s["out"], s["g"], s["b"], cols.owned[r], tuple(recv_slots), tuple(recvs.values()),
                           s["m"], cols.size, sr, entries, product=index))
    if send_slots:
        prog.append(WaitSends(tuple(send_slots), product=index))
    return prog


def _csr(pl, M) -> sp.csr_array:
    """M's pattern as scipy CSR (global columns), once per planning-time value."""
    key = (id(M), "pattern")
    if key not in pl.csr_cache:
        pl.csr_cache[key] = sp.csr_array(gb.io.to_scipy_sparse(M, format="csr")) if M.nvals else \
            sp.csr_array(M.shape, dtype=np.float64)
    return pl.csr_cache[key]
