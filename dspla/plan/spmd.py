"""SPMD planning: every rank plans its own program from its own rows of the graph.

When the graph comes sharded (``dspla.load_shards``: rows of A on their owners, the ownership
map on every rank), no process holds it whole, so the planning steps run on every rank, each
for itself, with small collectives where ranks must agree (as PETSc builds a VecScatter):

- static-eval: the static values are this rank's pieces: of the sharded inputs, of identities,
  and of what is derived from them (Â = D^-1/2 (A+I) D^-1/2, degree vectors, Aᵀ), computed by
  a small plan of their own, lowered by the same rules and run distributed before planning
  (compile.py); a transpose of the graph moves its entries by Alltoallv (TransposeRows);
- partition: the shards' ownership is adopted;
- facts: each rank proves facts of its pieces; they are combined with one allgather;
- lower: instructions for this rank only; a product's send lists come from its local column
  ids and the ownership map, exchanged with one Alltoall of counts and one Alltoallv of row
  ids (``exchange``);
- choose: each rank counts its own candidates' instructions; one allgather of those counts
  gives every rank the same inputs to the cost model, hence the same choice;
- verify-plan: one allgather of every rank's (peer, tag, size) message list checks that every
  send is matched by a receive.

What cannot be planned this way yet (``why_not``) is planned on rank 0 as before, and explain
and the stats say so with the reason: a partition other than the shards', a graph not passed
sharded, a dim the shards do not partition, an explicitly requested plan without an SPMD
lowering.
"""
from __future__ import annotations

import graphblas as gb
import numpy as np

from ..errors import PlanError
from ..instr import Loop, Recv, Send
from ..instr.layout import canonical
from ..ir import Node, Op
from ..ir.types import concrete
from ..kernels.gbops import occupied
from ..ops.define.facts import sized, sizes_known
from .facts import FACTS, Facts, full_rows, of_matrix
from .options import forced_names
from .static import classify, is_static_leaf


def why_not(order: list[Node], given: dict, P: int, opt, capable: list[str]) -> str | None:
    """Why this program cannot be planned SPMD from the distributed inputs ``given`` (name ->
    Dist), or None when it can. ``order``: the sized program's nodes; ``capable``: the plans
    with an SPMD lowering."""
    for name in sorted(forced_names(opt.plan) - set(capable)):
        return f"plan {name} has no SPMD lowering yet (SPMD: {', '.join(capable)})"
    if opt.parts is not None:
        return "a partition file was given: the graph is re-partitioned on rank 0 instead of using the shards' owners"
    dims = adopted(order, given, P)
    for n in order:
        if n.op is Op.INPUT and is_static_leaf(n):
            d = given.get(n.attr("name"))
            if d is None or d.kind != "row" or d.part.P != P:
                return f"the graph {n.attr('name')!r} was not passed sharded by rows (dspla.load_shards)"
        # (a literal size, as full(x, v) makes of a 1 x 1 x, is not partitioned: leaves() builds it)
        if n.op is Op.IDENTITY and isinstance(n.type.shape[0], str) and n.type.shape[0] not in dims:
            return f"dim {n.type.shape[0]!r} of {n.op_text()} is not the shards' partitioned dim"
    return None


def adopted(order: list[Node], given: dict, P: int) -> dict:
    """dim symbol -> the owners of a value passed distributed on it (the shards' ownership map),
    as the partition step adopts them."""
    dims: dict = {}
    for n in order:
        d = given.get(n.attr("name")) if n.op is Op.INPUT else None
        if d is not None and d.kind in ("row", "col") and d.part.P == P:
            sym = n.type.shape[0 if d.kind == "row" else 1]
            if isinstance(sym, str):
                dims.setdefault(sym, d.part)
    return dims


def leaves(order: list[Node], local: dict, dims: dict, me: int, sizes: dict) -> dict:
    """id -> this rank's piece of every static leaf: its rows of a sharded input, of an identity
    (whole on every rank when its size is not a partitioned dim)."""
    out = {}
    for n in order:
        if n.op is Op.INPUT and is_static_leaf(n):
            out[id(n)] = local[n.attr("name")]
        elif n.op is Op.IDENTITY and n.type.shape[0] not in dims:   # (eye(1), or a dim no value partitions)
            k = concrete(n.type.shape[0], sizes, "eye")
            out[id(n)] = gb.Matrix.from_coo(np.arange(k), np.arange(k), np.ones(k, n.type.dtype.np), nrows=k,
                                            ncols=k, dtype=n.type.dtype.gb)
        elif n.op is Op.IDENTITY:
            d = dims[n.type.shape[0]]
            rows = d.owned[me]
            out[id(n)] = gb.Matrix.from_coo(np.arange(rows.size), rows, np.ones(rows.size, n.type.dtype.np),
                                            nrows=rows.size, ncols=d.size, dtype=n.type.dtype.gb)
    return out


