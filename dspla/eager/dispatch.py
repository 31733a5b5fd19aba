"""Every ``dp`` function, eager on concrete values and traced on expressions (JAX's model).

A call whose arguments hold an expression builds IR, as it always did (inside ``dp.function``).
A call on concrete values runs at once: the operation is traced once per signature of its
values (kind, shape, dtype) and of its other arguments, on stand-in inputs, and kept; one
process evaluates that small program through the ops' evaluation rules (the reference
evaluator: no compiler), so a repeated call costs a dict lookup over the kernel's own time. In
an MPI job (or on a communicator given with ``running_on``) the same program is compiled as a
``Function`` once per signature, and its session plans once per input pattern: the operation
runs on every rank, distributed, and returns distributed values.
"""
from __future__ import annotations

import functools
import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import DsplaError
from ..ir import Program
from ..ir.types import Type
from ..ops import SPELLINGS, Expr, builder
from ..ops.define import CALLS, EXPR, arith, caller_span, compare

if TYPE_CHECKING:
    from ..function import Function
    from ..values import Array

# (the compiler, the runtime, the values and python-graphblas load with the first eager call:
# registering the functions, at ``import dspla``, needs none of them)

CACHE_SIZE = 1024   # traced operations kept (least recently used dropped)
_local = threading.local()   # a communicator given with running_on, per thread (simulated ranks are threads)
# simulated ranks (threads) share the cache: each must find the one Traced, and its one Function,
# that the others use, or their sessions would disagree on what has been planned
_lock = threading.RLock()


@contextmanager
def running_on(comm: Any) -> Iterator[None]:
    """Eager operations in this block run on ``comm`` (every rank of it calls them) instead of the
    MPI world: how the simulated communicator's ranks, or a sub-communicator, run them."""
    before = getattr(_local, "comm", None)
    _local.comm = comm
    try:
        yield
    finally:
        _local.comm = before


def is_value(x: Any) -> bool:
    """A concrete value an operation runs on at once (not a Python scalar, not an expression):
    told by its type's module, so that asking imports none of numpy's, scipy's or graphblas's."""
    mod = type(x).__module__
    if mod.startswith("numpy"):
        return getattr(x, "ndim", 0) > 0
    if mod.startswith(("scipy.sparse", "graphblas")):
        return type(x).__name__ in ("Matrix", "Vector", "Scalar") or hasattr(x, "tocsr")
    return mod == "dspla.values.array" and type(x).__name__ == "Array"


def communicator() -> Any:
    """The communicator eager operations run on: one given by ``running_on``, else the MPI world
    of a job of more than one process, else None (this process alone)."""
    comm = getattr(_local, "comm", None)
    if comm is None:
        comm = _loaded().world()
    return comm if comm is not None and comm.size > 1 else None


@functools.lru_cache(maxsize=None)
def _loaded() -> Any:
    """What an eager call runs with, imported on the first one (``import dspla`` loads none of
    it); a function-level import costs microseconds on every call of a microseconds-long path.
    Under the lock: threads making their first calls at once would import the same modules in
    different orders, and Python's import locks then hand one of them a partly run module."""
    from types import SimpleNamespace

    with _lock:
        from ..kernels.acyclic import acyclic
        from ..kernels.prepared import Steps
        from ..reference import PREPARE, environment, run
        from ..runtime.launch import world
        from ..values import Array
        from .convert import form_of, matrix, signature
    return SimpleNamespace(acyclic=acyclic, environment=environment, run=run, world=world, Array=Array,
                           form_of=form_of, matrix=matrix, signature=signature, Steps=Steps, PREPARE=PREPARE)


class Traced:
    """One operation traced on stand-in inputs for one signature: its program, the schedule one
    process evaluates it by, the dims' sizes, and (made on first use in a job) its Function."""
    __slots__ = ("program", "names", "dims", "schedule", "_steps", "_function")

    def __init__(self, program: Program, names: tuple[str, ...], dims: dict[str, int]) -> None:
        from ..reference import Schedule

        self.program, self.names, self.dims = program, names, dims
        self.schedule = Schedule(program)
        self._steps = threading.local()
        self._function: Function | None = None

    @property
    def steps(self) -> Any:
        """This thread's prepared steps (kernels/prepared.Steps: its steps' C calls, resolved on
        the first call of each signature). One per thread: threads share the Traced, and a
        prepared step may write a C cell of its own and then read it (a reduction's value, a
        count), which another thread's call, the GIL released in C, could overwrite in between."""
        s = getattr(self._steps, "s", None)
        if s is None:
            got = _loaded()
            s = self._steps.s = got.Steps(got.PREPARE)
        return s

    @property
    def function(self) -> Function:
        from ..function import Function

        with _lock:
            if self._function is None:
                self._function = Function(self.program)
            return self._function


