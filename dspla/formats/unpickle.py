"""A restricted unpickler for data files (the Planetoid ``ind.*`` pickles).

A pickle is a program: every ``GLOBAL`` opcode imports a name and ``REDUCE`` calls it, so
``pickle.load`` on an untrusted file can run ``os.system``. Here ``find_class`` admits only an
explicit table of (module, name) pairs -- the numpy array/dtype reconstructors, the scipy sparse
matrix classes and a few builtins -- and refuses everything else with a DataFormatError that
names the file and the refused ``module.name``. Nothing is imported by name from the file: the
table maps each admitted spelling straight to the object.
"""
from __future__ import annotations

import collections
import io
import math
import os
import pickle

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from .limits import check_bytes, human


def _numpy_core(name: str):
    # numpy 2 moved numpy.core to numpy._core; old pickles still say numpy.core.multiarray.
    core = getattr(np, "_core", None)
    if core is None:  # numpy 1.x
        core = np.core  # pragma: no cover
    return getattr(core.multiarray, name)


def _latin1_encode(text: str, encoding: str = "utf-8") -> bytes:
    """``_codecs.encode`` as Python 3 protocol-2 pickles use it (bytes written as latin1 text),
    limited to that use: no other codec can be reached through a data file."""
    if encoding.lower().replace("-", "") != "latin1" or not isinstance(text, str):
        raise pickle.UnpicklingError(f"_codecs.encode with codec {encoding!r} is not allowed")
    return text.encode("latin1")


def _numpy_numeric_frombuffer():
    core = getattr(np, "_core", None) or np.core
    return core.numeric._frombuffer


class _Budget:
    """What array constructors called by one pickle may allocate: no more than the file's own
    size (a real pickle carries its arrays' bytes), so a 35-byte file cannot ask for 6 GB."""

    def __init__(self, path: str, nbytes: int):
        self.path, self.nbytes = path, nbytes

    def check(self, shape, dtype, what: str):
        try:
            dt = np.dtype(dtype)
            dims = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
        except (TypeError, ValueError, OverflowError) as e:
            raise DataFormatError(self.path, f"invalid array shape or dtype in the pickle ({e})") from None
        if any(d < 0 for d in dims):
            raise DataFormatError(self.path, f"negative dimension in the pickled array shape {dims}")
        need = math.prod(dims) * dt.itemsize
        if need > self.nbytes + 4096:
            raise DataFormatError(self.path, f"a pickled {what} of shape {dims} {dt} would take {human(need)}, "
                                  f"more than the file holds in all ({human(self.nbytes)})")


def _guarded(budget: _Budget) -> dict[tuple[str, str], object]:
    """The table entries that allocate by a size the pickle states, wrapped in the budget."""
    reconstruct = _numpy_core("_reconstruct")

    def ndarray(shape, dtype=float, *args, **kw):
        budget.check(shape, dtype, "numpy.ndarray")
        return np.ndarray(shape, dtype, *args, **kw)

    def _reconstruct(subtype, shape, dtype):
        budget.check(shape, dtype, "array")
        if subtype is not np.ndarray and subtype is not ndarray:   # the table's numpy.ndarray is ours
            raise pickle.UnpicklingError("_reconstruct of a class other than numpy.ndarray")
        return reconstruct(np.ndarray, shape, dtype)

    out = {("numpy", "ndarray"): ndarray}
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        out[(mod, "_reconstruct")] = _reconstruct
    return out


def _table() -> dict[tuple[str, str], object]:

    allowed: dict[tuple[str, str], object] = {
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("collections", "defaultdict"): collections.defaultdict,
        ("_codecs", "encode"): _latin1_encode,
    }
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(mod, "_reconstruct")] = _numpy_core("_reconstruct")  # ndarray.__reduce__
        allowed[(mod, "scalar")] = _numpy_core("scalar")  # numpy scalars (e.g. a float32)
    for mod in ("numpy.core.numeric", "numpy._core.numeric"):
        allowed[(mod, "_frombuffer")] = _numpy_numeric_frombuffer()  # protocol-5 arrays
    # scipy has moved its sparse classes between private modules over the years.
    for cls, mods in ((sp.csr_matrix, ("scipy.sparse.csr", "scipy.sparse._csr", "scipy.sparse")),
                      (sp.lil_matrix, ("scipy.sparse.lil", "scipy.sparse._lil", "scipy.sparse"))):
        for mod in mods:
            allowed[(mod, cls.__name__)] = cls
    # Python 2 pickles name builtins "__builtin__".
    for mod in ("builtins", "__builtin__"):
        for name, obj in (("list", list), ("dict", dict), ("set", set), ("int", int),
                          ("float", float)):
            allowed[(mod, name)] = obj
    return allowed


ALLOWED = _table()


class RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, path: str, allowed=None, budget: int | None = None):
        # latin1: Python 2 pickles store numpy array bytes as str; latin1 maps them 1:1.
        super().__init__(file, encoding="latin1")
        self.path = path
        self.allowed = ALLOWED if allowed is None else allowed
        if budget is not None and allowed is None:
            self.allowed = {**self.allowed, **_guarded(_Budget(path, budget))}

    def find_class(self, module: str, name: str):
        try:
            return self.allowed[(module, name)]
        except KeyError:
            raise DataFormatError(
                self.path, f"refused to unpickle {module}.{name}: only numpy arrays, scipy "
                "sparse matrices and plain containers are allowed in data files") from None


def restricted_load(path, allowed=None):
    """Unpickle one object from ``path`` through :class:`RestrictedUnpickler`."""
    path = str(path)
    try:
        size = os.stat(path).st_size
        check_bytes(path, size, "the pickle")
        with open(path, "rb") as f:   # read whole: an opcode's stated length then cannot exceed the file
            data = f.read(size + 1)
        return RestrictedUnpickler(io.BytesIO(data), path, allowed, budget=len(data)).load()
    except FileNotFoundError:
        raise DsplaError(f"file not found: {path}") from None
    except DataFormatError:
        raise
    except IsADirectoryError:
        raise DsplaError(f"{path} is a directory, not a data file") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            MemoryError, OverflowError, UnicodeDecodeError, RecursionError) as e:
        # A corrupt or truncated pickle fails somewhere inside the opcode machine.
        raise DataFormatError(path, f"not a valid pickle ({type(e).__name__}: {e})") from None
