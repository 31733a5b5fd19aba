"""The four algorithms of "Reducing Communication in Graph Neural Network Training" (Tripathy,
Yelick, Buluç; SC'20), section IV, as per-rank schedules of collectives for one epoch of an
L-layer GCN (forward and backward), so that their words, latency and time can be counted for any
P without building a plan.

Each layer l (widths f_in = f[l-1], f_out = f[l]) is the paper's four equations: the forward
SpMM (eq. 1), the activation's all-gather when it is not element-wise (eq. 2; 2D and 3D), the
backward SpMM (eq. 3) and the weight gradient (eq. 4). Words follow the paper's counting: a
collective on a buffer of m words costs each member m (a broadcast: the pipelined ring it
assumes, root included; an all-reduce or reduce-scatter: its input buffer; an all-gather: its
output), and a sparse block costs one word per nonzero. Sizes are exact fractions (n, nnz and
the widths divided as the paper divides them), so the totals can be compared with its formulas.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

KINDS = ("bcast", "allreduce", "reduce_scatter", "allgather")


@dataclass(frozen=True)
class Coll:
    """``count`` collectives of one kind in sequence, every group along grid ``axis`` at once."""
    kind: str
    axis: int
    words: Fraction        # per member and collective, the paper's counting
    count: int = 1
    eq: str = ""           # "fwd", "softmax", "bwd", "dW"
    sparse: bool = False   # moves the sparse matrix
    partial: bool = False  # the product with W (not part of the SpMM itself)

    @property
    def passes(self) -> int:
        """Latency passes: an all-reduce is a reduce-scatter and an all-gather (2 log2 g steps, the
        latency that goes with its 2 (g-1)/g words a member sends)."""
        return 2 if self.kind == "allreduce" else 1

    def ring_words(self, g: int) -> float:
        """Words a member sends in the ring algorithm for it (a pipelined broadcast forwards all)."""
        w = float(self.words)
        if g < 2:
            return 0.0
        return w if self.kind == "bcast" else (2 * w if self.kind == "allreduce" else w) * (g - 1) / g


@dataclass(frozen=True)
class Schedule:
    name: str
    dims: tuple             # the process grid, row-major
    colls: tuple
    spmm_per_rank: Fraction  # nonzeros x columns of local SpMM per rank per epoch
    memory_words: Fraction   # per rank (the paper's memory formulas)
    rows_per_rank: Fraction = Fraction(0)  # output rows x columns of the SpMMs' stages (a dense
    # running sum per stage, as cuSPARSE's SpMM with beta = 1 writes it: every row of the block)

    @property
    def P(self) -> int:
        return math.prod(self.dims)

    def words(self, eqs=None) -> Fraction:
        return sum((c.count * c.words for c in self.colls if eqs is None or c.eq in eqs), Fraction(0))

    def collectives(self) -> int:
        return sum(c.count for c in self.colls)


def _widths(f) -> list:
    return [(Fraction(f[i]), Fraction(f[i + 1])) for i in range(len(f) - 1)]


def one_d(n, nnz, f, P) -> Schedule:
    """§IV-A, Algorithm 1: H broadcast block by block; dW all-reduced."""
    n, nnz = Fraction(n), Fraction(nnz)
    out = []
    for a, b in _widths(f):
        out += [Coll("bcast", 0, n / P * a, P, "fwd"), Coll("bcast", 0, n / P * b, P, "bwd"),
                Coll("allreduce", 0, a * b, 1, "dW")]
    spmm = nnz / P * sum(a + b for a, b in _widths(f))
    rows = n * sum(a + b for a, b in _widths(f))   # P stages of n/P rows
    return Schedule("1d", (P,), tuple(out), spmm, nnz / P + n * sum(f) / P, rows)


def one_five_d(n, nnz, f, P, c) -> Schedule:
    """§IV-B, Algorithm 2: a P/c x c grid; block rows replicated c-fold; P/c^2 broadcasts down
    each process column (axis 0), an all-reduce along the process row (axis 1)."""
    if P % (c * c):
        raise ValueError(f"1.5D needs c^2 to divide P (P={P}, c={c})")
    n, nnz = Fraction(n), Fraction(nnz)
    q, blk = P // (c * c), n * c / P
    out = []
    for a, b in _widths(f):
        for w, eq in ((a, "fwd"), (b, "bwd")):
            out += [Coll("bcast", 0, blk * w, q, eq), Coll("allreduce", 1, blk * w, 1, eq)]
        out.append(Coll("allreduce", 0, a * b, 1, "dW"))
    spmm = nnz / P * sum(a + b for a, b in _widths(f))
    rows = q * blk * sum(a + b for a, b in _widths(f))   # P/c^2 stages of nc/P rows
    return Schedule(f"1.5d c={c}", (P // c, c), tuple(out), spmm, len(f[1:]) * (nnz + n * max(f)) * c / P, rows)


def two_d(n, nnz, f, P) -> Schedule:
    """§IV-C, Algorithm 3: a sqrt(P) x sqrt(P) grid; SUMMA moves A along rows (axis 1) and H down
    columns (axis 0); the partial SUMMA with W moves T along rows."""
    s = math.isqrt(P)
    if s * s != P:
        raise ValueError(f"2D needs a square P (got {P})")
    return _split(n, nnz, f, (s, s, 1), "2d")


def three_d(n, nnz, f, P, dims=None) -> Schedule:
    """§IV-D, Split-3D-SpMM on an X x Y x Z grid (a cube by default; any factorisation, as Plexus
    uses): each layer z of the fiber a SUMMA over its slice of the inner dimension, then a
    reduce-scatter along the fiber (axis 2); the partial product with W likewise."""
    if dims is None:
        q = round(P ** (1 / 3))
        if q ** 3 != P:
            raise ValueError(f"a cube grid needs P = q^3 (got {P}); pass dims=(X, Y, Z)")
        dims = (q, q, q)
    if math.prod(dims) != P:
        raise ValueError(f"grid {dims} does not have P = {P} ranks")
    return _split(n, nnz, f, tuple(dims), "3d")


def _split(n, nnz, f, dims, name) -> Schedule:
    """2D (Z = 1) and 3D: per stage a rank receives A's piece (nnz/(XZT)) and H's piece; the
    paper's counts: nnz/(XZ) and nf/(YZ) per SpMM, the fiber reduce-scatter nf/(XY)."""
    X, Y, Z = dims
    n, nnz = Fraction(n), Fraction(nnz)
    T = math.lcm(X, Y)
    P = X * Y * Z
    three = Z > 1
    out = []
    nl = len(f) - 1

    def spmm(w, eq):
        c = [Coll("bcast", 1, nnz / (X * Z * T), T, eq, sparse=True), Coll("bcast", 0, n * w / (Z * T * Y), T, eq)]
        if three:
            c.append(Coll("reduce_scatter", 2, n * w / (X * Y), 1, eq))
        return c

    def partial(w, eq):   # the product with the replicated W: T's pieces along rows (and the fiber)
        c = [Coll("bcast", 1, n * w / (Z * T * Y) if three else n * w / (X * T), T, eq, partial=True)]
        if three:
            c.append(Coll("reduce_scatter", 2, n * w / (X * Y), 1, eq, partial=True))
        return c

    for a, b in _widths(f):
        out += spmm(a, "fwd") + partial(a, "fwd")
        out.append(Coll("allgather", 1, n * b / (X * Y) if three else n * b / X, 1, "softmax"))
        out += spmm(b, "bwd") + partial(b, "bwd")
        out.append(Coll("allgather", 1, n * a / (X * Y) if three else n * a / X, 1, "bwd"))
        if three:   # 3D dense SUMMA on H and AG (eq. 4): 2nf/P^(2/3), then Y all-gathered
            out += [Coll("bcast", 0, n * a / (Z * T * Y), T, "dW"), Coll("bcast", 1, n * b / (Z * T * Y), T, "dW")]
        else:
            out += [Coll("bcast", 0, n * a / (X * T), T, "dW"), Coll("bcast", 1, n * b / (X * T), T, "dW")]
        out.append(Coll("allgather", 0, a * b, 1, "dW"))
    spmm_work = nnz / P * sum(a + b for a, b in _widths(f))
    fmax = max(f)
    mem = nnz / P + n * sum(f) / P + (n * fmax / (X * Y) if three else 0) + nl * 0
    rows = T * n / X * sum(a + b for a, b in _widths(f)) / Y   # T stages of an n/X x f/Y running sum
    return Schedule(name, dims if three else (X, Y), tuple(out), spmm_work, mem, rows)


