"""Running a compiled program on P processes, and keeping its results where they are: the stage
above the compiler and the runtime that drives both for one call after another.

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
failure on any rank after step 1 ends the whole job with one message (MPI Abort). What rank 0
decides about the inputs is inputs.py's; what a run reports, stats.py's.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .. import compiler
from ..display import Stats
from ..errors import DsplaError, LoopBoundWarning, warn
from ..formats.shards import edge_share
from ..instr import Where
from ..instr.layout import DimPart, canonical
from ..ir import Op
from ..kernels.acyclic import acyclic
from ..kernels.buffers import piece
from ..plan.explain import as_text, loop_words, summed
from ..plan.options import Options
from ..plan.static import is_static_leaf
from ..runtime.failure import PeerError, fail, is_quiet, on_root
from ..runtime.interp import Runtime, shm
from ..runtime.process import (
    collect_run_garbage,
    collections_so_far,
    drop_plan_garbage,
    planning_mark,
    ran_a_plan,
    release_freed_memory,
    settle_garbage,
    settlements,
)
from ..runtime.wire import from_wire, to_wire
from ..values import Array, Dist, meet
from .inputs import Inputs, copied, describe, metas
from .stats import peak_rss_bytes, rank_stats, reset_peak_rss, run_counts, summary

_BIG = 1 << 18   # entries on this rank above which planning's garbage is collected at once


def _entries(mats: dict | None, dist: dict | None) -> int:
    """Entries of the inputs this rank holds (``mats``: rank 0's host inputs, else None)."""
    return sum(m.nvals for m in (mats or {}).values() if hasattr(m, "nvals")) + \
        sum(v._piece.nvals for v in (dist or {}).values() if hasattr(v._piece, "nvals"))


def _planned(rt) -> int:
    """Entries of the pieces this rank's plan holds (its rows of the graph, planned blocks)."""
    return sum(v.nvals for v in rt.slots if hasattr(v, "nvals")) if rt is not None else 0


class DistSession:
    """One compiled program (``compiler.Compiled``) run on a communicator with these options,
    call after call: it plans on its first call and again only when the sparse inputs, sizes or
    options change."""

    def __init__(self, compiled: compiler.Compiled, comm, options: Options | None = None):
        self.compiled = compiled
        self.comm = comm
        self.opt = options or Options()
        self.plan = None          # rank 0: what planning decided (the programs are scattered)
        self.layout = None        # every rank: (dims, output layouts, output shapes) to lay results out
        self.runtime = None
        self._settled_at = 0      # plans frozen (runtime/process.py settlements) when this one was made
        self.inputs = Inputs(compiled)   # rank 0: what it keeps of the inputs between calls
        self._held: dict = {}     # every rank: name -> its piece of a host input
        self._copies: set = set()  # the names whose pieces are the session's own copies (no caller's)
        self._stats: Stats | None = None
        self._pending: tuple | None = None   # rank 0: the last run's figures, until last_stats is read
        self._node: int | None = None   # bytes a rank may share with the others (0: not on one node)
        self._outs: dict | None = None   # every rank: output name -> (its Dist, shape, form), per plan
        self._call = f"a call of the function of {', '.join(name for name, _ in compiled.program.outputs)}"

    @property
    def last_stats(self) -> Stats | None:
        """Rank 0: the last run's stats (None elsewhere, and before the first run)."""
        if self._pending is not None:
            plan, per_rank, planning_s, times = self._pending
            per_rank = [r if isinstance(r, dict) else {**rank_stats(r[0]), **r[1]} for r in per_rank]
            self._stats, self._pending = Stats(summary(plan, per_rank, planning_s, times, self.opt.plan)), None
        return self._stats

    @property
    def has_stats(self) -> bool:
        """Whether a run left stats here (rank 0, after its first run), without summarising them."""
        return self._pending is not None or self._stats is not None

    # -- rank 0: checking the inputs and deciding what to do
    def _shard_in_memory(self, mats: dict, dims: dict, dist: dict) -> dict:
        """The in-memory path: rank 0 holds the graph; it partitions it (static-eval and partition,
        as planning on one rank would) and will send every rank its rows of the graph's inputs;
        then every rank plans its own program, as from shards. Returns the header's part."""
        given = {k: v.dist for k, v in dist.items()}   # (values passed distributed keep their owners)
        c = compiler.run(replace(self.compiled.sized(mats, dims), P=self.comm.size, options=self.opt, timings={},
                                 given=given), start="static-eval", stop="partition")
        # the graph's inputs the program reads (one it declares and never reads is sent nowhere)
        leaves = {n.attr("name"): canonical(n.type, c.dims) for n in c.program.toposort()
                  if n.op is Op.INPUT and is_static_leaf(n) and n.attr("name") not in dist}
        # an edge partition's (vertexcut's): each rank gets its share with its rows
        self._edge_shares = {d: [edge_share(p.edges, p.owned[r], p.size) for r in range(p.P)]
                             for d, p in c.dims.items() if p.edges is not None}
        return {"spmd": (metas(mats), dict(dims)), "dims": {d: (p.parts, p.method) for d, p in c.dims.items()},
                "edge_dims": sorted(self._edge_shares),
                "partition_info": c.partition_info, "scatter": leaves,
                "rank0_s": {k: c.timings[k] for k in ("static-eval", "partition")}}

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
                inputs = self.inputs.with_defaults(inputs)
                mats, dims, header = self.inputs.decide(inputs, descs, self.plan, self.opt, comm.size)
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
            for d in header.get("edge_dims", ()):
                dims_[d].edges = comm.scatter(self._edge_shares.pop(d) if rank == 0 else None, 0)
            pieces = None
            if rank == 0:   # every rank's rows of the graph
                pieces = [{k: piece(mats[k], lay, dims_, r) for k, lay in header["scatter"].items()} for r in range(P)]
                pieces = [{k: to_wire(v) for k, v in p.items()} for p in pieces]
            mine = comm.scatter(pieces, 0)
            # rank 0's whole-graph pieces and its static-eval of the whole graph are garbage now
            # (GraphBLAS matrices sit in reference cycles): freed before it plans its share, whose
            # buffers then reuse that memory instead of raising its peak above the others'
            pieces = None
            if rank == 0:
                release_freed_memory()
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
            plan = compiler.distribute(self.compiled.sized(mats, dims), P, self.opt, given=given).plan
            programs = plan.programs   # (to their ranks: rank 0 keeps the metadata only)
            self.plan = replace(plan, programs=None, planning_note=header.get("note"), loop_words=loop_words(plan))
            shapes = {name: tuple(dims[d] if isinstance(d, str) else d for d in n.type.shape)
                      for name, n in self.plan.program.outputs}
            return programs, (self.plan.dims, self.plan.output_layouts, shapes)

        # (a plan that cannot be made, e.g. one asked for that cannot run a product: every rank
        # learns it from rank 0 and stops with its message, instead of waiting for programs)
        programs, layout = on_root(comm, plan_on_root) or (None, None)
        if P > 1:
            programs = comm.scatter(programs, 0)
            layout = comm.bcast(layout, 0)
        else:
            programs = programs[0]
        self.layout, self._outs = layout, None
        self.runtime = Runtime(programs, comm, shared_bytes=self._node, overflow=self.opt.overflow)
        self._held, self._copies = {}, set()
        self._runs = 0

    def _plan_spmd(self, sized: tuple, dist: dict, parts: dict | None = None, header: dict | None = None):
        """Every rank plans its own program from its pieces of the sharded inputs (plan/spmd.py);
        no program moves. Every rank reaches the same choices, so rank 0's plan describes all.
        ``parts``: the dims rank 0 partitioned (in memory; ``header`` has its partition info)."""
        comm, P = self.comm, self.comm.size
        metas, dims = sized
        c = self.compiled.sized(metas, dims)   # the same program on every rank: sizes and counts agree
        plan = compiler.distribute(c, P, self.opt, given={k: v.dist for k, v in dist.items()}, comm=comm,
                                   local={k: v._piece for k, v in dist.items()},
                                   dims=parts, partition_info=header and header["partition_info"]).plan
        steps_s = plan.steps_s
        if header is not None:   # rank 0's part of planning: static-eval and partition, on the whole graph
            steps_s = {**steps_s, **{k: steps_s.get(k, 0.0) + v for k, v in header["rank0_s"].items()}}
        (program,) = plan.programs
        # every rank's loop words, added up (small): what explain shows for the whole plan
        all_splits = [list(c) for c in zip(*comm.allgather(list(program.splits)))]
        where = Where(comm.rank, program.group_sizes(all_splits))
        words = summed(comm.allgather(program.loop_words(where)))
        plan = replace(plan, programs=None, steps_s=steps_s, loop_words=words)
        shapes = {name: tuple(dims[d] if isinstance(d, str) else d for d in n.type.shape)
                  for name, n in plan.program.outputs}
        self.plan = plan   # (every rank: the same metadata; rank 0's is the one reported)
        self.layout, self._outs = (plan.dims, plan.output_layouts, shapes), None
        self.runtime = Runtime(program, comm, shared_bytes=self._node, overflow=self.opt.overflow)
        self._held, self._copies = {}, set()
        self._runs = 0

    def _receive(self, send, mats, inputs, dist) -> set:
        """This rank's pieces of the host inputs that changed (rank 0 cuts and sends them; ``send``:
        their names, or True for every host input of the plan), kept for the next calls; returns
        their names."""
        comm, rank, P = self.comm, self.comm.rank, self.comm.size
        pieces = None
        if rank == 0:
            pieces = [{} for _ in range(P)]
            for name in send if send is not True else [k for k in self.plan.input_layouts if k not in dist]:
                lay = self.plan.input_layouts[name]
                for r in range(P):
                    pieces[r][name] = piece(mats[name], lay, self.plan.dims, r)
                self.inputs.sent[name] = inputs[name]
            if P > 1:
                pieces = [{k: to_wire(v) for k, v in p.items()} for p in pieces]
        mine = comm.scatter(pieces, 0) if P > 1 else pieces[0]
        # kept for the next calls and freed when replaced (kernels/acyclic.py); one process's pieces
        # are the inputs' conversions (acyclic already, exec/values.py) or the caller's own
        self._held.update({k: acyclic(from_wire(v)) if P > 1 else v for k, v in mine.items()})
        # (on P ranks every piece was sent, a copy; one process holds the conversion, or the
        # caller's own matrix)
        self._copies = (self._copies - set(mine)) | {k for k in mine if P > 1 or copied(inputs.get(k))}
        return set(mine)

    def _run(self, header, mats, dims, inputs, dist, repeat, local):
        comm, rank, P = self.comm, self.comm.rank, self.comm.size
        # (simulated ranks share one process: rank 0's collections serve all; each rank's set the others' off)
        heap = rank == 0 or not getattr(comm, "simulated", False)
        if header["replan"] and self.runtime is not None:   # the plan replaced: its values freed first
            self.runtime.close()   # its windows (a collective: every rank replans together)
            self.runtime, self._held = None, {}
            if heap:
                drop_plan_garbage(settlements() != self._settled_at)
        t_plan, mark = time.perf_counter(), planning_mark() if header["replan"] else None
        if header["replan"]:
            try:
                self._plan(header, mats, dims, inputs, dist)
            except BaseException:
                self.plan = self.inputs.plan_key = None   # (the next call plans again, whatever its inputs)
                raise
            self._settled_at = settlements()
        planning_s = time.perf_counter() - t_plan
        if header["replan"] and max(_entries(mats, dist), _planned(self.runtime)) > _BIG:
            # planning's temporaries (matrices in reference cycles) freed and their pages returned,
            # so the run's buffers do not stack on planning's peak; a full collection costs tens of
            # ms, worth it only when they are large
            release_freed_memory(since=mark)
        sent = self._receive(header["send"], mats, inputs, dist) if header["send"] else set()
        # the host inputs' pieces not sent again are this rank's own objects as they were (a
        # distributed input's piece is the caller's, who may have written into it: not counted)
        unchanged = frozenset(k for k in self._held if k not in sent and k not in self.inputs.params) \
            if not header["replan"] else frozenset()
        owned = unchanged & self._copies   # (what depends only on these is kept: runtime/interp/kept.py)
        held = {**self._held, **{k: v._piece for k, v in dist.items()}}
        rt = self.runtime
        times = []
        before = reset_peak_rss()   # (planning's peak; the run's own is read after it)
        for n in range(max(1, repeat)):
            if self._runs == 1 and heap:
                # the plan is in use (run again): its objects leave the collector's view (a full
                # collection, once), so collecting each run's temporaries below is cheap
                settle_garbage()
            rt.reset_counters()
            if P > 1:
                comm.barrier()
            t0 = time.perf_counter()
            counts = collections_so_far()
            # a repeat is a benchmark's iteration: it counts the inputs as changed and packs and
            # sends them as a new X would be (counted unchanged, on one node p2p1d moved nothing,
            # and `dspla bench runtime` timed the local product alone)
            out = rt.run(held, unchanged if n == 0 else frozenset(), owned)
            ran_a_plan()
            if self._runs >= 1 and heap:
                collect_run_garbage(counts)   # this run's dead matrices (runtime/process.py)
            self._runs += 1
            times.append(time.perf_counter() - t0)
        mine = {"planning_s": planning_s if header["replan"] else 0.0,
                "first_iteration_s": times[0] if header["replan"] else 0.0,
                "peak_rss_bytes": max(before, peak := peak_rss_bytes()), "run_peak_rss_bytes": peak}
        # (one process: its counts made figures when read, as the summary is)
        stats = [(run_counts(rt), mine)] if P == 1 else comm.gather({**rank_stats(run_counts(rt)), **mine}, 0)
        if rank == 0:
            # summarised when read (about 40 us: a one-process call's product can take less)
            self._stats, self._pending = None, (self.plan, stats, planning_s if header["replan"] else 0.0, times)
            for loop, (where, bound) in sorted(rt.at_bound.items()):
                warn(LoopBoundWarning(
                    f"{where + ': ' if where else ''}loop {loop} ran all {bound} iterations it may: it stopped at its "
                    "bound, not because its condition became false"))
        if local:
            return out
        outs = self._outs
        if outs is None:   # (once per plan: each result's layout, shape and form, shared by its Arrays)
            dims_, layouts, shapes = self.layout
            forms = {name: n.type.form for name, n in self.compiled.program.outputs}
            outs = self._outs = {
                name: (Dist(lay.kind, lay.dim, dims_[lay.dim] if lay.kind != "rep" else None, comm), shapes[name],
                       forms.get(name, "matrix")) for name, lay in layouts.items() if name in shapes}
        return {name: Array(M, name, outs[name][0], outs[name][1], form=outs[name][2]) for name, M in out.items()}

    def explain(self) -> str:
        """The plan this session runs: every product's candidates and the choice (rank 0)."""
        return as_text(self.plan, self.comm.size, self.opt) if self.plan is not None else "(not planned yet)"

__all__ = ["DistSession", "Options", "PeerError"]
