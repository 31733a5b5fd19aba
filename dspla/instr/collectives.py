"""Collectives: gathers, reductions, broadcasts, exchanges and redistributions of a group."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import NO_TRAFFIC, Instr, Traffic


def ring_allreduce_words(entries: int, g: int) -> int:
    """Words each rank sends (and receives) in a ring allreduce of ``entries`` values over g
    ranks: a reduce-scatter and an allgather, each moving (g - 1) / g of the buffer."""
    return -(-2 * (g - 1) * int(entries) // g) if g > 1 else 0


@dataclass(frozen=True, eq=False)
class AllgatherRows(Instr):
    """out = the dense pieces of every rank of ``group`` stacked in rank order (counts rows each)."""
    out: int
    src: int
    counts: np.ndarray
    k: int
    dtype: str
    presence: bool = False
    group: int = 0
    me: int | None = None   # this rank's index in the group (None: its world rank)
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True

    def traffic(self, where, payload=None):
        me = where.rank if self.me is None else self.me
        own = int(self.counts[me]) if me < len(self.counts) else 0
        peers = int((self.counts > 0).sum()) - (1 if own else 0)
        total = int(self.counts.sum())
        return Traffic(own * self.k * peers if own else 0, peers if own else 0, (total - own) * self.k, peers)


@dataclass(frozen=True, eq=False)
class AllgatherSparse(Instr):
    """out = every rank's sparse piece stacked by rows (pieces of ``nrows`` rows each) or
    by columns; used to redistribute values whose layout a consumer cannot take. Its traffic
    is the entries present, known when it runs (payload: (own entries, entries of the others))."""
    out: int
    src: int
    offsets: np.ndarray  # where each rank's piece starts, in global (original) indexing order
    index: np.ndarray    # global index of each stacked row/column (original ids)
    axis: str            # "rows" | "cols"
    shape: tuple
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True
    DYNAMIC = True

    def traffic(self, where, payload=None):
        if payload is None:
            return NO_TRAFFIC
        own, others = payload
        peers = where.group_sizes[0] - 1
        return Traffic(own * peers, peers, others, peers)


@dataclass(frozen=True, eq=False)
class Allreduce(Instr):
    """out = ⊕ over ranks of ``src`` (missing entries take no part; present where any is)."""
    out: int
    src: int
    monoid: Any
    group: int = 0
    entries: int = 0        # size of src (rows x columns), fixed at planning
    presence: bool = True   # False: src is proven full, only values travel
    label: str = ""         # the value it makes, for messages (an integer sum that overflows)
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True

    def traffic(self, where, payload=None):
        g = where.group_sizes[self.group]
        w = ring_allreduce_words(self.entries, g)
        m = 2 * (g - 1) if g > 1 else 0
        return Traffic(w, m, w, m)


@dataclass(frozen=True, eq=False)
class SmallAllreduce(Instr):
    """Small Allreduces of one group (scalars, short vectors) as one collective: every rank's
    partials, values and presence together, are gathered to every member and combined there in
    rank order. One message round replaces two per Allreduce, and every rank computes bitwise
    the same result (so loop conditions on it agree without asking rank 0)."""
    outs: tuple
    srcs: tuple
    monoids: tuple
    entries: tuple          # size of each src (rows x columns), fixed at planning
    group: int = 0
    labels: tuple = ()      # the values they make, for messages
    READS, WRITES = ("srcs",), ("outs",)
    COLLECTIVE = True

    def traffic(self, where, payload=None):
        g = where.group_sizes[self.group]
        if g < 2:
            return NO_TRAFFIC
        w = sum(self.entries) * (g - 1)
        return Traffic(w, g - 1, w, g - 1)

    def __str__(self) -> str:
        parts = ", ".join(f"s{o} = {m.name}(s{s})" for o, s, m in zip(self.outs, self.srcs, self.monoids))
        return f"SmallAllreduce({parts}; {sum(self.entries)} entries, group={self.group})"


@dataclass(frozen=True, eq=False)
class ISmallAllreduce(SmallAllreduce):
    """A SmallAllreduce of scalars posted without waiting (MPI_Iallgatherv) into ``req``; the
    WaitAllreduce reading ``req`` completes it into ``outs``, placed where a result is first
    needed, so that a rank does its local work while the others catch up (plan/fuse.py)."""
    req: int = -1
    READS, WRITES = ("srcs",), ("req",)
    COLLECTIVE = True

    def __str__(self) -> str:
        return f"s{self.req} = I" + super().__str__()


@dataclass(frozen=True, eq=False)
class WaitAllreduce(Instr):
    """Complete the ISmallAllreduce posted into ``req``: its combined values into ``outs``."""
    outs: tuple
    req: int
    READS, WRITES = ("req",), ("outs",)


@dataclass(frozen=True, eq=False)
class _RowsBroadcast:
    """The fields and traffic of a broadcast of ``nrows`` x ``k`` dense rows from ``root`` to the
    members of ``group`` (``src`` is None off the root): blocking (Bcast) or posted (IBcast). Not
    an instruction itself (it is no Instr, so it is not registered as one)."""
    out: int
    src: int | None
    root: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    group: int = 0
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True

    def traffic(self, where, payload=None):
        g = where.group_sizes[self.group]
        if self.src is not None:   # the root
            return Traffic(self.nrows * self.k * (g - 1), g - 1, 0, 0)
        return Traffic(0, 0, self.nrows * self.k, 1)


@dataclass(frozen=True, eq=False)
class Bcast(_RowsBroadcast, Instr):
    """out = root's dense ``src`` on every member of ``group`` (src is None on the others)."""


