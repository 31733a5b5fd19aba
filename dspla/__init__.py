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

from . import binary, eager, errors, monoid, semiring, unary
from ._excepthook import install as _install_excepthook
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
from .verbosity import quiet

# dp.mxm, dp.relu, dp.while_loop, ...: every op's Python spelling, as its definition registers it
# (dspla/ops); a new op's module adds its name here without an edit to this file
# (eager: each runs at once on concrete values and traces on expressions, dspla/eager)
_SPELLED = eager.register()
globals().update(_SPELLED)

if TYPE_CHECKING:   # the same functions, named for static type checkers (which cannot see the above)
    from . import formats as formats
    from . import models as models
    from . import plot
    from .formats.graph import load_graph
    from .formats.results import read_results
    from .function import Function
    from .models.trainer import TrainConfig, Trainer
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
    from .runtime.launch import world
    from .runtime.shards import load_shards
    from .values import Array

__version__ = "0.1.0"

# Loaded on first use, not by `import dspla`: the compiler, the runtime and python-graphblas (with
# numba) come with the first function made or value read; training, I/O and plotting with theirs.
_LAZY = {
    "Array": "values", "Function": "function", "world": "runtime.launch",
    "load_shards": "runtime.shards", "load_graph": "formats.graph", "read_results": "formats.results",
    "Trainer": "models.trainer", "TrainConfig": "models.trainer",
}

_MODULES = ("formats", "models", "plot")


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
    which names ``dp.function`` (eager.function: of expressions or of a Python function), not that
    module."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "function" and isinstance(value, types.ModuleType):
            value = eager.function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


_install_excepthook()

__all__ = [
    "Array", "DataFormatError", "DimensionMismatch", "DomainMismatch", "DsplaError", "DsplaSyntaxError",
    "Expr", "Function", "InputError", "LoopBoundWarning", "TrainConfig", "Trainer", "UnknownNameError", "array",
    "binary", "eager", "errors", "function", "grad", "load_graph", "load_shards", "monoid", "plot", "quiet",
    "read_results", "semiring", "unary", "world",
]
__all__ += sorted(_SPELLED)
