"""Lowering one sparse x dense product into its candidate plans.

Each applicable plan (plans/) lowers into its own ProductContext: per-rank instruction buffers,
planning-time pieces, sub-communicators and windows numbered locally. The product's place in
every rank's program is a Choice placeholder; the choose step (choose.py) costs the candidates
with the cost model and splices the chosen one in. With a plan asked for by name (``--plan
NAME``, or per product ``--plan T=NAME``) only that plan is lowered; one that cannot run the
product is an error naming the reason, never silently replaced.
"""
from __future__ import annotations

import contextlib
from types import SimpleNamespace

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ..costmodel import load
from ..errors import PlanError
from ..instr import CastTo, Choice
from ..instr.layout import Layout, canonical
from ..ir import Node
from ..ir.types import Kind
from ..kernels import gbops, lend, routes
from ..kernels.buffers import csr_piece
from ..ops.mxm import frontier_count, pushes
from . import spgemm_size, spmd
from .distplan import ProductInfo
from .facts import covers
from .options import forced
from .plans import PLANS, get_plan, plan_names, spmd_names


def full_where_read(pl, a: Node, fb) -> bool:
    """A is static and every column of it with an entry is a row full in each static value
    bounding B's missing rows (facts.covers). Under SPMD planning every rank holds its rows of
    A and of the bounds: they agree by one exchange (spmd.covered); the same on every rank,
    since the facts are."""
    if not fb.over or not pl.is_static(a) or any(t not in pl.static for t in fb.over):
        return False
    bounds = [pl.static[t] for t in sorted(fb.over)]
    if pl.me is None:
        return covers(pl.static_value(a), bounds)
    nodes = {id(n): n for n in pl.order}
    dim = a.type.ncols
    if dim not in pl.dims or any(t not in nodes or canonical(nodes[t].type, pl.dims) != Layout("row", dim)
                                 for t in fb.over):
        return False   # (every rank sees the same types: the same answer everywhere, no collective)
    return spmd.covered(pl.comm, pl.static_value(a), pl.dims[dim], pl.me, bounds)