_CACHE: OrderedDict[Any, Traced] = OrderedDict()


def _dim(size: int, dims: dict[str, int] | None) -> int | str:
    """A size as the dim a stand-in declares: with ``dims``, a symbol per size (what planning
    partitions), but 1 stays 1 (vectors, scalars); without, the size itself."""
    if size == 1 or dims is None:
        return size
    name = f"n{size}"
    dims[name] = size
    return name


def stand_ins(args: list, kwargs: dict, leaves: list, sigs: list,
              symbolic: bool = True) -> tuple[list, dict, list, list, dict]:
    """The arguments with an input declared in place of each value (``leaves``: where the values
    are, an int position or a keyword; ``sigs``: their signatures): (args, kwargs, the inputs'
    names, their nodes, the dims' sizes). Declared by the front end's own builders, so a vector
    or a scalar is one there too; ``symbolic``: dims as symbols (planned over), else as sizes."""
    dims: dict[str, int] = {}
    sym = dims if symbolic else None
    names, nodes = [], []
    for i, (where, (form, kind, r, c, dtype)) in enumerate(zip(leaves, sigs)):
        name = f"x{i}"
        if form == "vector":
            e = builder("vector")(name, _dim(r, sym), dtype.value, kind.value)
        elif form == "scalar" and "scalar" in SPELLINGS:
            e = builder("scalar")(name, dtype.value)
        else:
            e = builder("declare")(name, kind.value, (_dim(r, sym), _dim(c, sym)), dtype.value)
        names.append(name)
        nodes.append(e.node)
        if isinstance(where, int):
            args[where] = e
        else:
            kwargs[where] = e
    return args, kwargs, names, nodes, dims


def trace(fn: Callable[..., Any], args: list, kwargs: dict, leaves: list, sigs: list,
          symbolic: bool) -> tuple[Any, list, list, dict]:
    """``fn`` on stand-in inputs: (what it returned, the inputs' names, their nodes, the dims'
    sizes). Symbolic dims where asked and the operations allow (a few need sizes known when
    traced: kronecker, diag off the main diagonal), else the sizes."""
    if symbolic:
        try:
            a, kw, names, nodes, dims = stand_ins(list(args), dict(kwargs), leaves, sigs, True)
            return fn(*a, **kw), names, nodes, dims
        except DsplaError:
            pass   # (the error, if it is not about unknown sizes, comes again below)
    a, kw, names, nodes, dims = stand_ins(list(args), dict(kwargs), leaves, sigs, False)
    return fn(*a, **kw), names, nodes, dims


def _trace(fn: Callable[..., Any], args: list, kwargs: dict, leaves: list, sigs: list, symbolic: bool) -> Traced:
    """The operation on stand-in inputs (dims as symbols in a job: they are what is planned over)."""
    out, names, nodes, dims = trace(fn, args, kwargs, leaves, sigs, symbolic)
    if not isinstance(out, Expr):
        raise TypeError(f"{getattr(fn, '__name__', fn)} did not give a value ({type(out).__name__})")
    return Traced(Program((("out", out.node),), tuple(nodes)), tuple(names), dims)


def result(matrix: Any, t: Type) -> Array:
    """A value of type ``t`` holding ``matrix`` (a vector or scalar type presents itself as one),
    without python-graphblas's reference cycle (kernels/acyclic.py): dropped, it is freed at once.
    (An eager mxm's n x 64 result waited for the collector: the heap grew by 42 MB a call on
    soc-Slashdot0902, to 2 GB, and the calls took 4x as long.)"""
    got = _loaded()
    Array, matrix = got.Array, got.acyclic(matrix)
    form = getattr(t, "form", "matrix")
    return Array(matrix) if form == "matrix" else Array(matrix, form=form)  # type: ignore[call-arg,unused-ignore]


def _key_part(x: Any) -> Any:
    """An argument as the cache key holds it: with its type (2, 2.0 and True are equal keys of a
    dict, but not the same operation: the scalar's type sets the result's dtype)."""
    if isinstance(x, (list, tuple)):
        return tuple(_key_part(y) for y in x)
    return type(x), x


