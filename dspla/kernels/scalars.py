"""Built-in operators on two 1 x 1 values as numpy scalars compute them, which is what SuiteSparse
computes: on floats IEEE arithmetic (udfmxm's table, whose min and max follow SuiteSparse's, plus
division and comparisons); on int64 wrapping arithmetic and comparisons (not division, whose
x / 0 is GraphBLAS's own); on bool the logical operators and comparisons. A loop's 1 x 1 values
(a dangling sum, a count, a convergence test) go through these: a GraphBLAS call on a 1 x 1
matrix costs 40-130 us of Python, this about 1."""
from __future__ import annotations

import operator

import numpy as np

from ..ir.types import DType
from . import udfmxm
from .item import scalar

_COMPARE = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
            "le": np.less_equal}


def _pair(x, y):
    return type(x)(1)


_FLOAT_OPS = {**udfmxm.BUILTIN, "div": np.true_divide, "rdiv": lambda x, y: y / x, "pair": _pair, **_COMPARE}
_INT_OPS = {**udfmxm.BUILTIN, "pair": _pair, **_COMPARE}
_BOOL_OPS = {"first": udfmxm.BUILTIN["first"], "second": udfmxm.BUILTIN["second"], "lor": np.logical_or,
             "land": np.logical_and, "lxor": np.logical_xor, "min": np.logical_and, "max": np.logical_or,
             "pair": _pair, **_COMPARE}
SCALAR_OPS = {DType.float64: _FLOAT_OPS, DType.float32: _FLOAT_OPS, DType.int64: _INT_OPS, DType.bool: _BOOL_OPS}


# float64's operators as Python's float arithmetic computes them: IEEE binary64 too, bit for bit, and it
# never warns, so no np.errstate (2 us, most of a step on a loop's 1 x 1 values); a division by
# zero raises instead, and takes numpy's path. (min / max: SuiteSparse's NaN rule, numpy's path.)
_PY_F64 = {_FLOAT_OPS[name]: py for name, py in (
    ("plus", operator.add), ("minus", operator.sub), ("rminus", lambda x, y: y - x), ("times", operator.mul),
    ("div", operator.truediv), ("rdiv", lambda x, y: y / x), ("first", lambda x, y: x), ("second", lambda x, y: y),
    ("eq", operator.eq), ("ne", operator.ne), ("gt", operator.gt), ("ge", operator.ge), ("lt", operator.lt),
    ("le", operator.le))}
_F64 = np.float64


def scalar_function(op, compute: DType):
    """The numpy function computing built-in ``op`` on two scalars of ``compute``; None when the
    table has none."""
    return SCALAR_OPS.get(compute, {}).get(op.name) if op.func is None else None


def scalar_value(f, t, x, y, union: bool):
    """f (a scalar_function) on two values given as Python values (None: missing), in the numpy
    scalar type ``t`` (float64: as a Python float, the same value): None when missing (an
    intersection with a missing one; a union keeps the present one alone, as GraphBLAS's does)."""
    if x is not None and y is not None:
        if t is _F64:
            py = _PY_F64.get(f)
            if py is not None:
                try:
                    return py(float(x), float(y))
                except ZeroDivisionError:
                    pass
        with np.errstate(all="ignore"):
            return f(t(x), t(y))
    if union:
        return t(x) if x is not None else (t(y) if y is not None else None)
    return None


def scalar_binary(op, compute: DType, out: DType, x, y, union: bool, into):
    """op on two 1 x 1 values given as Python values (None: missing), a 1 x 1 matrix of ``out``
    (``into`` written when it fits); None when the operator is not in the table for ``compute``."""
    f = scalar_function(op, compute)
    if f is None:
        return None
    return scalar(scalar_value(f, compute.np.type, x, y, union), out, into)