@dataclass(frozen=True, eq=False)
class IBcast(_RowsBroadcast, Instr):
    """Post a non-blocking broadcast of rows from ``root`` (root: ``src`` is a packed buffer) to the
    members of ``group``; completed by RecvMxM on members, by WaitSends on the root."""


@dataclass(frozen=True, eq=False)
class BcastSparse(Instr):
    """out = root's sparse ``src`` (CSR arrays packed at planning time) on every member of
    ``group``; receivers know nrows/ncols/nnz from the plan and preallocate."""
    out: int
    src: int | None      # root: slot of the packed bytes
    local: int | None    # root: slot of its own GraphBLAS matrix (no unpacking for itself)
    root: int
    nrows: int
    ncols: int
    nnz: int
    dtype: str
    group: int = 0
    READS, WRITES = ("src", "local"), ("out",)
    COLLECTIVE = True

    def traffic(self, where, payload=None):
        g = where.group_sizes[self.group]
        if self.src is not None:
            return Traffic(self.nnz * (g - 1), g - 1, 0, 0)
        return Traffic(0, 0, self.nnz, 1)


@dataclass(frozen=True, eq=False)
class Alltoall(Instr):
    """Exchange dense pieces inside ``group``: to member m this rank sends rows send_rows[m]
    (positions) x columns send_cols[m] (a (lo, hi) range) of src; from member m it receives a
    recv_shapes[m] piece. Received pieces are stacked in member order by rows or by columns
    (1D rows <-> 2D blocks)."""
    out: int
    src: int
    send_rows: tuple
    send_cols: tuple
    recv_shapes: tuple
    stack: str           # "rows" | "cols"
    dtype: str
    me: int              # this rank's index in the group
    presence: bool = False
    group: int = 0
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True

    def sent(self) -> list[int]:
        return [len(r) * (hi - lo) for r, (lo, hi) in zip(self.send_rows, self.send_cols)]

    def received(self) -> list[int]:
        return [a * b for a, b in self.recv_shapes]

    def traffic(self, where, payload=None):
        me = self.me
        sent, recv = self.sent(), self.received()
        return Traffic(sum(x for m, x in enumerate(sent) if m != me),
                       sum(1 for m, x in enumerate(sent) if m != me and x),
                       sum(x for m, x in enumerate(recv) if m != me),
                       sum(1 for m, x in enumerate(recv) if m != me and x))


@dataclass(frozen=True, eq=False)
class Redistribute(Instr):
    """out = an input value moved to this plan's layout: of ``src`` (this rank's rows, or columns,
    under the value's own distribution) the positions ``send[m]`` go to rank m, and what arrives
    lands at ``pos[global id]`` of a piece of ``nrows`` rows (columns) by ``width``. Sparse
    entries travel (global id, other index, value); what moves depends on the entries present."""
    out: int
    src: int
    axis: str            # "row" | "col"
    ids: np.ndarray      # the global ids of src's rows (columns)
    send: tuple
    pos: np.ndarray
    nrows: int
    width: int
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True
    DYNAMIC = True

    def traffic(self, where, payload=None):
        if payload is None:   # planning: every row of the value that changes owner, all of its width
            moved = sum(len(x) for m, x in enumerate(self.send) if m != where.rank)
            return Traffic(moved * self.width, sum(1 for m, x in enumerate(self.send) if m != where.rank and len(x)),
                           0, 0)
        return Traffic(*payload)


@dataclass(frozen=True, eq=False)
class TransposeRows(Instr):
    """out = this rank's rows of src transposed, src a square value distributed by rows of a dim
    whose owners are ``parts`` (every entry (i, j) travels to the owner of row j of the result,
    with one Alltoallv per array: no rank holds more than its rows). ``ids``: the global ids of
    src's rows here; ``pos``: a global id's position on its owner; out is nrows x ncols."""
    out: int
    src: int
    ids: np.ndarray
    parts: np.ndarray
    pos: np.ndarray
    nrows: int
    ncols: int
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True
    DYNAMIC = True

    def traffic(self, where, payload=None):
        return NO_TRAFFIC if payload is None else Traffic(*payload)


@dataclass(frozen=True, eq=False)
class AlltoallSparse(Instr):
    """Rows of a sparse block back to their owners inside ``group``: member m gets rows
    bounds[m]:bounds[m + 1] of src, its columns renumbered to global ids by ``cols``; out is
    this rank's nrows x ncols, every member's pieces together (their columns are disjoint, or
    their entries combined by ``monoid``). The
    entries are known when it runs (payload: the Traffic to and from the others); planning's
    estimate is ``expect`` (words sent, messages sent, words received, messages received)."""
    out: int
    src: int
    bounds: np.ndarray
    cols: np.ndarray
    nrows: int
    ncols: int
    group: int = 0
    monoid: Any = None   # entries of one position from several members (3D's layers) combined by it
    expect: tuple = (0, 0, 0, 0)
    held: int = 0        # planning's estimates of src's entries and of those arriving (own too)
    arrive: int = 0
    # C made and returned in column batches (src: a batched StackedMxM's operands): each batch's
    # global columns [lo, hi); out is its batches' pieces side by side
    batches: tuple = ()
    READS, WRITES = ("src",), ("out",)
    COLLECTIVE = True
    DYNAMIC = True

    def traffic(self, where, payload=None):
        return Traffic(*(int(x) for x in (self.expect if payload is None else payload)))
