"""Predicted scaling of GCN training on a described cluster, counted without building any plan.

For one epoch of an L-layer GCN (forward and backward SpMMs at the widths the paper's algorithms
use, f[l-1] forward and f[l] backward, and the weight gradients), per candidate and P: the words
and messages per rank, memory per rank, and the predicted time on the cluster; the chosen plan
is the fastest. Two families:

- CAGNET's four (``cagnet.py``): their schedules depend on n, nnz and the widths only;
- dspla's sparsity-aware plans, whose traffic depends on the graph: ``p2p1d`` (1D, each rank
  receives the rows its nonzeros' columns name) and ``15d_sparse`` (the 1.5D grid, inside a
  process column only the rows a block row needs move, by send sets as p2p1d's). With the graph
  at hand they are counted exactly from a random row partition (one pass over the nonzeros per
  P: distinct (receiver, column) pairs, ``analysis.comm_plan``); for a shape alone (n, nnz of an
  R-MAT graph too large to build here) from the R-MAT degree distribution, as expectations
  (a column of expected degree d is needed by a given set of rows holding a fraction x of
  all rows with probability 1 - exp(-d x)), marked ``expected``.

Words follow the paper's counting (cagnet.py): what a rank receives point-to-point, and for a
collective the buffer it holds. Messages are point-to-point messages received plus collective
steps (log2 of the group each).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from math import comb

import numpy as np
import scipy.sparse as sp

from ..analysis import comm_plan
from ..partition import partition, random_parts
from ..partition.vertex_owners import EDGE_OF, edge_owner
from . import cagnet, nodeaware
from .cluster import Cluster, Level

SPARSE_PLANS = ("p2p1d", "p2p1d_node", "15d_sparse", "vertexcut")
EDGE_METHODS = tuple(EDGE_OF)   # the edge partitions vertexcut runs on


@dataclass(frozen=True)
class Shape:
    """A graph to count on: the matrix itself (symmetric pattern), or only n and nnz (R-MAT)."""
    name: str
    n: int
    nnz: int
    A: sp.csr_array | None = None
    rmat: tuple = (0.57, 0.19, 0.19)

    @classmethod
    def of(cls, name: str, A) -> "Shape":
        A = sp.csr_array(A, dtype=np.float32)
        A = sp.csr_array(((A + A.T) != 0).astype(np.float32))   # a GCN's Â is symmetric
        return cls(name, A.shape[0], int(A.nnz), A)

    def degrees(self) -> tuple[np.ndarray, np.ndarray]:
        """(expected degree, number of vertices) per class of an R-MAT graph of this shape: a vertex
        with k one-bits among s has expected out-degree m (a+b)^(s-k) (c+d)^k (in-degree likewise with
        a+c, b+d); the n vertices sample the 2^s ids uniformly."""
        a, b, c = self.rmat
        d = 1 - a - b - c
        s = max(1, math.ceil(math.log2(self.n)))
        m = self.nnz / 2
        k = np.arange(s + 1)
        deg = m * ((a + b) ** (s - k) * (c + d) ** k + (a + c) ** (s - k) * (b + d) ** k)
        count = np.array([comb(s, int(i)) for i in k], dtype=np.float64) * self.n / 2 ** s
        return deg, count


def _expected_needed(shape: Shape, frac: float) -> float:
    """Expected number of vertices a set holding ``frac`` of the rows needs, over all vertices."""
    deg, count = shape.degrees()
    return float((count * -np.expm1(-deg * frac)).sum())


# ---------------------------------------------------------------------------- exact counts
_MEMO: dict = {}


def _memo(key, fn):
    """The pairs of one (graph, P, c, partition): counted once per command (explain asks per product)."""
    if key not in _MEMO:
        if len(_MEMO) > 64:
            _MEMO.clear()
        _MEMO[key] = fn()
    return _MEMO[key]


def p2p_pairs(A: sp.csr_array, parts: np.ndarray, P: int) -> tuple:
    """(src, dst, rows) of p2p1d's messages for a row partition: the distinct remote columns."""
    cp = comm_plan(A, parts, P)
    return cp.src.astype(np.int64), cp.dst.astype(np.int64), np.diff(cp.ptr).astype(np.int64)


