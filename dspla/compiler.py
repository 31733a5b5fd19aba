"""The compiler, as lists of steps.

    PIPELINE:      verify -> simplify -> cse -> chain-order -> static-eval -> partition -> facts
                   -> lower -> choose -> fuse -> verify-plan
    SPMD_PIPELINE: the same steps by name; from static-eval on, every rank plans its own program
                   from its pieces of the graph (plan/spmd.py)

The first three need only the program (they run when a Function is made); chain-order needs
the sizes of the inputs (it runs when they are known, for one process too); the rest plan
for P processes. Every step is a function ``Compilation -> Compilation`` that returns a new
one and changes nothing it was given; the steps on the expression IR are checked by the IR
verifier after each, and the plan is checked by the last step. Each step is timed
(``Compilation.timings``) and its result printable (``dspla explain FILE --np P --dump-after STEP``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

from .errors import DsplaError, UnknownNameError
from .ir import Op, Program
from .passes import chain_order, cse, simplify, verify
from .plan import facts as facts_mod
from .plan import partitioning, spmd, static
from .plan.choose import choose, lowered
from .plan.explain import as_text
from .plan.fuse import fuse
from .plan.lower import lower
from .plan.options import Options
from .plan.verify import verify_plan
from .reference import Schedule
from .runtime.interp import Runtime

if TYPE_CHECKING:
    from graphblas import Matrix

    from .instr import RankProgram
    from .instr.layout import DimPart
    from .ops import Facts
    from .plan.distplan import DistPlan
    from .plan.lower import Lowering
    from .plan.static import Static
    from .values import Communicator, Dist, Meta


@dataclass(frozen=True)
class Compilation:
    """Everything known about one program at one point of the pipeline."""
    program: Program
    mats: dict[str, Matrix | Meta] | None = None   # the inputs (values only needed by static-eval)
    sizes: dict[str, int] | None = None            # dim symbol -> size
    P: int | None = None
    options: Options | None = None
    static: Static | None = None
    dims: dict[str, DimPart] | None = None         # the partitioned dims' owners
    partition_info: dict[str, dict] | None = None  # dim symbol -> how it was partitioned (explain, the stats)
    given: dict[str, Dist] | None = None           # inputs passed already distributed: how they are laid out
    facts: dict[int, Facts] | None = None          # id(node) -> what planning proved of it
    lowering: Lowering | None = None               # every rank's instructions, products with their candidates
    plan: DistPlan | None = None
    # SPMD planning (plan/spmd.py): every rank of ``comm`` runs the P steps for itself; ``local``
    # holds its pieces of the sharded static inputs (name -> graphblas Matrix)
    comm: Communicator | None = None
    local: dict[str, Matrix] | None = None
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[Compilation], Compilation]
    show: Callable[[Compilation], str]
    needs: str = "program"          # "program" | "sizes" | "P": what must be known to run it


def _ir_pass(fn):
    return lambda c: replace(c, program=fn(c.program))


def _nnz_hint(c: Compilation):
    """Entries of each sparse factor, for matrix-chain order: inputs by their data, others by
    the largest sparse input of the same shape."""
    mats = c.mats or {}
    nnz = {n.attr("name"): mats[n.attr("name")].nvals for n in c.program.inputs
           if n.type.kind.value == "sparse" and n.attr("name") in mats}
    by_shape = {}
    for n in c.program.inputs:
        if n.attr("name") in nnz:
            by_shape[n.type.shape] = max(by_shape.get(n.type.shape, 0), nnz[n.attr("name")])
    return lambda n: nnz.get(n.attr("name")) if n.op is Op.INPUT else by_shape.get(n.type.shape)


def _chain(c: Compilation) -> Compilation:
    return replace(c, program=chain_order(c.program, c.sizes, _nnz_hint(c)))


def _verify(c: Compilation) -> Compilation:
    return replace(c, program=verify(c.program, after="verify"))


def _static(c: Compilation) -> Compilation:
    return replace(c, static=static.evaluate(c.program.toposort(), c.program.outputs, c.mats, c.sizes,
                                             c.options.overflow if c.options else "error"))


def _static_spmd(c: Compilation) -> Compilation:
    """SPMD static evaluation: this rank's pieces of the static leaves, and of the derived static
    values the plan reads (Â, degrees, Aᵀ), computed now by a plan of their own, made by the
    same steps from facts on and run distributed (every rank, together). The dims are fixed
    first (the shards' or rank 0's owners; any other dim by blocks), so that both plans lay
    every value out alike."""
    order = c.program.toposort()
    if c.dims is None:   # from shards: their owners, and blocks for a dim they do not partition
        dims, info = partitioning.partition_dims(order, static.Static(set(), {}), c.sizes, c.P, c.options, c.given)
        c = replace(c, dims=dims, partition_info=info)
    dims = c.dims
    values = spmd.leaves(order, c.local, dims, c.comm.rank, c.sizes)
    ids, deferred, todo = spmd.derived(order, c.program.outputs)
    if todo:
        pre = Program(tuple((f"static{k}", n) for k, n in enumerate(todo)))
        pre_order = pre.toposort()
        ident = {id(n): values[id(n)] for n in pre_order if n.op is Op.IDENTITY}   # the graph's inputs: dynamic here
        plan = run(Compilation(pre, sizes=c.sizes, P=c.P, options=c.options, given=c.given, comm=c.comm,
                               static=static.Static(set(ident), ident), dims=dims,
                               partition_info={d: {"method": p.method} for d, p in dims.items()}),
                   start="facts", stop="verify-plan", pipeline=SPMD_PIPELINE).plan
        out = _execute(plan.programs[0], c.comm, c.options, {n.attr("name"): c.local[n.attr("name")]
                                                            for n in pre_order if n.op is Op.INPUT})
        values.update({id(n): out[f"static{k}"] for k, n in enumerate(todo)})
    keep = {id(n) for n in order if id(n) in ids and id(n) in values}
    return replace(c, static=static.Static(ids, {i: values[i] for i in keep}, deferred))


def _execute(program: RankProgram, comm: Communicator, options: Options, inputs: dict) -> dict:
    """Run a rank program once on ``comm``, every rank together (the derived static values' plan)."""
    rt = Runtime(program, comm, shared_bytes=options.shared_memory_bytes, overflow=options.overflow)
    rt.fault = None   # (DSPLA_FAULT names an instruction of the plan's program, not of this one)
    try:
        return rt.run(inputs)
    finally:
        rt.close()


def _partition(c: Compilation) -> Compilation:
    dims, info = partitioning.partition_dims(c.program.toposort(), c.static, c.sizes, c.P, c.options, c.given)
    return replace(c, dims=dims, partition_info=info)


def _adopt_partition(c: Compilation) -> Compilation:
    return c   # SPMD: the dims were fixed by static-eval (the shards' owners, or rank 0's partition)


def _facts(c: Compilation) -> Compilation:
    # one process sends no messages, whose presence bitmaps the rows / columns facts spare: it
    # proves only which static values are full and which bound others' missing rows (a product's
    # full-output route), not the two reductions over each (a few ms for a large graph)
    return replace(c, facts=facts_mod.prove(c.program.toposort(), c.static.values, lines=c.P > 1, sizes=c.sizes))


def _facts_spmd(c: Compilation) -> Compilation:
    return replace(c, facts=spmd.prove(c.program.toposort(), c.static.values, c.comm, c.dims, c.sizes))


def _lower(c: Compilation) -> Compilation:
    return replace(c, lowering=lower(c.program, c.static, c.dims, c.facts, c.sizes, c.P, c.options, c.given,
                                     c.comm, on_lowered=lowered))


def _choose(c: Compilation) -> Compilation:
    return replace(c, plan=choose(c.lowering, c.partition_info))


def _fuse(c: Compilation) -> Compilation:
    # (SPMD: this rank's program; the verdicts compared by one allgather)
    return replace(c, plan=replace(c.plan, programs=fuse(c.plan.programs, c.comm)))


def _verify_plan(c: Compilation) -> Compilation:
    verify_plan(c.plan.programs)
    return c


def _verify_plan_spmd(c: Compilation) -> Compilation:
    spmd.verify(c.plan.programs[0], c.comm)   # this rank's program only: messages checked against the others'
    return c


def _show_facts(c: Compilation) -> str:
    names = c.program.names()
    rows = [f"  {names[id(n)]}: {c.facts[id(n)]!r}" for n in c.program.toposort()]
    return "facts (full: every entry present; rows/cols: every row/column has one):\n" + "\n".join(rows)


def _show_programs(c: Compilation) -> str:
    shown = c.plan.programs[:2]
    more = f"\n(ranks 2..{c.P - 1} alike)" if c.P > 2 else ""
    return "\n".join(str(p) for p in shown) + more


def _show_program(c: Compilation) -> str:
    return str(c.program)


_IR_STEPS: tuple[Step, ...] = (
    Step("verify", _verify, _show_program),
    Step("simplify", _ir_pass(simplify), _show_program),
    Step("cse", _ir_pass(cse), _show_program),
    Step("chain-order", _chain, _show_program, needs="sizes"),
)


def _planning(static_eval, partition, facts, verify_plan) -> tuple[Step, ...]:
    return (
        Step("static-eval", static_eval, lambda c: c.static.describe(c.program.toposort(), c.program.names()),
             needs="P"),
        Step("partition", partition, lambda c: partitioning.describe(c.dims), needs="P"),
        Step("facts", facts, _show_facts, needs="P"),
        Step("lower", _lower, lambda c: c.lowering.describe(), needs="P"),
        Step("choose", _choose, lambda c: as_text(c.plan, c.P, c.options), needs="P"),
        Step("fuse", _fuse, _show_programs, needs="P"),
        Step("verify-plan", verify_plan, _show_programs, needs="P"),
    )


# rank 0 plans every rank's program
PIPELINE: tuple[Step, ...] = _IR_STEPS + _planning(_static, _partition, _facts, _verify_plan)
# every rank plans its own (Compilation.comm), from its pieces of the sharded graph
SPMD_PIPELINE: tuple[Step, ...] = _IR_STEPS + _planning(_static_spmd, _adopt_partition, _facts_spmd,
                                                        _verify_plan_spmd)


def step_names() -> list[str]:
    return [s.name for s in PIPELINE]


def run(c: Compilation, start: str | None = None, stop: str | None = None, dump_after: str | None = None,
        dump=None, pipeline: tuple = PIPELINE) -> Compilation:
    """Run the steps from ``start`` through ``stop`` (names; default the whole list). With
    ``dump_after``, ``dump(text)`` gets that step's printed result."""
    names = [s.name for s in pipeline]
    for n in (start, stop, dump_after):
        if n is not None and n not in names:
            raise UnknownNameError("compiler step", n, names)
    lo = names.index(start) if start else 0
    hi = names.index(stop) if stop else len(names) - 1
    timings = dict(c.timings)
    for step in pipeline[lo:hi + 1]:
        if step.needs == "sizes" and c.sizes is None or step.needs == "P" and c.P is None:
            raise DsplaError(f"compiler step {step.name!r} needs the {step.needs} of a run")
        t0 = time.perf_counter()
        before = c.program
        c = step.run(c)
        if step.needs != "P" and c.program is not before and step.run is not _verify:
            # a rewrite of the expression IR: verified after it (a step that changed nothing leaves
            # the program it was given, verified already)
            c = replace(c, program=verify(c.program, after=step.name))
        timings[step.name] = time.perf_counter() - t0
        if dump_after == step.name and dump is not None:
            dump(step.show(c))
    return replace(c, timings=timings)


def frontend(program: Program) -> Compilation:
    """The steps that need only the program: verify, simplify, cse."""
    return run(Compilation(program), stop="cse")


def for_sizes(c: Compilation, mats: dict, sizes: dict) -> Compilation:
    """The program for these input sizes (matrix-chain order)."""
    return run(replace(c, mats=mats, sizes=sizes), start="chain-order", stop="chain-order")


def distribute(c: Compilation, P: int, options: Options, dump_after: str | None = None, dump=None,
               given: dict | None = None, comm=None, local: dict | None = None,
               dims: dict | None = None, partition_info: dict | None = None) -> Compilation:
    """The plan for P processes: static evaluation through plan verification. ``c`` has its
    sizes bound (for_sizes); ``given``: how inputs passed already distributed are laid out.
    With ``comm`` (SPMD planning, a collective): this rank's program, from its pieces ``local``
    of the sharded static inputs (the derived static values are computed by a plan of their own,
    run there and then by the runtime); ``dims``/``partition_info``: the partition rank 0 made
    (the in-memory path)."""
    t0 = time.perf_counter()
    spmd_only = {"dims": dims, "partition_info": partition_info} if comm is not None else {}
    c = run(replace(c, P=P, options=options, timings={}, given=given, comm=comm, local=local,
                    **spmd_only), start="static-eval", dump_after=dump_after, dump=dump,
            pipeline=PIPELINE if comm is None else SPMD_PIPELINE)
    return replace(c, plan=replace(c.plan, planning_s=time.perf_counter() - t0, steps_s=dict(c.timings)))


class Compiled:
    """A program compiled as far as it goes without data (``frontend``), and for each size of its
    inputs met so far (``sized``, cached by the sizes and the sparse inputs' entry counts, with
    the reference executor's schedule of that program)."""

    def __init__(self, program: Program, bound_dims: dict | None = None) -> None:
        self.bound_dims = bound_dims or {}   # the sizes the program binds dims to (ir.check.dim_bindings)
        self.compilation = frontend(program)
        self.program = self.compilation.program
        self.inputs = self.program.inputs
        self._sparse = {n.attr("name") for n in self.inputs if n.type.kind.value == "sparse"}
        self._sized: dict[tuple, tuple[Compilation, Schedule]] = {}

    @property
    def timings(self) -> dict[str, float]:
        return self.compilation.timings

    def sized(self, mats: dict, dims: dict) -> Compilation:
        """The compilation for these sizes (matrix-chain order applied), with the inputs bound."""
        nnz = {k: m.nvals for k, m in mats.items() if k in self._sparse}
        key = (tuple(sorted(dims.items())), tuple(sorted(nnz.items())))
        hit = self._sized.get(key)
        if hit is None:
            if len(self._sized) > 16:
                self._sized.clear()
            c = replace(for_sizes(self.compilation, mats, dims), mats=None)   # (not the graph: it outlives it)
            hit = self._sized[key] = (c, Schedule(c.program))
        c, _ = hit
        return Compilation(c.program, mats, dims, timings=c.timings)

    def schedule(self, program: Program) -> Schedule:
        """The reference executor's schedule of a sized program (made once)."""
        for c, sched in self._sized.values():
            if c.program is program:
                return sched
        return Schedule(program)

    def forget(self) -> None:
        """Drop every sized compilation (inputs changed in place)."""
        self._sized = {}
