"""A compiled dspla program: the data-independent compiler steps run once at construction;
calling it binds data, finishes compiling for the data's sizes, and runs."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from . import compiler, reference
from .display import Stats, Text
from .errors import DsplaError, UnknownNameError
from .frontend.dsl import Expr
from .ir import Node, Op, Program
from .ir.check import check_program, dim_bindings
from .ir.lint import lint_warnings
from .kernels.overflow import check_mode
from .passes.promote import promote_ints
from .plan.explain import as_json, as_text, synthesize
from .plan.options import Options
from .runtime.launch import one_process, world
from .runtime.process import keep_freed_memory
from .session import DistSession
from .values import Array, InputValue, Meta, bind_inputs
from .values.nodeids import dim_ids, graphs_read, with_ids

if TYPE_CHECKING:
    from graphblas import Matrix
    from typing_extensions import Unpack

    from ._types import RunOptions
    from .plan.distplan import DistPlan
    from .runtime.comm import Comm


class Function:
    """A compiled program (``dp.function(...)``): call it with its inputs by name to run it."""

    def __init__(self, program: Program, overflow: str | None = None) -> None:
        self.source_program = check_program(program)   # user errors, before the compiler's verifier
        self.bound_dims = dim_bindings(program)           # dims the program binds to sizes (X + Y: c = 4)
        # what an int64 sum or product that leaves int64 does (kernels/overflow.py): the argument,
        # else $DSPLA_INT_OVERFLOW (the command line's), else an error
        mode = check_mode(overflow or os.environ.get("DSPLA_INT_OVERFLOW") or "error")
        if mode == "float64":
            program = promote_ints(program)
        self.compiled = compiler.Compiled(program, self.bound_dims)
        self.program = self.compiled.program
        self.inputs = self.program.inputs
        self._decl = {n.attr("name"): n for n in self.inputs}
        self._options: dict[str, Any] = {"overflow": "error" if mode == "float64" else mode}
        self._sessions: dict[tuple[Any, ...], DistSession] = {}
        self._last_stats: Stats | None = None
        self._stats_from: DistSession | None = None   # the session that ran last (its stats are read lazily)

    @property
    def last_stats(self) -> Stats | None:
        """Rank 0: what the last call moved and how long it took (None on the other ranks)."""
        if self._stats_from is not None:
            return self._stats_from.last_stats
        return self._last_stats

    @last_stats.setter
    def last_stats(self, stats: Stats | None) -> None:
        self._last_stats, self._stats_from = stats, None

    @property
    def input_names(self) -> list[str]:
        return list(self._decl)

    @property
    def output_names(self) -> list[str]:
        return [k for k, _ in self.program.outputs]

    @property
    def params(self) -> list[str]:
        return [k for k, n in self._decl.items() if n.attr("role") == "param"]

    def bind(self, inputs: Mapping[str, InputValue]) -> tuple[dict[str, Matrix | Meta], dict[str, int]]:
        """Check and convert inputs: (name -> graphblas Matrix, dim symbol -> size)."""
        return bind_inputs(self._decl, inputs, self.bound_dims)

    def sized(self, mats: dict[str, Matrix | Meta], dims: dict[str, int]) -> compiler.Compilation:
        """The compilation for these sizes (matrix-chain order applied), with the inputs bound.
        Cached by the sizes and the sparse inputs' entry counts."""
        return self.compiled.sized(mats, dims)

    def bound(self, mats: dict[str, Matrix | Meta], dims: dict[str, int]) -> Program:
        """The program for these sizes."""
        return self.sized(mats, dims).program

    def __call__(self, **inputs: InputValue) -> dict[str, Array]:
        """Run on the given inputs, planned once and then run as often as it is called.

        One process: the results are whole ``Array``s. Inside an MPI job (mpiexec/srun) every
        rank calls this (host data such as numpy/scipy values is read on rank 0; results of
        earlier calls are passed as they are, each rank with its piece) and every rank gets
        distributed ``Array``s that stay where they are: pass them to the same or another
        function and nothing moves; ``to_numpy()`` and friends gather them (collectives).
        Options are those set by ``configure``. Inputs passed again as the same objects are
        unchanged (their conversions, and what depends only on them, are kept); a numpy array
        changed in place is not noticed: pass a new one, or call ``invalidate()``. Parameters
        (``dp.param``) are read on every call, so an in-place update of one is seen."""
        keep_freed_memory()
        s = self.session()
        given = graphs_read(inputs)
        ids = dim_ids(self._decl, given)
        out = s.run(given)
        if s.has_stats:   # (rank 0)
            self._stats_from = s
        return with_ids(out, self.program.outputs, ids)

    def invalidate(self) -> None:
        """Forget every kept conversion and plan: the next call binds and plans from scratch (for
        inputs changed in place)."""
        self._sessions = {}
        self.compiled.forget()

    def configure(self, **options: Unpack[RunOptions]) -> Function:
        """Set distributed options (plan, partition, parts, seed, eps, replication, stripe_width,
        memory_cap, cache) used by calls inside an MPI job. Returns self."""
        valid = set(Options.__dataclass_fields__)
        bad = sorted(set(options) - valid)
        if bad:
            raise UnknownNameError("option", bad[0], valid)
        if "overflow" in options and check_mode(options["overflow"]) == "float64":
            raise DsplaError("overflow='float64' changes the program's types: give it to dp.function(..., "
                             "overflow='float64') (or set DSPLA_INT_OVERFLOW=float64)")
        self._options = {**self._options, **options}
        self._sessions = {}
        return self

    @overload
    def run(self, inputs: Mapping[str, InputValue] | None = None, *, comm: Comm | None = None, repeat: int = 1,
            local: Literal[False] = False, **options: Unpack[RunOptions]) -> dict[str, Array]: ...
    @overload
    def run(self, inputs: Mapping[str, InputValue] | None = None, *, comm: Comm | None = None, repeat: int = 1,
            local: Literal[True], **options: Unpack[RunOptions]) -> dict[str, Matrix]: ...

    def run(self, inputs: Mapping[str, InputValue] | None = None, *, comm: Comm | None = None, repeat: int = 1,
            local: bool = False, **options: Unpack[RunOptions]) -> dict[str, Array] | dict[str, Matrix]:
        """Run on ``comm`` (default: the MPI world, else one process) with these options. Every
        rank calls this; host inputs are read on rank 0, distributed ones on every rank. Returns
        distributed ``Array``s on every rank (see ``__call__``), or with local=True this rank's
        pieces as graphblas matrices. ``self.last_stats`` (rank 0) holds what moved."""
        s = self.session(comm, **options)
        inputs = graphs_read(inputs or {})
        ids = dim_ids(self._decl, inputs)
        out = s.run(inputs, repeat=repeat, local=local)
        if s.has_stats:   # (rank 0)
            self._stats_from = s
        return out if local else with_ids(cast("dict[str, Array]", out), self.program.outputs, ids)

    def session(self, comm: Comm | None = None, *, keep: bool = True, **options: Unpack[RunOptions]) -> DistSession:
        """The distributed session running this function on ``comm`` (default: the MPI world,
        else one process through the same runtime) with these options: it plans on its first
        call and again only when the sparse inputs, sizes or options change. Sessions are kept
        per communicator and options unless ``keep=False``."""
        comm = comm or world() or one_process()
        if keep and not options:   # (every plain call: no Options built and keyed again)
            s = self._sessions.get((id(comm),))
            if s is not None:
                return s
        opt = Options(**{**self._options, **options})
        if not keep:
            return DistSession(self.compiled, comm, opt)
        key = (id(comm), opt.key())
        s = self._sessions.get(key)
        if s is None:
            s = self._sessions[key] = DistSession(self.compiled, comm, opt)
        if not options:
            self._sessions[(id(comm),)] = s
        return s

    def _reference(self, inputs: Mapping[str, InputValue]) -> dict[str, Array]:
        t0 = time.perf_counter()
        inputs = graphs_read(inputs)
        mats, dims = self.bind(inputs)
        prog = self.bound(mats, dims)
        env = reference.environment(mats, dims, self._options.get("overflow", "error"))
        out = reference.run(self.compiled.schedule(prog), env)
        self.last_stats = Stats({"plan": "reference", "P": 1, "seconds": time.perf_counter() - t0})
        forms = {name: n.type.form for name, n in prog.outputs}
        return with_ids({k: Array(v, k, form=forms[k]) for k, v in out.items()}, self.program.outputs,
                        dim_ids(self._decl, inputs))

    def plan(self, np: int, inputs: Mapping[str, InputValue], options: Options | None = None,
             dump_after: str | None = None, dump: Callable[[str], object] | None = None) -> compiler.Compilation:
        """Compile for ``np`` processes against ``inputs`` (no MPI needed): every rank's program."""
        mats, dims = self.bind(graphs_read(inputs))
        return compiler.distribute(self.sized(mats, dims), np, options or Options(**self._options),
                                   dump_after=dump_after, dump=dump)

    @overload
    def explain(self, np: int | None = None, *, dims: Mapping[str, int] | None = None, density: float | None = None,
                json: Literal[False] = False, dump_after: str | None = None, timings: bool = False,
                options: Mapping[str, Any] | None = None, **inputs_and_options: Any) -> Text: ...
    @overload
    def explain(self, np: int | None = None, *, dims: Mapping[str, int] | None = None, density: float | None = None,
                json: Literal[True], dump_after: str | None = None, timings: bool = False,
                options: Mapping[str, Any] | None = None, **inputs_and_options: Any) -> dict[str, Any]: ...

    def explain(self, np: int | None = None, *, dims: Mapping[str, int] | None = None, density: float | None = None,
                json: bool = False, dump_after: str | None = None, timings: bool = False,
                options: Mapping[str, Any] | None = None, **inputs_and_options: Any) -> Text | dict[str, Any]:
        """The program after passes; with ``np=P``, also the distributed plan for P processes:
        for every product the plans considered, their predicted time split into compute /
        communication / latency, words and messages, memory per process, and the choice.
        Keyword arguments naming inputs are planned against; the others are options (plan,
        partition, seed, ...). Inputs not given are stood in for from their declared shapes.
        ``dump_after=STEP`` returns what that compiler step produced instead; ``timings=True``
        adds the time each compiler step took. ``options``: options by name whatever the inputs
        are called (a program may have an input named ``seed``)."""
        dumped: list = []
        if dump_after in compiler.step_names()[:compiler.step_names().index("chain-order")]:
            c = compiler.run(compiler.Compilation(self.source_program), stop=dump_after, dump_after=dump_after,
                             dump=dumped.append)   # a data-independent step: run again to show it
            return Text(dumped[0] + (_timings(c.timings) if timings else ""))
        if np is None:
            if dump_after is not None:
                raise DsplaError(f"compiler step {dump_after!r} needs the data's sizes: give np= (and inputs or dims)")
            return Text(str(self.program) + self._warnings() + (_timings(self.compiled.timings) if timings else ""))
        names = set(self.input_names)
        given = dict(graphs_read({k: v for k, v in inputs_and_options.items() if k in names}))
        opts = {k: v for k, v in {**inputs_and_options, **(options or {})}.items()
                if (k not in names or k in (options or {})) and v is not None}
        opt = Options(**{**self._options, **opts})
        bound = {d: size for d, (size, _) in self.bound_dims.items()}   # (sizes the program fixes)
        mats, sizes = self.bind(synthesize(self.inputs, given, {**bound, **(dims or {})}, density))
        sized = self.sized(mats, sizes)
        if dump_after == "chain-order":
            dumped.append(str(sized.program))
        c = compiler.distribute(sized, np, opt, dump_after=dump_after, dump=dumped.append)
        steps = {**self.compiled.timings, **sized.timings, **cast("DistPlan", c.plan).steps_s}
        if json:
            out = as_json(c.plan, np, opt)
            return {**out, "compile_s": steps} if timings else out
        text = dumped[0] if dump_after is not None else as_text(c.plan, np, opt) + self._warnings()
        return Text(text + (_timings(steps) if timings else ""))

    def _warnings(self) -> str:
        lines = lint_warnings(self.source_program)
        return "".join(f"\n{ln}" for ln in lines)

    def __repr__(self) -> str:
        return f"Function({', '.join(self.input_names)} -> {', '.join(self.output_names)})"