class Product:
    """What every candidate of one product shares: the static sparse A (whole, on the planning
    rank), how A's rows and B's rows are distributed, B's slot and width K, the output slot."""

    def __init__(self, pl, n: Node, index: int):
        a, b = n.args[0], n.args[1]
        self.pl, self.node, self.index = pl, n, index
        self.P = pl.P
        self.me, self.comm = pl.me, pl.comm   # SPMD planning: this rank only (None: every rank, here)
        self.semiring = n.attr("semiring")
        self.compute, self.out_dtype = self.semiring.dtypes(a.type.dtype, b.type.dtype)
        self.rows = pl.dims[a.type.nrows]
        self.cols = pl.dims[a.type.ncols]
        self.K = pl.concrete(b.type.ncols)
        self.b = pl.value(b)
        self.b_full = pl.facts[id(b)].full
        # B full wherever A reads it (PageRank's r / outdeg: only the dangling rows are missing,
        # and Aᵀ's columns there are empty): the rows p2p1d sends are all present, so they need
        # no presence byte, and no output row can be left at the identity
        self.b_covered = full_where_read(pl, a, pl.facts[id(b)])   # (False when B is full: nothing bounds it)
        self.b_dtype = b.type.dtype
        self.opt = pl.opt
        self.tag = 16 + 8 * index
        self._A = pl.static_value(a)
        self._csr = pl.csr_cache
        self.lending = None   # lower_product's ExitStack while the candidates are lowered
        self._lent = None     # A's own arrays as scipy CSR, read inside it
        self.out = pl.slot()
        # With B full and a monoid identity, C starts full at the identity and every block
        # accumulates into it in place (exact: identity ⊕ x = x); A's empty rows are dropped after.
        self.masked = n.attr("mask") is not None
        self.in_place = self.in_place_if(self.b_full)
        # MxM / RecvMxM fields of the mask (the output's rows: the mask is laid out like it)
        self.mask = {} if not self.masked else {"mask": pl.value(n.args[2], canonical(n.type, pl.dims)),
                                                "mask_kind": n.attr("mask"), "complement": n.attr("complement")}
        # remote blocks kept whole (not compressed to their rows) when accumulating into C as a
        # whole: in place into a full C, or inside a mask
        self.whole_blocks = self.in_place or self.masked
        # a frontier's product (ops/mxm.pushes) whose global size the loop's test counts: each rank
        # pushes or pulls its block alike (the slot of that count; None: pulled, as any masked product)
        self.frontier = frontier_count(pl, n) if pushes(pl, n) else None
        # a sparse B moves only its present entries (a frontier, distances with missing entries);
        # when it is static (L in a triangle count's L·L) planning knows how many
        self.b_sparse = b.type.kind is Kind.sparse
        # (SPMD: this rank holds its rows of B only; planning bounds a message by every entry)
        self.b_static = sp.csr_array(gb.io.to_scipy_sparse(pl.static_value(b), format="csr")) \
            if self.b_sparse and pl.is_static(b) and pl.me is None else None
        # B's columns on a partitioned dim too (n x n): only a sparse exchange moves such rows
        self.b_wide = isinstance(b.type.ncols, str) and b.type.ncols in pl.dims

    def in_place_if(self, full: bool) -> bool:
        # where SuiteSparse's in-place kernel is the slower one for this semiring and dtype
        # (kernels/routes.py IN_PLACE: lor_land, min_plus, ...), the blocks' products are made as
        # GraphBLAS's own and accumulated; K is not asked: with several blocks into one output the
        # in-place kernel saves their merges, which the one-product measurement behind the least
        # K does not see
        return full and self.semiring.monoid.identity(self.compute) is not None and not self.masked and \
            routes.in_place_pays(self.semiring, self.compute)

    def entries(self, rows: np.ndarray) -> int:
        """Entries of B's rows ``rows`` (global ids) a sparse message carries: exact for a static
        B, else planning's bound, every entry."""
        if self.b_static is None:
            return len(rows) * self.K
        return int(np.diff(self.b_static.indptr)[rows].sum())

    def rows_of(self, r: int) -> sp.csr_array:
        """Rank r's rows of A (columns in original indexing)."""
        if self.me is not None:   # SPMD: A is this rank's rows already
            assert r == self.me, "an SPMD plan lowers its own rank only"
            return self.A
        return self.A[self.rows.owned[r]]

    def operand_bytes(self, r: int) -> int:
        """Bytes of a sparse x sparse product's static operands rank r holds while it runs (its
        rows of A, of B and of the mask), beside what the plan's own instructions hold: the
        memory per rank counts them too. 0 for other products (their operands are priced by the
        instructions that move them)."""
        if not (self.b_sparse and self.b_wide):
            return 0
        pl = self.pl
        entries = a = int(self.rows_of(r).nnz)
        for x in self.node.args[1:]:
            if pl.is_static(x):
                v = pl.static_value(x)   # (A itself, lent while lowered, reads as empty: its rows' count)
                entries += a if v is self._A else int(v.nvals) if self.me is not None else \
                    int(v[pl.dims[x.type.nrows].owned[r], :].new().nvals)
        return entries * (self.compute.np.itemsize + 8)

    def block_rows(self, r: int, I: np.ndarray, dest) -> sp.csr_array:
        """Rows ``I`` of A (global ids, in this order; columns in original indexing) as rank r
        needs them. Under SPMD planning (r is this rank) other ranks own most of them: every rank
        sends each entry of its rows to the one rank ``dest(sender)[column]`` that needs it
        (spmd.route), so the result holds those entries only (the columns r multiplies)."""
        if self.me is None:
            return self.A[I]
        assert r == self.me, "an SPMD plan lowers its own rank only"
        grow, gcol, vals = spmd.route(self.comm, self.A, self.rows.owned[r], dest(r))
        where = np.full(self.rows.size, -1, dtype=np.int32 if I.size < np.iinfo(np.int32).max else np.int64)
        where[I] = np.arange(I.size)
        local = where[grow]   # each entry's row in I
        del grow, where
        if local.size and local.min() < 0:
            raise AssertionError("an entry was routed to a rank that does not hold its row")
        shape = (I.size, self.A.shape[1])
        if local.size < 2 or bool((local[1:] >= local[:-1]).all()):
            # the entries arrive in I's row order (the sources' rows in rank order, as I lists
            # them): CSR straight from the received arrays, no COO round trip
            indptr = np.zeros(I.size + 1, dtype=np.int64)
            np.cumsum(np.bincount(local, minlength=I.size), out=indptr[1:])
            del local
            out = sp.csr_array((vals, gcol, indptr), shape=shape)
        else:
            out = sp.csr_array((vals, (local, gcol)), shape=shape)
            del local
        del vals, gcol
        out.sum_duplicates()   # canonical: columns sorted in every row, as A[I] is
        return out

    def per_rank(self, fn) -> list:
        """[fn(r) for every rank r]; under SPMD planning each rank computes its own and one
        allgather gives everyone the list (small values only)."""
        if self.me is None:
            return [fn(r) for r in range(self.P)]
        mine = fn(self.me)
        return self.comm.allgather(mine) if self.P > 1 else [mine]

    @property
    def A(self) -> sp.csr_array:
        """A as scipy CSR in the compute dtype, original indexing (shared by the candidates);
        under SPMD planning, this rank's rows of it. While this product is lowered (``lending``,
        set by lower_product), A's own arrays are read where they lie when SuiteSparse holds it
        by row in that dtype (kernels/lend.py): no copy of the rank's rows; else a copy, cached
        for the products after this one."""
        key = (id(self._A), self.compute)
        if key in self._csr:
            return self._csr[key]
        if self._lent is not None:
            return self._lent
        M = self._A
        if self.lending is not None and gbops.dtype_of(M) is self.compute and M.nvals:
            arrays = self.lending.enter_context(lend.csr(M))
            if arrays is not None:
                S = sp.csr_array(M.shape, dtype=self.compute.np)
                S.indptr, S.indices, S.data = arrays
                S.has_sorted_indices = True
                self._lent = S
                return S
        M = gbops.cast(M, self.compute)
        self._csr[key] = sp.csr_array(gb.io.to_scipy_sparse(M, format="csr")) if M.nvals else \
            sp.csr_array(M.shape, dtype=self.compute.np)
        return self._csr[key]


