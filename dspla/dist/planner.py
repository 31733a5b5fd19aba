"""The distributed planner: from a compiled Program and the inputs (on rank 0) to one
RankProgram per process.

    1. static evaluation: values that depend only on sparse inputs (A, A^T, normalised A, degree
       vectors) are computed once here, with the reference executor;
    2. partitioning: every symbolic dim of a sparse input is row-partitioned (the partitioner
       runs on the static square matrices that are left operands of products);
    3. fullness: which operands are provably full (their messages carry no presence bitmap);
    4. lowering: each remaining node, in order, through the LOWER table; sparse x dense
       products through the chosen plan (plans/). Every value is kept in its canonical layout.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..errors import PlanError
from ..exec import gbops
from ..exec.reference import EVAL, Env
from ..ir import Node, Op, Program
from ..ir.types import Kind
from . import fullness
from .layout import REP, DimPart, Layout, canonical, piece
from .planir import (Allreduce, AllgatherRows, AllgatherSparse, Local, MxM, RankProgram, TakeCols, TakeRows,
                     Unpermute)


@dataclass
class Options:
    plan: str = "auto"             # a name in dspla.dist.plans.PLANS, or "auto" (lowest predicted time)
    partition: str = "hypergraph"  # a partition method, or "file" with parts given
    parts: np.ndarray | None = None
    seed: int = 0
    eps: float = 0.03
    replication: int = 2           # shift1d / 15d
    stripe_width: int | None = None  # twoface
    memory_cap: float | None = None  # twoface, bytes per process
    cache: bool = True
    progress: bool | None = None
    coefficients: object = None    # a dspla.costmodel.Coefficients; None: the calibrated (or shipped) ones

    def key(self) -> tuple:
        return (self.plan, self.partition, None if self.parts is None else self.parts.tobytes(), self.seed, self.eps,
                self.replication, self.stripe_width, self.memory_cap, id(self.coefficients))


@dataclass
class ProductInfo:
    index: int
    expr: str
    plan: str
    a: str
    b: str
    K: int
    notes: list = field(default_factory=list)
    predicted: dict = field(default_factory=dict)
    candidates: list = field(default_factory=list)   # one dict per plan considered (see costmodel)
    why: str = ""
    counts: dict = field(default_factory=dict, repr=False)   # plan -> per-rank cost-model counts (fitting)


@dataclass
class DistPlan:
    P: int
    programs: list
    dims: dict
    input_layouts: dict            # name -> Layout of the dynamic inputs
    output_layouts: dict           # name -> Layout, or None for outputs computed at planning
    static_outputs: dict           # name -> graphblas Matrix
    products: list
    partition: dict
    planning_s: float = 0.0
    program: object = None          # the program planned (after the size-dependent passes)

    def explain(self) -> str:
        lines = [f"distributed plan for P = {self.P}"]
        for d, dp in self.dims.items():
            lines.append(f"  dim {d}: {dp.size} indices, partition {dp.method}, rows per process "
                         f"{dp.counts.min()}..{dp.counts.max()}")
        for p in self.products:
            pred = ", ".join(f"{k} {v}" for k, v in p.predicted.items())
            lines.append(f"  product {p.index}: {p.expr}  [{p.a} x {p.b}, K={p.K}] -> plan {p.plan}"
                         + (f" ({pred})" if pred else ""))
            for note in p.notes:
                lines.append(f"      note: {note}")
        for name, lay in self.output_layouts.items():
            lines.append(f"  output {name}: " + ("computed at planning on rank 0" if lay is None else f"{lay}"))
        return "\n".join(lines)


@dataclass
class Value:
    slots: int
    layout: Layout


LOWER: dict[Op, Callable] = {}


def lower_rule(*ops):
    def register(fn):
        for op in ops:
            LOWER[op] = fn
        return fn
    return register


class Planner:
    def __init__(self, program: Program, mats: dict, dims: dict, P: int, options: Options):
        self.program, self.mats, self.bound, self.P, self.opt = program, mats, dims, P, options
        self.order = program.toposort()
        self.progs = [[] for _ in range(P)]
        self.consts = [dict() for _ in range(P)]
        self.n_slots = 0
        self.vals: dict[int, Value] = {}
        self.conv: dict[tuple, int] = {}
        self.products: list[ProductInfo] = []
        self.splits: list = []
        self.windows: list = []   # per window: (nrows, row_bytes) for each rank
        self.names = program.names()

    # -- emission helpers used by lowering rules and plans
    def slot(self) -> int:
        self.n_slots += 1
        return self.n_slots - 1

    def emit(self, x):
        """An instruction for every rank, or a function rank -> instruction(s) or None."""
        for r in range(self.P):
            out = x(r) if callable(x) else x
            if out is None:
                continue
            if isinstance(out, list):
                self.progs[r].extend(out)
            else:
                self.progs[r].append(out)

    def emit_rank(self, rank: int, instrs: list):
        self.progs[rank].extend(instrs)

    def const(self, rank: int, value) -> int:
        s = self.slot()
        self.consts[rank][s] = value
        return s

    def const_all(self, fn) -> int:
        """One slot holding a per-rank planning-time value fn(rank)."""
        s = self.slot()
        for r in range(self.P):
            self.consts[r][s] = fn(r)
        return s

    def add_split(self, colors) -> int:
        """A sub-communicator: colors[r] is rank r's colour (None: not a member). Returns its group id."""
        self.splits.append(list(colors))
        return len(self.splits)

    def label(self, n: Node) -> str:
        return self.names.get(id(n), n.label)

    # -- 1. static evaluation
    def _static(self):
        st: set[int] = set()
        for n in self.order:
            if (n.op is Op.INPUT and n.type.kind is Kind.sparse) or n.op is Op.IDENTITY:
                st.add(id(n))
            elif n.args and all(id(a) in st for a in n.args):
                st.add(id(n))
        users: dict[int, list] = {}
        for n in self.order:
            for a in n.args:
                users.setdefault(id(a), []).append(n)
        outs = {id(n) for _, n in self.program.outputs}
        needed = {i for i in st if i in outs or any(id(u) not in st for u in users.get(i, []))}
        env = Env(self.mats, self.bound)
        values: dict[int, object] = {}
        last = {}
        for i, n in enumerate(self.order):
            for a in n.args:
                last[id(a)] = i
        for i, n in enumerate(self.order):
            if id(n) not in st:
                continue
            values[id(n)] = EVAL[n.op](n, [values[id(a)] for a in n.args], env)
            for a in n.args:  # drop static intermediates nobody else needs
                if last.get(id(a)) == i and id(a) not in needed:
                    values.pop(id(a), None)
        self.static_ids = st
        self.static = {i: values[i] for i in needed}

    # -- 2. partitioning
    def _partition(self):
        from ..partition import partition

        syms = []
        for n in self.order:
            if n.op is Op.INPUT and n.type.kind is Kind.sparse:
                for d in n.type.shape:
                    if isinstance(d, str) and d not in syms:
                        syms.append(d)
        self.dims: dict[str, DimPart] = {}
        self.partition_info = {}
        for d in syms:
            size = self.bound[d]
            squares = [self.static[id(n.args[0])] for n in self.order
                       if n.op is Op.MXM and id(n.args[0]) in self.static and n.args[0].type.shape == (d, d)]
            if not squares:
                squares = [v for i, v in self.static.items() if self._node(i).type.shape == (d, d)]
            t0 = time.perf_counter()
            if self.opt.parts is not None and (not self.partition_info) and squares:
                parts = np.asarray(self.opt.parts, dtype=np.int64)
                if parts.size != size or (parts.size and (parts.min() < 0 or parts.max() >= self.P)):
                    raise PlanError(f"the partition file has {parts.size} entries with ids "
                                    f"{parts.min() if parts.size else '-'}..{parts.max() if parts.size else '-'}, "
                                    f"but dim {d!r} has {size} indices and P = {self.P}")
                method = "file"
            elif squares and self.opt.partition not in ("block",) and self.P > 1:
                pattern = _union_pattern(squares)
                res = partition(pattern, self.P, self.opt.partition, eps=self.opt.eps, seed=self.opt.seed,
                                cache=self.opt.cache, progress=self.opt.progress)
                parts, method = res.parts, self.opt.partition
                self.partition_info[d] = {"method": method, "imbalance": float(res.imbalance)}
            else:
                from ..partition import block_parts
                parts, method = block_parts(size, self.P), "block"
            self.dims[d] = DimPart(d, parts, self.P, method)
            self.partition_info.setdefault(d, {"method": method})
            self.partition_info[d]["seconds"] = time.perf_counter() - t0

    def _node(self, nid):
        for n in self.order:
            if id(n) == nid:
                return n
        raise KeyError(nid)

    # -- values and conversions
    def value(self, n: Node, layout: Layout | None = None) -> int:
        """The slot holding n's value in ``layout`` (default: its canonical layout)."""
        want = layout or canonical(n.type, self.dims)
        if id(n) in self.static:
            key = (id(n), want)
            if key not in self.conv:
                M = self.static[id(n)]
                self.conv[key] = self.const_all(lambda r: piece(M, want, self.dims, r))
            return self.conv[key]
        v = self.vals[id(n)]
        if v.layout == want:
            return v.slots
        key = (id(n), want)
        if key not in self.conv:
            self.conv[key] = self._convert(n, v, want)
        return self.conv[key]

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

    def concrete(self, dim) -> int:
        return dim if isinstance(dim, int) else self.bound[dim]

    def set(self, n: Node, slot: int, layout: Layout | None = None):
        self.vals[id(n)] = Value(slot, layout or canonical(n.type, self.dims))

    # -- 4. lowering
    def build(self) -> DistPlan:
        t0 = time.perf_counter()
        self._static()
        self._partition()
        self.facts = fullness.prove(self.order, self.static)
        inputs = {}
        for n in self.order:
            if id(n) in self.static_ids:
                continue
            if n.op is Op.INPUT:
                s = self.slot()
                inputs[n.attr("name")] = s
                self.set(n, s)
                continue
            LOWER[n.op](self, n)
        outputs, out_layouts, static_out = {}, {}, {}
        for name, n in self.program.outputs:
            if id(n) in self.static:
                static_out[name] = self.static[id(n)]
                out_layouts[name] = None
                continue
            lay = canonical(n.type, self.dims)
            outputs[name] = (self.value(n), lay)
            out_layouts[name] = lay
        programs = [RankProgram(r, self.P, self.progs[r], self.n_slots, self.consts[r], dict(inputs), dict(outputs),
                                [s[r] for s in self.splits], [w[r] for w in self.windows]) for r in range(self.P)]
        input_layouts = {nm: canonical(self._input(nm).type, self.dims) for nm in inputs}
        return DistPlan(self.P, programs, self.dims, input_layouts, out_layouts, static_out, self.products,
                        self.partition_info, time.perf_counter() - t0, self.program)

    def _input(self, name):
        return next(n for n in self.order if n.op is Op.INPUT and n.attr("name") == name)


