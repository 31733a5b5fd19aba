"""dspla: a GraphBLAS-style sparse linear algebra language with distributed semirings.

    import dspla as dp
    A = dp.sparse("A", ("n", "n")); X = dp.dense("X", ("n", "f"))
    f = dp.function(outputs={"T": dp.mxm(A, X, "plus_second")})
    out = f(A=a_scipy, X=x_numpy)
"""
from __future__ import annotations

import gc
import importlib
import os
import sys
import threading
import types
from typing import TYPE_CHECKING, Any

from ._excepthook import install as _install_excepthook
from .errors import (  # noqa: F401 (dp.DsplaError, ...)
    DataFormatError,
    DimensionMismatch,
    DomainMismatch,
    DsplaError,
    DsplaSyntaxError,
    InputError,
    LoopBoundWarning,
    UnknownNameError,
)

if TYPE_CHECKING:   # the names loaded on first use (below), for static type checkers
    from . import binary, eager, monoid, plot, semiring, unary  # noqa: F401
    from . import formats as formats  # noqa: F401
    from . import models as models  # noqa: F401
    from .eager import array, function  # noqa: F401
    from .formats.graph import load_graph  # noqa: F401
    from .formats.results import read_results  # noqa: F401
    from .frontend.dsl import Expr, grad  # noqa: F401
    from .function import Function  # noqa: F401
    from .models.trainer import TrainConfig, Trainer  # noqa: F401
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
    from .ops.stack import height, pop, push, stack, top  # noqa: F401
    from .ops.transpose import transpose  # noqa: F401
    from .ops.update import update  # noqa: F401
    from .runtime.launch import world  # noqa: F401
    from .runtime.shards import load_shards  # noqa: F401
    from .values import Array  # noqa: F401
    from .verbosity import quiet  # noqa: F401

__version__ = "0.1.0"

# Loaded on first use, not by `import dspla`: the compiler, the runtime and python-graphblas (with
# numba) come with the first function made or value read; training, I/O and plotting with theirs.
_LAZY = {
    "Array": "values", "Function": "function", "world": "runtime.launch",
    "load_shards": "runtime.shards", "load_graph": "formats.graph", "read_results": "formats.results",
    "Trainer": "models.trainer", "TrainConfig": "models.trainer",
}

_MODULES = ("formats", "models", "plot")


_SPELLED: dict[str, Any] = {}
_loading = False
# (another thread asking for a name while one loads waits for it; the loading thread itself, asked
# again by what it imports, goes on: _loading)
_load_lock = threading.RLock()


def _load_language() -> None:
    """The language's names: dp.mxm, dp.relu, dp.while_loop, ... (every op's Python spelling, as its
    definition registers it in dspla/ops; each runs at once on concrete values and traces on
    expressions, dspla/eager), the operator namespaces and ``dp.function``. Loaded by the first
    name asked of ``dspla``, not by ``import dspla``: a command that only launches a job, or
    ``dspla --version``, loads none of it. Loading makes tens of thousands of long-lived objects
    and no garbage: the collector is off meanwhile, and what it made is then set aside
    (gc.freeze, as the runtime does with a plan: dspla.runtime.process) so that no later
    collection scans it again (about a tenth of a command's start-up)."""
    if _SPELLED:
        return
    with _load_lock:
        _load_once()


def _load_once() -> None:
    global _loading
    if _SPELLED or _loading:   # (loaded meanwhile, or loading in this thread: a name asked then is not there yet)
        return
    _loading = True
    collecting = gc.isenabled()
    gc.disable()
    try:
        modules = {m: importlib.import_module(f".{m}", __name__) for m in ("binary", "eager", "monoid", "semiring",
                                                                             "unary")}
        from .frontend.dsl import Expr, grad
        from .verbosity import quiet

        eager = modules["eager"]
        globals().update(eager.SPELLED, **modules, array=eager.array, function=eager.function, Expr=Expr, grad=grad,
                         quiet=quiet)
        _SPELLED.update(eager.SPELLED)
    finally:
        _loading = False
        gc.freeze()
        if collecting:
            gc.enable()


def __getattr__(name: str) -> Any:
    if name == "__all__":
        _load_language()
        return [*_NAMES, *sorted(_SPELLED)]
    if name in _MODULES or (name != "function" and _is_submodule(name)):
        # (``from .. import udf`` inside dspla asks for the module by this route too: it must not
        # load the language, which may be what is importing it)
        return importlib.import_module(f".{name}", __name__)
    where = _LAZY.get(name)
    if where is not None:
        _load_language()
        value = getattr(importlib.import_module(f".{where}", __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("__"):
        _load_language()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module 'dspla' has no attribute {name!r}")


def _is_submodule(name: str) -> bool:
    here = os.path.join(os.path.dirname(__file__), name)
    return name.isidentifier() and (os.path.isfile(here + ".py") or os.path.isfile(os.path.join(here, "__init__.py")))


def __dir__() -> list[str]:
    _load_language()
    return sorted(set(globals()) | set(_LAZY) | set(_MODULES))


class _Package(types.ModuleType):
    """dspla's module object: importing the submodule ``dspla.function`` binds ``dspla.function``,
    which names ``dp.function`` (eager.function: of expressions or of a Python function), not that
    module."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "function" and isinstance(value, types.ModuleType):
            from .eager import function as value
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


_install_excepthook()

_NAMES = [
    "Array", "DataFormatError", "DimensionMismatch", "DomainMismatch", "DsplaError", "DsplaSyntaxError",
    "Expr", "Function", "InputError", "LoopBoundWarning", "TrainConfig", "Trainer", "UnknownNameError", "array",
    "binary", "eager", "errors", "function", "grad", "load_graph", "load_shards", "monoid", "plot", "quiet",
    "read_results", "semiring", "unary", "world",
]
