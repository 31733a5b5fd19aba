"""What the caller's data becomes for a declared input: one GraphBLAS matrix of its kind and
dtype (``to_matrix``), the sizes of the dims read off the inputs (``bind_dims``) and the shapes
checked before anything is converted (``check_shapes``)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import graphblas as gb
import numpy as np
import scipy.sparse as sp
from graphblas import Matrix

from ..errors import InputError
from ..formats.graph import Graph, is_networkx
from ..ir import DType, Kind, Node
from ..kernels.acyclic import acyclic
from ..kernels.buffers import from_values
from ..kernels.gbops import dtype_of
from .array import Array, Meta
from .hostdata import host_value, whole_ints


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    if sp.issparse(value):
        return f"a scipy sparse {value.format} matrix of shape {value.shape}"
    return f"a {type(value).__module__}.{type(value).__name__}"


def to_matrix(value: Any, decl: Node) -> Matrix | Meta:
    """Convert one input to a GraphBLAS matrix of the declared kind and dtype, or raise
    InputError saying which input and why. Does not check the shape (see bind_dims)."""
    name, t = decl.attr("name"), decl.type
    if isinstance(value, Meta):
        if t.kind is Kind.dense and not value.full:
            raise InputError(f"input {name!r} is declared {t} (every entry present) but the distributed value passed "
                             f"has {value.nrows * value.ncols - value.nvals} missing entries")
        have = DType.of_numpy(np.dtype(value.dtype_name))
        if have is not t.dtype:
            raise InputError(f"input {name!r} is declared {t.dtype} but the distributed value passed is {have}: "
                             "cast it in the program that made it")
        return value
    if isinstance(value, Array):
        value = value.gb
    elif isinstance(value, Graph) or is_networkx(value):
        value = host_value(value)
    if isinstance(value, gb.Vector):
        value = value._as_matrix()
    elif isinstance(value, gb.Scalar):
        value = gb.Matrix.from_coo([0] * (not value.is_empty), [0] * (not value.is_empty),
                                   [value.value] * (not value.is_empty), nrows=1, ncols=1, dtype=value.dtype)
    if isinstance(value, gb.Matrix):
        m = value
        data_dtype = dtype_of(m)
    elif sp.issparse(value):
        if t.kind is Kind.dense:
            raise InputError(f"input {name!r} is declared {t} but got {_describe(value)}; dense inputs have every "
                             "entry present: pass value.toarray() if that is what you mean")
        csr = value.tocsr()
        data_dtype = _dtype(name, csr.dtype, t)
        if not csr.has_canonical_format:  # scipy semantics: duplicates add up
            csr = csr.copy()
            csr.sum_duplicates()
        # an n x 1 one held by column, as SuiteSparse holds a vector: held by row, a product with
        # it transposes it first (BFS's sources: 22 against 2 us for a frontier's edge count)
        m = gb.io.from_scipy_sparse(csr.tocsc() if csr.shape[1] == 1 < csr.shape[0] else csr)
    elif isinstance(value, (np.ndarray, list, tuple)) or np.isscalar(value):
        arr = np.asarray(value)
        if t.kind is Kind.sparse:
            raise InputError(f"input {name!r} is declared {t} but got {_describe(arr)}; a dense array cannot say "
                             "which entries are missing: pass scipy.sparse.csr_array(value) (zeros become missing)")
        if arr.ndim == 0:
            arr = arr.reshape(1, 1)
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1) if t.shape[1] == 1 or t.shape[0] != 1 else arr.reshape(1, -1)
        if arr.ndim != 2:
            raise InputError(f"input {name!r} is declared {t} but got an array with {arr.ndim} dimensions")
        data_dtype = _dtype(name, arr.dtype, t)
        if arr.dtype != data_dtype.np:
            arr = arr.astype(data_dtype.np)
        # a copy the matrix owns (an n x 1 one held by column, see kernels/buffers.py)
        m = from_values(np.array(arr, dtype=data_dtype.np, order="C"), data_dtype) if arr.size else \
            gb.Matrix(data_dtype.gb, *arr.shape)
    else:
        raise InputError(f"input {name!r} is declared {t} but got {_describe(value)}")
    if t.kind is Kind.dense and m.nvals != m.nrows * m.ncols:
        raise InputError(f"input {name!r} is declared {t} (every entry present) but {m.nrows * m.ncols - m.nvals} "
                         f"of its {m.nrows}x{m.ncols} entries are missing")
    want = t.dtype
    if dtype_of(m) is not want:
        if want is DType.int64 and dtype_of(m).is_float:
            m = whole_ints(name, m)   # whole-number floats: exactly the integers they hold
        elif not np.can_cast(dtype_of(m).np, want.np, "same_kind"):
            raise InputError(f"input {name!r} is declared {want} but got {dtype_of(m)} data, which does not "
                             f"convert safely; cast it or change the declaration")
        else:
            m = m.dup(dtype=want.gb)
    # what this made (not the caller's matrix) is kept for the next call and freed when replaced
    return acyclic(m) if m is not value else m


def _dtype(name: str, npdtype: np.dtype[Any], t: object) -> DType:
    try:
        return DType.of_numpy(npdtype)
    except TypeError:
        raise InputError(f"input {name!r}: dtype {npdtype} is not supported (bool, int8..int64, uint8..uint64, "
                         "float32, float64)") \
            from None


def bind_dims(decls: Iterable[Node], mats: Mapping[str, Any],
              bound: Mapping[str, tuple[int, Any]] | None = None) -> dict[str, int]:
    """Bind symbolic dims from the inputs' shapes; raise InputError on any disagreement.
    ``bound``: dims the program binds to sizes, dim -> (size, where: ir/check.py dim_bindings)."""
    dims: dict[str, int] = {d: size for d, (size, _) in (bound or {}).items()}
    where: dict[str, str] = {d: "the program, where it meets that size" + (f" ({at})" if at else "")
                             for d, (_, at) in (bound or {}).items()}
    for decl in decls:
        name = decl.attr("name")
        m = mats[name]
        got = (m.nrows, m.ncols)
        for axis, (want, have) in enumerate(zip(decl.type.shape, got)):
            what = ("rows", "columns")[axis]
            if isinstance(want, int):
                if want != have:
                    raise InputError(f"input {name!r} is declared {decl.type} but has {have} {what} "
                                     f"(shape {got[0]}x{got[1]})")
            elif want in dims and dims[want] != have:
                raise InputError(f"dimension {want!r} is {dims[want]} from {where[want]} but input {name!r} has "
                                 f"{have} {what} (shape {got[0]}x{got[1]})")
            else:
                dims[want] = have
                where.setdefault(want, f"the {what} of {name!r}")
    return dims


class _Shape:
    __slots__ = ("nrows", "ncols")

    def __init__(self, shape: tuple[int, int]) -> None:
        self.nrows, self.ncols = int(shape[0]), int(shape[1])


def check_shapes(decls: Iterable[Node], inputs: Mapping[str, object],
                 bound: Mapping[str, tuple[int, Any]] | None = None) -> None:
    """bind_dims on the shapes of the inputs that have a 2-D one, before any is converted: a
    shape error costs nothing, not a copy of a large matrix first."""
    shapes = {}
    for decl in decls:
        shape = getattr(inputs.get(decl.attr("name")), "shape", None)
        if isinstance(shape, tuple) and len(shape) == 2:
            shapes[decl.attr("name")] = _Shape(shape)
    bind_dims([d for d in decls if d.attr("name") in shapes], shapes, bound)


__all__ = ["bind_dims", "check_shapes", "to_matrix"]
