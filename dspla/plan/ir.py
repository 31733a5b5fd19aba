"""The plan IR: what each process does, and how data moves. The expression IR says *what* is
computed; a RankProgram says, for one rank, which local products run on which pieces and
which messages and collectives move rows between processes.

Instructions are plain frozen data over numbered slots (a rank's local values). Arrays in
instructions (send lists, local matrix pieces) are computed once at planning time. ``product``
tags an instruction with the index of the distributed product it belongs to (for stats).

Each instruction also states, for the verifier and for accounting:

- ``READS`` / ``WRITES``: the fields naming the slots it reads and writes (a field may hold a
  slot, None, or a tuple of slots);
- ``traffic(where)``: the words (matrix entries) and messages it sends and receives on the rank
  ``where`` describes. The cost model's predictions and the runtime's counters both come from
  this one method, so measured traffic equals predicted traffic by construction. Instructions
  whose traffic depends on run-time data (``DYNAMIC``) are told the payload when they run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np


class Traffic(NamedTuple):
    """What one instruction moves on one rank: words are matrix entries (a presence bitmap
    travelling with them is not counted), messages are point-to-point transfers or a rank's
    sends/receives inside a collective."""
    words_sent: int = 0
    messages_sent: int = 0
    words_received: int = 0
    messages_received: int = 0

    def __add__(self, other: "Traffic") -> "Traffic":  # type: ignore[override]
        return Traffic(*(a + b for a, b in zip(self, other)))


NO_TRAFFIC = Traffic()


class Where(NamedTuple):
    """The rank an instruction runs on, as traffic rules see it: its world rank and the size of
    every group it may use (group 0 is the world; 0 where it is not a member)."""
    rank: int
    group_sizes: tuple


@dataclass(frozen=True, eq=False)
class Instr:
    product: int | None = field(default=None, kw_only=True)
    READS = ()
    WRITES = ()
    DYNAMIC = False   # traffic depends on run-time data (the runtime passes the payload)

    @property
    def dynamic(self) -> bool:
        return self.DYNAMIC

    def traffic(self, where: Where, payload=None) -> Traffic:
        return NO_TRAFFIC

    def slots_in(self, fields) -> list[int]:
        out = []
        for name in fields:
            v = getattr(self, name)
            if isinstance(v, tuple):
                out.extend(v)
            elif v is not None:
                out.append(v)
        return out

    def reads(self) -> list[int]:
        return self.slots_in(self.READS)

    def writes(self) -> list[int]:
        return self.slots_in(self.WRITES)

    def __str__(self) -> str:
        parts = []
        for k, v in self.__dict__.items():
            if k == "product":
                continue
            parts.append(f"{k}={_short(v)}")
        tag = f"  [product {self.product}]" if self.product is not None else ""
        return f"{type(self).__name__}({', '.join(parts)}){tag}"


def _short(v) -> str:
    if isinstance(v, np.ndarray):
        return f"<{v.size} {v.dtype}>"
    if isinstance(v, tuple) and len(v) > 6:
        return f"<{len(v)} items>"
    if hasattr(v, "nvals") and hasattr(v, "nrows"):
        return f"<{v.nrows}x{v.ncols} matrix, {v.nvals} entries>"
    if hasattr(v, "op_text"):
        return v.op_text()
    return str(v)


# ---------------------------------------------------------------------------- local compute
@dataclass(frozen=True, eq=False)
class Local(Instr):
    """out = the expression op ``node`` evaluated on local pieces (reference semantics)."""
    out: int
    node: Any
    args: tuple
    READS, WRITES = ("args",), ("out",)


@dataclass(frozen=True, eq=False)
class MxM(Instr):
    """out = a ⊕.⊗ b, or out ⊕= a ⊕.⊗ b with the semiring's monoid when accumulate; with a
    ``mask`` slot (kind 'value'/'structure', maybe complemented), only entries inside it."""
    out: int
    a: int
    b: int
    semiring: Any
    accumulate: bool = False
    mask: int | None = None
    mask_kind: str | None = None
    complement: bool = False
    a_empty_rows: Any = None   # a static a's empty rows, found at planning (not at every run)
    b_covered: bool = False    # b full wherever a reads it, proved at planning (plan/facts.covers)
    label: str = ""            # the value it makes, for messages (an integer product that overflows)
    WRITES = ("out",)

    def reads(self) -> list[int]:
        return [self.a, self.b] + ([self.out] if self.accumulate else []) + \
            ([self.mask] if self.mask is not None else [])


@dataclass(frozen=True, eq=False)
class Fill(Instr):
    """out = a full nrows x k matrix of the monoid's identity (products then accumulate into it
    in place, which SuiteSparse does much faster than building a new output)."""
    out: int
    nrows: int
    k: int
    monoid: Any
    dtype: str
    WRITES = ("out",)


@dataclass(frozen=True, eq=False)
class DropRows(Instr):
    """Make ``rows`` of out missing (rows of A with no entries have no product entries)."""
    out: int
    rows: np.ndarray
    READS, WRITES = ("out",), ("out",)


@dataclass(frozen=True, eq=False)
class Pack(Instr):
    """out = rows ``rows`` of the dense local piece ``src`` as one contiguous message buffer."""
    out: int
    src: int
    rows: np.ndarray
    presence: bool = False  # carry a presence bitmap (the planner could not prove src full)
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class Unpermute(Instr):
    """out = rows of src reordered: out[order[i]] = src[i] (gathered blocks -> global order)."""
    out: int
    src: int
    order: np.ndarray
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class TakeRows(Instr):
    """out = rows ``rows`` of src (a replicated value sliced to this rank's rows)."""
    out: int
    src: int
    rows: np.ndarray
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class TakeCols(Instr):
    out: int
    src: int
    cols: np.ndarray
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class CastTo(Instr):
    """out = src cast to dtype (a product computed in one dtype whose result is another)."""
    out: int
    src: int
    dtype: str
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class Empty(Instr):
    """out = an nrows x k matrix with no entries (a partial result no stage contributes to)."""
    out: int
    nrows: int
    k: int
    dtype: str
    WRITES = ("out",)


@dataclass(frozen=True, eq=False)
class Free(Instr):
    """Drop slots that are dead from here on (keeps peak memory down)."""
    slots: tuple


# ----------------------------------------------------------------------------- messages
@dataclass(frozen=True, eq=False)
class PackSparse(Instr):
    """out = the present entries of rows ``rows`` of the local piece ``src``, as one buffer: their
    count, their positions in the rows x k block, their values (the sparse analogue of Pack)."""
    out: int
    src: int
    rows: np.ndarray
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class Send(Instr):
    """Non-blocking send of a packed buffer to ``dest``; completed by WaitSends. ``words`` is what
    it carries, or for a sparse buffer (PackSparse) the most it can carry: its traffic is then the
    entries present, known when it runs."""
    buf: int
    dest: int
    tag: int
    words: int
    dtype: str = "float64"
    presence: bool = False
    sparse: bool = False
    READS, WRITES = ("buf",), ("buf",)   # the buffer becomes a posted request
    # (sparse: ``words`` is the entries planning expects, exact when the operand is static)

    @property
    def dynamic(self) -> bool:
        return self.sparse

    def traffic(self, where, payload=None):
        # planning cannot know how many entries a sparse buffer will carry: it counts the most
        return Traffic(self.words if payload is None else payload, 1, 0, 0)


@dataclass(frozen=True, eq=False)
class Recv(Instr):
    """Post a non-blocking receive of ``nrows`` rows of width ``k`` from ``source`` into ``out``
    (sparse: of at most that many entries, as PackSparse packs them). ``deferred``: posted later,
    by the RecvMxM that completes it, when the receives before it leave room in its window."""
    out: int
    source: int
    tag: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    sparse: bool = False
    expect: int | None = None   # sparse: the entries planning expects (default: every one of the rows)
    deferred: bool = False
    WRITES = ("out",)

    @property
    def dynamic(self) -> bool:
        return self.sparse

    def traffic(self, where, payload=None):
        if payload is None:
            payload = self.nrows * self.k if self.expect is None else self.expect
        return Traffic(0, 0, payload, 1)


@dataclass(frozen=True, eq=False)
class RecvMxM(Instr):
    """As each posted receive, get or broadcast completes (any order): out ⊕= blocks[i] ⊕.⊗ rows
    (inside ``mask`` when there is one, as in MxM). Deferred receives are posted in order as the
    bytes of those in flight fall to at most ``window``; each block's rows are freed once used."""
    out: int
    recvs: tuple       # slots of posted Recv
    blocks: tuple      # slots of the matching local sparse blocks
    semiring: Any
    rows: tuple = ()   # per block: the rows of out its (row-compressed) block feeds; () = all rows
    mask: int | None = None
    mask_kind: str | None = None
    complement: bool = False
    window: int = 0    # bytes of dense receives in flight at once (deferred ones wait for room)
    READS, WRITES = ("out", "recvs", "blocks", "mask"), ("out",)


@dataclass(frozen=True, eq=False)
class StackMxM(Instr):
    """out = a ⊕.⊗ [own; the rows of each posted receive, in posting order], once all have
    arrived: one product where p2p1d would make two (own rows while messages fly, then the
    arrived ones accumulated into the result). Chosen when b has missing entries, so the
    output cannot start full for the arrived rows to accumulate into in place: there the
    second product's accumulation into a bitmap costs more than the overlap saves. ``a`` is
    the rank's row block with its columns in the same order (own, then each receive's); the
    receives are ``Recv``s of own's dtype posted at once: dense rows, or a sparse b's present
    entries (their count first), which land in the same bitmap; or, when b is full wherever a
    reads it (PageRank's r / outdeg: plan/facts.covers), values only, stacked into a full
    column."""
    out: int
    a: int
    own: int
    recvs: tuple
    semiring: Any
    mask: int | None = None
    mask_kind: str | None = None
    complement: bool = False
    a_empty_rows: Any = None   # a's empty rows (a full operand's route makes them missing afterwards)
    # ranks share a node's memory: the senders write their rows in place after own's (dense
    # values only), which alone is copied (runtime/interp/shm.py); else every part is copied
    shared: bool = False
    # b full wherever a reads it (PageRank's r / outdeg, its missing rows filled in the stack):
    # the product takes the route of that case (exec/routes.py)
    covered: bool = False
    READS, WRITES = ("a", "own", "recvs", "mask"), ("out",)


@dataclass(frozen=True, eq=False)
class SampledMxM(Instr):
    """out = (a ⊕.⊗ bᵀ) computed only at the entries of ``mask`` (its structure): the sampled
    dense-dense product (SDDMM) of row pieces, out and mask laid out like a (rows), columns
    global (``ncols``). b's rows come from this rank's piece ``own`` (global ids ``own_ids``)
    and the posted receives ``recvs`` (global ids ``ids[i]``), completed here. An entry (i, j)
    is one dot product of a's row i and b's row j, so no partial result crosses ranks.
    ``entries``: the mask's entries here by where b's row comes from (own, then each receive),
    known at planning from the mask's pattern, for the cost model."""
    out: int
    a: int
    own: int
    own_ids: np.ndarray
    recvs: tuple
    ids: tuple
    mask: int
    ncols: int
    semiring: Any
    entries: tuple
    READS, WRITES = ("a", "own", "recvs", "mask"), ("out",)


@dataclass(frozen=True, eq=False)
class WaitSends(Instr):
    bufs: tuple
    READS = ("bufs",)


@dataclass(frozen=True, eq=False)
class SendRecvRows(Instr):
    """Blocking exchange of whole dense buffers around a ring: send src (send_nrows rows) to
    dest, receive out (nrows rows) from source."""
    out: int
    src: int
    dest: int
    source: int
    nrows: int
    k: int
    dtype: str
    tag: int
    presence: bool = False
    group: int = 0
    send_nrows: int = 0
    READS, WRITES = ("src",), ("out",)

    def traffic(self, where, payload=None):
        return Traffic(self.send_nrows * self.k, 1, self.nrows * self.k, 1)


# ---------------------------------------------------------------------------- collectives
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

    def __str__(self) -> str:
        return f"s{self.req} = I" + super().__str__()


@dataclass(frozen=True, eq=False)
class WaitAllreduce(Instr):
    """Complete the ISmallAllreduce posted into ``req``: its combined values into ``outs``."""
    outs: tuple
    req: int
    READS, WRITES = ("req",), ("outs",)


@dataclass(frozen=True, eq=False)
class Bcast(Instr):
    """out = root's dense ``src`` on every member of ``group`` (src is None on the others)."""
    out: int
    src: int | None
    root: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    group: int = 0
    READS, WRITES = ("src",), ("out",)

    def traffic(self, where, payload=None):
        return _bcast_traffic(self, where)


def _bcast_traffic(i, where) -> Traffic:
    g = where.group_sizes[i.group]
    if i.src is not None:   # the root
        return Traffic(i.nrows * i.k * (g - 1), g - 1, 0, 0)
    return Traffic(0, 0, i.nrows * i.k, 1)


@dataclass(frozen=True, eq=False)
class IBcast(Instr):
    """Post a non-blocking broadcast of rows from ``root`` (root: ``src`` is a packed buffer) to the
    members of ``group``; completed by RecvMxM on members, by WaitSends on the root."""
    out: int
    src: int | None
    root: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    group: int = 0
    READS, WRITES = ("src",), ("out",)

    def traffic(self, where, payload=None):
        return _bcast_traffic(self, where)


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


# ------------------------------------------------------------------------------ one-sided
@dataclass(frozen=True, eq=False)
class WinExpose(Instr):
    """Copy the dense local piece ``src`` into window ``win`` (double-buffered by iteration) and
    make it visible to every rank's gets (sync + barrier). ``served_words/messages`` are what
    others will get from this rank (known at planning), counted as sent by it."""
    win: int
    src: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    served_words: int = 0
    served_messages: int = 0
    READS = ("src",)

    def traffic(self, where, payload=None):
        return Traffic(self.served_words, self.served_messages, 0, 0)


@dataclass(frozen=True, eq=False)
class Get(Instr):
    """Post one MPI_Rget of the row runs (starts[i], counts[i]) of ``target``'s window ``win``
    through an indexed datatype (only the needed rows, nearby ones coalesced); completed by RecvMxM."""
    out: int
    win: int
    target: int
    target_nrows: int    # rows the target exposes (its buffer is double: parity x target_nrows)
    starts: np.ndarray
    counts: np.ndarray
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    WRITES = ("out",)

    def traffic(self, where, payload=None):
        return Traffic(0, 0, self.nrows * self.k, 1)


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
    DYNAMIC = True

    def traffic(self, where, payload=None):
        return NO_TRAFFIC if payload is None else Traffic(*payload)


# ---------------------------------------------------------------------------------- loops
@dataclass(frozen=True, eq=False)
class Loop(Instr):
    """A while loop: ``carry`` slots start as ``init``; then, at most ``max_iter`` times, the
    ``cond`` instructions run and, unless ``cond_slot`` holds a true 1 x 1 value (rank 0's,
    broadcast, so every rank takes the same branch; not broadcast when ``agreed``: every rank
    computes it from the same bits), the loop ends; else the ``body`` runs and
    its ``results`` become the carried values. ``count`` gets the iterations run. Slots the
    body reads from outside the loop are computed once, before it. ``loop`` numbers the loops
    of a program (for stats)."""
    init: tuple
    carry: tuple
    cond: list
    cond_slot: int
    body: list
    results: tuple
    count: int
    max_iter: int
    loop: int = 0
    where: str = ""   # the loop's source position, for the report of a loop that hit its bound
    agreed: bool = False   # every rank computes the condition bitwise alike: no broadcast needed
    READS, WRITES = ("init",), ("carry", "count")
    DYNAMIC = True   # what it moves is its body's, times the iterations

    def __str__(self) -> str:
        head = (f"Loop {self.loop} (at most {self.max_iter} times): carry {self.carry} from {self.init}, "
                f"results {self.results}, count -> s{self.count}"
                + ("; condition agreed (no broadcast)" if self.agreed else ""))
        cond = "\n".join(f"    {i}" for i in self.cond)
        body = "\n".join(f"    {i}" for i in self.body)
        return f"{head}\n  while s{self.cond_slot} after:\n{cond}\n  do:\n{body}".replace("\n", "\n  ")

    def traffic(self, where, payload=None):
        # the condition's broadcast: root to every other rank, one word per check
        if payload is None or where.group_sizes[0] < 2 or self.agreed:
            return NO_TRAFFIC
        g, checks = where.group_sizes[0], payload
        return Traffic(checks * (g - 1), checks * (g - 1), 0, 0) if where.rank == 0 else Traffic(0, 0, checks, checks)


# ------------------------------------------------------------------------- placeholders
@dataclass(frozen=True, eq=False)
class Choice(Instr):
    """Where a distributed product goes until plan choice replaces it by the chosen candidate's
    instructions (only between the lower and choose steps of the compiler)."""


# every instruction class, for coverage checks of the tables keyed by instruction type
def walk(instrs):
    """Every instruction of a block and, recursively, of its loops' conditions and bodies (each
    loop itself included, before its blocks)."""
    for i in instrs:
        yield i
        if type(i) is Loop:
            yield from walk(i.cond)
            yield from walk(i.body)


INSTRUCTIONS = (Local, MxM, Fill, DropRows, Pack, PackSparse, Unpermute, TakeRows, TakeCols, CastTo, Empty, Free,
                Send, Recv, RecvMxM, StackMxM, SampledMxM, WaitSends, SendRecvRows, AllgatherRows, AllgatherSparse,
                Allreduce, SmallAllreduce, ISmallAllreduce, WaitAllreduce, Bcast, IBcast, BcastSparse, Alltoall,
                WinExpose, Get, Loop, Redistribute, TransposeRows)
# the instructions that meet other ranks' (the group must call them together, in the same order)
COLLECTIVES = (AllgatherRows, AllgatherSparse, Allreduce, SmallAllreduce, ISmallAllreduce, Bcast, IBcast, BcastSparse,
               Alltoall, WinExpose, Redistribute, TransposeRows)


@dataclass
class RankProgram:
    """Everything one rank runs. ``consts`` preload slots with planning-time pieces; ``inputs``
    and ``outputs`` map program names to slots and their layouts; ``splits`` are the colour of
    this rank in each sub-communicator the program uses (group g+1 is splits[g]; group 0 is
    the world); ``windows`` lists (nrows, row_bytes) of each one-sided window this rank exposes
    (every rank creates the same windows, in order, at set-up)."""
    rank: int
    P: int
    instrs: list
    n_slots: int
    consts: dict
    inputs: dict          # name -> slot
    outputs: dict         # name -> (slot, layout)
    splits: list = field(default_factory=list)
    windows: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    setup: list = field(default_factory=list)   # run once, before the first run: deferred static values
    products: dict = field(default_factory=dict)   # product index -> its expression, for messages

    def group_sizes(self, all_splits: list | None = None) -> tuple:
        """The size of each group this rank may use; needs every rank's colours (``all_splits``:
        per group, the colour of each rank), which only planning has. The runtime reads the
        sizes off its communicators instead."""
        sizes = [self.P]
        for colors in all_splits or []:
            c = colors[self.rank]
            sizes.append(sum(1 for x in colors if x == c) if c is not None else 0)
        return tuple(sizes)

    def data_dependent(self) -> set:
        """The products whose traffic on this rank depends on the data (a sparse operand's messages
        carry only its present entries): their planned words are the most they can move, not
        what they will move (loop bodies and conditions included)."""
        return {i.product for i in (*walk(self.setup), *walk(self.instrs))
                if type(i) is not Loop and i.product is not None and i.dynamic}

    def loop_words(self, where: Where) -> dict:
        """loop id -> (words the products send, words sent outside products, exact) on this rank
        in one iteration: the condition checked once, the body once, the loop's broadcast of the
        condition. Outside products: scalar allreduces, redistributions, the broadcast. A sparse
        operand's messages count their most (exact False), as its product's do; a loop nested in
        the body is counted apart, for its own iterations."""
        out: dict = {}

        def walk(instrs):
            for i in instrs:
                if type(i) is not Loop:
                    continue
                prod = other = 0
                exact = True
                for j in (*i.cond, *i.body):
                    if type(j) is Loop:
                        continue
                    w = j.traffic(where).words_sent
                    exact = exact and not j.dynamic
                    if j.product is None:
                        other += w
                    else:
                        prod += w
                out[i.loop] = (prod, other + i.traffic(where, 1).words_sent, exact)
                walk(i.cond)
                walk(i.body)
        walk(self.instrs)
        return out

    def __str__(self) -> str:
        lines = [f"rank {self.rank} of {self.P}: {len(self.instrs)} instructions, {len(self.consts)} planned pieces"]
        for name, slot in self.inputs.items():
            lines.append(f"  s{slot} <- input {name}")
        if self.setup:
            lines.append("  setup (first run only):")
            lines += [f"    {i}" for i in self.setup]
        for i in self.instrs:
            lines.append(f"  {i}")
        for name, (slot, layout) in self.outputs.items():
            lines.append(f"  output {name} <- s{slot} ({layout})")
        return "\n".join(lines)
