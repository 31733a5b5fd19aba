"""dspla: a GraphBLAS-style sparse linear algebra language with distributed semirings.

    import dspla as dp
    A = dp.sparse("A", ("n", "n")); X = dp.dense("X", ("n", "f"))
    f = dp.function(outputs={"T": dp.mxm(A, X, "plus_second")})
    out = f(A=a_scipy, X=x_numpy)
"""
from typing import TYPE_CHECKING

from . import binary, eager, errors, monoid, plot, semiring, unary
from .eager import array, function
from .errors import (
    DataFormatError,
    DimensionMismatch,
    DomainMismatch,
    DsplaError,
    DsplaSyntaxError,
    InputError,
    LoopBoundWarning,
    UnknownNameError,
)
from .frontend.dsl import Expr, grad
from .function import Function
from .runtime.launch import world
from .runtime.shards import load_shards
from .values import Array
from .verbosity import quiet

# dp.mxm, dp.relu, dp.while_loop, ...: every op's Python spelling, as its definition registers it
# (dspla/ops); a new op's module adds its name here without an edit to this file
# (eager: each runs at once on concrete values and traces on expressions, dspla/eager)
_SPELLED = eager.register()
globals().update(_SPELLED)

if TYPE_CHECKING:   # the same functions, named for static type checkers (which cannot see the above)
    from .ops.apply import abs_ as abs  # noqa: F401
    from .ops.apply import apply, exp, log, neg, relu, relu_grad, sigmoid, sqrt, step, tanh  # noqa: F401
    from .ops.cast import cast  # noqa: F401
    from .ops.dropout import dropout_mask  # noqa: F401
    from .ops.ewise import ewise_add, ewise_mult  # noqa: F401
    from .ops.full import full  # noqa: F401
    from .ops.identity import eye  # noqa: F401
    from .ops.input import declare, dense, param, sparse, vector  # noqa: F401
    from .ops.loop import while_loop  # noqa: F401
    from .ops.mask import mask  # noqa: F401
    from .ops.mxm import mxm, mxv, vxm  # noqa: F401
    from .ops.nvals import nvals  # noqa: F401
    from .ops.reduce import reduce, reduce_all, reduce_cols, reduce_rows  # noqa: F401
    from .ops.select import select  # noqa: F401
    from .ops.softmax import log_softmax, softmax  # noqa: F401
    from .ops.transpose import transpose  # noqa: F401
    from .ops.update import update  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "Array", "DataFormatError", "DimensionMismatch", "DomainMismatch", "DsplaError", "DsplaSyntaxError",
    "Expr", "Function", "InputError", "LoopBoundWarning", "UnknownNameError", "array", "binary", "eager", "errors",
    "function", "grad",
    "load_shards", "monoid", "plot", "quiet", "semiring", "unary", "world",
]
__all__ += sorted(_SPELLED)
