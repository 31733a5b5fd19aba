"""dspla: a GraphBLAS-style sparse linear algebra language with distributed semirings.

    import dspla as dp
    A = dp.sparse("A", ("n", "n")); X = dp.dense("X", ("n", "f"))
    f = dp.function(outputs={"T": dp.mxm(A, X, "plus_second")})
    out = f(A=a_scipy, X=x_numpy)
"""
from . import binary, errors, monoid, plot, semiring, unary
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
from .exec.values import Array
from .frontend.dsl import (
                     Expr,
                     apply,
                     cast,
                     declare,
                     dense,
                     dropout_mask,
                     ewise_add,
                     ewise_mult,
                     exp,
                     eye,
                     full,
                     grad,
                     log,
                     log_softmax,
                     mask,
                     mxm,
                     mxv,
                     neg,
                     nvals,
                     param,
                     reduce,
                     reduce_all,
                     reduce_cols,
                     reduce_rows,
                     relu,
                     relu_grad,
                     select,
                     sigmoid,
                     softmax,
                     sparse,
                     sqrt,
                     step,
                     tanh,
                     transpose,
                     update,
                     vector,
                     vxm,
                     while_loop,
)
from .frontend.dsl import abs_ as abs
from .function import Function, function
from .runtime.launch import world
from .runtime.shards import load_shards
from .verbosity import quiet

__version__ = "0.1.0"

__all__ = [
    "Array", "DataFormatError", "DimensionMismatch", "DomainMismatch", "DsplaError", "DsplaSyntaxError",
    "Expr", "Function", "InputError", "LoopBoundWarning",
    "UnknownNameError", "abs", "apply", "cast", "declare", "dense", "dropout_mask",
    "binary", "errors", "monoid", "plot", "quiet", "unary",
    "ewise_add", "ewise_mult", "exp", "eye", "full", "function", "grad", "load_shards", "log", "log_softmax",
    "mask", "mxm",
    "mxv", "neg", "nvals",
    "param", "reduce", "reduce_all", "reduce_cols", "reduce_rows", "relu", "relu_grad", "select", "semiring",
    "sigmoid", "softmax", "sparse", "sqrt", "step", "tanh", "transpose", "update", "vector", "vxm", "while_loop",
    "world",
]
