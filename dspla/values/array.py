"""Run-time values: converting user data to GraphBLAS matrices and results back.

``Array`` is what a program returns: a GraphBLAS matrix with conversions that respect
GraphBLAS semantics (a missing entry is not a zero: to_numpy() refuses to invent values for
missing entries unless given ``fill``).
"""
from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeAlias, Union, cast, overload

import graphblas as gb
import numpy as np
import scipy.sparse as sp
from graphblas import Matrix, Vector
from numpy.typing import DTypeLike, NDArray

from .. import display
from .._types import HostValue, Scalar
from ..errors import InputError
from ..ir import DType, Kind, Node
from ..ir.types import concrete
from ..kernels.acyclic import acyclic
from ..kernels.buffers import dense_parts, from_values
from ..kernels.gbops import dtype_of
from ..ops.define import Methods


class Owners(Protocol):
    """What a ``Dist`` reads of the owners of a partitioned dim (``dspla.instr.layout.DimPart``;
    named structurally here: values sit below planning)."""

    parts: NDArray[np.int64]            # the owner of each index
    owned: list[NDArray[np.int64]]      # owned[r]: the indices rank r holds, in its piece's order


class Communicator(Protocol):
    """What a ``Dist`` and an ``Array`` use of a communicator (``dspla.runtime.comm.Comm``)."""

    rank: int
    size: int

    def gather(self, obj: Any, root: int = 0) -> list[Any] | None: ...
    def allgather(self, obj: Any) -> list[Any]: ...


ScipyFormat = Literal["csr", "csc", "coo", "bsr", "dia", "dok", "lil"]

class Dist:
    """How a value is spread over the processes of a job: its layout (rows or columns of a
    partitioned dim to their owners, or replicated), the owners (a DimPart: ``owned[r]`` the
    global indices rank r holds, in its piece's order) and the communicator."""
    __slots__ = ("kind", "dim", "part", "comm")

    def __init__(self, kind: str, dim: str | None, part: Owners | None, comm: Communicator) -> None:
        self.kind, self.dim, self.part, self.comm = kind, dim, part, comm

    @property
    def spread(self) -> bool:
        """Whether pieces differ between ranks (rows or columns spread over several processes)."""
        return self.kind != "rep" and self.comm.size > 1

    def conformal(self, other: "Dist") -> bool:
        """Pieces laid out alike: passing one where the other is expected moves nothing."""
        if self.kind != other.kind or self.comm is not other.comm:
            return False
        if self.kind == "rep":
            return True
        return self.part is other.part or np.array_equal(self.owners.parts, other.owners.parts)

    @property
    def owners(self) -> Owners:
        """The owners of the rows (columns) of a layout that is not replicated."""
        return cast(Owners, self.part)

    def __repr__(self) -> str:
        return "replicated" if self.kind == "rep" else f"{self.kind}s of {self.dim} over {self.comm.size} processes"