def derived(order: list[Node], outputs) -> tuple[set, set, list]:
    """(static ids, deferred ids, the derived static values the plan reads, in order): what a
    small distributed plan computes before planning (compile.py)."""
    st, needed, deferred = classify(order, outputs)
    return st, deferred, [n for n in order if id(n) in needed and not is_static_leaf(n)]


def prove(order: list[Node], static: dict, comm, dims: dict, sizes: dict | None = None) -> dict:
    """Facts of the program, those of the static pieces combined over ranks with one allgather:
    'full' and 'every row has an entry' hold of a row-distributed value when they hold of every
    rank's rows; 'every column has one' when the ranks' occupied columns together cover them
    (and the other way round for a column-distributed value; a replicated one is whole here)."""
    mine = []
    for n in order:
        if id(n) not in static:
            continue
        M, lay = static[id(n)], canonical(n.type, dims)
        f = of_matrix(M)
        across = {"row": "cols", "col": "rows"}.get(lay.kind)   # the axis the ranks' pieces share
        # (a rank holding no rows is vacuously 'full' but covers no column: it adds nothing)
        empty = M.nrows == 0 or M.ncols == 0
        union = np.zeros(0, np.int64) if across is not None and empty else \
            None if across is None or getattr(f, across) else occupied(M, across).to_coo()[0]
        mine.append((f.full, f.rows, f.cols, across, union, M.ncols if across == "cols" else M.nrows))
    every = comm.allgather(mine) if comm.size > 1 else [mine]
    combined = []
    for per in zip(*every):
        across, size = per[0][3], per[0][5]
        full, rows, cols = (all(x[k] for x in per) for k in range(3))
        if across is None:
            full, rows, cols = per[0][:3]
        elif not (rows if across == "rows" else cols):   # some rank's piece misses some: the union decides
            seen = np.zeros(size, dtype=bool)
            for x in per:
                seen[x[4] if x[4] is not None else slice(None)] = True
            rows, cols = (seen.all(), cols) if across == "rows" else (rows, seen.all())
        combined.append(Facts(full, rows, cols))
    it = iter(combined)
    f: dict[int, Facts] = {}
    with sizes_known(sizes):
        for n in order:
            if id(n) in static:
                f[id(n)] = fn = next(it)
                fn.over = frozenset() if fn.full else frozenset({id(n)})   # (covered() reads the pieces)
            else:
                f[id(n)] = FACTS[n.op](n, [f[id(x)] for x in n.args])
            if isinstance(f[id(n)], Facts):
                f[id(n)] = sized(f[id(n)], n, sizes)
    return f


def covered(comm, S, cols, me: int, bounds: list) -> bool:
    """facts.covers over the ranks: every column of every rank's rows S of the static operand
    (global column ids) is a row full in each bound, of which every rank holds its own rows
    (``cols``: the ownership of those rows). Each rank asks the owners about the columns it
    reads (one exchange, as the send lists are made) and answers for its own rows; one
    allgather makes the answer everyone's."""
    need = occupied(S, "cols").to_coo(values=False)[0].astype(np.int64)
    owner = cols.parts[need]
    order = np.argsort(owner, kind="stable")
    need, owner = need[order], owner[order]
    edges = np.searchsorted(owner, np.arange(cols.P + 1))
    asked = exchange(comm, {q: need[edges[q]:edges[q + 1]] for q in range(cols.P) if edges[q + 1] > edges[q]})
    mine = np.concatenate([np.zeros(0, np.int64)] + list(asked.values()))
    ok = True
    for Z in bounds:
        if Z.nrows != cols.counts[me]:
            ok = False
            break
        full = np.zeros(Z.nrows, dtype=bool)
        full[full_rows(Z).to_coo(values=False)[0]] = True
        ok = ok and bool(full[cols.pos[mine]].all())
    return all(comm.allgather(ok))


