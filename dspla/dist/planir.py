"""The plan IR: what each process does, and how data moves. The expression IR says *what* is
computed; a RankProgram says, for one rank, which local products run on which pieces and
which messages and collectives move rows between processes.

Instructions are plain frozen data over numbered slots (a rank's local values). Arrays in
instructions (send lists, local matrix pieces) are computed once at planning time. ``product``
tags an instruction with the index of the distributed product it belongs to (for stats).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class Instr:
    product: int | None = field(default=None, kw_only=True)

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


@dataclass(frozen=True, eq=False)
class MxM(Instr):
    """out = a ⊕.⊗ b, or out ⊕= a ⊕.⊗ b with the semiring's monoid when accumulate."""
    out: int
    a: int
    b: int
    semiring: Any
    accumulate: bool = False


@dataclass(frozen=True, eq=False)
class Fill(Instr):
    """out = a full nrows x k matrix of the monoid's identity (products then accumulate into it
    in place, which SuiteSparse does much faster than building a new output)."""
    out: int
    nrows: int
    k: int
    monoid: Any
    dtype: str


@dataclass(frozen=True, eq=False)
class DropRows(Instr):
    """Make ``rows`` of out missing (rows of A with no entries have no product entries)."""
    out: int
    rows: np.ndarray


@dataclass(frozen=True, eq=False)
class Pack(Instr):
    """out = rows ``rows`` of the dense local piece ``src`` as one contiguous message buffer."""
    out: int
    src: int
    rows: np.ndarray
    presence: bool = False  # carry a presence bitmap (the planner could not prove src full)


@dataclass(frozen=True, eq=False)
class Unpermute(Instr):
    """out = rows of src reordered: out[order[i]] = src[i] (gathered blocks -> global order)."""
    out: int
    src: int
    order: np.ndarray


@dataclass(frozen=True, eq=False)
class TakeRows(Instr):
    """out = rows ``rows`` of src (a replicated value sliced to this rank's rows)."""
    out: int
    src: int
    rows: np.ndarray


@dataclass(frozen=True, eq=False)
class TakeCols(Instr):
    out: int
    src: int
    cols: np.ndarray


# ----------------------------------------------------------------------------- messages
@dataclass(frozen=True, eq=False)
class Send(Instr):
    """Non-blocking send of a packed buffer to ``dest``; completed by WaitSends."""
    buf: int
    dest: int
    tag: int
    words: int


@dataclass(frozen=True, eq=False)
class Recv(Instr):
    """Post a non-blocking receive of ``nrows`` rows of width ``k`` from ``source`` into ``out``."""
    out: int
    source: int
    tag: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False


@dataclass(frozen=True, eq=False)
class RecvMxM(Instr):
    """As each posted receive, get or broadcast completes (any order): out ⊕= blocks[i] ⊕.⊗ rows."""
    out: int
    recvs: tuple       # slots of posted Recv
    blocks: tuple      # slots of the matching local sparse blocks
    semiring: Any
    rows: tuple = ()   # per block: the rows of out its (row-compressed) block feeds; () = all rows


@dataclass(frozen=True, eq=False)
class WaitSends(Instr):
    bufs: tuple


# ---------------------------------------------------------------------------- collectives
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


@dataclass(frozen=True, eq=False)
class AllgatherSparse(Instr):
    """out = every rank's sparse piece stacked by rows (pieces of ``nrows`` rows each) or
    by columns; used to redistribute values whose layout a consumer cannot take."""
    out: int
    src: int
    offsets: np.ndarray  # where each rank's piece starts, in global (original) indexing order
    index: np.ndarray    # global index of each stacked row/column (original ids)
    axis: str            # "rows" | "cols"
    shape: tuple


@dataclass(frozen=True, eq=False)
class Allreduce(Instr):
    """out = ⊕ over ranks of ``src`` (missing entries take no part; present where any is)."""
    out: int
    src: int
    monoid: Any
    group: int = 0
    entries: int = 0        # size of src when known at planning (for the cost model)
    presence: bool = True   # False: src is proven full, only values travel


@dataclass(frozen=True, eq=False)
class Bcast(Instr):
    """out = root's dense ``src`` on every member of ``group``."""
    out: int
    src: int
    root: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    group: int = 0


@dataclass(frozen=True, eq=False)
class SendRecvRows(Instr):
    """Blocking exchange of whole dense buffers around a ring: send src to dest, receive out from source."""
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


@dataclass(frozen=True, eq=False)
class Empty(Instr):
    """out = an nrows x k matrix with no entries (a partial result no stage contributes to)."""
    out: int
    nrows: int
    k: int
    dtype: str


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


@dataclass(frozen=True, eq=False)
class CastTo(Instr):
    """out = src cast to dtype (a product computed in one dtype whose result is another)."""
    out: int
    src: int
    dtype: str


@dataclass(frozen=True, eq=False)
class Free(Instr):
    """Drop slots that are dead from here on (keeps peak memory down)."""
    slots: tuple


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

    def __str__(self) -> str:
        lines = [f"rank {self.rank} of {self.P}: {len(self.instrs)} instructions, {len(self.consts)} planned pieces"]
        for name, slot in self.inputs.items():
            lines.append(f"  s{slot} <- input {name}")
        for i in self.instrs:
            lines.append(f"  {i}")
        for name, (slot, layout) in self.outputs.items():
            lines.append(f"  output {name} <- s{slot} ({layout})")
        return "\n".join(lines)
