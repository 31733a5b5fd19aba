"""Running a compiled Function on P processes, and keeping its results where they are.

Every rank calls ``DistSession.run``. Inputs are of two kinds: values from the user's process
(numpy, scipy, graphblas: read on rank 0) and results of earlier calls (``Array``s distributed
over this communicator: every rank passes its own piece). One call:

  1. every rank describes the distributed values it was given; rank 0 checks them and the
     other inputs (errors are raised on every rank, before any data moves) and decides whether
     to plan again and which of its inputs to send;
  2. planning, when the graph, the sizes, the options or how the distributed inputs are laid
     out changed: rank 0 builds every rank's program and scatters them (a repeated call with
     the same inputs plans nothing); a distributed input on its way to another layout is moved
     by an explicit instruction of the plan;
  3. rank 0 sends each rank its pieces of the host inputs that changed;
  4. every rank runs its program ``repeat`` times (each repeat with every input counted changed:
     the iterations of a benchmark move what a new X would);
  5. every rank returns its pieces as distributed ``Array``s: nothing is gathered unless asked
     (``to_numpy()`` and friends are collectives). The stats of the last iteration go to rank 0.

One process (a one-rank communicator) takes the same path without any communication. A
failure on any rank after step 1 ends the whole job with one message (MPI Abort).
"""
from __future__ import annotations

import gc
import hashlib
import resource
import statistics
import sys
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import graphblas as gb
import numpy as np

from .. import compile as compiler
from ..display import Stats
from ..errors import DsplaError, InputError, LoopBoundWarning, warn
from ..exec.acyclic import acyclic
from ..exec.gbops import dtype_of
from ..exec.values import Array, Dist, Meta, meet
from ..io.limits import check_value_sizes
from ..ir import Op
from ..plan import spmd
from ..plan.explain import as_text, loop_words, summed
from ..plan.ir import Where
from ..plan.layout import DimPart, canonical, piece
from ..plan.options import Options
from ..plan.plans import check_choices, check_plan_option, spmd_names
from ..plan.static import is_pattern_leaf, is_static_leaf
from .failure import PeerError, fail, is_quiet, on_root
from .interp import Runtime, shm
from .process import collect_run_garbage, older_collections, settle_garbage
from .wire import from_wire, to_wire


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (Linux reports KiB; simulated ranks share one
    process, so they report the same number)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def pattern_key(M) -> object:
    """A digest of a sparse value's pattern (what a plan reading it depends on); a value passed
    distributed (its Meta) has none here: planning does not read it (plan/static.py)."""
    if not isinstance(M, gb.Matrix):
        return None
    rows, cols, _ = M.to_coo(values=False)
    return M.nvals, hashlib.blake2b(rows.tobytes() + cols.tobytes(), digest_size=16).digest()


def describe(value) -> tuple:
    """What rank 0 needs to know of a distributed input this rank holds a piece of."""
    d, p = value.dist, value._piece
    return (d.kind, d.part.key if d.part is not None else None, value.shape, np.dtype(p.dtype.np_type).name, p.nvals,
            p.nvals == p.nrows * p.ncols)


_BIG = 1 << 24   # entries on this rank above which planning's garbage is collected at once


def _entries(mats: dict | None, dist: dict | None) -> int:
    """Entries of the inputs this rank holds (``mats``: rank 0's host inputs, else None)."""
    return sum(m.nvals for m in (mats or {}).values() if hasattr(m, "nvals")) + \
        sum(v._piece.nvals for v in (dist or {}).values() if hasattr(v._piece, "nvals"))


def _loop_predicted(plan, k: int) -> dict:
    """Loop k's words per iteration as planned, all ranks together (DistPlan.loop_words, summed
    once at planning): the products', those outside products (scalar allreduces, the
    condition's broadcast), and whether the sum is exact or the most a sparse operand can move."""
    products, outside, exact = plan.loop_words.get(k, (0, 0, True))
    return {"words_predicted_per_iteration": products + outside, "words_predicted_products": products,
            "words_predicted_outside_products": outside, "loop_words_predicted": "exact" if exact else "at most"}