class Array(Methods):
    """A value a program or an eager operation returned (or a user's data wrapped: ``dp.array``).
    Its methods are python-graphblas's (``A.mxm(B, "plus_times")``, ``A.reduce_rowwise()``,
    ``A == B``, ...) and run at once (dspla/eager): they return values, never Python bools.

    One process: the whole matrix (``.gb``). Inside an MPI job: this rank's piece of a value
    that stays distributed, ``.local``; passing it to the same or another function moves nothing
    when the layouts agree. The conversions ``to_numpy``/``to_scipy``/``to_graphblas``/
    ``to_coo``/``present`` gather it: on more than one process they are **collectives** (every
    rank calls them; with ``root=0`` only rank 0 gets the result, the others None; by default
    every rank gets it). Replicated values (scalars, reductions) need no communication.
    A missing entry is not a zero: ``to_numpy()`` refuses to invent values for missing entries
    unless given ``fill``."""

    __slots__ = ("_piece", "name", "dist", "_shape")
    __array_priority__ = 10
    __array_ufunc__ = None   # numpy defers to our reflected operators: x + value is element-wise here

    def __init__(self, matrix: Matrix, name: str | None = None, dist: Dist | None = None,
                 shape: Sequence[int] | None = None) -> None:
        self._piece = matrix
        self.name = name
        self.dist = dist
        self._shape = cast("tuple[int, int]", tuple(shape)) if shape is not None else (matrix.nrows, matrix.ncols)

    # -- what this rank holds
    @property
    def distributed(self) -> bool:
        return self.dist is not None and self.dist.spread

    def _spread(self) -> Dist | None:
        """The distribution when this value is distributed (``distributed``), else None."""
        return self.dist if self.dist is not None and self.dist.spread else None

    @property
    def gb(self) -> Matrix:
        """The whole GraphBLAS matrix (one process or a replicated value)."""
        d = self._spread()
        if d is not None:
            raise InputError(f"{self.name or 'this result'} is distributed over {d.comm.size} processes; "
                             "to_graphblas() gathers it (a collective: every rank calls it), .local is this rank's "
                             "piece")
        return self._whole_local()

    @property
    def local(self) -> "LocalPiece":
        """This rank's piece and the global row (or column) ids of its rows (columns)."""
        d = self.dist
        if d is None or d.kind == "rep":
            return LocalPiece(self._piece, "rows", np.arange(self._shape[0]))
        return LocalPiece(self._piece, d.kind + "s", d.owners.owned[d.comm.rank])

    @property
    def shape(self) -> tuple[int, int]:
        return self._shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return dtype_of(self._piece).np

    def _whole_local(self) -> Matrix:
        """The whole value from this rank's piece, when it holds all of it (one process, replicated)."""
        d = self.dist
        if d is None or d.kind == "rep":
            return self._piece
        idx = d.owners.owned[0]
        if np.array_equal(idx, np.arange(idx.size)):
            return self._piece
        r, c, v = self._piece.to_coo()
        r, c = (idx[r], c) if d.kind == "row" else (r, idx[c])
        return gb.Matrix.from_coo(r, c, v, nrows=self._shape[0], ncols=self._shape[1], dtype=self._piece.dtype)

    # -- gathering
    @overload
    def to_graphblas(self, root: None = None, vector: Literal[False] = False) -> Matrix: ...
    @overload
    def to_graphblas(self, root: None = None, *, vector: Literal[True]) -> Vector: ...
    @overload
    def to_graphblas(self, root: int, vector: bool = False) -> Matrix | Vector | None: ...

    def to_graphblas(self, root: int | None = None, vector: bool = False) -> Matrix | Vector | None:
        """The whole value as a graphblas Matrix (an n x 1 one as a Vector with ``vector=True``)."""
        M = self._gather(root)
        if M is None or not vector:
            return M
        if M.ncols != 1:
            raise ValueError(f"{self.name or 'result'} is {M.nrows}x{M.ncols}, not a column vector")
        return M[:, 0].new()

    def _gather(self, root: int | None) -> Matrix | None:
        d = self._spread()
        if d is None:
            return self._whole_local()
        r, c, v = self._piece.to_coo()
        idx = d.owners.owned[d.comm.rank]
        r, c = (idx[r], c) if d.kind == "row" else (r, idx[c])
        piece = (r.astype(np.int64), c.astype(np.int64), v)
        pieces = d.comm.allgather(piece) if root is None else d.comm.gather(piece, root)
        if pieces is None:
            return None
        rows, cols, vals = (np.concatenate(x) for x in zip(*pieces))
        return gb.Matrix.from_coo(rows, cols, vals, nrows=self._shape[0], ncols=self._shape[1],
                                  dtype=self._piece.dtype)

    @property
    def nvals(self) -> int:
        """Entries present (a collective when distributed)."""
        d = self._spread()
        if d is None:
            return self._whole_local().nvals
        return int(sum(d.comm.allgather(self._piece.nvals)))

    # -- a 1 x 1 value as a Python scalar (python-graphblas's Scalar.value)
    @property
    def value(self) -> Any:
        """The entry of a 1 x 1 value (None when it is missing)."""
        if self._shape != (1, 1):
            raise ValueError(f"{self.name or 'this value'} is {self._shape[0]}x{self._shape[1]}, not 1 x 1: "
                             "it has no single value (to_numpy(), to_coo() convert it)")
        M = self._gather(None)
        return None if M is None or M.nvals == 0 else M[0, 0].new().value

    def _scalar_value(self, what: str) -> Any:
        v = self.value
        if v is None:
            raise ValueError(f"{what}() of a missing entry: {self.name or 'this 1 x 1 value'} has none")
        return v

    def __float__(self) -> float:
        return float(self._scalar_value("float"))

    def __int__(self) -> int:
        return int(self._scalar_value("int"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError(f"a {self.dtype} value is not an index")
        return int(self._scalar_value("int"))

    def __bool__(self) -> bool:
        if self._shape != (1, 1):
            raise TypeError(f"the truth value of a {self._shape[0]}x{self._shape[1]} value is ambiguous; "
                            "isequal() compares two values, .nvals counts entries")
        return bool(self._scalar_value("bool"))

    @property
    def is_full(self) -> bool:
        return self.nvals == self._shape[0] * self._shape[1]

    def nonfinite(self) -> int:
        """Present entries that are NaN or infinite (0 for integers and bools; a collective when
        distributed): what a 0 / 0 in a program leaves behind, silently, as IEEE arithmetic does."""
        d = self._spread()
        M = self._whole_local() if d is None else self._piece
        bad = 0
        if dtype_of(M).is_float and M.nvals:
            bad = M.nvals - int(M.apply(gb.unary.isfinite).new(dtype=gb.dtypes.INT64).reduce_scalar().value)
        return bad if d is None else int(sum(d.comm.allgather(bad)))

    @overload
    def to_coo(self, root: None = None) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]]: ...
    @overload
    def to_coo(self, root: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]] | None: ...

    def to_coo(self, root: int | None = None) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]] | None:
        """(rows, cols, values) of the present entries, rows/cols as int64, row-major order."""
        M = self._gather(root)
        if M is None:
            return None
        r, c, v = M.to_coo()
        return r.astype(np.int64), c.astype(np.int64), v

    @overload
    def to_numpy(self, fill: Scalar | None = None, root: None = None) -> NDArray[Any]: ...
    @overload
    def to_numpy(self, fill: Scalar | None, root: int) -> NDArray[Any] | None: ...
    @overload
    def to_numpy(self, fill: Scalar | None = None, *, root: int) -> NDArray[Any] | None: ...

    def to_numpy(self, fill: Scalar | None = None, root: int | None = None) -> NDArray[Any] | None:
        """Dense array. Missing entries are an error unless ``fill`` says what to put there."""
        M = self._gather(root)
        if M is None:
            return None
        if fill is None:
            if M.nvals != M.nrows * M.ncols:
                raise ValueError(f"{self.name or 'result'} has {M.nrows * M.ncols - M.nvals} "
                                 "missing entries; call to_numpy(fill=...) or use to_coo()/to_scipy()")
            return M.to_dense()
        return M.to_dense(fill_value=fill)

    @overload
    def present(self, root: None = None) -> NDArray[np.bool_]: ...
    @overload
    def present(self, root: int) -> NDArray[np.bool_] | None: ...

    def present(self, root: int | None = None) -> NDArray[np.bool_] | None:
        """Boolean array: where an entry is present."""
        M = self._gather(root)
        if M is None:
            return None
        out = np.zeros(self._shape, dtype=bool)
        r, c, _ = M.to_coo(values=False)
        out[r, c] = True
        return out

    @overload
    def to_scipy(self, format: ScipyFormat = "csr", root: None = None) -> sp.sparray: ...
    @overload
    def to_scipy(self, format: ScipyFormat, root: int) -> sp.sparray | None: ...
    @overload
    def to_scipy(self, format: ScipyFormat = "csr", *, root: int) -> sp.sparray | None: ...

    def to_scipy(self, format: ScipyFormat = "csr", root: int | None = None) -> sp.sparray | None:
        """A scipy sparse array of the present entries (``format``: csr, csc, coo, ...)."""
        M = self._gather(root)
        return None if M is None else gb.io.to_scipy_sparse(M, format=format)

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[Any]:
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def _display(self) -> tuple[str, list[list[str]] | None]:
        """(title, preview cells or None): a distributed value shows no entries (gathering is a
        collective, and a notebook displays on one rank)."""
        title = (f"{self.name or 'result'}: {self._shape[0]}x{self._shape[1]} {self.dtype}, "
                 + (f"distributed ({self.dist!r}), {self._piece.nvals} present here" if self.distributed
                    else f"{self._piece.nvals} present"))
        if self.distributed:
            return title, None
        M = self._whole_local()
        corner = M[:min(display.PREVIEW, M.nrows), :min(display.PREVIEW, M.ncols)].new()
        vals, pres = dense_parts(corner)
        return title, display.preview_rows(vals, pres, self._shape)

    def _repr_html_(self) -> str:
        title, rows = self._display()
        return f"<b>{html.escape(title)}</b>" + ("" if rows is None else display.table_html(None, rows))

    def _repr_markdown_(self) -> str:
        title, rows = self._display()
        if rows is None:
            return f"**{title}**"
        return f"**{title}**\n\n" + display.table_markdown([""] * len(rows[0]), rows)

    def __repr__(self) -> str:
        where = f", {self.dist!r}, {self._piece.nvals} present here" if self.distributed else \
            f", {self._piece.nvals} present"
        return (f"Array({self.name or ''}{'' if self.name is None else ': '}{self._shape[0]}x{self._shape[1]} "
                f"{self.dtype}{where})")


