"""Lowering: each dynamic node of the program, in order, through its op's lowering rule (its
definition's, dspla/ops; the LOWER table), into instructions for every rank. The rules build with
the methods of ``Lowering`` (local work, reductions, the replicated fallback, the distributed
product). Every value is kept in its canonical layout (layout.py);
a consumer needing another layout gets an explicit conversion. A sparse x dense product over
a partitioned dim becomes a Choice placeholder with one lowered candidate per applicable plan
(product.py); the choose step picks one.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..instr import AllgatherRows, AllgatherSparse, Allreduce, Local, Redistribute, TakeCols, TakeRows, Unpermute
from ..instr.layout import REP, Layout, canonical, laid_out_as
from ..ir import Node, Op, Program
from ..ir.types import Kind
from ..kernels import gbops
from ..kernels.buffers import piece
from ..ops import table
from .facts import Facts, prove
from .options import Options
from .product import check_forced, full_where_read, lower_product
from .sampled import applies as sampled_applies
from .sampled import lower_sampled
from .static import Static


@dataclass
class Value:
    slots: int
    layout: Layout


LOWER = table("lower")   # op -> its lowering rule
WORK = table("work")     # op -> its local work on a rank's pieces (Local.work)


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
        # nodes whose lowering another node's rule supplies, once their other operands are there:
        # id -> the function emitting it (a product folded into its one user, ops/mxm.py)
        self.takeover: dict[int, Callable[[], None]] = {}
        self.in_place: set[int] = set()   # updates that write into their loop-carried value (ops/loop.py)
        self.overwritten: set[int] = set()   # values whose matrix such an update writes into later
        self.fresh: set[int] = set()   # loop-carried values that are always a product's own result (ops/stack.py)
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
        if self.P == 1 and all(x == REP or self.dims[x.dim].is_block for x in (v.layout, want)):
            return v.slots   # one process holds the whole value, in order, in every layout: nothing to move
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

    def layout(self, n: Node) -> Layout:
        """n's canonical layout (a tuple's, for a loop, per item: layout_of each)."""
        return canonical(n.type, self.dims)

    def layout_of(self, type_) -> Layout:
        return canonical(type_, self.dims)

    def slots_of(self, n: Node) -> tuple:
        """(slots, layout) of a value lowered already (a loop's: one per item)."""
        v = self.vals[id(n)]
        return v.slots, v.layout

    def computed(self, n: Node) -> bool:
        """Whether n's value is there already (lowered, a loop's outside value, or static): a rule
        fusing n into a later node must not wait for it."""
        return id(n) in self.vals or id(n) in self.alias or self.is_static(n)

    def replicated(self, n: Node) -> bool:
        return self.layout(n) == REP

    def piece_shape(self, type_, layout: Layout, r: int) -> tuple[int, int]:
        """Rank r's piece of a value of ``type_`` in ``layout``: (rows, columns)."""
        rows, cols = (self.concrete(d) for d in type_.shape)
        if layout.kind == "row":
            rows = int(self.dims[layout.dim].counts[r])
        elif layout.kind == "col":
            cols = int(self.dims[layout.dim].counts[r])
        return rows, cols

    def emit_local(self, out: int, n: Node, args: tuple, layouts: tuple, layout: Layout, in_place: bool = False,
                   temporary: bool = False):
        """``Local(out, n, args)`` on every rank, with the work n's rule counts on that rank's pieces
        (``layouts``: of n's arguments, ``layout``: of the result; extra arguments such as a
        piece's global ids are not counted)."""
        work = WORK[n.op]
        self.emit(lambda r: Local(out, n, args, work=int(work(n, [self.piece_shape(a.type, lay, r) for a, lay in
                                                                 zip(n.args, layouts)],
                                                             self.piece_shape(n.type, layout, r))),
                                  in_place=in_place, temporary=temporary))

    # -- what the ops' lowering rules build with
    def local(self, n: Node):
        """n computed locally on pieces: operands in the result's layout or replicated."""
        lay = canonical(n.type, self.dims)
        args, layouts = [], []
        for a in n.args:
            al = canonical(a.type, self.dims)
            layouts.append(al if al in (lay, REP) else REP)
            args.append(self.value(a, layouts[-1]))
        out = self.slot()
        # in place: only into the carried value's own slot (a converted copy may be shared)
        own = n.op is Op.UPDATE and id(n.args[0]) in self.vals and args[0] == self.vals[id(n.args[0])].slots
        temporary = own and id(n) not in self.in_place and self.temporary(n)
        in_place = own and (id(n) in self.in_place or temporary)
        self.emit_local(out, n, tuple(args), tuple(layouts), lay, in_place, temporary)
        self.set(n, out, lay)

    def temporary(self, n: Node) -> bool:
        """Whether update n may write into its C as it is: a value computed in this block that
        nothing but n reads (not an output, not carried, not from outside the loop), of n's
        dtype, and not n's T (it may be n's mask: GraphBLAS allows the alias)."""
        c = n.args[0]
        if c.op in (Op.INPUT, Op.ITEM) or id(c) in self.alias or self.is_static(c) or len(n.args) < 2 \
                or n.args[1] is c or c.type.dtype is not n.type.dtype:
            return False
        accum = n.attr("accum")
        if accum is not None and accum.dtypes(c.type.dtype, n.args[1].type.dtype)[0] is not c.type.dtype:
            return False
        return all(u is n for u in self.uses.get(id(c), [None]))

    def via_rep(self, n: Node):
        """The always-correct fallback: gather operands, compute replicated, keep this rank's part."""
        args = tuple(self.value(a, REP) for a in n.args)
        rep = self.slot()
        self.emit_local(rep, n, args, (REP,) * len(args), REP)
        self.vals[id(n)] = Value(rep, REP)
        lay = canonical(n.type, self.dims)
        if lay != REP:
            self.set(n, self.value(n, lay), lay)

    def reduced(self, n: Node, part: int, monoid):
        """n is the ⊕ over ranks of this rank's partial ``part``: an Allreduce, then n's layout."""
        rep = part
        if self.P > 1:   # (one process: the partial is the whole)
            rep = self.slot()
            self.emit(Allreduce(rep, part, monoid, entries=self.entries(n), label=self.message_label(n)))
        self.vals[id(n)] = Value(rep, REP)
        nl = canonical(n.type, self.dims)
        if nl != REP:
            self.set(n, self.value(n, nl), nl)

    def reduction(self, n: Node, axis: str, monoid):
        """A reduction of n's one argument along ``axis`` by ``monoid``: local when the axis is
        whole on every rank, else each rank's partial and their ⊕ (``reduced``)."""
        (x,) = n.args
        xl = canonical(x.type, self.dims)
        if xl == REP or (xl.kind == "row" and axis == "rows") or (xl.kind == "col" and axis == "cols"):
            return self.local(n)
        part = self.slot()
        self.emit_local(part, n, (self.value(x),), (xl,), REP)   # this rank's partial reduction
        self.reduced(n, part, monoid)

    def with_global_ids(self, n: Node):
        """n computed locally on its arguments (extra ones replicated) and this rank's global row or
        column ids, passed as two more arguments (row ids, column ids; None for the other axis)."""
        lay = canonical(n.type, self.dims)
        layouts = (canonical(n.args[0].type, self.dims),) + (REP,) * (len(n.args) - 1)
        args = (self.value(n.args[0]),) + tuple(self.value(a, REP) for a in n.args[1:])
        if lay != REP:
            ids = self.const_all(lambda r: self.dims[lay.dim].owned[r])
            none = self.const_all(lambda r: None)
            args += (ids, none) if lay.kind == "row" else (none, ids)
        out = self.slot()
        self.emit_local(out, n, args, layouts, lay)
        self.set(n, out, lay)

    def product(self, n: Node):
        """A sparse x dense product over a partitioned dim: one candidate per plan (product.py)."""
        return lower_product(self, n)

    def sampled(self, n: Node) -> bool:
        """Lowers n as the sampled product (G Bᵀ on a sparse pattern, sampled.py) when it is one."""
        if not sampled_applies(self, n):
            return False
        lower_sampled(self, n)
        return True

    def full_where_read(self, a: Node, fb: Facts) -> bool:
        return full_where_read(self, a, fb)

    def check_forced(self, n: Node) -> None:
        """A plan forced for product n that one process cannot honour is an error (product.py)."""
        check_forced(self, n)

    @staticmethod
    def message_label(n: Node) -> str:
        """How run-time messages name the value n makes: its name or op, and where it is written."""
        return f"{n.label} ({n.span})" if n.span is not None else n.label

    def lower_sub(self, prog: Program, given: dict) -> list[int]:
        """Lower a loop's condition or body into the current block; the slots of its outputs."""
        order = prog.toposort()
        self.facts.update(prove(order, {}, given, sizes=self.bound))
        self.names.update({k: v for k, v in prog.names().items() if k not in self.names})   # labels for explain
        self.count_uses(prog)
        for m in order:
            if m.op is Op.INPUT or id(m) in self.fused:
                continue   # placeholders: carried slots or outside values; values lowered with another
            LOWER[m.op](self, m)
        return [self.value(v) for _, v in prog.outputs]

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
        it is when its layout is this plan's; else an explicit, counted redistribution moves it:
        rows to rows (or columns to columns) of another partition by Redistribute, any other
        change through the whole value (a replicated one is whole already; each rank takes its
        part of it)."""
        name, lay = n.attr("name"), canonical(n.type, self.dims)
        s = self.slot()
        self.inputs[name] = s
        given = self.given.get(name)
        if given is None or laid_out_as(given.kind, given.part and given.part.key, lay, self.dims):
            return self.set(n, s)
        if given.kind == lay.kind:
            src, dst = given.part, self.dims[lay.dim]
            out = self.slot()
            self.emit(lambda r: Redistribute(out, s, lay.kind, src.owned[r], _send_lists(src, dst, r), dst.pos,
                                             int(dst.counts[r]), self.concrete(n.type.ncols if lay.kind == "row"
                                                                               else n.type.nrows)))
            return self.set(n, out)
        whole = s
        if given.kind != "rep":   # (its pieces stacked in the order of their owners)
            whole, part = self.slot(), given.part
            self.emit(AllgatherSparse(whole, s, part.offsets, part.order, "rows" if given.kind == "row" else "cols",
                                      tuple(self.concrete(x) for x in n.type.shape)))
        if lay == REP:
            return self.set(n, whole)
        out, d = self.slot(), self.dims[lay.dim]
        take = TakeRows if lay.kind == "row" else TakeCols
        self.emit(lambda r: take(out, whole, d.owned[r]))
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


def _send_lists(src, dst, r: int) -> tuple:
    """For rank r: the positions of its rows (under ``src``) that each rank owns under ``dst``."""
    owners = dst.parts[src.owned[r]]
    return tuple(np.flatnonzero(owners == m) for m in range(dst.P))


def lower(program: Program, static: Static, dims: dict, facts: dict[int, Facts], sizes: dict, P: int,
          options: Options, given: dict | None = None, comm=None, on_lowered=None) -> Lowering:
    return Lowering(program, static, dims, facts, sizes, P, options, given, comm, on_lowered).run()
