"""The types of dspla's public API, named once: what names an operator, a shape or a dtype, what
a program takes as input data, what a distributed run's options are. The annotations of the
public functions use them; mypy checks them (``make check``, ``[tool.mypy]`` in pyproject.toml).

Aliases only (no behaviour): each is a ``typing`` union, usable in a user's own annotations too.
python-graphblas and scipy ship no type information, so mypy sees their classes as ``Any``:
a union that holds one accepts any value under mypy, and the rest of it documents the intent.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypedDict, Union

import numpy as np
from numpy.typing import NDArray

from .algebra import BinaryOp, Monoid, SelectOp, Semiring, UnaryOp
from .ir.types import Dim, DType, Kind

if TYPE_CHECKING:   # (named, not imported: `import dspla` loads neither, a run does)
    import graphblas
    import scipy.sparse

Scalar: TypeAlias = Union[int, float, np.number[Any], np.bool_]
"""A number or a bool, Python's or numpy's: a bound operand (``2 * X``), a fill value, a constant."""

IndexLike: TypeAlias = Union[int, slice, Sequence[int], NDArray[np.integer[Any]], None]
"""Indices of extract and assign: an int (one row or column), a slice, ints in a sequence or a
numpy array (repeats allowed in extract), or None for all."""

ShapeLike: TypeAlias = Union[Dim, Sequence[Dim]]
"""A shape: one or two dims, each a size (int) or a symbol bound from the data (``"n"``);
one dim ``n`` is a column vector ``(n, 1)``."""

DTypeLike: TypeAlias = Union[str, DType, np.dtype[Any], type[Any]]
"""A dtype: ``"float64"``, ``"float32"``, ``"int64"`` or ``"bool"``, a ``DType``, or what numpy
accepts for one of those (``np.float32``, ``np.dtype("int64")``)."""

KindLike: TypeAlias = Union[Literal["sparse", "dense"], Kind]
"""How an input is stored: ``"sparse"`` (entries may be missing) or ``"dense"`` (all present)."""


class GraphBLASOperator(Protocol):
    """A python-graphblas operator object (``graphblas.semiring.min_plus``,
    ``graphblas.binary.plus``, one made by ``register_new``): dspla reads it by its name."""

    @property
    def name(self) -> str: ...


SemiringLike: TypeAlias = Union[str, Semiring, GraphBLASOperator]
"""A semiring: its name (``"min_plus"``), ``dp.semiring.NAME`` or a python-graphblas semiring."""

MonoidLike: TypeAlias = Union[str, Monoid, GraphBLASOperator]
"""A monoid: its name (``"plus"``), ``dp.monoid.NAME`` or a python-graphblas monoid."""

BinaryOpLike: TypeAlias = Union[str, BinaryOp, Monoid, GraphBLASOperator]
"""A binary operator: its name (``"times"``), ``dp.binary.NAME``, a monoid (its operator) or a
python-graphblas operator."""

UnaryOpLike: TypeAlias = Union[str, UnaryOp, GraphBLASOperator]
"""A unary operator: its name (``"relu"``), ``dp.unary.NAME`` or a python-graphblas operator."""

SelectLike: TypeAlias = Union[str, SelectOp, GraphBLASOperator, Callable[..., Any]]
"""A select predicate: a name (``"tril"``, ``"gt"``) or a comparison (``">"``, ``"<="``)."""

BinaryFunction: TypeAlias = Callable[[Any, Any], Any]
"""A Python function of two numbers returning one, compiled with numba (a user operator)."""

UnaryFunction: TypeAlias = Callable[[Any], Any]
"""A Python function of one number returning one, compiled with numba (a user operator)."""

HostValue: TypeAlias = Union[NDArray[Any], "scipy.sparse.sparray", "scipy.sparse.spmatrix", "graphblas.Matrix",
                             "graphblas.Vector", list[Any], tuple[Any, ...], Scalar]
"""Input data held by the caller: a numpy array (dense inputs), a scipy sparse array or matrix
(sparse inputs; a missing entry is not a zero), a python-graphblas Matrix or Vector (either), a
``dspla.formats.graph.Graph`` (``load_graph``: its matrix, its node ids going to the results; not
named in the union, which may not import the readers), a networkx graph (read as ``load_graph``
reads it), a nested list, or a scalar (a 1 x 1 input)."""

PathLike: TypeAlias = Union[str, os.PathLike[str]]
"""A file or folder path."""


class RunOptions(TypedDict, total=False):
    """The options of a distributed run, by keyword (``f.configure(plan="p2p1d", seed=1)``,
    ``f.run(..., partition="hp")``): the fields of ``dspla.plan.options.Options``."""

    plan: str | dict[str, str]          # a plan name, or "auto" (lowest predicted time); or per product
    partition: str                      # a partition method, "auto", or "file" with parts
    parts: NDArray[np.integer[Any]] | None   # the owner of each row (partition="file")
    seed: int
    eps: float                          # the partitioner's imbalance
    replication: int | None             # shift1d / 15d / 15d_sparse (None: 2 if it divides P; 15d_sparse: the model's)
    stripe_width: int | None            # twoface
    grid: tuple[int, int, int] | None   # 3d: the X x Y x Z process grid (None: closest to a cube)
    memory_cap: float | None            # twoface, bytes per process
    cache: bool                         # keep plans on disk
    progress: bool | None               # the partitioner's progress lines (None: dspla.quiet's)
    coefficients: object                # a dspla.costmodel.Coefficients (None: the calibrated ones)
    iterations: int | None              # how many times the plan will run
    spmd: bool                          # every rank plans its own program
    message_bytes: int                  # p2p1d: larger row sets travel in chunks of this size
    ranks_per_node: int | None          # p2p1d_node: consecutive ranks sharing a node (None: all on one)
    shared_memory_bytes: int            # set by the session (ranks on one node): a value given is replaced
    overflow: str                       # an int64 sum or product leaving int64: "error" or "wrap"


__all__ = ["BinaryFunction", "BinaryOpLike", "DTypeLike", "Dim", "GraphBLASOperator", "HostValue", "KindLike",
           "IndexLike", "MonoidLike", "PathLike", "RunOptions", "Scalar", "SelectLike", "SemiringLike", "ShapeLike",
           "UnaryFunction", "UnaryOpLike"]
