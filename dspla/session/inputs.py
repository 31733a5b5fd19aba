"""Rank 0's decisions about a call's inputs: which are unchanged since the last call (their
conversions kept, not sent again), whether the plan still holds (the graph, the sizes, the options
and how the distributed inputs are laid out: the replan key), and whether every rank can plan for
itself (SPMD) or rank 0 plans."""
from __future__ import annotations

import hashlib

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..formats.limits import check_value_sizes
from ..instr.layout import laid_out_as
from ..kernels.gbops import dtype_of
from ..plan import spmd
from ..plan.options import Options
from ..plan.plans import check_choices, check_plan_option, spmd_names
from ..plan.static import is_pattern_leaf, is_static_leaf
from ..values import Meta
from ..values.binding import bind_inputs, with_defaults


def pattern_key(M) -> object:
    """A digest of a sparse value's pattern (what a plan reading it depends on); a value passed
    distributed (its Meta) has none here: planning does not read it (plan/static.py)."""
    if not isinstance(M, gb.Matrix):
        return None
    rows, cols, _ = M.to_coo(values=False)
    return M.nvals, hashlib.blake2b(rows.tobytes() + cols.tobytes(), digest_size=16).digest()


def copied(value) -> bool:
    """Whether binding ``value`` makes a matrix of its own, which no caller holds: numpy, scipy
    and Python values are copied; a python-graphblas value, an Array or a Graph may be bound as
    the caller's own matrix, which they may write into."""
    return isinstance(value, (np.ndarray, list, tuple, int, float, complex, np.generic)) or sp.issparse(value)


def describe(value) -> tuple:
    """What rank 0 needs to know of a distributed input this rank holds a piece of."""
    d, p = value.dist, value._piece
    return (d.kind, d.part.key if d.part is not None else None, value._shape, np.dtype(p.dtype.np_type).name, p.nvals,
            p.nvals == p.nrows * p.ncols)


def metas(mats: dict) -> dict:
    """Each input as what planning on every rank needs of it: shape, dtype, entries, fullness."""
    return {k: m if isinstance(m, Meta) else Meta((m.nrows, m.ncols), dtype_of(m).np.name, m.nvals,
                                                   m.nvals == m.nrows * m.ncols) for k, m in mats.items()}


