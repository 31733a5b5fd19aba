"""dspla: a GraphBLAS-style sparse linear algebra language with distributed semirings.

    import dspla as dp
    A = dp.sparse("A", ("n", "n")); X = dp.dense("X", ("n", "f"))
    f = dp.function(outputs={"T": dp.mxm(A, X, "plus_second")})
    out = f(A=a_scipy, X=x_numpy)
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from . import binary, errors, monoid, semiring, unary
from ._excepthook import install as _install_excepthook
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
from .verbosity import quiet

if TYPE_CHECKING:
    from . import io as io
    from . import models as models
    from . import plot
    from .exec.values import Array
    from .function import Function, function
    from .io.graph import load_graph
    from .io.results import read_results
    from .models.trainer import TrainConfig, Trainer
    from .runtime.launch import world
    from .runtime.shards import load_shards

__version__ = "0.1.0"

# Loaded on first use, not by `import dspla`: the compiler, the runtime and python-graphblas (with
# numba) come with the first function made or value read; training, I/O and plotting with theirs.
_LAZY = {
    "Array": "exec.values", "Function": "function", "function": "function", "world": "runtime.launch",
    "load_shards": "runtime.shards", "load_graph": "io.graph", "read_results": "io.results",
    "Trainer": "models.trainer", "TrainConfig": "models.trainer",
}


_MODULES = ("io", "models", "plot")


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'dspla' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_MODULES))


class _Package(types.ModuleType):
    """dspla's module object: importing the submodule ``dspla.function`` binds ``dspla.function``,
    which names the function that makes a Function (as it always has), not that module."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "function" and isinstance(value, types.ModuleType):
            value = value.function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


_install_excepthook()

__all__ = [
    "Array", "DataFormatError", "DimensionMismatch", "DomainMismatch", "DsplaError", "DsplaSyntaxError",
    "Expr", "Function", "InputError", "LoopBoundWarning", "TrainConfig", "Trainer",
    "UnknownNameError", "abs", "apply", "cast", "declare", "dense", "dropout_mask",
    "binary", "errors", "monoid", "plot", "quiet", "unary",
    "ewise_add", "ewise_mult", "exp", "eye", "full", "function", "grad", "load_graph", "load_shards", "log",
    "log_softmax", "mask", "mxm",
    "mxv", "neg", "nvals",
    "param", "read_results", "reduce", "reduce_all", "reduce_cols", "reduce_rows", "relu", "relu_grad", "select",
    "semiring", "sigmoid", "softmax", "sparse", "sqrt", "step", "tanh", "transpose", "update", "vector", "vxm",
    "while_loop", "world",
]
