"""Semirings by attribute: ``dp.semiring.plus_second``, ``dp.semiring.define(...)``, ``names()``."""
from __future__ import annotations

from typing import SupportsFloat

from . import _namespace
from ._types import BinaryFunction, BinaryOpLike, MonoidLike
from .algebra import SEMIRINGS, Semiring, define_semiring, get_semiring


def define(name: str, monoid: MonoidLike | BinaryFunction, op: BinaryOpLike | BinaryFunction,
           identity: SupportsFloat | None = None) -> Semiring:
    """A user-defined semiring, usable by name in Python and in ``.dspla`` files (after ``--plugin``).

    ``monoid`` and ``op`` are names (``define("tropical", monoid="min", op="plus")``), rows,
    python-graphblas operators (``graphblas.monoid.min``), or Python functions compiled with
    numba (``define("trop", monoid=my_min, op=my_plus, identity=math.inf)``: a function for
    the monoid needs its identity)."""
    return define_semiring(name, monoid, op, identity)


names, __getattr__ = _namespace.of(SEMIRINGS, "semiring")

__all__ = ["Semiring", "define", "get_semiring", "names"]
