"""Unary operators by attribute (``dp.unary.relu``) and user-defined ones (``dp.unary.define``)."""
from __future__ import annotations

from . import _namespace
from ._types import UnaryFunction
from .algebra import UNARY, UnaryOp, define_unary


def define(name: str, func: UnaryFunction) -> UnaryOp:
    """A unary operator from a Python function of one number, compiled with numba:
    ``define("softplus", lambda x: math.log1p(math.exp(x)))``; use it in ``dp.apply(X, "softplus")``."""
    return define_unary(name, func)


names, __getattr__ = _namespace.of(UNARY, "unary operator")

__all__ = ["UnaryOp", "define", "names"]