class Inputs:
    """What rank 0 keeps of the inputs between calls: their conversions (``conv``: name ->
    (object, matrix)), the last call's when all were host values (``bound``), the objects whose
    pieces the ranks hold (``sent``), how the distributed inputs were laid out when planned
    (``given``) and the key the plan was made for (``plan_key``). Parameters are read on every
    call: a trainer updates them, often in place (W -= lr * g), which the same-object rule for
    data inputs would not see."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.decls = {n.attr("name"): n for n in compiled.inputs}
        self.params = frozenset(n.attr("name") for n in compiled.inputs if n.attr("role") == "param")
        self.conv: dict = {}
        self.bound = None
        self.sent: dict = {}
        self.given: dict = {}
        self.plan_key = None
        self.made: dict = {}   # inputs not given, made from their declared defaults

    def with_defaults(self, inputs: dict) -> dict:
        """The inputs with those not given made from their declared defaults (the same objects as
        last call's when their shapes are the same)."""
        return dict(with_defaults(self.decls, inputs, self.compiled.bound_dims, self.made))

    def decide(self, inputs: dict, descs: list, plan, opt: Options, P: int) -> tuple[dict, dict, dict]:
        """(the inputs as matrices, the dims' sizes, what every rank does this call: plan again or
        not, what to gather, what to send). ``descs``: every rank's ``describe`` of the
        distributed values it was given; ``plan``: the one made last (None: none yet)."""
        if opt.parts is None:   # (with parts given, the partition is theirs, whatever its name)
            check_choices(opt.plan, opt.partition, self.compiled.program)
        else:
            check_plan_option(opt.plan, self.compiled.program)
        mine = descs[0]
        for r, d in enumerate(descs[1:], 1):
            if {k: v[:4] for k, v in d.items()} != {k: v[:4] for k, v in mine.items()}:
                raise InputError(f"rank {r} passed other distributed values than rank 0 "
                                 f"({sorted(d)} vs {sorted(mine)}): every rank passes its piece of the same ones")
        # An input passed again as the same object is unchanged (also what the re-send check
        # below relies on), so its GraphBLAS conversion is kept instead of redone every call.
        last = self.bound
        same = last is not None and not mine and not self.params and inputs.keys() == last[0].keys() and \
            all(v is last[0][k] for k, v in inputs.items())
        if same:
            # every input the same object as last call: unchanged, so neither checked nor bound again
            # (a function whose sparse parameter's pattern is planned on never gets here: see below)
            mats, dims = last[1], last[2]
            if plan is not None and not self.given:
                # nor planned or sent again: the last call planned on these and sent them
                return mats, dims, {"replan": False, "gather": [], "send": []}
        else:
            bound = {}
            for k, v in inputs.items():
                if k in mine:
                    kind, _, shape, dtype, _, _ = mine[k]
                    bound[k] = Meta(shape, dtype, sum(d[k][4] for d in descs), all(d[k][5] for d in descs))
                elif k in self.conv and self.conv[k][0] is v and k not in self.params:
                    bound[k] = self.conv[k][1]
                else:
                    bound[k] = v
            mats, dims = bind_inputs(self.decls, bound, self.compiled.bound_dims)
            check_value_sizes(self.compiled.sized(mats, dims).program, dims, P)
            self.conv = {k: (inputs[k], mats[k]) for k in mats if k not in mine and k not in self.params}
        static = [n.attr("name") for n in self.compiled.inputs if is_static_leaf(n)]
        # a sparse parameter's pattern is planned on (plan/sampled.py): a new pattern, a new plan
        patterns = tuple((n.attr("name"), pattern_key(mats[n.attr("name")])) for n in self.compiled.inputs
                         if is_pattern_leaf(n))
        if not same:   # (a pattern is read on every call: a parameter updated in place may change it)
            self.bound = (dict(inputs), mats, dims) if not mine and not patterns and not self.params else None
        key = (tuple((k, id(inputs[k])) for k in static), patterns, tuple(sorted(dims.items())), opt.key())
        laid_out = {k: v[:2] for k, v in mine.items()}
        if key != self.plan_key or plan is None or not self.still_laid_out(plan, laid_out):
            self.given = laid_out
            # "send": the plan's host inputs, known once planned
            header = {"replan": True, "gather": [k for k in static if k in mine], "send": True}
            if header["gather"]:   # the graph came sharded: every rank plans from its rows, if it can
                header.update(self._spmd(inputs, mats, dims, mine, opt, P))
            elif P > 1 and opt.spmd and not patterns and (opt.plan == "auto" or opt.plan in spmd_names()):
                # in memory: rank 0 partitions and shards, then SPMD (not with a sparse parameter: only
                # rank 0 holds its pattern, which planning reads; nor for a plan without an SPMD lowering)
                header["in_memory"] = True   # (the work is _plan's: a failure there ends every rank)
            self.plan_key = key
        else:
            send = [k for k in plan.input_layouts
                    if k not in mine and (k in self.params or self.sent.get(k) is not inputs[k])]
            header = {"replan": False, "gather": [], "send": send}
        return mats, dims, header

    def _spmd(self, inputs: dict, mats: dict, dims: dict, mine: dict, opt: Options, P: int) -> dict:
        """SPMD planning (plan/spmd.py) when the program allows it: what every rank needs to plan
        for itself (the inputs' shapes, dtypes and entry counts, the dims); else why not."""
        order = self.compiled.sized(mats, dims).program.toposort()
        given = {k: inputs[k].dist for k in mine}
        why = spmd.why_not(order, given, P, opt, spmd_names()) if opt.spmd else \
            "planning on every rank is off (spmd=False)"
        if why is not None:
            return {"note": f"planned on rank 0, the sharded graph gathered there: {why}"}
        return {"gather": [], "spmd": (metas(mats), dict(dims))}

    def still_laid_out(self, plan, laid_out: dict) -> bool:
        """Whether the plan takes the distributed inputs as they now are. Its program reads an
        input as it was laid out when planned (plan/lower.py ``_input``): in the plan's layout (or a
        host input, sent in it) nothing moves it, so any value in that layout fits; from another
        layout an instruction moves it (taken from a replicated value, gathered, redistributed
        from those owners), so only a value laid out exactly so fits."""
        def in_plan_layout(name, desc) -> bool:
            lay = plan.input_layouts.get(name)
            # (a host input is sent in the plan's layout; an input the program does not read fits)
            return desc is None or lay is None or laid_out_as(desc[0], desc[1], lay, plan.dims)
        names = set(laid_out) | set(self.given)
        return all(laid_out.get(k) == self.given.get(k) or in_plan_layout(k, laid_out.get(k))
                   and in_plan_layout(k, self.given.get(k)) for k in names)
