"""``dp.while_loop`` on values at hand: the loop runs now, in Python. Its condition and body are
called on the current values, each operation in them running at once (eager/dispatch.py), with
the compiled loop's rules: the condition is checked before each iteration (a missing entry is
false, and at the bound it is checked once more), at most ``max_iter`` iterations, a
LoopBoundWarning when the loop stops at its bound with the condition still true, the body's
values of the shapes and dtypes the loop started with, the count as a 1 x 1 int64 value.
(The dispatcher finds values among an op's own arguments; a loop's sit inside ``init``.)"""
from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DomainMismatch, DsplaError, LoopBoundWarning
from ..ops import Expr
from ..ops.define import span_or_caller
from .dispatch import is_value


def at_once(builder: Callable[..., Any]) -> Callable[..., Any]:
    """``builder`` (the traced while_loop) as a function that runs a loop of values at once."""

    @functools.wraps(builder)
    def while_loop(cond: Callable[..., Any], body: Callable[..., Any], init: Any, max_iter: Any, *,
                   count: bool = False, span: Any = None) -> Any:
        span = span_or_caller(span)
        named = isinstance(init, dict)
        names = list(init) if named else [f"x{i}" for i in range(len(init))]
        carried = list(init.values()) if named else list(init)
        concrete = [is_value(v) for v in carried]
        if not any(concrete):
            return builder(cond, body, init, max_iter, count=count, span=span)
        if any(isinstance(v, Expr) for v in carried):
            raise TypeError("dp.while_loop: a concrete value meets a traced expression among the loop-carried "
                            "values: inside dp.function, pass the value as an argument of the compiled function")
        if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 0:
            raise DsplaError(f"max_iter of a loop on values at hand is a non-negative integer, got {max_iter!r}"
                             + (" (a dim's name bounds a loop of a program: give its size)"
                                if isinstance(max_iter, str) else ""), span)
        values, it, go = _run(cond, body, names, [array(v) for v in carried], max_iter, span)
        if go:
            warnings.warn(LoopBoundWarning(f"dp.while_loop ran all {max_iter} iterations it may: it stopped at its "
                                           "bound, not because its condition became false"), stacklevel=2)
        result = dict(zip(names, values)) if named else tuple(values)
        return (result, array(np.array([[it]], np.int64))) if count else result

    # (dp.NAME's __wrapped__ is the op's builder, as for every other spelling)
    while_loop.__wrapped__ = getattr(builder, "__wrapped__", builder)  # type: ignore[attr-defined]
    return while_loop


def array(v: Any) -> Any:
    """``dp.array`` (loaded with the first loop of values: ``import dspla`` loads no graphblas)."""
    from .convert import array as make

    return make(v)


def _run(cond: Callable[..., Any], body: Callable[..., Any], names: list[str], values: list,
         max_iter: int, span: Any) -> tuple[list, int, bool]:
    """(the last values, the iterations run, whether the condition still held)."""
    it = 0
    while True:
        go = _truth(cond(*values), span)
        if not go or it == max_iter:
            return values, it, go
        new = body(*values)
        new = list(new) if isinstance(new, (tuple, list)) else [new]
        if len(new) != len(values):
            raise DsplaError(f"the loop body gives {len(new)} values for {len(values)} loop-carried ones "
                             f"({', '.join(names)})", span)
        values = [_same_kind(name, old, x, span) for name, old, x in zip(names, values, new)]
        it += 1


def _same_kind(name: str, old: Any, new: Any, span: Any) -> Any:
    """The body's value for ``name``, of the shape and dtype the loop started with."""
    if not is_value(new):
        raise TypeError(f"the loop body gives {name} as {type(new).__name__}, not a value")
    new = array(new)
    if tuple(new.shape) != tuple(old.shape) or new.dtype != old.dtype:
        raise DomainMismatch(f"loop-carried {name} is {old.shape} {old.dtype} before the body and {new.shape} "
                             f"{new.dtype} after it; cast it (cast(x, dtype)) so both agree", span)
    return new


def _truth(c: Any, span: Any) -> bool:
    """A condition's value: a 1 x 1 value's entry (a missing one is false), or a Python bool."""
    if isinstance(c, (bool, np.bool_)):
        return bool(c)
    if not is_value(c):
        raise TypeError(f"a loop condition is a 1 x 1 bool value (a comparison such as delta > 1e-6), "
                        f"got {type(c).__name__}")
    c = array(c)
    if tuple(c.shape) not in ((1, 1), (), (1,)) or c.dtype != np.bool_:
        raise DomainMismatch(f"a loop condition is a 1 x 1 bool value (a comparison such as delta > 1e-6), got "
                             f"{c.shape} {c.dtype}", span)
    v = c.value
    return v is not None and bool(v)
