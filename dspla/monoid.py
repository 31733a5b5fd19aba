"""Monoids by attribute (``dp.monoid.min``) and user-defined ones (``dp.monoid.define``)."""
from __future__ import annotations

from typing import SupportsFloat

from . import _namespace
from ._types import BinaryFunction, BinaryOpLike
from .algebra import MONOIDS, Monoid, define_monoid


def define(name: str, op: BinaryOpLike | BinaryFunction, identity: SupportsFloat) -> Monoid:
    """A monoid from a binary operator (a name, a python-graphblas operator, or a Python function
    of two numbers, compiled with numba) and its identity: ``define("mymin", my_min, math.inf)``.
    It must be associative and commutative: processes combine partial results in any order,
    across MPI by a user op made from the same function."""
    return define_monoid(name, op, identity)


names, __getattr__ = _namespace.of(MONOIDS, "monoid")

__all__ = ["Monoid", "define", "names"]
