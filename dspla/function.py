"""A compiled dspla program: passes run once at construction; calling it binds data and runs."""
from __future__ import annotations

import time

from .errors import InputError
from .exec import reference
from .exec.values import Array, bind_dims, to_matrix
from .frontend.dsl import Expr
from .ir import Node, Op, Program
from .passes import run_pipeline


class Function:
    def __init__(self, program: Program, passes=None):
        self.source_program = program
        self.program = run_pipeline(program, passes)
        self.inputs = self.program.inputs
        self._decl = {n.attr("name"): n for n in self.inputs}
        self._schedule = reference.Schedule(self.program)
        self.last_stats: dict | None = None

    @property
    def input_names(self) -> list[str]:
        return list(self._decl)

    @property
    def output_names(self) -> list[str]:
        return [k for k, _ in self.program.outputs]

    @property
    def params(self) -> list[str]:
        return [k for k, n in self._decl.items() if n.attr("role") == "param"]

    def bind(self, inputs: dict) -> tuple[dict, dict]:
        """Check and convert inputs: (name -> graphblas Matrix, dim symbol -> size)."""
        missing = [k for k in self._decl if k not in inputs]
        extra = [k for k in inputs if k not in self._decl]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing input{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}")
            if extra:
                parts.append(f"unexpected input{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}")
            raise InputError(f"{'; '.join(parts)}; the program takes "
                             f"{', '.join(f'{k}: {n.type}' for k, n in self._decl.items())}")
        mats = {k: to_matrix(inputs[k], self._decl[k]) for k in self._decl}
        return mats, bind_dims(self._decl.values(), mats)

    def __call__(self, **inputs) -> dict[str, Array]:
        """Run on the given inputs. Inside an MPI job (mpiexec/srun) this runs distributed with
        the options set by ``configure`` and returns results on rank 0 (None elsewhere)."""
        from .dist.launch import in_mpi_job
        from .memory import keep_freed_memory

        keep_freed_memory()
        if in_mpi_job():
            return self.run(inputs)
        return self._reference(inputs)

    def configure(self, **options) -> "Function":
        """Set distributed options (plan, partition, parts, seed, eps, replication, stripe_width,
        memory_cap, cache) used by calls inside an MPI job. Returns self."""
        from .dist.planner import Options

        valid = set(Options.__dataclass_fields__)
        bad = sorted(set(options) - valid)
        if bad:
            from .errors import UnknownNameError
            raise UnknownNameError("option", bad[0], valid)
        self._options = {**getattr(self, "_options", {}), **options}
        self._sessions = {}
        return self

    def run(self, inputs: dict | None = None, *, comm=None, repeat: int = 1, local: bool = False, **options):
        """Run distributed on ``comm`` (default: the MPI world). Every rank calls this; inputs are
        read on rank 0 only. Returns the outputs on rank 0 (None on other ranks), or with
        local=True this rank's pieces. ``self.last_stats`` holds what moved."""
        from .dist.launch import world
        from .dist.planner import Options
        from .dist.session import DistSession

        comm = comm or world()
        if comm is None:
            out = self._reference(inputs or {})
            return out
        opt = Options(**{**getattr(self, "_options", {}), **options})
        sessions = self.__dict__.setdefault("_sessions", {})
        key = (id(comm), opt.key())
        s = sessions.get(key)
        if s is None:
            s = sessions[key] = DistSession(self, comm, opt)
        out = s.run(inputs, repeat=repeat, local=local)
        self.last_stats = s.last_stats
        return out

    def bound(self, mats: dict, dims: dict) -> Program:
        """The program for these sizes: the passes that need them (matrix-chain order) applied.
        Cached by the sizes and the sparse inputs' entry counts."""
        nnz = {k: m.nvals for k, m in mats.items() if self._decl[k].type.kind.value == "sparse"}
        key = (tuple(sorted(dims.items())), tuple(sorted(nnz.items())))
        cache = self.__dict__.setdefault("_bound", {})
        if key not in cache:
            from .passes import run_pipeline
            from .passes.chain import chain_order
            by_shape = {}
            for k, m in mats.items():
                t = self._decl[k].type
                if t.kind.value == "sparse":
                    by_shape[t.shape] = max(by_shape.get(t.shape, 0), m.nvals)

            def hint(n):
                if n.op is Op.INPUT:
                    return nnz.get(n.attr("name"))
                return by_shape.get(n.type.shape)
            prog = run_pipeline(self.program, [("matrix-chain", lambda p: chain_order(p, dims, hint))])
            if len(cache) > 16:
                cache.clear()
            cache[key] = (prog, reference.Schedule(prog))
        return cache[key][0]

    def _schedule_for(self, prog: Program):
        for p, sched in self._bound.values():
            if p is prog:
                return sched
        return reference.Schedule(prog)

    def _reference(self, inputs: dict) -> dict[str, Array]:
        t0 = time.perf_counter()
        mats, dims = self.bind(inputs)
        prog = self.bound(mats, dims)
        env = reference.Env(mats, dims)
        out = reference.run(self._schedule_for(prog), env)
        self.last_stats = {"plan": "reference", "P": 1, "seconds": time.perf_counter() - t0}
        return {k: Array(v, k) for k, v in out.items()}

    def explain(self, np: int | None = None, *, dims: dict | None = None, density: float | None = None,
                json: bool = False, **inputs_and_options):
        """The program after passes; with ``np=P``, also the distributed plan for P processes:
        for every product the plans considered, their predicted time split into compute /
        communication / latency, words and messages, memory per process, and the choice.
        Keyword arguments naming inputs are planned against; the others are options (plan,
        partition, seed, ...). Inputs not given are stood in for from their declared shapes."""
        if np is None:
            return str(self.program)
        from .costmodel import load
        from .dist.explain import as_json, as_text, plan_for, synthesize
        from .dist.planner import Options

        names = set(self.input_names)
        given = {k: v for k, v in inputs_and_options.items() if k in names}
        opts = {k: v for k, v in inputs_and_options.items() if k not in names and v is not None}
        opt = Options(**{**getattr(self, "_options", {}), **opts})
        coefs = opt.coefficients or load(np)
        plan = plan_for(self, synthesize(self, given, dims, density), np, opt)
        return as_json(plan, np, coefs.source) if json else as_text(self, plan, np, coefs.source)

    def __repr__(self) -> str:
        return f"Function({', '.join(self.input_names)} -> {', '.join(self.output_names)})"


def function(outputs, inputs=None) -> Function:
    """Compile expressions into a callable program.

    ``outputs``: a dict name -> expression, a single expression (output ``out``) or a list
    (``out0``, ``out1``, ...). ``inputs``: optional expressions for the inputs, to fix their
    order or to take inputs no output uses.
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
    return Function(Program(tuple(outs), declared))
