"""Running a compiled Function on P processes.

Every rank calls ``DistSession.run``; inputs are needed on rank 0 only. One call:

  1. rank 0 checks and converts the inputs (errors are raised on every rank, before any data
     moves), and tells the others whether to re-plan and which inputs changed;
  2. planning, when the static inputs, dims or options changed: rank 0 builds every rank's
     program and scatters them (cached: a repeated call with the same sparse inputs re-plans
     nothing);
  3. rank 0 sends each rank its pieces of the inputs that changed;
  4. every rank runs its program ``repeat`` times;
  5. outputs are gathered to rank 0, and the stats of the last iteration.

A failure on any rank after step 1 ends the whole job with one message (MPI Abort).
"""
from __future__ import annotations

import gc
import os
import statistics
import time
import traceback

from .. import compile as compiler
from ..errors import DsplaError, UnknownNameError
from ..exec.values import Array
from ..ir.types import Kind
from ..partition import METHODS
from ..plan.explain import as_text
from ..plan.layout import assemble, piece
from ..plan.options import Options
from ..plan.plans import get_plan
from .interp import Runtime
from .process import settle_garbage
from .wire import coo, from_wire, to_wire


class PeerError(DsplaError):
    """Raised on ranks other than 0 when rank 0 rejected the inputs (rank 0 has the message)."""