def _union_pattern(mats) -> sp.csr_array:
    import graphblas as gb

    out = None
    for M in mats:
        S = gb.io.to_scipy_sparse(M, format="csr")
        S = sp.csr_array((np.ones(S.nnz), S.indices, S.indptr), shape=S.shape)
        out = S if out is None else out + S
    out.sum_duplicates()
    return out


# ----------------------------------------------------------------------- lowering rules
def _local(pl: Planner, n: Node, arg_layouts=None):
    """n computed locally on pieces: operands in the result's layout or replicated."""
    lay = canonical(n.type, pl.dims)
    args = []
    for a in n.args:
        al = canonical(a.type, pl.dims)
        args.append(pl.value(a, al if al in (lay, REP) else REP))
    out = pl.slot()
    pl.emit(Local(out, n, tuple(args)))
    pl.set(n, out, lay)


def _via_rep(pl: Planner, n: Node):
    """The always-correct fallback: gather operands, compute replicated, keep this rank's part."""
    args = tuple(pl.value(a, REP) for a in n.args)
    rep = pl.slot()
    pl.emit(Local(rep, n, args))
    pl.vals[id(n)] = Value(rep, REP)
    lay = canonical(n.type, pl.dims)
    if lay != REP:
        pl.set(n, pl.value(n, lay), lay)


