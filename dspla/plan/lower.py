"""Lowering: each dynamic node of the program, in order, through its rule in the LOWER table,
into instructions for every rank. Every value is kept in its canonical layout (layout.py);
a consumer needing another layout gets an explicit conversion. A sparse x dense product over
a partitioned dim becomes a Choice placeholder with one lowered candidate per applicable plan
(product.py); the choose step picks one.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..algebra import BINARY, MONOIDS, UNARY
from ..exec import gbops
from ..ir import Node, Op, Program
from ..ir.types import Kind
from .facts import Facts, prove
from .ir import (
    AllgatherRows,
    AllgatherSparse,
    Allreduce,
    Local,
    Loop,
    MxM,
    Redistribute,
    TakeCols,
    TakeRows,
    TransposeRows,
    Unpermute,
)
from .layout import REP, Layout, canonical, piece
from .options import Options
from .product import check_forced, full_where_read, lower_product
from .sampled import applies as sampled_applies
from .sampled import lower_sampled
from .static import Static


@dataclass
class Value:
    slots: int
    layout: Layout


LOWER: dict[Op, Callable] = {}
_PLUS = MONOIDS["plus"]


def lower_rule(*ops):
    def register(fn):
        for op in ops:
            LOWER[op] = fn
        return fn
    return register


class Lowering:
    """The plan under construction: per-rank instruction lists and planning-time pieces, the
    slots of every value, and the products with their candidates."""

    def __init__(self, program: Program, static: Static, dims: dict, facts: dict, sizes: dict, P: int,
                 options: Options, given: dict | None = None, comm=None, on_lowered=None):
        # SPMD planning (plan/spmd.py): this rank's program only, its static values its pieces
        self.comm = comm
        # SPMD: called with (candidate, the product's candidates so far) as each is lowered; plan
        # choice's (choose.lowered: count it, keep only the leader's pieces), handed in by compile
        self.on_lowered = on_lowered
        self.me = comm.rank if comm is not None else None
        self.ranks = range(P) if comm is None else (comm.rank,)
        self.program, self.static_ids, self.static = program, static.ids, static.values
        self.deferred = static.deferred
        self.patterns = static.patterns   # id(sparse param) -> its value as given: planning reads its pattern
        self.dims, self.facts, self.bound, self.P, self.opt = dims, facts, sizes, P, options
        self.order = program.toposort()
        self.progs = [[] for _ in range(P)]
        self.consts = [dict() for _ in range(P)]
        self.n_slots = 0
        self.vals: dict[int, Value] = {}
        self.conv: dict[tuple, int] = {}
        self.products: list = []       # ProductInfo, by product index
        self.candidates: list = []     # per product: its lowered Candidates
        self.splits: list = []
        self.windows: list = []        # per window: (nrows, row_bytes) for each rank
        self.names = program.names()
        self.inputs: dict[str, int] = {}
        self.outputs: dict = {}
        self.csr_cache: dict = {}      # (id(static matrix), dtype) -> scipy CSR, shared by candidates
        self.setup = [[] for _ in range(P)]   # run once, on a plan's first run: deferred static values
        self.stack = [self.progs]      # the blocks being emitted into: the program, then loop bodies
        self.alias: dict = {}          # id(a loop's placeholder for an outside value) -> (that value, its depth)
        self.loops = 0
        self.in_loop: int | None = None   # the loop whose body is being lowered (for explain)
        self.given = given or {}       # input name -> its current distribution (a Dist) when it has one
        self.uses: dict[int, list] = {}   # id(node) -> its users (None: an output), program and loop bodies
        self.fused: set[int] = set()      # nodes another node's lowering already computed
        self.count_uses(program)

    # -- emission helpers used by lowering rules and plans
    def slot(self) -> int:
        self.n_slots += 1
        return self.n_slots - 1

    def emit(self, x):
        """An instruction for every rank, or a function rank -> instruction(s) or None."""
        for r in self.ranks:
            out = x(r) if callable(x) else x
            if out is None:
                continue
            if isinstance(out, list):
                self.progs[r].extend(out)
            else:
                self.progs[r].append(out)

    def const_all(self, fn) -> int:
        """One slot holding a per-rank planning-time value fn(rank)."""
        s = self.slot()
        for r in self.ranks:
            self.consts[r][s] = fn(r)
        return s

    def label(self, n: Node) -> str:
        return self.names.get(id(n), n.label)

    # -- loops: nested blocks, and placeholders standing for values from outside
    @contextmanager
    def block(self):
        """Emit into a fresh block (a loop's condition or body); yields its per-rank lists."""
        self.progs = [[] for _ in range(self.P)]
        self.stack.append(self.progs)
        try:
            yield self.progs
        finally:
            self.stack.pop()
            self.progs = self.stack[-1]

    @contextmanager
    def at_depth(self, depth: int):
        """Emit into an enclosing block: conversions of a value from outside a loop are made once,
        before the loop, not in every iteration."""
        saved, self.progs = self.progs, self.stack[depth]
        try:
            yield
        finally:
            self.progs = saved

    def resolve(self, n: Node) -> Node:
        while id(n) in self.alias:
            n = self.alias[id(n)][0]
        return n

    def is_static(self, n: Node) -> bool:
        return id(self.resolve(n)) in self.static

    def static_value(self, n: Node):
        return self.static[id(self.resolve(n))]

    def concrete(self, dim) -> int:
        return dim if isinstance(dim, int) else self.bound[dim]

    # -- values and conversions
    def value(self, n: Node, layout: Layout | None = None, dtype=None) -> int:
        """The slot holding n's value in ``layout`` (default: its canonical layout). ``dtype``:
        a static value is wanted in that dtype (cast once, at planning, not at every use)."""
        want = layout or canonical(n.type, self.dims)
        if id(n) in self.alias:
            outer, depth = self.alias[id(n)]
            with self.at_depth(depth):
                return self.value(outer, want, dtype)
        if id(n) in self.static:
            dtype = None if dtype is None or dtype is n.type.dtype else dtype
            key = (id(n), want, dtype)
            if key not in self.conv:
                M = self.static[id(n)] if dtype is None else gbops.cast(self.static[id(n)], dtype)
                if self.me is not None:   # SPMD: M is this rank's piece, in its canonical layout
                    have = canonical(n.type, self.dims)
                    self.conv[key] = self.const_all(lambda r: M) if want == have else \
                        self._static_moved(n, self.value(n, have, dtype), have, want)
                else:
                    self.conv[key] = self.const_all(lambda r: piece(M, want, self.dims, r))
            return self.conv[key]
        v = self.vals[id(n)]
        if v.layout == want:
            return v.slots
        key = (id(n), want)
        if key not in self.conv:
            self.conv[key] = self._convert(n, v, want)
        return self.conv[key]

    def _static_moved(self, n: Node, slot: int, have: Layout, want: Layout) -> int:
        """SPMD planning: a static value wanted in another layout than the one its pieces are in
        (a degree vector replicated, say) is converted once, by the setup block, not every run."""
        saved, saved0 = self.progs, self.stack[0]
        self.progs = self.stack[0] = self.setup
        try:
            rep = slot if have == REP else self._to_rep(n, Value(slot, have))
            if want == REP:
                return rep
            out, d = self.slot(), self.dims[want.dim]
            take = TakeRows if want.kind == "row" else TakeCols
            self.emit(lambda r: take(out, rep, d.owned[r]))
            return out
        finally:
            self.progs, self.stack[0] = saved, saved0

    def _convert(self, n: Node, v: Value, want: Layout) -> int:
        src = v.slots
        if v.layout != REP:  # first to REP
            rep = self.conv.get((id(n), REP))
            if rep is None:
                rep = self._to_rep(n, v)
                self.conv[(id(n), REP)] = rep
            if want == REP:
                return rep
            src = rep
        out = self.slot()
        d = self.dims[want.dim]
        if want.kind == "row":
            self.emit(lambda r: TakeRows(out, src, d.owned[r]))
        else:
            self.emit(lambda r: TakeCols(out, src, d.owned[r]))
        return out

    def _to_rep(self, n: Node, v: Value) -> int:
        d = self.dims[v.layout.dim]
        shape = tuple(self.concrete(x) for x in n.type.shape)
        out = self.slot()
        if v.layout.kind == "row" and n.type.kind is Kind.dense:
            k = shape[1]
            full = self.facts[id(n)].full
            stacked = self.slot() if not d.is_block else out
            self.emit(AllgatherRows(stacked, v.slots, d.counts, k, n.type.dtype.value, presence=not full))
            if not d.is_block:
                self.emit(Unpermute(out, stacked, d.order))
            return out
        self.emit(AllgatherSparse(out, v.slots, d.offsets, d.order, "rows" if v.layout.kind == "row" else "cols",
                                  shape))
        return out

    def set(self, n: Node, slot: int, layout: Layout | None = None):
        self.vals[id(n)] = Value(slot, layout or canonical(n.type, self.dims))

    def entries(self, n: Node) -> int:
        return self.concrete(n.type.nrows) * self.concrete(n.type.ncols)

    def count_uses(self, prog: Program):
        for k, users in prog.users().items():
            self.uses.setdefault(k, []).extend(users)
        for _, v in prog.outputs:
            self.uses.setdefault(id(v), []).append(None)

    # -- the step
    def run(self) -> "Lowering":
        for n in self.order:
            if id(n) in self.static_ids or id(n) in self.fused:
                continue
            if n.op is Op.INPUT:
                self._input(n)
            elif id(n) in self.deferred:   # static, but computed by the runtime: once
                saved, self.progs = self.progs, self.setup
                self.stack[0] = self.setup
                try:
                    LOWER[n.op](self, n)
                finally:
                    self.progs = self.stack[0] = saved
            else:
                LOWER[n.op](self, n)
        for name, n in self.program.outputs:   # (a static output: its planned pieces)
            self.outputs[name] = (self.value(n), canonical(n.type, self.dims))
        return self

    def _input(self, n: Node):
        """An input's slot. A value already distributed (a previous call's result) stays where
        it is when its layout is this plan's; else an explicit, counted redistribution moves it."""
        name, lay = n.attr("name"), canonical(n.type, self.dims)
        s = self.slot()
        self.inputs[name] = s
        given = self.given.get(name)
        if given is None or given.kind == "rep" or lay == REP or given.kind == lay.kind and \
                given.part.key == self.dims[lay.dim].key:
            return self.set(n, s)
        src, dst = given.part, self.dims[lay.dim]
        out = self.slot()
        self.emit(lambda r: Redistribute(out, s, lay.kind, src.owned[r], _send_lists(src, dst, r), dst.pos,
                                         int(dst.counts[r]), self.concrete(n.type.ncols if lay.kind == "row"
                                                                           else n.type.nrows)))
        self.set(n, out)

    def describe(self) -> str:
        lines = [f"lowered for P = {self.P}: {self.n_slots} slots, {len(self.products)} distributed products"]
        for info, cands in zip(self.products, self.candidates):
            lines.append(f"  product {info.index}: {info.expr}")
            for c in cands:
                lines.append(f"    candidate {c.name}: " + (f"skipped ({c.reason})" if c.reason else
                                                           "dropped (SPMD: counted, not the leader)"
                                                           if c.progs is None else
                                                           f"{sum(len(p) for p in c.progs)} instructions"))
        for r in range(min(self.P, 2)):
            lines.append(f"  rank {r}:")
            lines += [f"    {i}" for i in self.progs[r]]
        if self.P > 2:
            lines.append(f"  (ranks 2..{self.P - 1} alike)")
        return "\n".join(lines)


# ----------------------------------------------------------------------- lowering rules
def _local(pl: Lowering, n: Node):
    """n computed locally on pieces: operands in the result's layout or replicated."""
    lay = canonical(n.type, pl.dims)
    args = []
    for a in n.args:
        al = canonical(a.type, pl.dims)
        args.append(pl.value(a, al if al in (lay, REP) else REP))
    out = pl.slot()
    pl.emit(Local(out, n, tuple(args)))
    pl.set(n, out, lay)


def _via_rep(pl: Lowering, n: Node):
    """The always-correct fallback: gather operands, compute replicated, keep this rank's part."""
    args = tuple(pl.value(a, REP) for a in n.args)
    rep = pl.slot()
    pl.emit(Local(rep, n, args))
    pl.vals[id(n)] = Value(rep, REP)
    lay = canonical(n.type, pl.dims)
    if lay != REP:
        pl.set(n, pl.value(n, lay), lay)


def _reduced(pl: Lowering, n: Node, part: int, monoid):
    """n is the ⊕ over ranks of this rank's partial ``part``: an Allreduce, then n's layout."""
    rep = part
    if pl.P > 1:   # (one process: the partial is the whole)
        rep = pl.slot()
        pl.emit(Allreduce(rep, part, monoid, entries=pl.entries(n), label=_label(n)))
    pl.vals[id(n)] = Value(rep, REP)
    nl = canonical(n.type, pl.dims)
    if nl != REP:
        pl.set(n, pl.value(n, nl), nl)


@lower_rule(Op.EWISE_ADD, Op.EWISE_MULT, Op.APPLY_BIND, Op.CAST, Op.MASK, Op.UPDATE)
def _elementwise(pl: Lowering, n: Node):
    _local(pl, n)


@lower_rule(Op.APPLY)
def _apply(pl: Lowering, n: Node):
    if n.attr("op").result == "index":   # global row/column numbers: the piece's ids go along
        return _with_global_ids(pl, n)
    if n.attr("op").name == "neg" and _difference(pl, n):
        return None
    _local(pl, n)


def _difference(pl: Lowering, n: Node) -> bool:
    """``X + (-Y)`` (how ``X - Y`` is written: a lone Y entry becomes -Y) as one
    ``ewise_add[minus](X, Y)`` when X is proven full: then no position holds Y alone, so the
    two agree, and the negated copy of Y is never built (PageRank's convergence test)."""
    users = pl.uses.get(id(n), [])
    if len(users) != 1 or users[0] is None:
        return False
    u, y = users[0], n.args[0]
    if u.op is not Op.EWISE_ADD or u.attr("op").name != "plus" or u.args[1] is not n or u.args[0] is n:
        return False
    x = u.args[0]
    if id(x) not in pl.vals and id(x) not in pl.alias and not pl.is_static(x):
        return False   # X comes later in the order
    fx = pl.facts.get(id(pl.resolve(x)))
    if fx is None or not fx.full or not (x.type.shape == y.type.shape == u.type.shape):
        return False
    if not (x.type.dtype == y.type.dtype == n.type.dtype == u.type.dtype and x.type.dtype.is_float):
        return False   # (integer negation and subtraction differ at the type's edges)
    lay = canonical(u.type, pl.dims)
    if canonical(x.type, pl.dims) != lay or canonical(y.type, pl.dims) != lay:
        return False
    out = pl.slot()
    minus = Node(Op.EWISE_ADD, (x, y), (("op", BINARY["minus"]),), u.type)
    pl.emit(Local(out, minus, (pl.value(x, lay), pl.value(y, lay))))
    pl.set(u, out, lay)
    pl.fused.add(id(u))
    return True


@lower_rule(Op.SELECT)
def _select(pl: Lowering, n: Node):
    if n.attr("op").on == "index" and canonical(n.type, pl.dims) != REP:
        return _with_global_ids(pl, n)  # tril/triu/diag need global positions: the piece's ids go along
    _local(pl, n)


@lower_rule(Op.TRANSPOSE)
def _transpose(pl: Lowering, n: Node):
    (x,) = n.args
    xl, nl = canonical(x.type, pl.dims), canonical(n.type, pl.dims)
    flip = {"row": "col", "col": "row", "rep": "rep"}
    if Layout(flip[xl.kind], xl.dim) == nl or (xl == REP and nl == REP):
        out = pl.slot()
        pl.emit(Local(out, n, (pl.value(x),)))
        pl.set(n, out, nl)
    elif xl.kind == "row" and nl == xl and x.type.shape[0] == x.type.shape[1]:
        # a square value by rows (Aᵀ of a graph): entries travel to their new rows' owners
        d, src, out = pl.dims[xl.dim], pl.value(x), pl.slot()
        pl.emit(lambda r: TransposeRows(out, src, d.owned[r], d.parts, d.pos, int(d.counts[r]), d.size))
        pl.set(n, out, nl)
    else:
        _via_rep(pl, n)


@lower_rule(Op.REDUCE, Op.NVALS)
def _reduce(pl: Lowering, n: Node):
    """A reduction, or a count (nvals: a sum of the pieces' counts, over everything)."""
    (x,) = n.args
    xl = canonical(x.type, pl.dims)
    axis, monoid = (n.attr("axis"), n.attr("monoid")) if n.op is Op.REDUCE else ("all", _PLUS)
    if xl == REP or (xl.kind == "row" and axis == "rows") or (xl.kind == "col" and axis == "cols"):
        return _local(pl, n)
    part = pl.slot()
    pl.emit(Local(part, n, (pl.value(x),)))   # this rank's partial reduction
    _reduced(pl, n, part, monoid)


def _accumulated(pl: Lowering, n: Node, layout: Layout) -> bool:
    """``ewise_add(X, A ⊕.⊗ B, ⊕)``, the product used nowhere else, as GraphBLAS's own
    ``C ⊕= A ⊕.⊗ B`` on a copy of X (an accumulator is exactly an eWiseAdd with it): the
    product's output is never built and X is combined in the same pass (label propagation,
    Bellman-Ford). Emits it and returns True, or returns False to lower the product as usual."""
    users = pl.uses.get(id(n), [])
    sr = n.attr("semiring")
    if n.attr("mask") is not None or len(users) != 1 or users[0] is None:
        return False
    u = users[0]
    if u.op is not Op.EWISE_ADD or u.attr("op").name != sr.monoid.op.name or u.args[0] is u.args[1]:
        return False
    x = u.args[1] if u.args[0] is n else u.args[0]
    if u.args[0] is n and not u.attr("op").commutative:
        return False
    if id(x) not in pl.vals and id(x) not in pl.alias and not pl.is_static(x):
        return False   # X comes later in the order (X @ S + A @ (X @ N): both products accumulate-able)
    compute = sr.dtypes(n.args[0].type.dtype, n.args[1].type.dtype)[0]
    if not (x.type.shape == n.type.shape == u.type.shape and x.type.dtype == n.type.dtype == u.type.dtype == compute):
        return False
    if canonical(x.type, pl.dims) != layout or canonical(u.type, pl.dims) != layout:
        return False
    out = pl.slot()
    copy = Node(Op.APPLY, (x,), (("op", UNARY["identity"]),), x.type)   # the accumulation writes in place
    pl.emit(Local(out, copy, (pl.value(x, layout),)))
    pl.emit(MxM(out, operand(pl, n, n.args[0]), operand(pl, n, n.args[1]), sr, accumulate=True, label=_label(u)))
    pl.set(u, out, layout)
    pl.fused.add(id(u))
    return True


def _label(n: Node) -> str:
    """How run-time messages name the value n makes: its name or op, and where it is written."""
    return f"{n.label} ({n.span})" if n.span is not None else n.label


def operand(pl: Lowering, n: Node, x: Node, layout: Layout | None = None) -> int:
    """A product's operand: a static one already in the dtype the semiring reads it in."""
    sr, (a, b) = n.attr("semiring"), (y.type.dtype for y in n.args[:2])
    wanted = sr.operand_dtypes(a, b, sr.dtypes(a, b)[0])
    return pl.value(x, layout, wanted[0] if x is n.args[0] else wanted[1])


def mask_fields(pl: Lowering, n: Node, layout: Layout) -> dict:
    """The MxM fields of a (maybe) masked product: the mask's slot in ``layout``."""
    if n.attr("mask") is None:
        return {}
    return {"mask": pl.value(n.args[2], layout), "mask_kind": n.attr("mask"), "complement": n.attr("complement")}


@lower_rule(Op.MXM)
def _mxm(pl: Lowering, n: Node):
    a, b = n.args[0], n.args[1]
    inner = a.type.ncols
    sr = n.attr("semiring")
    nl = canonical(n.type, pl.dims)
    if isinstance(inner, str) and inner in pl.dims:
        al = canonical(a.type, pl.dims)
        wide = isinstance(b.type.ncols, str) and b.type.ncols in pl.dims   # B's columns distributed too
        if al.kind == "row" and pl.is_static(a) and canonical(b.type, pl.dims).kind == "row" \
                and (not wide or b.type.kind is Kind.sparse):
            if pl.P == 1:   # one process: nothing moves, the product is the local kernel's
                check_forced(pl, n)
                if _accumulated(pl, n, al):
                    return None
                out = pl.slot()
                empty = gbops.empty_rows(pl.static_value(a))   # (a is static here)
                fb = pl.facts[id(b)]
                covered = n.attr("mask") is None and full_where_read(pl, a, fb)   # (a masked product: its own route)
                pl.emit(MxM(out, operand(pl, n, a), operand(pl, n, b), sr, **mask_fields(pl, n, al),
                            a_empty_rows=empty, b_covered=covered, label=_label(n)))
                return pl.set(n, out, al)
            return lower_product(pl, n)
        if al.kind == "col" or al.kind == "row" and not pl.is_static(a):
            if al.kind == "row":  # a dynamic row-distributed operand: gather B (sparsity-unaware)
                out = pl.slot()
                pl.emit(MxM(out, pl.value(a), pl.value(b, REP), sr, **mask_fields(pl, n, al), label=_label(n)))
                pl.set(n, out, al)
                return None
            # a's columns are distributed like b's rows: local partial (inside the mask) + reduce
            part = pl.slot()
            pl.emit(MxM(part, pl.value(a), pl.value(b), sr, **mask_fields(pl, n, REP), label=_label(n)))
            return _reduced(pl, n, part, sr.monoid)
        return _via_rep(pl, n)
    if sampled_applies(pl, n):   # (G Bᵀ) on a sparse pattern: the SpMM's send sets (sampled.py)
        return lower_sampled(pl, n)
    # inner dim not distributed: a's rows and b's columns decide the result's layout
    al, bl = canonical(a.type, pl.dims), canonical(b.type, pl.dims)
    out = pl.slot()
    a_slot = operand(pl, n, a, al if al in (nl, REP) else REP)
    b_slot = operand(pl, n, b, bl if bl in (nl, REP) else REP)
    if al == nl and bl == nl and nl != REP:  # both distributed the same way: one must be whole
        b_slot = operand(pl, n, b, REP)
    pl.emit(MxM(out, a_slot, b_slot, sr, **mask_fields(pl, n, nl), label=_label(n)))
    pl.set(n, out, nl)


@lower_rule(Op.WHILE)
def _while(pl: Lowering, n: Node):
    """One Loop instruction: the condition and the body lowered once, into their own blocks, on
    the slots of the carried values; values from outside are read from their outside slots
    (converted, when needed, before the loop)."""
    cond, body, k = n.attr("cond"), n.attr("body"), n.attr("carried")
    holders = body.declared
    depth = len(pl.stack) - 1
    init = tuple(pl.value(a, canonical(h.type, pl.dims)) for a, h in zip(n.args[:k], holders))
    carry = tuple(pl.slot() for _ in range(k))
    for h, s in zip(holders[:k], carry):
        pl.set(h, s)
    for prog in (cond, body):
        for h, a in zip(prog.declared[k:], n.args[k:]):
            pl.alias[id(h)] = (a, depth)
    # facts inside: the carried values' (the loop's fixed point), the outside values' own
    given = {h.attr("name"): f for h, f in zip(holders, list(pl.facts[id(n)][:k]) +
                                               [pl.facts[id(pl.resolve(a))] for a in n.args[k:]])}
    index, outer = pl.loops, pl.in_loop
    pl.loops += 1
    pl.in_loop = index
    try:
        with pl.block() as cond_block:
            cond_slot = _lower_sub(pl, cond, given)[0]
        with pl.block() as body_block:
            results = tuple(_lower_sub(pl, body, given))
    finally:
        pl.in_loop = outer
    count = pl.slot()
    limit = pl.concrete(n.attr("max_iter"))
    where = str(n.span) if n.span is not None else ""
    pl.emit(lambda r: Loop(init, carry, cond_block[r], cond_slot, body_block[r], results, count, limit, loop=index,
                           where=where))
    pl.vals[id(n)] = Value(carry + (count,), tuple(canonical(t, pl.dims) for t in n.type.items))


def _lower_sub(pl: Lowering, prog: Program, given: dict) -> list[int]:
    """Lower a loop's condition or body into the current block; the slots of its outputs."""
    order = prog.toposort()
    pl.facts.update(prove(order, {}, given, sizes=pl.bound))
    pl.names.update({k: v for k, v in prog.names().items() if k not in pl.names})   # labels for explain
    pl.count_uses(prog)
    for m in order:
        if m.op is Op.INPUT or id(m) in pl.fused:
            continue   # placeholders: carried slots or outside values; values lowered with another
        LOWER[m.op](pl, m)
    return [pl.value(v) for _, v in prog.outputs]


@lower_rule(Op.ITEM)
def _item(pl: Lowering, n: Node):
    t = pl.vals[id(n.args[0])]
    i = n.attr("index")
    pl.vals[id(n)] = Value(t.slots[i], t.layout[i])


@lower_rule(Op.DROPOUT_MASK)
def _dropout(pl: Lowering, n: Node):
    """Local, with this rank's global row (or column) ids, so the mask does not depend on P."""
    _with_global_ids(pl, n)


def _with_global_ids(pl: Lowering, n: Node):
    """n computed locally on its arguments (extra ones replicated) and this rank's global row or
    column ids, passed as two more arguments (row ids, column ids; None for the other axis)."""
    lay = canonical(n.type, pl.dims)
    args = (pl.value(n.args[0]),) + tuple(pl.value(a, REP) for a in n.args[1:])
    if lay != REP:
        ids = pl.const_all(lambda r: pl.dims[lay.dim].owned[r])
        none = pl.const_all(lambda r: None)
        args += (ids, none) if lay.kind == "row" else (none, ids)
    out = pl.slot()
    pl.emit(Local(out, n, args))
    pl.set(n, out, lay)


@lower_rule(Op.ARGBEST, Op.ROUTE)
def _winners(pl: Lowering, n: Node):
    """The gradients of min/max products: local when the operand indexed by rows (A, or the
    cotangent) is laid out like the result, with the other operand whole; ROUTE to B's rows sums
    every rank's partial with one Allreduce; anything else through the replicated fallback."""
    lay = canonical(n.type, pl.dims)
    first = canonical(n.args[0].type, pl.dims)
    if n.op is Op.ROUTE and n.attr("axis") == "rows":
        g, k, a = n.args
        if first != REP and canonical(a.type, pl.dims) == first and canonical(k.type, pl.dims) == first:
            part = pl.slot()
            pl.emit(Local(part, n, (pl.value(g), pl.value(k), pl.value(a))))
            return _reduced(pl, n, part, _PLUS)
        return _via_rep(pl, n)
    rowwise = n.args[0] if n.op is Op.ARGBEST else n.args[1]   # A for the winners; the winners for ROUTE
    if lay != REP and first == lay and canonical(rowwise.type, pl.dims) == lay:
        out = pl.slot()
        keep = (0, 2) if n.op is Op.ARGBEST else (0, 1)
        pl.emit(Local(out, n, tuple(pl.value(a) if i in keep else pl.value(a, REP) for i, a in enumerate(n.args))))
        return pl.set(n, out, lay)
    _via_rep(pl, n)


@lower_rule(Op.INPUT, Op.IDENTITY)
def _never(pl: Lowering, n: Node):
    raise AssertionError(f"{n!r} is handled before lowering")


assert set(LOWER) == set(Op), f"ops without a lowering rule: {set(Op) - set(LOWER)}"


def _send_lists(src, dst, r: int) -> tuple:
    """For rank r: the positions of its rows (under ``src``) that each rank owns under ``dst``."""
    owners = dst.parts[src.owned[r]]
    return tuple(np.flatnonzero(owners == m) for m in range(dst.P))


def lower(program: Program, static: Static, dims: dict, facts: dict[int, Facts], sizes: dict, P: int,
          options: Options, given: dict | None = None, comm=None, on_lowered=None) -> Lowering:
    return Lowering(program, static, dims, facts, sizes, P, options, given, comm, on_lowered).run()