def _timings(steps: Mapping[str, float]) -> str:
    rows = [f"  {name:<12} {seconds * 1e3:9.3f} ms" for name, seconds in steps.items()]
    return "\ncompiler steps:\n" + "\n".join(rows)


def function(outputs: Expr | Mapping[str, Expr] | list[Expr] | tuple[Expr, ...],
             inputs: Iterable[Expr] | None = None, overflow: str | None = None) -> Function:
    """Compile expressions into a callable program.

    ``outputs``: a dict name -> expression, a single expression (output ``out``) or a list
    (``out0``, ``out1``, ...). ``inputs``: optional expressions for the inputs, to fix their
    order or to take inputs no output uses. ``overflow``: what an int64 sum or product whose true
    value leaves int64 does: ``"error"`` (the default, or $DSPLA_INT_OVERFLOW), ``"wrap"``
    (GraphBLAS's wrap-around) or ``"float64"`` (integer inputs computed in float64).
    """
    if isinstance(outputs, Expr):
        outputs = {"out": outputs}
    elif isinstance(outputs, (list, tuple)):
        outputs = {f"out{i}": e for i, e in enumerate(outputs)}
    outs = []
    for k, e in outputs.items():
        if not isinstance(e, Expr):
            raise TypeError(f"output {k!r} is not a dspla expression ({type(e).__name__})")
        if not k.isidentifier():
            raise ValueError(f"output name {k!r} is not an identifier")
        outs.append((k, e.node))
    declared: tuple[Node, ...] = ()
    if inputs is not None:
        declared = tuple(e.node for e in inputs)
        bad = [n for n in declared if n.op is not Op.INPUT]
        if bad:
            raise TypeError(f"inputs= takes declared inputs only, got {bad[0]!r}")
    return Function(Program(tuple(outs), declared), overflow)