InputValue: TypeAlias = Union[HostValue, Array]
"""What a program takes for an input: data held by the caller (``dspla._types.HostValue``: numpy,
scipy sparse, python-graphblas, ...) or an ``Array`` a program returned (it moves nothing when
its layout agrees)."""


class LocalPiece:
    """This rank's piece of a distributed value: ``matrix`` holds the rows (``axis`` 'rows') or
    columns whose global ids are ``index``, in that order."""
    __slots__ = ("matrix", "axis", "index")

    def __init__(self, matrix: Matrix, axis: str, index: NDArray[np.int64]) -> None:
        self.matrix, self.axis, self.index = matrix, axis, index

    def __repr__(self) -> str:
        return f"LocalPiece({self.index.size} {self.axis}, {self.matrix.nvals} entries)"


class Meta:
    """Stands in for an input that is already distributed when binding on one rank: its global
    shape, dtype, entries and whether every entry is present (the pieces stay where they are)."""
    __slots__ = ("nrows", "ncols", "dtype_name", "nvals", "full")

    def __init__(self, shape: tuple[int, int], dtype_name: str, nvals: int, full: bool) -> None:
        (self.nrows, self.ncols), self.dtype_name, self.nvals, self.full = shape, dtype_name, nvals, full


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
    if isinstance(value, gb.Vector):
        value = value._as_matrix()
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
        m = gb.io.from_scipy_sparse(csr)
    elif isinstance(value, (np.ndarray, list, tuple)) or np.isscalar(value):
        arr = np.asarray(value)
        if t.kind is Kind.sparse:
            raise InputError(f"input {name!r} is declared {t} but got {_describe(arr)}; a dense array cannot say "
                             "which entries are missing: pass scipy.sparse.csr_array(value) (zeros become missing)")
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
        if not np.can_cast(dtype_of(m).np, want.np, "same_kind"):
            raise InputError(f"input {name!r} is declared {want} but got {dtype_of(m)} data, which does not "
                             f"convert safely; cast it or change the declaration")
        m = m.dup(dtype=want.gb)
    # what this made (not the caller's matrix) is kept for the next call and freed when replaced
    return acyclic(m) if m is not value else m


def _dtype(name: str, npdtype: np.dtype[Any], t: object) -> DType:
    try:
        return DType.of_numpy(npdtype)
    except TypeError:
        raise InputError(f"input {name!r}: dtype {npdtype} is not supported (float64, float32, int64, bool)") \
            from None


def bind_dims(decls: Iterable[Node], mats: Mapping[str, Any]) -> dict[str, int]:
    """Bind symbolic dims from the inputs' shapes; raise InputError on any disagreement."""
    dims: dict[str, int] = {}
    where: dict[str, str] = {}
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


def check_shapes(decls: Iterable[Node], inputs: Mapping[str, object]) -> None:
    """bind_dims on the shapes of the inputs that have a 2-D one, before any is converted: a
    shape error costs nothing, not a copy of a large matrix first."""
    shapes = {}
    for decl in decls:
        shape = getattr(inputs.get(decl.attr("name")), "shape", None)
        if isinstance(shape, tuple) and len(shape) == 2:
            shapes[decl.attr("name")] = _Shape(shape)
    bind_dims([d for d in decls if d.attr("name") in shapes], shapes)


__all__ = ["Array", "Dist", "InputValue", "LocalPiece", "Meta", "bind_dims", "check_shapes", "concrete", "to_matrix",
           "DType"]