class ProductContext:
    """What a plan sees while it lowers: the product (attributes forwarded) and emission helpers
    writing into this candidate's own buffers. ``info.predicted`` / ``info.notes`` collect what
    the plan wants explain to show."""

    def __init__(self, product: Product, name: str):
        self.product, self.name = product, name
        self.P = product.P
        self.ranks = product.pl.ranks     # the ranks lowered here: all, or (SPMD) this one
        self.progs = [[] for _ in range(self.P)]
        self.consts = [dict() for _ in range(self.P)]
        self.splits: list = []
        self.windows: list = []
        self.info = _Scratch()
        self.reason: str | None = None
        self.every: list | None = None   # SPMD: every rank's counts, gathered once lowered (choose.gather)
        self.c: int | None = None        # a replication factor a plan weighs itself (15d_sparse's by_the_model)

    def __getattr__(self, name):   # the product's attributes: A, rows, cols, K, b, semiring, ...
        return getattr(self.__dict__["product"], name)

    # -- emission into this candidate's buffers
    def emit(self, x):
        for r in self.ranks:
            out = x(r) if callable(x) else x
            if out is None:
                continue
            (self.progs[r].extend if isinstance(out, list) else self.progs[r].append)(out)

    def emit_rank(self, r: int, instrs: list):
        self.progs[r].extend(instrs)

    def slot(self) -> int:
        return self.product.pl.slot()

    def const(self, rank: int, value) -> int:
        s = self.slot()
        self.consts[rank][s] = value
        return s

    def const_all(self, fn) -> int:
        s = self.slot()
        for r in self.ranks:
            self.consts[r][s] = fn(r)
        return s

    def add_split(self, colors) -> int:
        """A sub-communicator: colors[r] is rank r's colour (None: not a member). Returns its
        group id, local to this candidate (1, 2, ...; 0 is the world); choose renumbers them."""
        self.splits.append(list(colors))
        return len(self.splits)

    def add_window(self, specs) -> int:
        """A one-sided window: specs[r] = (nrows, row_bytes) rank r exposes. Returns its index,
        local to this candidate; choose renumbers it."""
        self.windows.append(list(specs))
        return len(self.windows) - 1

    @property
    def coefficients(self):
        return self.opt.coefficients or load(self.P)

    def gb(self, csr):
        return csr_piece(csr, self.compute)

    def gb_owned(self, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, shape: tuple):
        """The piece ``gb`` makes of the CSR (indptr, indices, values) — the same iso test, its
        columns marked unsorted as a fresh scipy CSR's are — handing the arrays to GraphBLAS
        instead of copying them: the caller owns them and drops them (uint64 indices, values of
        the compute dtype are taken as they are; others are converted once)."""
        if values.size == 0:
            return gb.Matrix(self.compute.gb, *shape)
        is_iso = bool((values[[0]] == values).all())
        if is_iso:
            values = values[[0]]
        M = gb.Matrix.ss.import_csr(nrows=shape[0], ncols=shape[1], indptr=indptr, col_indices=indices,
                                    values=values, is_iso=is_iso, sorted_cols=False, take_ownership=True)
        return M if M.dtype == gb.dtypes.lookup_dtype(self.compute.gb) else M.dup(dtype=self.compute.gb)

    def group_sizes(self, r: int) -> tuple:
        sizes = [self.P]
        for colors in self.splits:
            c = colors[r]
            sizes.append(sum(1 for x in colors if x == c) if c is not None else 0)
        return tuple(sizes)