@lower_rule(Op.EWISE_ADD, Op.EWISE_MULT, Op.APPLY, Op.APPLY_BIND, Op.CAST, Op.MASK)
def _elementwise(pl: Planner, n: Node):
    _local(pl, n)


@lower_rule(Op.SELECT)
def _select(pl: Planner, n: Node):
    if n.attr("op").on == "index" and canonical(n.type, pl.dims) != REP:
        return _via_rep(pl, n)  # tril/triu/diag need global positions
    _local(pl, n)


@lower_rule(Op.TRANSPOSE)
def _transpose(pl: Planner, n: Node):
    (x,) = n.args
    xl, nl = canonical(x.type, pl.dims), canonical(n.type, pl.dims)
    flip = {"row": "col", "col": "row", "rep": "rep"}
    if Layout(flip[xl.kind], xl.dim) == nl or (xl == REP and nl == REP):
        out = pl.slot()
        pl.emit(Local(out, n, (pl.value(x),)))
        pl.set(n, out, nl)
    else:
        _via_rep(pl, n)


@lower_rule(Op.REDUCE)
def _reduce(pl: Planner, n: Node):
    (x,) = n.args
    xl, nl = canonical(x.type, pl.dims), canonical(n.type, pl.dims)
    axis = n.attr("axis")
    if xl == REP or (xl.kind == "row" and axis == "rows") or (xl.kind == "col" and axis == "cols"):
        return _local(pl, n)
    part = pl.slot()
    pl.emit(Local(part, n, (pl.value(x),)))   # this rank's partial reduction
    rep = pl.slot()
    pl.emit(Allreduce(rep, part, n.attr("monoid")))
    pl.vals[id(n)] = Value(rep, REP)
    if nl != REP:
        pl.set(n, pl.value(n, nl), nl)


