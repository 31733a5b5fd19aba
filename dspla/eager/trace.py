"""``dp.function`` of a Python function (JAX's ``jit``): the function that runs eagerly, line by
line, is traced on its first call's values (stand-in inputs of their kinds, shapes and dtypes)
into one program, compiled once per signature, and run through the compiler and the runtime:
on one process, or distributed in an MPI job."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..function import Function
from ..ir import Program
from ..ops import Expr
from ..values import Array
from .convert import form_of, matrix, signature
from .dispatch import _key_part, _lock, communicator, is_value, trace


def _outputs(out: Any) -> tuple[tuple[tuple[str, Any], ...], Callable[[dict], Any]]:
    """(the program's outputs, how to give results back in the shape the function returned)."""
    if isinstance(out, Expr):
        return (("out", out.node),), lambda r: r["out"]
    if isinstance(out, (tuple, list)) and all(isinstance(e, Expr) for e in out):
        n = len(out)
        return tuple((f"out{i}", e.node) for i, e in enumerate(out)), lambda r: tuple(r[f"out{i}"] for i in range(n))
    if isinstance(out, dict) and all(isinstance(e, Expr) for e in out.values()):
        return tuple((k, e.node) for k, e in out.items()), lambda r: {k: r[k] for k in out}
    raise TypeError(f"a function compiled by dp.function returns a value, a tuple or a dict of them, got "
                    f"{type(out).__name__}")


class Compiled:
    """A Python function compiled per signature of its arguments' values."""

    def __init__(self, fn: Callable[..., Any], overflow: str | None = None) -> None:
        self.fn, self.overflow = fn, overflow
        self._cache: dict[Any, tuple[Function, tuple[str, ...], Callable[[dict], Any]]] = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        comm = communicator()
        leaves = [i for i, a in enumerate(args) if is_value(a)] + [k for k, v in kwargs.items() if is_value(v)]
        given = [args[w] if isinstance(w, int) else kwargs[w] for w in leaves]
        vals = [v if comm is not None and isinstance(v, Array) else matrix(v) for v in given]
        sigs = [signature(v, form_of(g)) for v, g in zip(vals, given)]
        key = (tuple(sigs), tuple(leaves), tuple(_key_part(a) for i, a in enumerate(args) if i not in leaves),
               tuple((k, _key_part(v)) for k, v in sorted(kwargs.items()) if k not in leaves))
        try:
            got = self._cache.get(key)
        except TypeError:   # an unhashable argument: traced on every call
            got, key = None, None
        if got is None:
            with _lock:   # (simulated ranks share it: all find one Function)
                got = self._cache.get(key) if key is not None else None
                if got is None:
                    out, names, nodes, _ = trace(self.fn, list(args), dict(kwargs), leaves, sigs, symbolic=True)
                    outputs, back = _outputs(out)
                    got = (Function(Program(outputs, tuple(nodes)), self.overflow), tuple(names), back)
                    if key is not None:
                        self._cache[key] = got
        f, names, back = got
        return back(f.run(dict(zip(names, vals)), comm=comm))

    def __repr__(self) -> str:
        return f"dp.function({getattr(self.fn, '__name__', self.fn)})"
