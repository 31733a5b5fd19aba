"""Arrays from .npz files: a ``scipy.sparse.save_npz`` file, or a named dense array
(``FILE.npz:ARRAY``). Always ``allow_pickle=False``: an .npz holding object arrays is refused."""
from __future__ import annotations

import zipfile

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from .limits import check_sparse_dims
from .npy import check_npz_members

# The members scipy.sparse.save_npz writes, per storage format.
_SPARSE_KEYS = {"csr": {"indptr", "indices", "data"}, "csc": {"indptr", "indices", "data"},
                "bsr": {"indptr", "indices", "data"}, "coo": {"row", "col", "data"},
                "dia": {"offsets", "data"}}


def is_sparse_save(names) -> bool:
    return "format" in names and "shape" in names


def load_npz(path, key: str | None = None):
    """A sparse save -> ``csr_array``; ``key`` -> that array; else the file's only array."""
    path = str(path)
    try:
        check_npz_members(path)   # every member's header against its size and the limit, first
        with np.load(path, allow_pickle=False) as z:
            names = list(z.files)
            if key is None and is_sparse_save(names):
                return _sparse(path, z)
            if key is None:
                if len(names) == 1:
                    return z[names[0]]
                raise DsplaError(f"{path} holds {len(names)} arrays ({', '.join(names)}); "
                                 f"name one: {path}:{names[0]}")
            if key not in names:
                raise DsplaError(f"{path} has no array {key!r}; it has: {', '.join(names)}")
            return z[key]
    except DsplaError:
        raise
    except FileNotFoundError:
        raise DsplaError(f"file not found: {path}") from None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise DataFormatError(path, f"not a readable .npz ({e})") from None


def _sparse(path: str, z) -> sp.csr_array:
    fmt = z["format"].item()
    fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
    missing = _SPARSE_KEYS.get(fmt, set()) - set(z.files)
    if fmt not in _SPARSE_KEYS or missing:
        raise DataFormatError(path, f"looks like a scipy sparse save but format {fmt!r} "
                              f"{'is unknown' if fmt not in _SPARSE_KEYS else 'lacks ' + ', '.join(sorted(missing))}")
    shape = z["shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or shape.min() < 0:
        raise DataFormatError(path, f"the 'shape' member must be two non-negative integers, found {shape!r}")
    check_sparse_dims(path, int(shape[0]), int(shape[1]), int(z["data"].size))
    try:
        A = sp.load_npz(path)  # scipy also loads with allow_pickle=False
        A = sp.csr_array(A)
        A.check_format(full_check=True)  # out-of-range indices, bad indptr
    except (ValueError, IndexError, TypeError) as e:
        raise DataFormatError(path, f"inconsistent scipy sparse save ({e})") from None
    return A