class DistSession:
    def __init__(self, function, comm, options: Options | None = None):
        self.f = function
        self.comm = comm
        self.opt = options or Options()
        self.plan = None          # rank 0: what planning decided (the programs are scattered)
        self.layout = None        # every rank: (dims, output layouts, output shapes) to lay results out
        self.runtime = None
        self._plan_key = None
        self._conv: dict = {}     # rank 0: name -> (object, graphblas Matrix): conversions kept
        self._bound = None        # rank 0: (inputs, mats, dims) of the last call, when all were host values
        self._sent: dict = {}     # rank 0: name -> the object whose pieces the ranks hold
        self._held: dict = {}     # every rank: name -> its piece of a host input
        self._given: dict = {}    # rank 0: how the distributed inputs were laid out when planned
        # parameters are read on every call: a trainer updates them, often in place (W -= lr * g),
        # which the same-object rule for data inputs would not see
        self._params = frozenset(n.attr("name") for n in function.inputs if n.attr("role") == "param")
        self._stats: Stats | None = None
        self._pending: tuple | None = None   # rank 0: the last run's figures, until last_stats is read
        self._node: int | None = None   # bytes a rank may share with the others (0: not on one node)
        self._call = f"a call of the function of {', '.join(name for name, _ in function.program.outputs)}"

    @property
    def last_stats(self) -> Stats | None:
        """Rank 0: the last run's stats (None elsewhere, and before the first run)."""
        if self._pending is not None:
            self._stats, self._pending = Stats(self._summary(*self._pending)), None
        return self._stats

    @property
    def has_stats(self) -> bool:
        """Whether a run left stats here (rank 0, after its first run), without summarising them."""
        return self._pending is not None or self._stats is not None

    # -- rank 0: checking the inputs and deciding what to do
    def _decide(self, inputs: dict, descs: list) -> tuple[dict, dict, dict]:
        if self.opt.parts is None:   # (with parts given, the partition is theirs, whatever its name)
            check_choices(self.opt.plan, self.opt.partition, self.f.program)
        else:
            check_plan_option(self.opt.plan, self.f.program)
        mine = descs[0]
        for r, d in enumerate(descs[1:], 1):
            if {k: v[:4] for k, v in d.items()} != {k: v[:4] for k, v in mine.items()}:
                raise InputError(f"rank {r} passed other distributed values than rank 0 "
                                 f"({sorted(d)} vs {sorted(mine)}): every rank passes its piece of the same ones")
        # An input passed again as the same object is unchanged (also what the re-send check
        # below relies on), so its GraphBLAS conversion is kept instead of redone every call.
        last = self._bound
        same = last is not None and not mine and not self._params and inputs.keys() == last[0].keys() and \
            all(v is last[0][k] for k, v in inputs.items())
        if same:
            # every input the same object as last call: unchanged, so neither checked nor bound again
            # (a function whose sparse parameter's pattern is planned on never gets here: see below)
            mats, dims = last[1], last[2]
            if self.plan is not None and not self._given:
                # nor planned or sent again: the last call planned on these and sent them
                return mats, dims, {"replan": False, "gather": [], "send": []}
        else:
            bound = {}
            for k, v in inputs.items():
                if k in mine:
                    kind, _, shape, dtype, _, _ = mine[k]
                    bound[k] = Meta(shape, dtype, sum(d[k][4] for d in descs), all(d[k][5] for d in descs))
                elif k in self._conv and self._conv[k][0] is v and k not in self._params:
                    bound[k] = self._conv[k][1]
                else:
                    bound[k] = v
            mats, dims = self.f.bind(bound)
            check_value_sizes(self.f.sized(mats, dims).program, dims, self.comm.size)
            self._conv = {k: (inputs[k], mats[k]) for k in mats if k not in mine and k not in self._params}
        static = [n.attr("name") for n in self.f.inputs if is_static_leaf(n)]
        # a sparse parameter's pattern is planned on (plan/sampled.py): a new pattern, a new plan
        patterns = tuple((n.attr("name"), pattern_key(mats[n.attr("name")])) for n in self.f.inputs
                         if is_pattern_leaf(n))
        if not same:   # (a pattern is read on every call: a parameter updated in place may change it)
            self._bound = (dict(inputs), mats, dims) if not mine and not patterns and not self._params else None
        key = (tuple((k, id(inputs[k])) for k in static), patterns, tuple(sorted(dims.items())), self.opt.key())
        laid_out = {k: v[:2] for k, v in mine.items()}
        if key != self._plan_key or self.plan is None or not self._still_laid_out(laid_out):
            self._given = laid_out
            # "send": the plan's host inputs, known once planned
            header = {"replan": True, "gather": [k for k in static if k in mine], "send": True}
            if header["gather"]:   # the graph came sharded: every rank plans from its rows, if it can
                header.update(self._spmd(inputs, mats, dims, mine))
            elif self.comm.size > 1 and self.opt.spmd and not patterns:   # in memory: rank 0 partitions and shards,
                # then SPMD (not with a sparse parameter: only rank 0 holds its pattern, which planning reads)
                header["in_memory"] = True   # (the work is _plan's: a failure there ends every rank)
            self._plan_key = key
        else:
            send = [k for k in self.plan.input_layouts
                    if k not in mine and (k in self._params or self._sent.get(k) is not inputs[k])]
            header = {"replan": False, "gather": [], "send": send}
        return mats, dims, header

    def _spmd(self, inputs: dict, mats: dict, dims: dict, mine: dict) -> dict:
        """SPMD planning (plan/spmd.py) when the program allows it: what every rank needs to plan
        for itself (the inputs' shapes, dtypes and entry counts, the dims); else why not."""
        order = self.f.sized(mats, dims).program.toposort()
        given = {k: inputs[k].dist for k in mine}
        why = spmd.why_not(order, given, self.comm.size, self.opt, spmd_names()) if self.opt.spmd else \
            "planning on every rank is off (spmd=False)"
        if why is not None:
            return {"note": f"planned on rank 0, the sharded graph gathered there: {why}"}
        metas = {k: m if isinstance(m, Meta) else Meta((m.nrows, m.ncols), dtype_of(m).np.name, m.nvals,
                                                        m.nvals == m.nrows * m.ncols) for k, m in mats.items()}
        return {"gather": [], "spmd": (metas, dict(dims))}

    def _shard_in_memory(self, mats: dict, dims: dict, dist: dict) -> dict:
        """The in-memory path: rank 0 holds the graph; it partitions it (static-eval and partition,
        as planning on one rank would) and will send every rank its rows of the graph's inputs;
        then every rank plans its own program, as from shards. Returns the header's part."""
        given = {k: v.dist for k, v in dist.items()}   # (values passed distributed keep their owners)
        c = compiler.run(replace(self.f.sized(mats, dims), P=self.comm.size, options=self.opt, timings={},
                                 given=given), start="static-eval", stop="partition")
        # the graph's inputs the program reads (one it declares and never reads is sent nowhere)
        leaves = {n.attr("name"): canonical(n.type, c.dims) for n in c.program.toposort()
                  if n.op is Op.INPUT and is_static_leaf(n) and n.attr("name") not in dist}
        metas = {k: m if isinstance(m, Meta) else Meta((m.nrows, m.ncols), dtype_of(m).np.name, m.nvals,
                                                        m.nvals == m.nrows * m.ncols) for k, m in mats.items()}
        return {"spmd": (metas, dict(dims)), "dims": {d: (p.parts, p.method) for d, p in c.dims.items()},
                "partition_info": c.partition_info, "scatter": leaves,
                "rank0_s": {k: c.timings[k] for k in ("static-eval", "partition")}}

    def _still_laid_out(self, laid_out: dict) -> bool:
        """Whether the plan takes the distributed inputs as they now are: as they were when it was
        made, or (host inputs then, distributed now, or the other way) already in its layouts."""
        def fits(name, desc) -> bool:
            if desc is None:
                return True    # a host input: sent in the plan's layout
            lay = self.plan.input_layouts.get(name)
            if lay is None or lay.kind == "rep" or desc[0] == "rep":
                return lay is None or lay.kind == desc[0] or desc[0] == "rep"
            return desc[0] == lay.kind and desc[1] == self.plan.dims[lay.dim].key
        names = set(laid_out) | set(self._given)
        return all(laid_out.get(k) == self._given.get(k) or fits(k, laid_out.get(k)) and fits(k, self._given.get(k))
                   for k in names)

    # -- every rank
    def run(self, inputs: Mapping[str, Any] | None = None, repeat: int = 1, local: bool = False):
        comm, rank = self.comm, self.comm.rank
        if self._node is None:   # (every rank's first run: collectives)
            self._node = shm.node_budget(comm)
            self.opt = replace(self.opt, shared_memory_bytes=self._node)
        if comm.size > 1:   # (a rank that ended its script without this call ends the job, naming it)
            meet(comm, self._call)
        inputs = dict(inputs or {})
        dist = {k: v for k, v in inputs.items() if isinstance(v, Array) and v.dist is not None and v.dist.comm is comm}
        desc = {k: describe(v) for k, v in dist.items()}
        mats = dims = header = err = None
        descs = [desc] if comm.size == 1 else comm.gather(desc, 0)
        if rank == 0:
            try:
                mats, dims, header = self._decide(inputs, descs)
            except DsplaError as e:
                err = e
        status = ("error", str(err)) if err else ("ok", header)
        if comm.size > 1:
            status = comm.bcast(status, 0)
        if status[0] == "error":
            if rank == 0:
                err.agreed = True   # every rank knows: they all stop here, rank 0 reports
                raise err
            raise PeerError(f"rank 0 rejected the inputs: {status[1]}")
        try:
            return self._run(status[1], mats, dims, inputs, dist, repeat, local)
        except BaseException as e:  # noqa: BLE001 - any failure past this point ends the job
            if isinstance(e, KeyboardInterrupt) or comm.size == 1 or getattr(e, "agreed", False) or is_quiet(e):
                raise
            if getattr(e, "everywhere", False):   # raised alike on every rank (SPMD planning): rank 0 reports
                if rank == 0:
                    e.agreed = True
                    raise
                raise PeerError(f"rank 0 failed: {e}") from None
            fail(comm, e, 1)   # one message, every rank stopped (runtime/failure.py)
            raise

    def _plan(self, header, mats, dims, inputs, dist):
        """Plan on rank 0 and hand every rank its program, or (SPMD) every rank its own (a
        collective)."""
        comm, rank, P = self.comm, self.comm.rank, self.comm.size
        if header.get("in_memory"):
            part = self._shard_in_memory(mats, dims, dist) if rank == 0 else None
            header = {**header, **comm.bcast(part, 0)}
        if header.get("spmd"):
            if "dims" not in header:   # from shards
                return self._plan_spmd(header["spmd"], dist)
            dims_ = {d: DimPart(d, parts, P, method) for d, (parts, method) in header["dims"].items()}
            pieces = None
            if rank == 0:   # every rank's rows of the graph
                pieces = [{k: piece(mats[k], lay, dims_, r) for k, lay in header["scatter"].items()} for r in range(P)]
                pieces = [{k: to_wire(v) for k, v in p.items()} for p in pieces]
            mine = comm.scatter(pieces, 0)
            shapes = header["spmd"][0]
            dist = {**dist, **{k: Array(from_wire(w), k, Dist(lay.kind, lay.dim, dims_.get(lay.dim), comm),
                                        (shapes[k].nrows, shapes[k].ncols))
                               for (k, lay), w in zip(header["scatter"].items(), mine.values())}}
            return self._plan_spmd(header["spmd"], dist, dims_, header)
        for name in header["gather"]:   # a distributed graph: planning reads it whole (on rank 0)
            M = dist[name].to_graphblas(root=0)
            if rank == 0:
                mats[name] = M
        def plan_on_root():
            given = {k: v.dist for k, v in dist.items()}
            self.plan = compiler.distribute(self.f.sized(mats, dims), P, self.opt, given=given).plan
            self.plan.planning_note = header.get("note")
            self.plan.loop_words = loop_words(self.plan)
            programs, self.plan.programs = self.plan.programs, None   # rank 0 keeps the metadata only
            shapes = {name: tuple(dims[d] if isinstance(d, str) else d for d in n.type.shape)
                      for name, n in self.plan.program.outputs}
            return programs, (self.plan.dims, self.plan.output_layouts, shapes)

        # (a plan that cannot be made, e.g. one asked for that cannot run a product: every rank
        # learns it from rank 0 and stops with its message, instead of waiting for programs)
        programs, layout = on_root(comm, plan_on_root) or (None, None)
        if self.runtime is not None:
            self.runtime.close()   # its windows (a collective: every rank replans together)
        self.runtime = None
        if P > 1:
            programs = comm.scatter(programs, 0)
            layout = comm.bcast(layout, 0)
        else:
            programs = programs[0]
        self.layout = layout
        self.runtime = Runtime(programs, comm, shared_bytes=self._node, overflow=self.opt.overflow)
        self._held = {}
        self._runs = 0

    def _plan_spmd(self, sized: tuple, dist: dict, parts: dict | None = None, header: dict | None = None):
        """Every rank plans its own program from its pieces of the sharded inputs (plan/spmd.py);
        no program moves. Every rank reaches the same choices, so rank 0's plan describes all.
        ``parts``: the dims rank 0 partitioned (in memory; ``header`` has its partition info)."""
        comm, P = self.comm, self.comm.size
        metas, dims = sized
        c = self.f.sized(metas, dims)   # the same program on every rank: sizes and counts agree
        plan = compiler.distribute(c, P, self.opt, given={k: v.dist for k, v in dist.items()}, comm=comm,
                                   local={k: v._piece for k, v in dist.items()}, execute=self._execute,
                                   dims=parts, partition_info=header and header["partition_info"]).plan
        if header is not None:   # rank 0's part of planning: static-eval and partition, on the whole graph
            plan.steps_s = {**plan.steps_s, **{k: plan.steps_s.get(k, 0.0) + v for k, v in header["rank0_s"].items()}}
        (program,), plan.programs = plan.programs, None
        # every rank's loop words, added up (small): what explain shows for the whole plan
        all_splits = [list(c) for c in zip(*comm.allgather(list(program.splits)))]
        where = Where(comm.rank, program.group_sizes(all_splits))
        plan.loop_words = summed(comm.allgather(program.loop_words(where)))
        shapes = {name: tuple(dims[d] if isinstance(d, str) else d for d in n.type.shape)
                  for name, n in plan.program.outputs}
        self.plan = plan   # (every rank: the same metadata; rank 0's is the one reported)
        self.layout = (plan.dims, plan.output_layouts, shapes)
        if self.runtime is not None:
            self.runtime.close()
        self.runtime = Runtime(program, comm, shared_bytes=self._node, overflow=self.opt.overflow)
        self._held = {}
        self._runs = 0

    def _execute(self, program, inputs: dict) -> dict:
        """Run a rank program once on this communicator (SPMD planning's derived static values)."""
        rt = Runtime(program, self.comm, shared_bytes=self._node, overflow=self.opt.overflow)
        rt.fault = None   # (DSPLA_FAULT names an instruction of the plan's program, not of this one)
        try:
            return rt.run(inputs)
        finally:
            rt.close()

    def _run(self, header, mats, dims, inputs, dist, repeat, local):
        comm, rank, P = self.comm, self.comm.rank, self.comm.size
        t_plan = time.perf_counter()
        if header["replan"]:
            self._plan(header, mats, dims, inputs, dist)
        planning_s = time.perf_counter() - t_plan
        if header["replan"] and _entries(mats, dist) > _BIG:
            # planning's temporaries (matrices in reference cycles) freed before the run reuses the
            # room; a full collection costs tens of ms, worth it only when they are large
            gc.collect()
        if header["send"]:   # this rank's pieces of the host inputs that changed
            pieces = None
            if rank == 0:
                pieces = [{} for _ in range(P)]
                send = header["send"] if header["send"] is not True else \
                    [k for k in self.plan.input_layouts if k not in dist]
                for name in send:
                    lay = self.plan.input_layouts[name]
                    for r in range(P):
                        pieces[r][name] = piece(mats[name], lay, self.plan.dims, r)
                    self._sent[name] = inputs[name]
                if P > 1:
                    pieces = [{k: to_wire(v) for k, v in p.items()} for p in pieces]
            mine = comm.scatter(pieces, 0) if P > 1 else pieces[0]
            # kept for the next calls and freed when replaced (exec/acyclic.py); one process's pieces
            # are the inputs' conversions (acyclic already, exec/values.py) or the caller's own
            self._held.update({k: acyclic(from_wire(v)) if P > 1 else v for k, v in mine.items()})
        # the host inputs' pieces not sent again are this rank's own objects as they were (a
        # distributed input's piece is the caller's, who may have written into it: not counted)
        sent = set(mine) if header["send"] else set()
        unchanged = frozenset(k for k in self._held if k not in sent and k not in self._params) \
            if not header["replan"] else frozenset()
        held = {**self._held, **{k: v._piece for k, v in dist.items()}}
        rt = self.runtime
        times = []
        for n in range(max(1, repeat)):
            if self._runs == 1:
                # the plan is in use (run again): its objects leave the collector's view (a full
                # collection, once), so collecting each run's temporaries below is cheap
                settle_garbage()
            rt.reset_counters()
            if P > 1:
                comm.barrier()
            t0 = time.perf_counter()
            older = older_collections()
            # a repeat is a benchmark's iteration: it counts the inputs as changed and packs and
            # sends them as a new X would be (counted unchanged, on one node p2p1d moved nothing,
            # and `dspla bench runtime` timed the local product alone from b8ce3b5 to 50349b6)
            out = rt.run(held, unchanged if n == 0 else frozenset())
            if self._runs >= 1:
                collect_run_garbage(older)   # this run's dead matrices (runtime/process.py)
            self._runs += 1
            times.append(time.perf_counter() - t0)
        mine = {**self._rank_stats(rt), "planning_s": planning_s if header["replan"] else 0.0,
                "first_iteration_s": times[0] if header["replan"] else 0.0, "peak_rss_bytes": peak_rss_bytes()}
        stats = [mine] if P == 1 else comm.gather(mine, 0)
        if rank == 0:
            # summarised when read (about 40 us: a one-process call's product can take less)
            self._stats, self._pending = None, (self.plan, stats, planning_s if header["replan"] else 0.0, times)
            for loop, (where, bound) in sorted(rt.at_bound.items()):
                warn(LoopBoundWarning(
                    f"{where + ': ' if where else ''}loop {loop} ran all {bound} iterations it may: it stopped at its "
                    "bound, not because its condition became false"))
        if local:
            return out
        dims_, layouts, shapes = self.layout
        results = {}
        for name, M in out.items():
            lay = layouts[name]
            part = dims_[lay.dim] if lay.kind != "rep" else None
            results[name] = Array(M, name, Dist(lay.kind, lay.dim, part, comm), shapes[name])
        return results

    def explain(self) -> str:
        """The plan this session runs: every product's candidates and the choice (rank 0)."""
        return as_text(self.plan, self.comm.size, self.opt) if self.plan is not None else "(not planned yet)"

    def _rank_stats(self, rt: Runtime) -> dict:
        per_product = {k: t._asdict() for k, t in rt.counters.items()}
        total = {"words_sent": 0, "words_received": 0, "messages_sent": 0, "messages_received": 0}
        for c in per_product.values():
            for k in total:
                total[k] += c[k]
        return {**total, **rt.times, "products": per_product, "product_s": dict(rt.product_times),
                "iterations": dict(rt.iterations), "at_bound": dict(rt.at_bound), "loop_s": dict(rt.loop_s),
                "loop_words": dict(rt.loop_words), "routes": dict(rt.routes), "shm_sends": rt.shm_sends,
                "data_dependent": sorted(rt.data_dependent)}

    def _summary(self, plan, per_rank: list, planning_s: float, times: list) -> dict:
        P = len(per_rank)

        def agg(rows, key):
            v = [r[key] for r in rows]
            return sum(v), (sum(v) / P if P else 0), max(v) if v else 0

        chosen = sorted({p.plan for p in plan.products})
        name = chosen[0] if len(chosen) == 1 else ("+".join(chosen) if chosen else
                                                    self.opt.plan if isinstance(self.opt.plan, str) else "auto")
        out = {"plan": name, "requested_plan": self.opt.plan, "partition": _partition_name(plan), "P": P}
        for key in ("words_sent", "messages_sent"):
            tot, avg, mx = agg(per_rank, key)
            out[f"{key}_total"], out[f"{key}_avg"], out[f"{key}_max"] = tot, avg, mx
        out["per_rank"] = [{k: r[k] for k in ("words_sent", "words_received", "messages_sent", "messages_received",
                                              "compute_s", "pack_s", "wait_s", "peak_rss_bytes", "planning_s",
                                              "first_iteration_s", "shm_sends")} for r in per_rank]
        # who planned: every rank its own program (sharded inputs), or rank 0 all of them
        out["planning"] = plan.planning
        if plan.planning_note:
            out["planning_note"] = plan.planning_note
        rss = [r["peak_rss_bytes"] for r in per_rank]
        out["peak_rss_bytes_max"], out["peak_rss_bytes_median"] = max(rss), statistics.median(rss)
        iterations = per_rank[0]["iterations"]   # every rank runs a loop the same number of times
        # per loop: iterations, seconds (the slowest rank), and the words all ranks sent in each
        # iteration (a BFS's words follow its frontier)
        out["loops"] = [{"loop": k, "iterations": v, "seconds": max(r["loop_s"].get(k, 0.0) for r in per_rank),
                         "words_per_iteration": [int(sum(w)) for w in
                                                 zip(*(r["loop_words"].get(k, []) for r in per_rank))],
                         "stopped_at_bound": k in per_rank[0]["at_bound"], **_loop_predicted(plan, k)}
                        for k, v in sorted(iterations.items())]
        products = []
        data_dependent = set().union(*(r["data_dependent"] for r in per_rank))
        for p in plan.products:
            rows = [r["products"].get(p.index, {"words_sent": 0, "words_received": 0, "messages_sent": 0,
                                                "messages_received": 0}) for r in per_rank]
            rec = {"index": p.index, "expr": p.expr, "plan": p.plan, "K": p.K, "predicted": p.predicted,
                   "notes": p.notes, "why": p.why,
                   # "exact": measured words equal the predicted ones; "at most": a sparse operand's
                   # messages carry its present entries only, so the prediction is a bound
                   "words_predicted": "at most" if p.index in data_dependent else "exact",
                   "measured_s_max": max(r["product_s"].get(p.index, 0.0) for r in per_rank),
                   "measured_s_avg": sum(r["product_s"].get(p.index, 0.0) for r in per_rank) / max(1, P)}
            for key in ("words_sent", "messages_sent"):
                tot, avg, mx = agg(rows, key)
                rec[f"{key}_total"], rec[f"{key}_avg"], rec[f"{key}_max"] = tot, avg, mx
            if p.loop is not None:   # a product in a loop body ran once per iteration
                rec["loop"] = p.loop
                its = max(1, iterations.get(p.loop, 0))
                rec["iterations"] = iterations.get(p.loop, 0)
                rec["words_sent_per_iteration"] = rec["words_sent_total"] / its
                rec["messages_sent_per_iteration"] = rec["messages_sent_total"] / its
            products.append(rec)
        out["products"] = products
        # the local products' routes (exec/routes.py), summed over ranks: which kernel ran how often
        out["routes"] = dict(sum((Counter(r.get("routes", {})) for r in per_rank), Counter()))
        out["planning_s"] = planning_s
        part_s = sum(info.get("seconds", 0.0) for info in plan.partition.values()) if planning_s else 0.0
        out["partition_s"] = part_s
        out["planning_without_partition_s"] = max(0.0, planning_s - part_s)
        # the compiler's steps, each timed (the size-dependent passes and the planning steps)
        out["compile_s"] = dict(plan.steps_s) if planning_s else {}
        out["iteration_s"] = times
        out["iteration_s_median"] = statistics.median(times)
        return out


def _partition_name(plan) -> str:
    methods = {d: info.get("method") for d, info in plan.partition.items()}
    vals = sorted(set(methods.values()))
    return vals[0] if len(vals) == 1 else ",".join(f"{d}:{m}" for d, m in methods.items()) if vals else "none"


__all__ = ["DistSession", "Options", "PeerError"]