def spmm_only(s: Schedule) -> Schedule:
    """One SpMM A @ H alone, from a one-layer schedule (f = [K, K]): its forward SpMM without
    the product with W, the backward pass or the weight gradient."""
    colls = tuple(c for c in s.colls if c.eq == "fwd" and not c.partial)
    return Schedule(s.name, s.dims, colls, s.spmm_per_rank / 2, s.memory_words, s.rows_per_rank / 2)


def grid3(P: int, zmax: int | None = None) -> tuple:
    """The X x Y x Z factorisation of P closest to a cube, with Z <= zmax when given (the 3d
    plan splits the K columns Z ways)."""
    best = None
    for x in range(1, P + 1):
        if P % x:
            continue
        for y in range(1, P // x + 1):
            if (P // x) % y:
                continue
            z = P // x // y
            if zmax is not None and z > zmax:
                continue
            key = (max(x, y, z) - min(x, y, z), -z, -y)
            if best is None or key < best[0]:
                best = (key, (x, y, z))
    return best[1] if best else (1, 1, P)


def cagnet_four(n, nnz, f, P) -> list:
    """The schedules of the four algorithms that apply at P (1.5D for every c with c^2 | P, c <= 16;
    2D on square P; 3D on the grid closest to a cube)."""
    out = [one_d(n, nnz, f, P)]
    out += [one_five_d(n, nnz, f, P, c) for c in (2, 4, 8, 16) if P % (c * c) == 0]
    s = math.isqrt(P)
    if s * s == P and P > 1:
        out.append(two_d(n, nnz, f, P))
    if P >= 8:
        out.append(three_d(n, nnz, f, P, grid3(P)))
    return out


def seconds(s: Schedule, cluster) -> dict:
    """Predicted seconds of one epoch on ``cluster``: every collective as rings along its axis,
    node-aware (cluster.ring_seconds_per_word), latency per step x log2 of its group (twice for an
    all-reduce, as dspla's plans are charged: scaling._allreduce), plus the
    local SpMM at the cluster's rates (per nonzero and per output row of each stage)."""
    P, dims = s.P, s.dims
    per_word = {ax: cluster.ring_seconds_per_word(P, dims, ax) for ax in range(len(dims))}
    alpha = {ax: cluster.group_alpha(P, dims, ax) for ax in range(len(dims))}
    bw = lat = 0.0
    for c in s.colls:
        g = dims[c.axis]
        if g < 2:
            continue
        bw += c.count * c.ring_words(g) * per_word[c.axis]
        lat += c.count * alpha[c.axis] * math.ceil(math.log2(g)) * c.passes
    comp = cluster.spmm_seconds(float(s.spmm_per_rank), float(s.rows_per_rank))
    return {"comm_s": bw, "latency_s": lat, "compute_s": comp, "predicted_s": bw + lat + comp}