def sparse15_pairs(A: sp.csr_array, parts: np.ndarray, P: int, c: int) -> tuple:
    """(src, dst, rows) of 15d_sparse's messages: block row i (the rows of ranks i*c..i*c+c-1) is
    held by process row i; process column j handles the block columns of chunk j; P(k, i mod c)
    sends P(i, j) the rows of block k that block row i's nonzeros name."""
    nb = P // c
    brow = parts // c
    i = np.repeat(brow, np.diff(A.indptr))
    col = A.indices.astype(np.int64)
    k = brow[col]
    keep = i != k
    key = np.unique(i[keep] * A.shape[0] + col[keep])
    pair = key // A.shape[0] * nb + brow[key % A.shape[0]]
    up, rows = np.unique(pair, return_counts=True)
    i, k = up // nb, up % nb
    j = _chunk_of(nb, c)[k]
    return k * c + i % c, i * c + j, rows


def _sparse15_rows(A, parts, P: int, c: int) -> np.ndarray:
    """15d_sparse's output rows per rank: rank (i, j) multiplies the rows of block row i by each
    block k of chunk j (block_rows)."""
    brow = parts // c
    k = brow[A.indices]
    rank = np.repeat(brow, np.diff(A.indptr)) * c + _chunk_of(P // c, c)[k]
    return block_rows(A, rank, k, P)


def _chunk_of(nb: int, c: int) -> np.ndarray:
    per = nb // c
    out = np.minimum(np.arange(nb) // max(per, 1), c - 1)
    return out


# ---------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class Work:
    """What is counted: the widths of the SpMMs and the sizes of the weight-gradient all-reduces.
    A GCN epoch with widths f: per layer the forward (f[l-1]) and backward (f[l]) SpMMs and an
    f[l-1] x f[l] all-reduce; one product of width K: that SpMM alone."""
    spmms: tuple
    dw: tuple

    @classmethod
    def of(cls, f) -> "Work":
        if isinstance(f, Work):
            return f
        pairs = list(zip(f[:-1], f[1:]))
        return cls(tuple(w for a, b in pairs for w in (a, b)), tuple(a * b for a, b in pairs))

    @classmethod
    def product(cls, K: int) -> "Work":
        return cls((K,), ())


def block_rows(A: sp.csr_array, rank: np.ndarray, block: np.ndarray, P: int) -> np.ndarray:
    """Per rank, the output rows its local products write: the distinct (row, block) pairs of
    its nonzeros (``rank`` and ``block`` per nonzero; a product on one block of arriving rows
    writes the rows holding entries in it)."""
    row = np.repeat(np.arange(A.shape[0], dtype=np.int64), np.diff(A.indptr))
    nblk = int(block.max()) + 1 if block.size else 1
    key = np.unique((rank.astype(np.int64) * A.shape[0] + row) * nblk + block)
    return np.bincount(key // nblk // A.shape[0], minlength=P).astype(np.float64)


def _expected_rows(shape: "Shape", row_frac: float, col_frac: float) -> float:
    """Expected rows holding entries in a block of a fraction of the rows and of the columns."""
    return row_frac * _expected_needed(shape, col_frac)


def _p2p_epoch(cluster: Cluster, P, src, dst, rows, work: Work, nnz_rank, out_rows=0.0):
    """Seconds, words and messages of a p2p plan's SpMMs (per rank arrays; ``out_rows``: the
    output rows its local products write, per unit width)."""
    t = np.zeros(P)
    words = np.zeros(P)
    msgs = np.bincount(dst, minlength=P).astype(float) * len(work.spmms)
    recv_rows = np.bincount(dst, weights=rows, minlength=P)
    for w in work.spmms:
        t += cluster.p2p_seconds(P, src, dst, rows * w) if src.size else 0.0
        words += recv_rows * w
    t += cluster.spmm_seconds(nnz_rank * sum(work.spmms), out_rows * sum(work.spmms))
    return t, words, msgs


def _allreduce(cluster, P, dims, axis, words, passes=2):
    """A ring all-reduce (2 passes) or all-gather (1) of ``words`` along a grid axis."""
    g = dims[axis]
    if g < 2:
        return 0.0
    return (passes * words * (g - 1) / g * cluster.ring_seconds_per_word(P, dims, axis)
            + cluster.group_alpha(P, dims, axis) * passes * math.ceil(math.log2(g)))


def _row_collectives(cluster, P, c, rows, counts, work: Work) -> np.ndarray:
    """15d_sparse's per-product exchanges along the process row, every SpMM of the epoch, per
    rank: the all-gather of block row i of B (``rows``: its largest) and the reduce-scatter of
    the partial C_i, point to point (each member sends each other its rows; ``counts``: the
    rows of each rank)."""
    dims = (P // c, c)
    r = np.arange(P)
    m = np.arange(c)
    src = (r[:, None] // c * c + m[None, :]).ravel()
    dst = np.repeat(r, c)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    t = np.zeros(P)
    for w in work.spmms:
        t += _allreduce(cluster, P, dims, 1, rows * w, 1)
        t += cluster.p2p_seconds(P, src, dst, np.asarray(counts, dtype=np.float64)[dst] * w)
    return t


def _dw(cluster, P, work: Work):
    return sum(_allreduce(cluster, P, (P,), 0, x) for x in work.dw)


def row_parts(A, P: int, method: str, seed: int) -> np.ndarray:
    """Rows to ranks: ``random`` here, any other method by dspla.partition (cached on disk)."""
    if method == "random" or P == 1:
        return random_parts(A.shape[0], P, seed)
    return partition(A, P, method, seed=seed, progress=False).parts


def block_row_parts(A, P: int, c: int, method: str, seed: int) -> np.ndarray:
    """15d_sparse's rows: P/c block rows by ``method``, each block's rows dealt to its c ranks."""
    blocks = row_parts(A, P // c, method, seed)
    order = np.argsort(blocks, kind="stable")
    start = np.searchsorted(blocks[order], blocks[order])
    member = np.empty_like(blocks)
    member[order] = (np.arange(blocks.size) - start) % c
    return blocks * c + member


def sparse_candidates(shape: Shape, P: int, f, cluster: Cluster, seed: int = 0,
                      method: str = "random") -> list[dict]:
    """p2p1d and 15d_sparse (c^2 | P, c <= 16) at P: exact when the graph is at hand."""
    work = Work.of(f)
    L, fsum, fmax = len(work.dw), sum(work.spmms), max(work.spmms)
    dw_words = sum(work.dw)
    nspmm = len(work.spmms)
    out = []
    cs = [c for c in (2, 4, 8, 16) if P % (c * c) == 0]
    if shape.A is not None:
        A = shape.A
        key = (id(A), A.nnz, P, method, seed)
        parts = _memo(key + (1, "parts"), lambda: row_parts(A, P, method, seed))
        nnz_rank = np.bincount(parts, weights=np.diff(A.indptr), minlength=P)
        rows_rank = np.bincount(parts, minlength=P)
        src, dst, rows = _memo(key + (1, "pairs"), lambda: p2p_pairs(A, parts, P))
        owner = np.repeat(parts, np.diff(A.indptr))
        out_rows = _memo(key + (1, "rows"), lambda: block_rows(A, owner, parts[A.indices], P))
        t, words, msgs = _p2p_epoch(cluster, P, src, dst, rows, work, nnz_rank, out_rows)
        t += _dw(cluster, P, work)
        out.append(_record("p2p1d", "exact", t, words + dw_words, msgs + L * math.ceil(math.log2(max(P, 2))),
                           (nnz_rank * 12 + (rows_rank * nspmm / 2 + np.bincount(dst, weights=rows, minlength=P)) * fmax
                            * cluster.word_bytes)))
        for c in cs:
            parts = _memo(key + (c, "parts"), lambda c=c: block_row_parts(A, P, c, method, seed))
            src, dst, rows = _memo(key + (c, "pairs"), lambda c=c, parts=parts: sparse15_pairs(A, parts, P, c))
            brow_rows = np.bincount(parts // c, minlength=P // c)[np.arange(P) // c]
            brow_nnz = np.bincount(parts // c, weights=np.diff(A.indptr), minlength=P // c)[np.arange(P) // c]
            out_rows = _memo(key + (c, "rows"), lambda c=c, parts=parts: _sparse15_rows(A, parts, P, c))
            t, words, msgs = _p2p_epoch(cluster, P, src, dst, rows, work, brow_nnz / c, out_rows)
            own = np.bincount(parts, minlength=P)
            t += _row_collectives(cluster, P, c, brow_rows.max(), own, work) + _dw(cluster, P, work)
            words += (brow_rows + (c - 1) * own) * fsum + dw_words   # the all-gather's output, the partials received
            msgs += nspmm * (math.ceil(math.log2(c)) + c - 1) + L * math.ceil(math.log2(P))
            mem = brow_nnz / c * 12 + (brow_rows * nspmm / 2 + np.bincount(dst, weights=rows, minlength=P)) * fmax * \
                cluster.word_bytes
            out.append(_record(f"15d_sparse c={c}", "exact", t, words, msgs, mem))
        return out
    # a shape: expectations over the R-MAT degree distribution, every rank alike
    n, nnz = shape.n, shape.nnz
    for c in [1] + cs:
        frac = c / P
        need = _expected_needed(shape, frac) * (1 - frac) / c     # rows a rank receives, per unit width
        pairs = (P / c - 1) / c * -math.expm1(-nnz * frac * frac)   # blocks of chunk j holding a needed row
        vol = need * cluster.word_bytes
        lv = cluster.lvl(2) if P > cluster.ranks_per_node else cluster.lvl(1)
        per_rank_inj = min(lv.bandwidth, cluster.injection / cluster.ranks_per_socket)
        t = sum(pairs * lv.alpha + vol * w / per_rank_inj for w in work.spmms)
        # rank (i, j): P/c^2 blocks of nc/P rows and c/P of the columns (p2p1d: P blocks of n/P)
        out_rows = P / (c * c) * _expected_rows(shape, c / P, c / P)
        t += cluster.spmm_seconds(nnz / P * fsum, out_rows * fsum) + _dw(cluster, P, work)
        words = need * fsum + dw_words
        msgs = pairs * nspmm + L * math.ceil(math.log2(max(P, 2)))
        mem_rows = n * c / P
        if c > 1:
            t += float(_row_collectives(cluster, P, c, mem_rows, np.full(P, n / P), work).max())
            words += (mem_rows + (c - 1) * n / P) * fsum
            msgs += nspmm * (math.ceil(math.log2(c)) + c - 1)
        mem = nnz / P * 12 + (mem_rows * nspmm / 2 + need) * fmax * cluster.word_bytes
        name = "p2p1d" if c == 1 else f"15d_sparse c={c}"
        out.append(_record(name, "expected", np.array([t]), np.array([words]), np.array([msgs]), np.array([mem])))
    return out


def vertexcut_pairs(A: sp.csr_array, parts: np.ndarray, owner: np.ndarray, P: int) -> tuple:
    """vertexcut's two rounds of messages, each (src, dst, rows): the rows of B a rank's edges
    name, from their owners; the partial rows of C it forms, to their owners."""
    n = A.shape[0]
    row = np.repeat(np.arange(n, dtype=np.int64), np.diff(A.indptr))
    col = A.indices.astype(np.int64)

    def pairs(dst_of, src_of, keep):
        key = np.unique(dst_of[keep] * n + src_of[keep])           # distinct (rank, row id)
        pair, rows = np.unique(key // n * P + parts[key % n], return_counts=True)
        return pair // P, pair % P, rows
    dst_b, src_b, rows_b = pairs(owner, col, parts[col] != owner)
    src_c, dst_c, rows_c = pairs(owner, row, parts[row] != owner)
    return (src_b, dst_b, rows_b), (src_c, dst_c, rows_c)


def vertexcut_candidate(shape: Shape, P: int, f, cluster: Cluster, method: str, seed: int = 0) -> dict:
    """vertexcut on the edge partition ``method`` (spac, hypergraph-edge), counted exactly: each
    SpMM two rounds of point-to-point messages, the products on each rank's edges, the partial
    rows received summed into its own."""
    A, work = shape.A, Work.of(f)
    key = (id(A), A.nnz, P, method, seed)
    parts = _memo(key + (1, "parts"), lambda: row_parts(A, P, method, seed))
    owner = _memo(key + (1, "owner"), lambda: edge_owner(A, P, method, 0.03, seed, parts))
    rb, rc = _memo(key + (1, "pairs"), lambda: vertexcut_pairs(A, parts, owner, P))
    nnz_rank = np.bincount(owner, minlength=P).astype(np.float64)
    partial_in = np.bincount(rc[1], weights=rc[2], minlength=P)
    out_rows = _memo(key + (1, "rows"), lambda: block_rows(A, owner, parts[A.indices], P)) + partial_in
    t, words, msgs = _p2p_epoch(cluster, P, *rb, work, nnz_rank, out_rows)
    for w in work.spmms:
        t += cluster.p2p_seconds(P, rc[0], rc[1], rc[2] * w) if rc[0].size else 0.0
    words += partial_in * sum(work.spmms) + sum(work.dw)
    msgs += np.bincount(rc[1], minlength=P) * len(work.spmms) + len(work.dw) * math.ceil(math.log2(max(P, 2)))
    t += _dw(cluster, P, work)
    held = np.bincount(rb[1], weights=rb[2], minlength=P) + np.bincount(rc[0], weights=rc[2], minlength=P)
    mem = nnz_rank * 12 + (np.bincount(parts, minlength=P) * len(work.spmms) / 2 + held) * max(work.spmms) * \
        cluster.word_bytes
    return _record(f"vertexcut {method}", "exact", t, words, msgs, mem)


def p2p1d_node_candidate(shape: Shape, P: int, f, cluster: Cluster, seed: int = 0, method: str = "random") -> dict:
    """p2p1d_node with the cluster's ranks per node, counted exactly (nodeaware.rounds): each SpMM
    three rounds of point-to-point messages (gather in the node, across, scatter), one after the
    other; the products on the blocks each rank receives."""
    A, work = shape.A, Work.of(f)
    key = (id(A), A.nnz, P, method, seed)
    parts = _memo(key + (1, "parts"), lambda: row_parts(A, P, method, seed))
    steps, owner, block = _memo(key + (cluster.ranks_per_node, "node"),
                                lambda: nodeaware.rounds(A, parts, P, cluster.ranks_per_node))
    nnz_rank = np.bincount(parts, weights=np.diff(A.indptr), minlength=P)
    t = cluster.spmm_seconds(nnz_rank * sum(work.spmms), block_rows(A, owner, block, P) * sum(work.spmms))
    for w in work.spmms:
        t = t + sum(cluster.p2p_seconds(P, s, d, rows * w) for s, d, rows in steps if s.size)
    got = sum(np.bincount(d, weights=rows, minlength=P) for _, d, rows in steps)
    msgs = sum(np.bincount(d, minlength=P) for _, d, _ in steps) * len(work.spmms)
    held = got + np.bincount(steps[0][0], weights=steps[0][2], minlength=P)   # (the stacks forwarded)
    mem = nnz_rank * 12 + (np.bincount(parts, minlength=P) * len(work.spmms) / 2 + held) * max(work.spmms) * \
        cluster.word_bytes
    return _record("p2p1d_node", "exact", t + _dw(cluster, P, work), got * sum(work.spmms) + sum(work.dw),
                   msgs + len(work.dw) * math.ceil(math.log2(max(P, 2))), mem)


def grid3d_words(n_rows: np.ndarray, K: int, grid: tuple) -> np.ndarray:
    """Words each rank receives in one 3d product, from the 1D row counts alone (as the plan's
    instructions count them): the fiber all-to-all of B, the column all-gather, the ring
    all-reduce along y, the fiber all-to-all of C."""
    X, Y, Z = grid
    P = X * Y * Z
    cuts = np.linspace(0, K, Z + 1).round().astype(int)   # the plan's column ranges (summa2d.k_ranges)
    w = np.diff(cuts)
    r = np.arange(P)
    x, y, z = r // (Y * Z), (r // Z) % Y, r % Z
    n = np.asarray(n_rows, dtype=np.int64)
    fib = n.reshape(X * Y, Z)
    out = np.zeros(P, dtype=np.int64)
    if Z > 1:
        out += (fib.sum(1)[r // Z] - n) * w[z]
    col_rows = fib.sum(1).reshape(X, Y)   # rows of ranks (x, y, ·)
    if X > 1:
        out += (col_rows.sum(0)[y] - col_rows[x, y]) * w[z]
    blk = n.reshape(X, Y * Z).sum(1)[x]
    if Y > 1:
        out += np.array([-(-2 * (Y - 1) * int(b) * int(ww) // Y) for b, ww in zip(blk, w[z])])
    if Z > 1:
        out += n * (K - w[z])
    return out


def dspla_3d(shape: Shape, P: int, f, cluster: Cluster) -> dict:
    """dspla's 3d plan (A's blocks stationary) on the grid closest to a cube, from balanced row
    counts: its words per rank (grid3d_words), its collectives as rings along the grid's axes."""
    work = Work.of(f)
    X, Y, Z = dims = cagnet.grid3(P, zmax=min(work.spmms))
    counts = np.full(P, shape.n // P) + (np.arange(P) < shape.n % P)
    words = np.zeros(P)
    t = 0.0
    pw = [cluster.ring_seconds_per_word(P, dims, ax) for ax in range(3)]
    al = [cluster.group_alpha(P, dims, ax) for ax in range(3)]
    lg = [math.ceil(math.log2(g)) if g > 1 else 0 for g in dims]
    for w in work.spmms:
        words += grid3d_words(counts, w, dims)
        wz, nr = -(-w // Z), counts.max()
        t += 2 * (nr * wz * (Z - 1) * pw[2] + al[2] * (Z - 1))                 # the fiber all-to-alls
        t += shape.n / Y * wz * (X - 1) / X * pw[0] + al[0] * lg[0]            # the column all-gather
        t += 2 * shape.n / X * wz * (Y - 1) / Y * pw[1] + 2 * al[1] * lg[1]    # the row all-reduce
        t += cluster.spmm_seconds(shape.nnz / P * w, _expected_rows(shape, 1 / X, 1 / Y) * wz)
    t += _dw(cluster, P, work)
    dw_words = sum(work.dw)
    msgs = len(work.spmms) * (2 * (Z - 1) + lg[0] + 2 * lg[1]) + len(work.dw) * math.ceil(math.log2(max(P, 2)))
    mem = shape.nnz / (X * Y) * 12 + (shape.n / Y + 2 * shape.n / X) * -(-max(work.spmms) // Z) * cluster.word_bytes
    return _record(f"3d {X}x{Y}x{Z}", "counts", np.array([t]),
                   words + dw_words, np.array([msgs]), np.array([mem]))


def _record(plan, how, t, words, msgs, mem) -> dict:
    return {"plan": plan, "family": "dspla", "count": how, "predicted_s": float(np.max(t)),
            "words_max": float(np.max(words)), "words_avg": float(np.mean(words)),
            "messages_max": float(np.max(msgs)), "memory_bytes": float(np.max(mem))}


def cagnet_candidates(shape: Shape, P: int, f, cluster: Cluster) -> list[dict]:
    out = []
    one = isinstance(f, Work) and not f.dw   # one product: its SpMM alone
    scheds = cagnet.cagnet_four(shape.n, shape.nnz, [f.spmms[0]] * 2 if one else f, P)
    for s in (cagnet.spmm_only(x) for x in scheds) if one else scheds:
        sec = cagnet.seconds(s, cluster)
        w = float(s.words())
        steps = sum(c.count * math.ceil(math.log2(s.dims[c.axis])) for c in s.colls if s.dims[c.axis] > 1)
        mem = float(s.memory_words) * cluster.word_bytes + shape.nnz / P * 4
        out.append({"plan": "CAGNET " + s.name + (f" {'x'.join(map(str, s.dims))}" if s.name == "3d" else ""),
                    "family": "cagnet",
                    "count": "formula", "predicted_s": sec["predicted_s"], "words_max": w, "words_avg": w,
                    "messages_max": float(steps), "memory_bytes": mem})
    return out


def product_candidates(shape: Shape, P: int, K: int, cluster: Cluster, seed: int = 0, method: str = "random"):
    """Every candidate for one product A @ B of width K at P, fastest first (what explain shows)."""
    cands = _candidates(shape, P, Work.product(K), cluster, seed, method, None)
    return sorted(cands, key=lambda c: c["predicted_s"])


def _candidates(sh: Shape, P: int, f, cluster: Cluster, seed: int, method: str, edge: str | None) -> list[dict]:
    cands = cagnet_candidates(sh, P, f, cluster) + sparse_candidates(sh, P, f, cluster, seed, method)
    if sh.A is not None and P > cluster.ranks_per_node:
        cands.append(p2p1d_node_candidate(sh, P, f, cluster, seed, method))
    if P >= 8:
        cands.append(dspla_3d(sh, P, f, cluster))
    if edge is not None and P > 1:
        cands.append(vertexcut_candidate(sh, P, f, cluster, edge, seed))
    return cands


def _only(c: Cluster, kind: str) -> Cluster:
    """The cluster with every cost but ``kind`` (compute | latency) removed: a candidate's time on
    it is that part of its time (the rest of the time is bandwidth, and what overlaps)."""
    big, tiny = 1e300, 1e-300
    lat = kind == "latency"
    levels = {k: Level(v.alpha if lat else tiny, big, (v.overhead or v.alpha) if lat else tiny)
              for k, v in c.levels.items()}
    rate = (big, big) if lat else (c.spmm_rate, c.spmm_row)
    return dataclasses.replace(c, levels=levels, injection=big, spmm_rate=rate[0], spmm_row=rate[1])


def scaling(shape: Shape, Ps, f, cluster: Cluster, weak: bool = False, seed: int = 0, method: str = "random",
            progress=None, edge: str | None = None) -> list[dict]:
    """One row per P: every candidate (its time split into compute, latency and the rest:
    bandwidth), the chosen one (fastest), the best of CAGNET's four and the ratio of the choice's
    predicted time to it. ``weak``: n and nnz grow with P (from the first P;
    shapes only). ``edge``: also vertexcut on this edge partition (a graph at hand only)."""
    if edge is not None and (edge not in EDGE_METHODS or shape.A is None):
        raise ValueError(f"vertexcut is counted on an edge partition ({', '.join(EDGE_METHODS)}) of a graph at "
                         f"hand, got {edge!r} for {shape.name}")
    rows = []
    for P in Ps:
        sh = shape
        if weak:
            if shape.A is not None:
                raise ValueError("weak scaling needs a shape (n, nnz), not a fixed graph")
            g = P / Ps[0]
            sh = Shape(shape.name, int(shape.n * g), int(shape.nnz * g), None, shape.rmat)
        cands = _candidates(sh, P, f, cluster, seed, method, edge)
        comp = _candidates(sh, P, f, _only(cluster, "compute"), seed, method, edge)
        lat = _candidates(sh, P, f, _only(cluster, "latency"), seed, method, edge)
        for c, k, la in zip(cands, comp, lat):
            c.update(compute_s=k["predicted_s"], latency_s=la["predicted_s"],
                     bandwidth_s=max(0.0, c["predicted_s"] - k["predicted_s"] - la["predicted_s"]))
        best = min(cands, key=lambda r: r["predicted_s"])
        four = min((r for r in cands if r["family"] == "cagnet"), key=lambda r: r["predicted_s"])
        rows.append({"P": P, "n": sh.n, "nnz": sh.nnz, "candidates": cands, "chosen": best["plan"],
                     "best_cagnet": four["plan"], "ratio": best["predicted_s"] / four["predicted_s"]})
        if progress:
            progress(P)
    return rows
