"""Compiling a user's Python operator with numba, once per dtype.

A user-defined operator (``dp.binary.define``, ``dp.monoid.define``, ...) keeps the user's plain
Python function in its algebra row; this module makes the compiled forms every stage needs:

- ``ufunc(func, dtype)``: a numpy ufunc of one typed loop (``numba.vectorize``), so combining
  two buffers of partial results is one call over the whole buffer (the reductions across
  processes: the simulated communicator's ``ufunc.reduce`` and MPI's user op);
- ``njit(func)``: the function as a numba-compiled callable that other compiled kernels inline
  (``kernels/udfmxm.py``).

python-graphblas compiles the same function for SuiteSparse (``kernels/gbops.py``). numba is
imported on first use only: it costs 0.3 s, and only programs with user operators need it.
"""
from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np

from .errors import DsplaError

_LOCK = threading.Lock()   # the simulated communicator's ranks are threads: compile each loop once


def _numba():
    import numba
    return numba


def _sig(func, dtype: np.dtype, nargs: int) -> str:
    t = np.dtype(dtype).name
    return f"{t}({', '.join([t] * nargs)})"


@lru_cache(maxsize=None)
def _ufunc(func, dtype: str, nargs: int):
    numba = _numba()
    try:
        return numba.vectorize([_sig(func, dtype, nargs)], nopython=True)(func)
    except Exception as e:  # numba's errors come in many classes; all mean the same to the user
        name = getattr(func, "__name__", repr(func))
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DsplaError(f"user operator {name!r} does not compile for {dtype} with numba ({first}); "
                         "an operator is a plain Python function of numbers, as python-graphblas's "
                         "user-defined operators are") from None


def ufunc(func, dtype, nargs: int = 2):
    """``func`` as a numpy ufunc over ``dtype`` (one compiled loop, made once)."""
    with _LOCK:
        return _ufunc(func, np.dtype(dtype).name, nargs)


@lru_cache(maxsize=None)
def _njit(func):
    return _numba().njit(inline="always")(func)


def njit(func):
    with _LOCK:
        return _njit(func)


def check_compiles(func, nargs: int, dtype="float64"):
    """Compile ``func`` for ``dtype`` now, so a function numba cannot compile is refused where it
    is defined, not inside a run."""
    uf = ufunc(func, dtype, nargs)
    x = np.ones(1, dtype=dtype)
    try:
        uf(*([x] * nargs))
    except Exception as e:  # noqa: BLE001 - the user's function raised: say so where it was defined
        raise DsplaError(f"user operator {getattr(func, '__name__', func)!r} failed on {dtype} ones: {e}") from None
