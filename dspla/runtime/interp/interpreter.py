"""The interpreter's core: the handler table (EXEC) and Runtime, one rank's program bound to a
communicator. The handlers live beside it, one module per kind of instruction."""
from __future__ import annotations

import time
from collections import defaultdict
from typing import Callable

from ...instr import Allreduce, Local, Loop, RankProgram, SmallAllreduce, Traffic, Where, walk
from ...ir.types import DType
from ...kernels import gbops, prepared, recycle
from ...kernels.overflow import Magnitudes, Shadows, maxabs, risky
from ...ops import Env
from ...reference import PREPARE  # (op -> its prepared C call, when its definition has one)
from .. import faults
from . import kept, shm

EXEC: dict[type, Callable] = {}


def handler(cls):
    def register(fn):
        EXEC[cls] = fn
        return fn
    return register


class Runtime:
    """A rank's program bound to a communicator: sub-communicators and windows are set up once;
    ``run`` executes one iteration."""

    def __init__(self, program: RankProgram, comm, extra: dict | None = None, shared_bytes: int = 0,
                 overflow: str = "error"):
        self.program = program
        self.comm = comm
        self.groups = [comm] + [comm.split(color) for color in program.splits]
        self.windows = [comm.window(2 * nrows, row_bytes) for nrows, row_bytes in program.windows]
        self.parity = [1] * len(self.windows)
        # dense rows a peer on this node writes straight into this rank's memory (shm.py;
        # shared_bytes: shm.node_budget's, 0 when the ranks are not on one node)
        self.shm = shm.Channels(comm, program, shared_bytes)
        self.slots: list = [None] * program.n_slots
        self.pool = recycle.Pool()   # outputs of earlier runs and iterations, reused once free
        self.steps = prepared.Steps(PREPARE)   # local steps resolved to their C call once (kernels/prepared.py)
        self.bitmaps: dict = {}      # slot -> a presence bitmap its Fill took back (gbops.take_bitmap)
        self.stacks: dict = {}       # StackMxM -> its last stacked operand, written into again
        self.lookups: dict = {}      # PackSparse -> its rows' positions (buffers.row_lookup), made once
        self.small: dict = {}        # SmallAllreduce of scalars -> (item.Packed, fills, ufuncs)
        self.sendbufs: dict = {}     # Pack -> its last buffer (written into again once its send is done)
        self.last_read: dict = {}    # Pack / StackMxM -> the input it last read (see unchanged_since)
        self.input_slots = frozenset(program.inputs.values())
        # values fixed for the runtime's life (planned pieces, the set-up's static values): what a
        # step decides from one of them holds while the slot holds the same object
        self.static_slots = frozenset(program.consts) | frozenset(
            i.out for i in walk(program.setup) if isinstance(getattr(i, "out", None), int))
        self.units: dict = {}        # MxM -> (its static a, the semiring it runs: compute._unit)
        self.local_kinds: dict = {}  # Local -> (op in INTO, keeps its operand's entries, int64 checked): compute._local
        self.typed: dict = {}        # MxM -> its dtypes and typed operators (compute._typed)
        self._frontiers: dict = {}   # Loop -> its products' frontier slots (frontiers)
        self.traversals: dict = {}   # Loop -> its steps fused (fused.py), or None when it is not one
        self.count_tests: dict = {}  # Loop -> its condition as one count (loops.count_test), or None
        self.unchanged: dict = {}    # id -> this run's inputs the caller says are as they were last run
        for slot, value in program.consts.items():
            self.slots[slot] = value
        self.static_ids = frozenset(id(v) for v in program.consts.values())
        self.held = self.static_ids
        self.extra = extra or {}
        self.patterns: dict = {}   # (Get instruction, window half) -> the window's access pattern
        self.env = Env({}, self.extra.get("dims", {}), overflow)
        self.checked = overflow == "error"   # int64 arithmetic checked for overflow (exec/overflow.py)
        # the local steps whose int64 arithmetic may leave int64 (found once: a set lookup per step)
        every = (*walk(program.setup), *walk(program.instrs))
        self.risky = frozenset(id(i) for i in every if type(i) is Local and risky(i.node)) if self.checked \
            else frozenset()
        # slots whose values are partials of a reduction over ranks (their own overflow is not final)
        self.partials = frozenset(s for i in every if isinstance(i, (Allreduce, SmallAllreduce))
                                  for s in ((i.src,) if type(i) is Allreduce else i.srcs))
        self.shadows = Shadows()   # float64 true values of int64 slots that may have wrapped
        # bounds on int64 values' magnitudes from earlier checks (one process: a collective may
        # write into a value); ``mag``: a value's bound, from them or by its reductions
        self.magnitudes = Magnitudes() if self.checked and comm.size == 1 else None
        self.mag = self.magnitudes.maxabs if self.magnitudes is not None else maxabs
        self.output_names = {slot: name for name, (slot, _) in program.outputs.items()}   # (for messages)
        # what each block moves whatever the data, per product: summed once, added per run (the
        # program) or per iteration (a loop's condition and body)
        self.where = Where(comm.rank, tuple(g.size if g is not None else 0 for g in self.groups))
        self.static_traffic = self.block_traffic(program.instrs)
        self.setup_traffic = self.block_traffic(program.setup)
        # products whose words here depend on the data (planned as the most they can move)
        self.data_dependent = program.data_dependent()
        # steps whose results are kept while their inputs are the same objects (kept.py): id ->
        # the input slots they read; memo: id -> (result, the inputs it was made from)
        self.keeping = kept.steps(program, self.static_slots, self.partials)
        self.memo: dict = {}
        self.same: frozenset = frozenset()   # this run's input slots unchanged and the session's own
        self.setup_done = False
        self.reset_counters()
        # DSPLA_FAULT=RANK:INSTRUCTION[:dspla]: that rank raises before that instruction (faults.py)
        self.fault = faults.at_instruction(comm.rank)

    def close(self):
        """Free the windows (collective: every rank closes its runtime together)."""
        for w in self.windows:
            w.free()
        self.windows = []
        self.shm.free()

    def product_name(self, i) -> str:
        """How messages name the product instruction ``i`` belongs to (its expression)."""
        if getattr(i, "label", ""):
            name = self.output_names.get(i.out)
            return f"output {name} = {i.label}" if name and not i.label.startswith(f"{name} ") else i.label
        expr = getattr(self.program, "products", {}).get(i.product)
        return f"the product {expr}" if expr else f"a product over {i.semiring}"

    def block_traffic(self, instrs) -> dict:
        """product -> what the block's instructions move whatever the data (each loop's own blocks
        are summed apart, in loop_traffic with an iteration's words, and counted per iteration)."""
        out: dict = {}
        for i in instrs:
            if type(i) is Loop:
                cond, body = self.block_traffic(i.cond), self.block_traffic(i.body)
                # an iteration's words whatever the data: its condition check (with rank 0's
                # broadcast of the answer) and its body
                words = sum(t.words_sent for t in (*cond.values(), *body.values()))
                words += i.traffic(self.where, 1).words_sent
                self.loop_traffic[id(i)] = (cond, body, words)
            elif not i.dynamic:
                out[i.product] = out.get(i.product, Traffic()) + i.traffic(self.where)
        # (a product that moves nothing here is not counted: the stats read a missing one as 0)
        return {product: t for product, t in out.items() if any(t)}

    @property
    def loop_traffic(self) -> dict:
        lt = self.__dict__.get("_loop_traffic")
        if lt is None:
            lt = self.__dict__["_loop_traffic"] = {}
        return lt

    def reset_counters(self):
        self.counters: dict = {}   # product -> Traffic
        self.product_times: dict = {}
        self.times = {"compute_s": 0.0, "pack_s": 0.0, "wait_s": 0.0}
        self.iterations: dict = {}   # loop -> iterations run
        self.at_bound: dict = {}     # loop -> (source position, bound), when it stopped at its bound
        self.loop_s: dict = {}       # loop -> seconds in it
        self.loop_words: dict = {}   # loop -> words this rank sent in each iteration (the dynamic ones' too)
        # local product route (kernels/routes.py) -> times taken (a Counter's constructor is Python code)
        self.routes: defaultdict = defaultdict(int)
        self.shm_sends = 0                 # sends written into the receiver's memory (shm.py)
        self.packs_reused = 0              # Packs of an unchanged input: the last rows sent again

    def frontiers(self, loop) -> tuple:
        """The slots of the frontiers (kernels/spmspv.py) the loop's products push or pull."""
        got = self._frontiers.get(id(loop))
        if got is None:
            got = self._frontiers[id(loop)] = tuple({j.push for j in walk(loop.body) if getattr(j, "push", None)
                                                     is not None})
        return got

    def took(self, route: str):
        self.routes[route] += 1

    def unchanged_since(self, step, slot: int) -> bool:
        """Whether ``slot`` holds the input ``step`` read last time, unchanged since (the caller
        said so for this run): what the step made of it then still stands. Only inputs are
        remembered: holding a computed value would keep the pool from reusing its memory."""
        M = self.slots[slot]
        same = id(M) in self.unchanged and self.last_read.get(id(step)) is M
        if slot in self.input_slots:
            self.last_read[id(step)] = M
        return same

    def exclusive(self, slot: int) -> bool:
        """Whether the object in ``slot`` is in no other slot and is no input or static value of
        the run: a step may write into it."""
        M = self.slots[slot]
        return sum(x is M for x in self.slots) == 1 and id(M) not in self.held

    def reusable(self, i):
        """Instruction i's result of the last run or iteration, to be written into, when nothing
        else holds it any more (kernels/recycle.py); its slot lets go of it first."""
        self.slots[i.out] = None
        M = self.pool.take(id(i))
        if M is not None and self.magnitudes is not None:
            self.magnitudes.forget(M)   # (written into again)
        return M

    def count(self, product, t: Traffic):
        if any(t):
            self.counters[product] = self.counters.get(product, Traffic()) + t

    def count_block(self, traffic: dict, times: int = 1):
        for product, t in traffic.items():
            self.count(product, Traffic(*(x * times for x in t)) if times != 1 else t)

    def count_dynamic(self, instr, payload):
        self.count(instr.product, instr.traffic(self.where, payload))

    def run(self, inputs: dict, unchanged=frozenset(), owned=frozenset()) -> dict:
        """One run; ``unchanged``: names of inputs that are the same objects, holding the same
        values, as in the last run (a Pack of one re-sends the rows it packed then); ``owned``:
        those no caller can write into (what depends only on them is kept: kept.py)."""
        s = self.slots
        for name, slot in self.program.inputs.items():
            s[slot] = inputs[name]
        self.unchanged = {id(inputs[n]): inputs[n] for n in unchanged if n in inputs}
        self.held = self.static_ids | {id(v) for v in inputs.values()}   # (Runtime.exclusive)
        if self.keeping:
            self.same = frozenset(slot for n, slot in self.program.inputs.items() if n in unchanged and n in owned)
            if self.memo:
                self.memo = kept.still(self, self.memo, self.same)
                self.held = self.held | {id(m[0]) for m in self.memo.values()}
        if not self.setup_done:   # the plan's deferred static values, computed once
            self.execute(self.program.setup)
            self.count_block(self.setup_traffic)
            self.setup_done = True
        self.execute(self.program.instrs, self.fault, self.keeping or None)
        self.count_block(self.static_traffic)
        if self.shadows.by_slot:   # (products complete now: did any int64 value wrap?)
            self.shadows.flush_all(s)
        out = {name: s[slot] for name, (slot, _) in self.program.outputs.items()}
        if self.memo:   # (a kept result reached as an output, passed through: the caller's is a copy)
            ids = {id(m[0]) for m in self.memo.values()}
            out = {name: M.dup() if id(M) in ids else M for name, M in out.items()}
        for slot in self.program.inputs.values():
            s[slot] = None
        return out

    def execute(self, instrs, fault=None, keeping=None):
        pt = self.product_times
        clock = time.perf_counter
        for k, instr in enumerate(instrs):
            if fault is not None and k == fault[0]:
                faults.raise_fault(fault[1], f"fault injected by DSPLA_FAULT before instruction {k} "
                                             f"({type(instr).__name__})")
            run = EXEC[type(instr)] if keeping is None or id(instr) not in keeping else _kept_step
            product = instr.product
            if product is None:   # (timed by product only)
                run(self, instr)
                continue
            t0 = clock()
            run(self, instr)
            pt[product] = pt.get(product, 0.0) + clock() - t0

    def timed(self, phase: str, t0: float):
        self.times[phase] += time.perf_counter() - t0


def _kept_step(rt: Runtime, i: Local):
    kept.step(rt, i, EXEC[Local])


def _dt(M) -> DType:
    return gbops.dtype_of(M)