@lower_rule(Op.MXM)
def _mxm(pl: Planner, n: Node):
    a, b = n.args
    inner = a.type.ncols
    sr = n.attr("semiring")
    if isinstance(inner, str) and inner in pl.dims:
        al = canonical(a.type, pl.dims)
        if al.kind == "row" and id(a) in pl.static and canonical(b.type, pl.dims).kind == "row" \
                and not (isinstance(b.type.ncols, str) and b.type.ncols in pl.dims):
            return _product(pl, n)
        if al.kind == "col" or al.kind == "row" and id(a) not in pl.static:
            if al.kind == "row":  # a dynamic row-distributed operand: gather B (sparsity-unaware)
                out = pl.slot()
                pl.emit(MxM(out, pl.value(a), pl.value(b, REP), sr))
                pl.set(n, out, al)
                return None
            part = pl.slot()   # a's columns are distributed like b's rows: local partial + reduce
            pl.emit(MxM(part, pl.value(a), pl.value(b), sr))
            rep = pl.slot()
            pl.emit(Allreduce(rep, part, sr.monoid))
            pl.vals[id(n)] = Value(rep, REP)
            nl = canonical(n.type, pl.dims)
            if nl != REP:
                pl.set(n, pl.value(n, nl), nl)
            return None
        return _via_rep(pl, n)
    # inner dim not distributed: a's rows and b's columns decide the result's layout
    nl = canonical(n.type, pl.dims)
    al, bl = canonical(a.type, pl.dims), canonical(b.type, pl.dims)
    out = pl.slot()
    a_slot = pl.value(a, al if al in (nl, REP) else REP)
    b_slot = pl.value(b, bl if bl in (nl, REP) else REP)
    if al == nl and bl == nl and nl != REP:  # both distributed the same way: one must be whole
        b_slot = pl.value(b, REP)
    pl.emit(MxM(out, a_slot, b_slot, sr))
    pl.set(n, out, nl)


def _product(pl: Planner, n: Node):
    from .product import lower_product
    lower_product(pl, n)


@lower_rule(Op.DROPOUT_MASK)
def _dropout(pl: Planner, n: Node):
    """Local, with this rank's global row (or column) ids, so the mask does not depend on P."""
    x, seed = n.args
    lay = canonical(n.type, pl.dims)
    xs, ss = pl.value(x), pl.value(seed, REP)
    if lay == REP:
        out = pl.slot()
        pl.emit(Local(out, n, (xs, ss)))
        return pl.set(n, out, lay)
    ids = pl.const_all(lambda r: pl.dims[lay.dim].owned[r])
    none = pl.const_all(lambda r: None)
    args = (xs, ss, ids, none) if lay.kind == "row" else (xs, ss, none, ids)
    out = pl.slot()
    pl.emit(Local(out, n, args))
    pl.set(n, out, lay)


@lower_rule(Op.INPUT, Op.IDENTITY)
def _never(pl: Planner, n: Node):
    raise AssertionError(f"{n!r} is handled before lowering")


assert set(LOWER) == set(Op), f"ops without a lowering rule: {set(Op) - set(LOWER)}"
