"""``--input`` specs: a path (by extension), FILE.npz:ARRAY, or a graph file with reader options
(``graph.txt:unweighted,undirected``), read into scipy/numpy or a ``Graph`` (edge lists: the
matrix with its original node ids)."""
from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from .files import note_input
from .finite import check_finite
from .graph import Graph, load_graph, merged_note, positions
from .limits import INT64_MAX, check_memory
from .mtx import load_mtx
from .npy import load_npy
from .npz import load_npz
from .specs import (  # noqa: F401 (where the readers' callers find them)
    EDGE_LIST_ONLY,
    FORMATS_HELP,
    GENERATED_HELP,
    GRAPH_OPTIONS,
    GRAPH_OPTIONS_HELP,
    _literal,
    graph_format,
    input_path,
    is_generated,
    split_spec,
)
from .whole import what, whole_to_int


def read_input(spec: str, kind: str = "dense", *, allow_nonfinite: bool = False, dtype: str | None = None,
               quiet: bool = False, name: str = "NAME"):
    """Read one program input. ``kind`` is the declared kind ('sparse'/'dense'), used for
    formats that can hold either. NaN and infinite values are refused unless
    ``allow_nonfinite`` (then a warning names them). An edge list (or a graph file given reader
    options) comes back as a ``Graph`` (its matrix and original ids); the duplicates merged are
    said on stderr unless ``quiet`` (``name``: the input's, in the option to type to choose
    otherwise). ``dtype``: the declared dtype; whole-number floats read for an integer input
    become integers (exactly: anything else is an error naming the file and the entry)."""
    input_path(spec)
    path, key, opts = split_spec(spec)
    note_input(path)   # (no writer of this process replaces it)
    low = path.lower()
    checked = True   # the text readers refuse NaN and infinite values themselves, by line
    if low.endswith(".npy"):
        value, checked = load_npy(path), False
    elif low.endswith(".npz"):
        value, checked = load_npz(path, key), False
    elif graph_format(path) == "mtx" and not opts:
        value = load_mtx(path, allow_nonfinite=allow_nonfinite)
    else:
        # An edge list is a sparse matrix (directed: A[i, j] = w for an edge i -> j of weight w);
        # as a dense input it reaches the input checker, which says how to convert.
        value = load_graph(path, quiet=True, **opts)
        if value.merged and not quiet:
            words = [w for w in (spec.rpartition(":")[2].split(",") if spec != path else []) if
                     not w.startswith("duplicates=")]
            note = merged_note(value.merged, opts.get("duplicates", "first"), f"{name}={path}:{','.join(words + [''])}")
            print(f"dspla: {path}: {note}", file=sys.stderr)
    inner = value.matrix if isinstance(value, Graph) else value
    if getattr(inner, "dtype", None) is not None and inner.dtype.kind not in "biufc":
        raise DataFormatError(path, f"holds {inner.dtype} data; inputs are numbers or booleans")
    if not checked:
        check_finite(spec, inner, allow_nonfinite)
    if dtype is not None and np.dtype(dtype).kind == "i" and getattr(inner, "dtype", np.dtype(int)).kind == "f":
        inner = whole_to_int(inner, lambda at, v: DataFormatError(
            path, f"the entry at {at} (0-based) is {v!r}, {what(v)}, but {name} is declared {dtype}"))
        value = Graph(inner, value.ids, value.merged, value.source) if isinstance(value, Graph) else inner
    return value


def input_ids(data: dict, decls: dict) -> dict:
    """dim -> (original ids, the input that gave them) from the graphs read (``Graph`` values)."""
    out: dict = {}
    for name, value in data.items():
        t = decls.get(name)
        if isinstance(value, Graph) and value.ids is not None and t is not None:
            for d in t.shape:
                if isinstance(d, str):
                    out.setdefault(d, (value.ids, name))
    return out


def generate_inputs(specs: dict, decls: dict, data: dict, given: dict | None = None,
                    fixed: dict | None = None, ids: dict | None = None) -> dict:
    """Inputs made rather than read (``-i r=full:1``, ``-i s=unit:ID``), shaped as declared, the
    symbolic dims taken from the inputs read from files (``data``), else from ``given``
    (``--dim n=SIZE``), else from ``fixed`` (sizes the program or a shard set fixes; checked
    against the rest when the program runs); ``ids``: dim -> (node ids, where from) of inputs not
    in ``data`` (a shard set's). ``unit:ID`` names a node by its original id when an input read from an
    edge list (a ``Graph`` with ids) has the dim of the rows, else by its row number."""
    dims: dict = {}
    for name, value in data.items():
        t = decls.get(name)
        if t is not None:
            shape = value.shape if hasattr(value, "shape") and not isinstance(value, np.ndarray) else np.shape(value)
            for d, size in zip(t.shape, shape):
                if isinstance(d, str):
                    dims.setdefault(d, int(size))
    for d, size in (given or {}).items():
        if not 0 <= size <= INT64_MAX:
            raise DsplaError(f"--dim {d}={size}: a size is at most 2^63-1 = {INT64_MAX}")
        if dims.get(d, size) != size:
            raise DsplaError(f"--dim {d}={size}, but the inputs read from files give {d} = {dims[d]}")
        dims[d] = size
    for d, size in (fixed or {}).items():
        dims.setdefault(d, size)
    ids = {**(ids or {}), **input_ids(data, decls)}
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
        # what it will take, before it is made: every entry (full:), or one entry and its row pointers
        entries = shape[0] * shape[1] if how == "full" else 1
        check_memory(entries * (dt.itemsize + (16 if sparse_decl else 0)) + (8 * (shape[0] + 1) if sparse_decl else 0),
                     f"input {name}={spec}, a {shape[0]} x {shape[1]} {'sparse' if sparse_decl else 'dense'} "
                     f"{dt.name} value,")
        if how == "full":
            value = np.full(tuple(shape), number, dtype=dt)
            out[name] = _every_entry(value) if sparse_decl else value
        elif not sparse_decl:
            raise DsplaError(f"--input {name}={spec}: {name} is declared dense (every entry present) and unit: "
                             f"makes one entry; use full:VALUE, or declare {name} sparse")
        else:
            row = _unit_row(name, spec, number, t.shape[0], shape[0], ids)
            out[name] = sp.csr_array((np.ones(1, dtype=dt), ([row], [0])), shape=tuple(shape))
    return out


def _unit_row(name: str, spec: str, node: int, dim, rows: int, ids: dict) -> int:
    """The row of ``unit:node``: the node's row by its original id when an edge list numbers
    ``dim``, else ``node`` itself (checked to be a row)."""
    if isinstance(dim, str) and dim in ids:
        known, source = ids[dim]
        try:
            return int(positions(known, node, rows, f"--input {name}={spec}: the graph {source}")[0])
        except DsplaError as e:
            raise DsplaError(f"{e} (unit:ID takes a node id as the graph's file lists it)") from None
    if not 0 <= node < rows:
        raise DsplaError(f"--input {name}={spec}: row {node} is outside 0..{rows - 1}")
    return node


def _every_entry(value: np.ndarray) -> sp.csr_array:
    """A sparse matrix holding every entry of ``value``, zeros too (explicit entries are present)."""
    n, m = value.shape
    return sp.csr_array((value.ravel(), np.tile(np.arange(m), n), np.arange(0, n * m + 1, m)), shape=(n, m))
