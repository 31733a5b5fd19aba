"""Point-to-point messages, and the products that consume what arrives."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import Instr, Traffic


@dataclass(frozen=True, eq=False)
class PackSparse(Instr):
    """out = the present entries of rows ``rows`` of the local piece ``src``, as one buffer: their
    count, their positions in the rows x k block, their values (the sparse analogue of Pack)."""
    out: int
    src: int
    rows: np.ndarray
    entries: int | None = None   # the entries planning expects (exact for a static operand)
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
    # the product takes the route of that case (kernels/routes.py)
    covered: bool = False
    # a sparse x sparse product (b's columns distributed too): planning's estimate of the output's
    # entries and its exact multiply-adds (plan/spgemm_size.py), which the cost model prices
    out_entries: int | None = None
    flops: int | None = None
    # a sparse vector under a complemented mask: pushed or pulled (MxM's push and count)
    push: int | None = None
    count: int | None = None
    READS, WRITES = ("a", "own", "recvs", "mask", "push", "count"), ("out",)


@dataclass(frozen=True, eq=False)
class StackRows(Instr):
    """out = [own; the rows of each posted receive, in posting order], once all have arrived: the
    rows a rank forwards (p2p1d_node), packed from there. The receives' traffic is their own;
    ``own_rows``: own's row count, known at planning (the stack copies those rows too)."""
    out: int
    own: int
    recvs: tuple
    own_rows: int = 0
    READS, WRITES = ("own", "recvs"), ("out",)


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


@dataclass(frozen=True, eq=False)
class FetchGather(Instr):
    """out = x[idx] (gather) for a vector x distributed by rows (``parts``: each row's owner,
    ``pos``: its position there) and a vector idx laid out as out is: each rank asks the owners
    of the positions its idx holds for their entries (one exchange of positions, one of values
    and their presence), so no rank holds x or idx whole. Its traffic is the positions asked of
    other ranks and the entries sent back, known when it runs; ``expect`` is planning's bound
    (every position asked elsewhere, every entry answered)."""
    out: int
    x: int
    idx: int
    parts: np.ndarray
    pos: np.ndarray
    presence: bool = True   # x may miss entries: their presence travels with the values
    expect: tuple = (0, 0, 0, 0)
    READS, WRITES = ("x", "idx"), ("out",)
    COLLECTIVE = True
    DYNAMIC = True

    def traffic(self, where, payload=None):
        return Traffic(*(int(v) for v in (self.expect if payload is None else payload)))


@dataclass(frozen=True, eq=False)
class FetchMxM(Instr):
    """out = a ⊕.⊗ b with ``a`` a row-distributed value computed at run time (a loop's carried
    value) and ``b`` a static sparse value distributed by rows (``parts``: each row's owner,
    ``pos``: its position there): the rows of b that a's present columns name are fetched from
    their owners, one owner per round (P - 1 rounds of pairwise exchanges: ids asked, entries
    sent back), each round's product accumulated into out, so a rank holds its own rows of b and
    one owner's at a time — never b whole. Its traffic is the entries fetched, known when it
    runs; ``expect`` is planning's bound (every entry of b the others hold)."""
    out: int
    a: int
    b: int
    semiring: Any
    parts: np.ndarray
    pos: np.ndarray
    mask: int | None = None
    mask_kind: str | None = None
    complement: bool = False
    expect: tuple = (0, 0, 0, 0)
    READS, WRITES = ("a", "b", "mask"), ("out",)
    COLLECTIVE = True
    DYNAMIC = True

    def traffic(self, where, payload=None):
        return Traffic(*(int(x) for x in (self.expect if payload is None else payload)))