def evaluate(name: str, fn: Callable[..., Any], args: tuple, kwargs: dict, leaves: list) -> Array:
    """Run ``fn`` at once on the values at ``leaves``; the other arguments as given."""
    got = _loaded()
    Array, matrix, form_of, signature = got.Array, got.matrix, got.form_of, got.signature
    comm = communicator()
    given = [args[w] if isinstance(w, int) else kwargs[w] for w in leaves]
    # one process: the values as matrices; in a job: as given (the session converts host data on
    # rank 0 and keeps distributed values where they are)
    vals = [v if comm is not None and isinstance(v, Array) else matrix(v) for v in given]
    sigs = [signature(v, form_of(g)) for v, g in zip(vals, given)]
    key: Any = (name, comm is None, tuple(sigs), tuple(_key_part(a) for i, a in enumerate(args) if i not in leaves),
                tuple((k, _key_part(v)) for k, v in sorted(kwargs.items()) if k not in leaves))
    try:
        traced = _CACHE.get(key)
        if traced is not None:
            _CACHE.move_to_end(key)
    except TypeError:   # an unhashable argument (a list of indices, ...): traced every call
        key, traced = None, None
    except KeyError:    # (another thread dropped it meanwhile, as the least recently used: it still runs)
        pass
    if traced is None:
        with _lock:
            traced = _CACHE.get(key) if key is not None else None
            if traced is None:
                traced = _trace(fn, list(args), kwargs, leaves, sigs, symbolic=comm is not None)
                if key is not None:
                    _CACHE[key] = traced
                    if len(_CACHE) > CACHE_SIZE:
                        _CACHE.popitem(last=False)
    inputs = dict(zip(traced.names, vals))
    if comm is None:
        out = traced.program.outputs[0][1]
        return result(got.run(traced.schedule, got.environment(inputs, traced.dims), traced.steps)["out"], out.type)
    return traced.function.run(inputs, comm=comm)["out"]


def _expression_params(name: str, fn: Callable[..., Any]) -> tuple[list[str], frozenset[str] | None]:
    """(the parameters in order, those that take values: the ones the builder types as
    expressions, else those its file spelling reads as expressions; None: any may)."""
    sig = inspect.signature(fn).parameters
    typed = frozenset(p for p, param in sig.items() if "Expr" in str(param.annotation))
    if typed:
        return list(sig), typed
    spelled = SPELLINGS.get(name)
    if spelled is None or spelled.file is None:
        return list(sig), None
    return list(sig), frozenset(p for p, kind in spelled.file if kind == EXPR)


def eager(name: str, fn: Callable[..., Any], exprs: frozenset[str] | None = None,
          params: list[str] | None = None) -> Callable[..., Any]:
    """``fn`` (a builder) as a function that runs at once on concrete values and traces on
    expressions. ``exprs``: the parameters that take values (default: from its spelling)."""
    if params is None:
        params, spelled = _expression_params(name, fn)
        exprs = exprs if exprs is not None else spelled

    def takes(where: int | str) -> bool:
        p = params[where] if isinstance(where, int) and where < len(params) else where
        return exprs is None or p in exprs

    positions = [i for i in range(len(params)) if takes(i)]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        leaves: list = []
        traced = False
        for i, a in enumerate(args):
            if isinstance(a, Expr):
                traced = True
            elif i in positions and is_value(a):
                leaves.append(i)
        for k, v in kwargs.items():
            if isinstance(v, Expr):
                traced = True
            elif takes(k) and is_value(v):
                leaves.append(k)
        if traced and leaves:
            w = leaves[0]
            what = type(args[w] if isinstance(w, int) else kwargs[w]).__name__
            raise TypeError(f"dp.{name}: a concrete value ({what}) "
                            "meets a traced expression: inside dp.function, pass the value as an argument of the "
                            "compiled function (or declare it as an input)")
        if traced or not leaves:
            return fn(*args, **kwargs)
        if getattr(fn, "traced_only", False):
            raise DsplaError(f"dp.{name} builds a program (inside dp.function, for a loop to keep values for a later "
                             "one); on values at hand, keep them in a Python list")
        return evaluate(name, fn, args, kwargs, leaves)
    return call


def _arith(a: Any, b: Any, op: str) -> Expr:
    return arith(a, b, op, caller_span())


def _compare(a: Any, b: Any, op: str) -> Expr:
    return compare(a, b, op, caller_span())


def register() -> dict[str, Callable[..., Any]]:
    """Put the eager functions where the methods find them (``CALLS``); returns name -> function
    of every op's spelling (``dp.NAME``)."""
    out = {}
    for name, spelled in SPELLINGS.items():
        out[name] = CALLS[name] = eager(name, spelled.fn)
    for name, fn in (("arith", _arith), ("compare", _compare)):
        CALLS[name] = eager(name, fn, frozenset({"a", "b"}), ["a", "b", "op"])
    return out
