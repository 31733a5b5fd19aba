"""Eager values (JAX's model: the same functions run at once on values and trace inside
``dp.function``): every ``dp`` function and every method of ``Array`` runs at once on concrete
values (dspla's, numpy's, scipy's, python-graphblas's) and returns an ``Array``; on expressions
it builds IR as before (dispatch.py). ``dp.while_loop`` of values runs its loop at once
(loops.py). ``dp.array`` wraps data as a value (convert.py); ``dp.function`` of a Python
function compiles it per signature of its values (trace.py)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, overload

from ..ops import Expr
from ..ops.define import CALLS
from .dispatch import CACHE_SIZE, communicator, eager, evaluate, is_value, register, running_on
from .loops import at_once

if TYPE_CHECKING:   # (loaded with the first call: ``import dspla`` reads this package)
    from ..function import Function
    from ..values import Array
    from .trace import Compiled


def array(data: Any, name: str | None = None) -> Array:
    """``dp.array``: data as a value operations run on at once (eager/convert.py)."""
    from .convert import array as make

    return make(data, name)


@overload
def function(outputs: Callable[..., Any], inputs: None = None, overflow: str | None = None) -> Compiled: ...
@overload
def function(outputs: Expr | Mapping[str, Expr] | list[Expr] | tuple[Expr, ...],
             inputs: Iterable[Expr] | None = None, overflow: str | None = None) -> Function: ...


def function(outputs: Any, inputs: Iterable[Expr] | None = None, overflow: str | None = None) -> Compiled | Function:
    """``dp.function``: of expressions (``dp.function({"T": A @ X})``), a compiled program taking
    its inputs by name; of a Python function (``dp.function(step)``, JAX's jit), that function
    traced on its first call's values and compiled once per signature of its arguments."""
    from ..function import function as plain

    if callable(outputs) and not isinstance(outputs, Expr) and inputs is None:
        from .trace import Compiled

        return Compiled(outputs, overflow)
    return plain(outputs, inputs, overflow)


__all__ = ["CACHE_SIZE", "array", "communicator", "eager", "evaluate", "function", "is_value", "register",
           "running_on"]


SPELLED = register()
"""name -> the eager function of every op's spelling (``dp.NAME``); registering also puts them
where the methods find them."""
SPELLED["while_loop"] = CALLS["while_loop"] = at_once(SPELLED["while_loop"])   # (a loop of values: loops.py)
