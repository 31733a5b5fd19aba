"""``--input`` specs: a path (by extension) or FILE.npz:ARRAY, read into scipy/numpy."""
from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from .finite import check_finite
from .graph import graph_format
from .mtx import load_mtx
from .npy import load_npy
from .npz import load_npz
from .snap import load_snap

FORMATS_HELP = ".mtx[.gz], an edge list (.txt[.gz], .edges, .el), .npy or FILE.npz[:ARRAY]"


def input_path(spec: str) -> str:
    """The file of an input spec, checked to exist and to have a known format (no reading)."""
    path = spec.rpartition(":")[0] if ".npz:" in spec else spec
    if not os.path.exists(path):
        if os.path.lexists(path):   # the name is there: a link to nothing, or a loop of links
            raise DsplaError(f"input {path} is a symbolic link that leads to no file (broken, or a loop)")
        raise DsplaError(f"input file not found: {path}")
    if os.path.isdir(path):
        raise DsplaError(f"input {path} is a directory, not a data file")
    low = path.lower()
    if not low.endswith((".npy", ".npz")):
        try:
            graph_format(path)
        except DsplaError:
            raise DsplaError(f"{path}: unknown input format (use {FORMATS_HELP})") from None
    return path


def read_input(spec: str, kind: str = "dense", *, allow_nonfinite: bool = False):
    """Read one program input. ``kind`` is the declared kind ('sparse'/'dense'), used for
    formats that can hold either. NaN and infinite values are refused unless
    ``allow_nonfinite`` (then a warning names them)."""
    path = input_path(spec)
    key = spec.rpartition(":")[2] if ".npz:" in spec else None
    low = path.lower()
    if low.endswith(".npy"):
        value = load_npy(path)
    elif low.endswith(".npz"):
        value = load_npz(path, key)
    elif graph_format(path) == "mtx":
        return load_mtx(path, allow_nonfinite=allow_nonfinite)   # checks its values itself, by line
    else:
        # An edge list is a sparse matrix (directed: A[i, j] = 1 for an edge i -> j); as a dense
        # input it reaches the input checker, which says how to convert.
        value = load_snap(path)
    if getattr(value, "dtype", None) is not None and value.dtype.kind not in "biufc":
        raise DataFormatError(path, f"holds {value.dtype} data; inputs are numbers or booleans")
    check_finite(spec, value, allow_nonfinite)
    return value


GENERATED_HELP = "full:VALUE (every entry VALUE) or unit:I (one entry, 1, in row I)"


def is_generated(spec: str) -> bool:
    return spec.startswith(("full:", "unit:")) or _literal(spec) is not None


def _literal(spec: str):
    """A scalar input's value written on the command line (``-i k=3``, ``-i tol=1e-6``, ``true``)."""
    if spec in ("true", "false"):
        return spec == "true"
    try:
        return int(spec)
    except ValueError:
        pass
    try:
        return float(spec) if any(ch.isdigit() for ch in spec) and "/" not in spec else None
    except ValueError:
        return None


def generate_inputs(specs: dict, decls: dict, data: dict, given: dict | None = None) -> dict:
    """Inputs made rather than read (``-i r=full:1``, ``-i s=unit:0``), shaped as declared, the
    symbolic dims taken from the inputs read from files (``data``), else from ``given``
    (``--dim n=SIZE``)."""
    dims: dict = {}
    for name, value in data.items():
        t = decls.get(name)
        if t is not None:
            for d, size in zip(t.shape, np.shape(value) if not hasattr(value, "nnz") else value.shape):
                if isinstance(d, str):
                    dims.setdefault(d, int(size))
    for d, size in (given or {}).items():
        if dims.get(d, size) != size:
            raise DsplaError(f"--dim {d}={size}, but the inputs read from files give {d} = {dims[d]}")
        dims[d] = size
    out = {}
    for name, spec in specs.items():
        t = decls.get(name)
        if t is None:
            continue   # an unknown name: the program's own check says which it takes
        if _literal(spec) is not None:
            if t.form != "scalar":
                raise DsplaError(f"--input {name}={spec}: a number is a scalar's value, but {name} is declared {t}")
            value, dt = _literal(spec), np.dtype(t.dtype.value)
            want = "true or false" if dt.kind == "b" else "a whole number" if dt.kind in "iu" else "a number"
            if isinstance(value, bool) != (dt.kind == "b") or dt.kind in "iu" and isinstance(value, float):
                raise DsplaError(f"--input {name}={spec}: {name} is declared {t}: give {want}")
            try:
                out[name] = np.array([[value]], dtype=dt)
            except OverflowError:
                raise DsplaError(f"--input {name}={spec}: {spec} does not fit in {dt}") from None
            continue
        shape = []
        for d in t.shape:
            if isinstance(d, str) and d not in dims:
                raise DsplaError(f"--input {name}={spec}: no input read from a file gives the size of {d!r}: "
                                 f"give one whose shape holds {d}, or --dim {d}=SIZE")
            shape.append(dims[d] if isinstance(d, str) else d)
        how, _, arg = spec.partition(":")
        dt = np.dtype(t.dtype.value)
        try:
            number = float(arg) if how == "full" else int(arg)
        except ValueError:
            raise DsplaError(f"--input {name}={spec}: {GENERATED_HELP}") from None
        sparse_decl = t.kind.value == "sparse"
        if how == "full":
            value = np.full(tuple(shape), number, dtype=dt)
            out[name] = _every_entry(value) if sparse_decl else value
        elif not sparse_decl:
            raise DsplaError(f"--input {name}={spec}: {name} is declared dense (every entry present) and unit: "
                             f"makes one entry; use full:VALUE, or declare {name} sparse")
        else:
            if not 0 <= number < shape[0]:
                raise DsplaError(f"--input {name}={spec}: row {number} is outside 0..{shape[0] - 1}")
            out[name] = sp.csr_array((np.ones(1, dtype=dt), ([number], [0])), shape=tuple(shape))
    return out


def _every_entry(value: np.ndarray) -> sp.csr_array:
    """A sparse matrix holding every entry of ``value``, zeros too (explicit entries are present)."""
    n, m = value.shape
    return sp.csr_array((value.ravel(), np.tile(np.arange(m), n), np.arange(0, n * m + 1, m)), shape=(n, m))
