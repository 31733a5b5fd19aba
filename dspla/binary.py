"""Binary operators by attribute (``dp.binary.plus``) and user-defined ones (``dp.binary.define``)."""
from __future__ import annotations

from collections.abc import Iterable

from . import _namespace
from ._types import BinaryFunction
from .algebra import BINARY, BinaryOp, define_binary


def define(name: str, func: BinaryFunction, *, associative: bool = False, commutative: bool = False,
           distributes_over: Iterable[str] = ()) -> BinaryOp:
    """A binary operator from a Python function of two numbers, compiled with numba as
    python-graphblas's ``binary.register_new``: ``define("hinge", lambda x, y: max(x - y, 0.0))``.
    ``distributes_over`` names monoids it distributes over (lets matrix-chain order reorder)."""
    return define_binary(name, func, associative=associative, commutative=commutative,
                         distributes_over=distributes_over)


names, __getattr__ = _namespace.of(BINARY, "binary operator")

__all__ = ["BinaryOp", "define", "names"]