def exchange(comm, want: dict) -> dict:
    """The send lists of a point-to-point exchange: ``want`` maps each owner q to the ids this
    rank needs from it (ascending); returns, for each rank q that needs some of this rank's, the
    ids it needs (ascending). One Alltoall of counts, one Alltoallv of ids."""
    P = comm.size
    counts = np.zeros(P, dtype=np.int64)
    for q, ids in want.items():
        counts[q] = len(ids)
    theirs = np.zeros(P, dtype=np.int64)
    comm.alltoallv(counts, np.ones(P, dtype=np.int64), theirs, np.ones(P, dtype=np.int64))
    send = np.concatenate([np.asarray(want[q], dtype=np.int64) if counts[q] else np.zeros(0, np.int64)
                           for q in range(P)])
    got = np.zeros(int(theirs.sum()), dtype=np.int64)
    comm.alltoallv(send, counts, got, theirs)
    bounds = np.r_[0, np.cumsum(theirs)]
    return {q: got[bounds[q]:bounds[q + 1]] for q in range(P) if theirs[q]}


def gathered(src: np.ndarray, order: np.ndarray, dtype) -> np.ndarray:
    """src[order] as ``dtype``, gathered in chunks (no full-size temporary of src's dtype)."""
    out = np.empty(order.size, dtype=dtype)
    step = 1 << 22
    for lo in range(0, order.size, step):
        out[lo:lo + step] = src[order[lo:lo + step]]
    return out


def route(comm, A_r, ids: np.ndarray, dest: np.ndarray, per_entry: bool = False) -> tuple:
    """Every entry of this rank's rows (CSR ``A_r``: global row ids ``ids``, global columns) to
    the rank ``dest[column]`` (``per_entry``: ``dest[k]`` for the k-th stored entry): one
    Alltoall of counts, one Alltoallv per array. Returns the entries received (global rows,
    global columns, values), sources in rank order, each source's in its row order. Row and
    column ids travel as int32 when they fit (one array at a time, each freed once sent: a
    rank's peak is its rows plus what it receives)."""
    P = comm.size
    small = max(int(ids.max(initial=0)) + 1, A_r.shape[1]) < np.iinfo(np.int32).max
    idt = np.int32 if small else np.int64
    to = (dest if per_entry else dest[A_r.indices]).astype(np.uint16 if P < (1 << 16) else np.int64)
    order = np.argsort(to, kind="stable")   # 16-bit keys: numpy's radix sort
    counts = np.bincount(to, minlength=P).astype(np.int64)
    del to
    theirs = np.zeros(P, dtype=np.int64)
    comm.alltoallv(counts, np.ones(P, dtype=np.int64), theirs, np.ones(P, dtype=np.int64))
    out = []
    for which in ("row", "col", "data"):
        if which == "row":   # each entry's row id
            src = np.repeat(ids.astype(idt, copy=False), np.diff(A_r.indptr))
        else:
            src = A_r.indices if which == "col" else A_r.data
        x = gathered(src, order, idt if which != "data" else src.dtype)
        del src
        got = np.empty(int(theirs.sum()), dtype=x.dtype)
        comm.alltoallv(x, counts, got, theirs)
        del x
        out.append(got)
    return tuple(out)


def verify(program, comm) -> None:
    """Every send of every rank is matched by a receive of the same size and dtype on its
    destination, with the same tag (one allgather of the message lists)."""
    def messages(instrs, out):
        for i in instrs:
            if type(i) is Loop:
                messages(i.cond, out)
                messages(i.body, out)
            elif type(i) is Send:
                out.append(("send", comm.rank, i.dest, i.tag, i.words, i.dtype, i.sparse))
            elif type(i) is Recv:
                out.append(("recv", i.source, comm.rank, i.tag, i.expect if i.sparse and i.expect is not None
                            else i.nrows * i.k, i.dtype, i.sparse))
        return out
    mine = messages(program.setup, []) + messages(program.instrs, [])
    every = comm.allgather(mine) if comm.size > 1 else [mine]
    sends = sorted(m[1:] for per in every for m in per if m[0] == "send")
    recvs = sorted(m[1:] for per in every for m in per if m[0] == "recv")
    if sends != recvs:
        extra = sorted(set(sends) ^ set(recvs))[:3]
        raise PlanError(f"SPMD plan: sends and receives do not match across ranks (e.g. {extra})")


__all__ = ["adopted", "derived", "exchange", "leaves", "prove", "route", "verify", "why_not"]
