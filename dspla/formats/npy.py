""".npy arrays (alone, or members of an .npz) read only after their header was checked against
the bytes that follow it and against the input limit (limits.py): a header claiming
(100000, 100000) float64 in a 1 KB file is refused before 80 GB are asked for."""
from __future__ import annotations

import math
import threading
import tokenize
import zipfile

import numpy as np

from ..errors import DataFormatError, DsplaError
from .files import note_input
from .limits import check_bytes, file_bytes, human

# numpy parses .npy headers with ast.literal_eval, and CPython 3.11's ast is not thread-safe
# ("AST constructor recursion depth mismatch" when simulated ranks, which are threads, load at
# once): every header is parsed under this lock. Real ranks are processes; it costs them nothing.
HEADER_LOCK = threading.Lock()


def read_header(fh, path: str, where: str = "") -> tuple[tuple, np.dtype, int]:
    """(shape, dtype, data bytes the header promises) of the .npy stream ``fh``, positioned at
    its start; leaves ``fh`` after the header."""
    label = f"{path}{where}"
    try:
        with HEADER_LOCK:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
            else:
                shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError, tokenize.TokenError) as e:
        # (numpy tokenizes the header first: unbalanced brackets raise TokenError, no ValueError)
        raise DataFormatError(label, f"not a valid .npy array ({e})") from None
    if dtype.hasobject:
        raise DataFormatError(label, "holds Python objects (a pickle); only plain numeric arrays are read")
    if any(d < 0 for d in shape):
        raise DataFormatError(label, f"negative dimension in shape {shape}")
    return tuple(shape), dtype, math.prod(shape) * dtype.itemsize


def _promised(label, shape, dtype, need: int, have: int):
    if need > have:
        raise DataFormatError(label, f"the header says shape {shape} {dtype} ({human(need)}) but only "
                              f"{human(have)} of data follow it")
    check_bytes(label, need, f"an array of shape {shape} {dtype}")


def load_npy(path) -> np.ndarray:
    """A plain (pickle-free) .npy array, checked before it is allocated."""
    path = str(path)
    note_input(path)
    try:
        with open(path, "rb") as fh:
            shape, dtype, need = read_header(fh, path)
            _promised(path, shape, dtype, need, file_bytes(path) - fh.tell())
            fh.seek(0)
            with HEADER_LOCK:
                return np.load(fh, allow_pickle=False)
    except DsplaError:
        raise
    except FileNotFoundError:
        raise DsplaError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise DsplaError(f"{path} is a directory, not a data file") from None
    except (ValueError, OSError, EOFError) as e:
        raise DataFormatError(path, f"not a readable .npy array ({e})") from None


def check_npz_members(path, names=None) -> None:
    """Check the headers of the .npy members of an .npz (all, or ``names``) against their
    sizes in the zip directory before any is decompressed in full."""
    path = str(path)
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                if names is not None and name not in names:
                    continue
                check_bytes(f"{path}:{name}", info.file_size, "a member")
                with zf.open(info) as fh:
                    shape, dtype, need = read_header(fh, path, f":{name}")
                    _promised(f"{path}:{name}", shape, dtype, need, info.file_size - fh.tell())
    except DsplaError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as e:
        raise DataFormatError(path, f"not a readable .npz ({e})") from None


__all__ = ["check_npz_members", "load_npy", "read_header"]