class DistSession:
    def __init__(self, function, comm, options: Options | None = None):
        self.f = function
        self.comm = comm
        self.opt = options or Options()
        self.plan = None
        self.runtime = None
        self._plan_key = None
        self._last_inputs: dict = {}
        self.last_stats: dict | None = None
        self.last_local: dict | None = None

    # -- rank 0 only
    def _static_names(self):
        return [n.attr("name") for n in self.f.inputs if n.type.kind is Kind.sparse]

    def _header(self, inputs):
        """Validate on rank 0; decide what to re-plan and re-send."""
        if self.opt.plan != "auto":
            get_plan(self.opt.plan)
        if self.opt.parts is None and self.opt.partition not in METHODS and self.opt.partition != "file":
            raise UnknownNameError("partition method", self.opt.partition, METHODS)
        # An input passed again as the same object is unchanged (the contract the re-send check
        # below relies on too), so its GraphBLAS conversion is reused instead of redone every
        # call (a 10M-entry feature matrix took 70-250 ms per training step to convert).
        bound = self.__dict__.setdefault("_bound", {})
        mats, dims = self.f.bind({k: bound[k][1] if k in bound and bound[k][0] is v else v for k, v in inputs.items()})
        self._bound = {k: (inputs[k], mats[k]) for k in mats}
        key = (tuple((k, id(inputs[k])) for k in self._static_names()), tuple(sorted(dims.items())), self.opt.key())
        if key != self._plan_key or self.plan is None:
            return mats, dims, {"replan": True, "send": None}
        send = [k for k in self.plan.input_layouts if self._last_inputs.get(k) is not inputs[k]]
        return mats, dims, {"replan": False, "send": send}

    # -- every rank
    def run(self, inputs: dict | None = None, repeat: int = 1, local: bool = False):
        comm, rank = self.comm, self.comm.rank
        header = err = None
        if rank == 0:
            try:
                mats, dims, header = self._header(inputs or {})
            except DsplaError as e:
                err = e
        status = comm.bcast(("error", str(err)) if err else ("ok", header), 0)
        if status[0] == "error":
            if rank == 0:
                raise err
            raise PeerError(f"rank 0 rejected the inputs: {status[1]}")
        header = status[1]
        try:
            return self._run(header, mats if rank == 0 else None, dims if rank == 0 else None,
                             inputs if rank == 0 else None, repeat, local)
        except BaseException as e:  # noqa: BLE001 - any failure past this point ends the job
            if isinstance(e, KeyboardInterrupt):
                raise
            detail = traceback.format_exc() if os.environ.get("DSPLA_DEBUG") == "1" else ""
            comm.abort(f"dspla: error on rank {rank}: {type(e).__name__}: {e}\n{detail}".rstrip(), 1)
            raise

    def _run(self, header, mats, dims, inputs, repeat, local):
        comm, rank, P = self.comm, self.comm.rank, self.comm.size
        t_plan = time.perf_counter()
        if header["replan"]:
            programs = None
            if rank == 0:
                self.plan = compiler.distribute(self.f.sized(mats, dims), P, self.opt).plan
                programs, self.plan.programs = self.plan.programs, None  # rank 0 keeps the metadata only
                self._plan_key = (tuple((k, id(inputs[k])) for k in self._static_names()),
                                  tuple(sorted(dims.items())), self.opt.key())
                header["send"] = list(self.plan.input_layouts)
            if getattr(self, "runtime", None) is not None:
                self.runtime.close()   # its windows (a collective: every rank replans together)
            self.runtime = None
            self.runtime = Runtime(comm.scatter(programs, 0), comm)
            settle_garbage()
        planning_s = time.perf_counter() - t_plan
        # inputs
        pieces = None
        if rank == 0:
            pieces = [{} for _ in range(P)]
            for name in header["send"]:
                lay = self.plan.input_layouts[name]
                for r in range(P):
                    pieces[r][name] = to_wire(piece(mats[name], lay, self.plan.dims, r))
                self._last_inputs[name] = inputs[name]
        mine = comm.scatter(pieces, 0)
        held = getattr(self, "_held", {}) if not header["replan"] else {}
        for name, w in mine.items():
            held[name] = from_wire(w)
        self._held = held
        rt = self.runtime
        times = []
        for _ in range(max(1, repeat)):
            rt.reset_counters()
            comm.barrier()
            t0 = time.perf_counter()
            out = rt.run(held)
            gc.collect()   # cheap after settle_garbage(): only this iteration's objects are scanned
            times.append(time.perf_counter() - t0)
        self.last_local = out
        gathered = comm.gather({k: coo(v) for k, v in out.items()}, 0)
        stats = comm.gather(self._rank_stats(rt), 0)
        if rank != 0:
            return out if local else None
        results = {}
        for name, n in self.f.bound(mats, dims).outputs:
            lay = self.plan.output_layouts[name]
            if lay is None:
                M = self.plan.static_outputs[name]
            else:
                shape = tuple(dims[d] if isinstance(d, str) else d for d in n.type.shape)
                M = assemble([g[name] for g in gathered], lay, self.plan.dims, shape, n.type.dtype.gb)
            results[name] = Array(M, name)
        self.last_stats = self._summary(stats, planning_s if header["replan"] else 0.0, times)
        return results if not local else out

    def explain(self) -> str:
        """The plan this session runs: every product's candidates and the choice (rank 0)."""
        return as_text(self.plan, self.comm.size, self.opt) if self.plan is not None else "(not planned yet)"

    def _rank_stats(self, rt: Runtime) -> dict:
        per_product = {k: t._asdict() for k, t in rt.counters.items()}
        total = {"words_sent": 0, "words_received": 0, "messages_sent": 0, "messages_received": 0}
        for c in per_product.values():
            for k in total:
                total[k] += c[k]
        return {**total, **rt.times, "products": per_product, "product_s": dict(rt.product_times)}

    def _summary(self, per_rank: list, planning_s: float, times: list) -> dict:
        P = len(per_rank)

        def agg(rows, key):
            v = [r[key] for r in rows]
            return sum(v), (sum(v) / P if P else 0), max(v) if v else 0

        chosen = sorted({p.plan for p in self.plan.products})
        plan = chosen[0] if len(chosen) == 1 else ("+".join(chosen) if chosen else self.opt.plan)
        out = {"plan": plan, "requested_plan": self.opt.plan, "partition": self._partition_name(), "P": P}
        for key in ("words_sent", "messages_sent"):
            tot, avg, mx = agg(per_rank, key)
            out[f"{key}_total"], out[f"{key}_avg"], out[f"{key}_max"] = tot, avg, mx
        out["per_rank"] = [{k: r[k] for k in ("words_sent", "words_received", "messages_sent", "messages_received",
                                              "compute_s", "pack_s", "wait_s")} for r in per_rank]
        products = []
        for p in self.plan.products:
            rows = [r["products"].get(p.index, {"words_sent": 0, "words_received": 0, "messages_sent": 0,
                                                "messages_received": 0}) for r in per_rank]
            rec = {"index": p.index, "expr": p.expr, "plan": p.plan, "K": p.K, "predicted": p.predicted,
                   "notes": p.notes, "why": p.why,
                   "measured_s_max": max(r["product_s"].get(p.index, 0.0) for r in per_rank),
                   "measured_s_avg": sum(r["product_s"].get(p.index, 0.0) for r in per_rank) / max(1, P)}
            for key in ("words_sent", "messages_sent"):
                tot, avg, mx = agg(rows, key)
                rec[f"{key}_total"], rec[f"{key}_avg"], rec[f"{key}_max"] = tot, avg, mx
            products.append(rec)
        out["products"] = products
        out["planning_s"] = planning_s
        part_s = sum(info.get("seconds", 0.0) for info in self.plan.partition.values()) if planning_s else 0.0
        out["partition_s"] = part_s
        out["planning_without_partition_s"] = max(0.0, planning_s - part_s)
        # the compiler's steps, each timed (the size-dependent passes and the planning steps)
        out["compile_s"] = dict(self.plan.steps_s) if planning_s else {}
        out["iteration_s"] = times
        out["iteration_s_median"] = statistics.median(times)
        return out

    def _partition_name(self) -> str:
        methods = {d: info.get("method") for d, info in self.plan.partition.items()}
        vals = sorted(set(methods.values()))
        return vals[0] if len(vals) == 1 else ",".join(f"{d}:{m}" for d, m in methods.items()) if vals else "none"


__all__ = ["DistSession", "Options", "PeerError"]
