"""Run-time values: converting user data to GraphBLAS matrices and results back.

``Array`` is what a program returns: a GraphBLAS matrix with conversions that respect
GraphBLAS semantics (a missing entry is not a zero: to_numpy() refuses to invent values for
missing entries unless given ``fill``).
"""
from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeAlias, Union, cast, overload

import graphblas as gb
import numpy as np
import scipy.sparse as sp
from graphblas import Matrix, Vector
from numpy.typing import NDArray

from .. import display
from .._types import HostValue, Scalar
from ..errors import InputError
from ..kernels.buffers import dense_parts
from ..kernels.gbops import dtype_of
from ..ops.define import Methods
from .forms import Presented


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


def meet(comm: Any, what: str) -> None:
    """Before a collective the user's script calls: every rank of ``comm`` reaches one of that
    name, or the job ends with a message naming it and the ranks that did not (``meet`` of the
    MPI communicator; a communicator without one, as the simulated ranks', just goes on)."""
    check = getattr(comm, "meet", None)
    if check is not None:
        check(what)


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


class Array(Presented, Methods):
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
    unless given ``fill``.

    **Node ids.** The conversions are positional: row k of ``to_numpy()`` is row k. When the
    rows of the value are the nodes of a graph read with its original ids (``dp.load_graph`` of
    an edge list or a networkx graph, passed as an input), ``ids[k]`` is the original id of row
    k (``col_ids``: of column k); None when the positions are the ids. They come from the inputs
    on this process (every rank that passed the graph gets them) and go with the value when it
    is passed on to another function, written by ``dspla run --out``, or made a networkx graph
    (``to_networkx``)."""

    __slots__ = ("_piece", "name", "dist", "_shape", "ids", "col_ids", "form")
    __array_priority__ = 10
    __array_ufunc__ = None   # numpy defers to our reflected operators: x + value is element-wise here

    def __init__(self, matrix: Matrix, name: str | None = None, dist: Dist | None = None,
                 shape: Sequence[int] | None = None, ids: NDArray[Any] | None = None,
                 col_ids: NDArray[Any] | None = None, form: str = "matrix") -> None:
        self._piece = matrix
        self.name = name
        self.dist = dist
        # (python-graphblas's nrows and ncols make a Scalar each: a Matrix keeps its sizes as they are)
        self._shape = cast("tuple[int, int]", tuple(shape)) if shape is not None else \
            (matrix._nrows, matrix._ncols) if type(matrix) is Matrix else (matrix.nrows, matrix.ncols)
        self.ids: NDArray[Any] | None = ids
        self.col_ids: NDArray[Any] | None = col_ids
        self.form = form   # 'vector': held n x 1, presented with shape (n,); 'scalar': held 1 x 1, shape ()

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
    def dtype(self) -> np.dtype[Any]:
        return dtype_of(self._piece).np

    def _whole_local(self) -> Matrix:
        """The whole value from this rank's piece, when it holds all of it (one process, replicated)."""
        d = self.dist
        if d is None or d.kind == "rep":
            return self._piece
        if len(d.owners.owned) == 1:   # (one owner: a one-process DimPart, every index in order)
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
        M = self._gather(root, "to_graphblas()")
        if M is None or not vector:
            return M
        if M.ncols != 1:
            raise ValueError(f"{self.name or 'result'} is {M.nrows}x{M.ncols}, not a column vector")
        return M[:, 0].new()

    def _gather(self, root: int | None, what: str) -> Matrix | None:
        d = self._spread()
        if d is None:
            return self._whole_local()
        meet(d.comm, f"{what} of {self.name or 'a result'}")
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
        meet(d.comm, f"nvals of {self.name or 'a result'}")
        return int(sum(d.comm.allgather(self._piece.nvals)))

    # -- a 1 x 1 value as a Python scalar (python-graphblas's Scalar.value)
    @property
    def value(self) -> Any:
        """The entry of a 1 x 1 value (None when it is missing)."""
        if self._shape != (1, 1):
            raise ValueError(f"{self.name or 'this value'} is {self._shape[0]}x{self._shape[1]}, not 1 x 1: "
                             "it has no single value (to_numpy(), to_coo() convert it)")
        M = self._gather(None, "value")
        return None if M is None or M.nvals == 0 else M[0, 0].new().value

    def _scalar_value(self, what: str) -> Any:
        v = self.value
        if v is None:
            raise ValueError(f"{self.name or 'this 1 x 1 value'} is a missing scalar (no entry): {what}() has no value")
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
        # a sum over finite values is finite unless it overflows: only then are they counted, by
        # a copy of the whole output (an R-MAT 16 A @ A's 163M entries: +2.6 GB past the run's peak)
        if dtype_of(M).is_float and M.nvals and not np.isfinite(M.reduce_scalar(gb.monoid.plus).new().value):
            bad = M.nvals - int(M.apply(gb.unary.isfinite).new(dtype=gb.dtypes.INT64).reduce_scalar().value)
        if d is None:
            return bad
        meet(d.comm, f"nonfinite() of {self.name or 'a result'}")
        return int(sum(d.comm.allgather(bad)))

    @overload
    def to_coo(self, root: None = None) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]]: ...
    @overload
    def to_coo(self, root: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]] | None: ...

    def to_coo(self, root: int | None = None) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]] | None:
        """(rows, cols, values) of the present entries, rows/cols as int64, row-major order."""
        M = self._gather(root, "to_coo()")
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
        M = self._gather(root, "to_numpy()")
        if M is None:
            return None
        if fill is None:
            if M.nvals != M.nrows * M.ncols:
                raise ValueError(f"{self.name or 'result'} has {M.nrows * M.ncols - M.nvals} "
                                 "missing entries; call to_numpy(fill=...) or use to_coo()/to_scipy()")
            return self._presented(M.to_dense())
        return self._presented(M.to_dense(fill_value=fill))

    @overload
    def present(self, root: None = None) -> NDArray[np.bool_]: ...
    @overload
    def present(self, root: int) -> NDArray[np.bool_] | None: ...

    def present(self, root: int | None = None) -> NDArray[np.bool_] | None:
        """Boolean array: where an entry is present."""
        M = self._gather(root, "present()")
        if M is None:
            return None
        out = np.zeros(self._shape, dtype=bool)
        r, c, _ = M.to_coo(values=False)
        out[r, c] = True
        return self._presented(out)

    @overload
    def to_scipy(self, format: ScipyFormat = "csr", root: None = None) -> sp.sparray: ...
    @overload
    def to_scipy(self, format: ScipyFormat, root: int) -> sp.sparray | None: ...
    @overload
    def to_scipy(self, format: ScipyFormat = "csr", *, root: int) -> sp.sparray | None: ...

    def to_scipy(self, format: ScipyFormat = "csr", root: int | None = None) -> sp.sparray | None:
        """A scipy sparse array of the present entries (``format``: csr, csc, coo, ...)."""
        M = self._gather(root, "to_scipy()")
        return None if M is None else gb.io.to_scipy_sparse(M, format=format)

    @overload
    def to_networkx(self, directed: bool = True, *, weight: str = "weight", root: None = None) -> Any: ...
    @overload
    def to_networkx(self, directed: bool = True, *, weight: str = "weight", root: int) -> Any | None: ...

    def to_networkx(self, directed: bool = True, *, weight: str = "weight", root: int | None = None) -> Any | None:
        """A square result as a networkx graph: ``directed`` a ``DiGraph`` with an edge i -> j for
        every present entry (i, j), else a ``Graph`` (the value must be symmetric); the entry's
        value is the edge's attribute ``weight``. Nodes are the original ids (``ids``) when the
        value has them, else 0..n-1; every row is a node, isolated ones too. Needs networkx."""
        from ..formats.graph import to_networkx

        S = self.to_scipy("csr", root=root) if root is not None else self.to_scipy("csr")
        if S is None:
            return None
        if self.ids is not None and self.col_ids is not None and not np.array_equal(self.ids, self.col_ids):
            raise ValueError(f"{self.name or 'result'}: its rows and columns have different node ids")
        return to_networkx(S, self.ids if self.ids is not None else self.col_ids, directed=directed,
                           weight=weight, name=self.name or "result")

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
        ids = "" if self.ids is None else f", ids {self.ids[0]}..{self.ids[-1]}" if len(self.ids) else ""
        size = f"{self._shape[0]}x{self._shape[1]}" if self.form == "matrix" else \
            f"vector[{self._shape[0]}]" if self.form == "vector" else "scalar"
        return f"Array({self.name or ''}{'' if self.name is None else ': '}{size} {self.dtype}{where}{ids})"


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