def lower_product(pl, n: Node):
    """Every candidate plan for product n, lowered; a Choice placeholder in every rank's program."""
    a, b = n.args[0], n.args[1]
    index = len(pl.products)
    sr = n.attr("semiring")
    info = ProductInfo(index, f"{pl.label(n)} = mxm[{sr}]({pl.label(a)}, {pl.label(b)})", "?",
                       f"sparse[{pl.concrete(a.type.nrows)}x{pl.concrete(a.type.ncols)}]",
                       f"{b.type.kind.value}[{pl.concrete(b.type.nrows)}x{pl.concrete(b.type.ncols)}]",
                       pl.concrete(b.type.ncols))
    product = Product(pl, n, index)
    candidates: list = []
    with contextlib.ExitStack() as lending:   # A's arrays lent to the candidates (Product.A), given back after
        product.lending = lending
        try:
            _lower_candidates(pl, product, info, candidates)
        finally:
            product.lending = product._lent = None
            spgemm_size.forget(product)   # (sparse x sparse estimates: n x 32 keys and B's summary)
    info.loop = pl.in_loop
    pl.products.append(info)
    pl.candidates.append(candidates)
    pl.emit(Choice(product=index))
    out = product.out
    if product.out_dtype is not product.compute:
        cast = pl.slot()
        pl.emit(CastTo(cast, out, product.out_dtype.value))
        out = cast
    pl.set(n, out, canonical(n.type, pl.dims))


def _lower_candidates(pl, product: Product, info: ProductInfo, candidates: list):
    asked = info.requested = forced(pl.opt, pl.label(product.node))
    names = plan_names(auto=True) if asked == "auto" else [get_plan(asked).name]
    spmd = pl.me is not None
    for name in names:
        spec = PLANS[name]
        ctx = ProductContext(product, name)
        ctx.reason = spec.check(ctx) if spec.check else None
        if spmd and spec.spmd is None:
            if asked != "auto":
                raise PlanError(f"plan {name} cannot be planned SPMD yet (from sharded inputs); plans that can: "
                                f"{', '.join(spmd_names())}")
            ctx.reason = ctx.reason or "no SPMD lowering yet (the graph is sharded: every rank plans from its rows)"
        candidates.append(ctx)
        if ctx.reason:
            if asked != "auto":
                raise cannot_run(name, info.expr, pl.P, ctx.reason)
            continue
        (spec.spmd if spmd else spec.lower)(ctx)
        if spmd and pl.on_lowered is not None:   # counted now; only the leader so far keeps its pieces
            pl.on_lowered(ctx, candidates)


def cannot_run(plan: str, expr: str, P: int, reason: str) -> PlanError:
    err = PlanError(f"plan {plan}, asked for {expr}, cannot run it on {P} process{'es' if P > 1 else ''}: "
                    f"{reason}")
    err.everywhere = True   # (the check reads what every rank knows alike: SPMD planning raises it on all)
    return err


def check_forced(pl, n: Node) -> None:
    """One process: nothing moves and no plan is lowered, yet a plan asked for this product by name
    must be one that could run it (a request that cannot be met is an error on every P)."""
    asked = forced(pl.opt, pl.label(n))
    if asked == "auto":
        return
    spec = get_plan(asked)
    b = n.args[1]
    view = SimpleNamespace(name=spec.name, P=pl.P, K=pl.concrete(b.type.ncols), opt=pl.opt,
                           masked=n.attr("mask") is not None, b_sparse=b.type.kind is Kind.sparse,
                           b_wide=isinstance(b.type.ncols, str) and b.type.ncols in pl.dims)
    reason = spec.check(view) if spec.check else None
    if reason:
        a = n.args[0]
        expr = f"{pl.label(n)} = mxm[{n.attr('semiring')}]({pl.label(a)}, {pl.label(b)})"
        raise cannot_run(spec.name, expr, pl.P, reason)


class _Scratch:
    """A candidate's own notes and predictions until it is chosen."""

    def __init__(self):
        self.predicted: dict = {}
        self.notes: list = []
