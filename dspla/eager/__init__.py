"""Eager values (JAX's model: the same functions run at once on values and trace inside
``dp.function``): every ``dp`` function and every method of ``Array`` runs at once on concrete
values (dspla's, numpy's, scipy's, python-graphblas's) and returns an ``Array``; on expressions
it builds IR as before (dispatch.py). ``dp.array`` wraps data as a value (convert.py);
``dp.function`` of a Python function compiles it per signature of its values (trace.py)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, overload

from ..function import Function
from ..function import function as _function
from ..ops import Expr
from .convert import array, is_value
from .dispatch import CACHE_SIZE, communicator, eager, evaluate, register, running_on
from .trace import Compiled


@overload
def function(outputs: Callable[..., Any], inputs: None = None) -> Compiled: ...
@overload
def function(outputs: Expr | Mapping[str, Expr] | list[Expr] | tuple[Expr, ...],
             inputs: Iterable[Expr] | None = None) -> Function: ...


def function(outputs: Any, inputs: Iterable[Expr] | None = None) -> Compiled | Function:
    """``dp.function``: of expressions (``dp.function({"T": A @ X})``), a compiled program taking
    its inputs by name; of a Python function (``dp.function(step)``, JAX's jit), that function
    traced on its first call's values and compiled once per signature of its arguments."""
    if callable(outputs) and not isinstance(outputs, Expr) and inputs is None:
        return Compiled(outputs)
    return _function(outputs, inputs)


__all__ = ["CACHE_SIZE", "Compiled", "array", "communicator", "eager", "evaluate", "function", "is_value", "register",
           "running_on"]
