"""Types of IR values: a kind (sparse or dense storage), a 2-D shape of dims, and a dtype.

Every value is a matrix; vectors are n x 1 (column) or 1 x n (row). Semantics never depend on
kind: a missing entry is missing whatever the storage. Kind says how the value is stored and
laid out (CSR vs. a values array with a presence bitmap) and, for inputs, what a caller must
pass: a dense input must have every entry present.
"""
from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Union

import numpy as np

from ..errors import InputError, UnknownNameError

Dim = Union[int, str]  # an int is a fixed size; a str is a symbol bound from data at run time
MAX_DIM = 2**63 - 1    # sizes are int64 everywhere below (GraphBLAS, numpy, MPI counts)


class DType(enum.Enum):
    float64 = "float64"
    float32 = "float32"
    int64 = "int64"
    bool = "bool"

    @property
    def np(self) -> np.dtype:
        return _NP[self]

    @property
    def gb(self) -> str:
        return _GB[self]

    @property
    def is_float(self) -> bool:
        return self in (DType.float64, DType.float32)

    @property
    def is_numeric(self) -> bool:
        return self is not DType.bool

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, name) -> "DType":
        if isinstance(name, DType):
            return name
        try:
            return cls(np.dtype(name).name)
        except (TypeError, ValueError):
            pass
        raise UnknownNameError("dtype", str(name), [d.value for d in cls])

    @classmethod
    def of_numpy(cls, dtype) -> "DType":
        """The dspla dtype that holds a numpy dtype's values (integers widen to int64)."""
        try:   # asked for every operand of every op: the common answers are remembered
            return _OF_NUMPY[dtype]
        except (KeyError, TypeError):
            pass
        dt = np.dtype(dtype)
        got = cls._of_numpy(dt)
        try:
            _OF_NUMPY[dtype] = got
        except TypeError:
            pass
        return got

    @classmethod
    def _of_numpy(cls, dt: np.dtype) -> "DType":
        if dt == np.bool_:
            return cls.bool
        if dt.kind in "iu":
            return cls.int64
        if dt == np.float32:
            return cls.float32
        if dt.kind == "f":
            return cls.float64
        raise TypeError(f"no dspla dtype holds numpy {dt}")


_NP = {d: np.dtype(d.value) for d in DType}
_GB = {DType.float64: "FP64", DType.float32: "FP32", DType.int64: "INT64", DType.bool: "BOOL"}
_OF_NUMPY: dict = {}
_PROMOTE = {(a, b): DType.of_numpy(np.result_type(_NP[a], _NP[b])) for a in DType for b in DType}


def promote(a: DType, b: DType) -> DType:
    """numpy's promotion restricted to dspla dtypes (bool + int -> int, int + float -> float64)."""
    return _PROMOTE[a, b]


class Kind(enum.Enum):
    sparse = "sparse"
    dense = "dense"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Type:
    kind: Kind
    shape: tuple[Dim, Dim]
    dtype: DType = DType.float64

    def __str__(self) -> str:
        return f"{self.kind}[{self.shape[0]}, {self.shape[1]}] {self.dtype}"

    def with_(self, **kw) -> "Type":
        d = {"kind": self.kind, "shape": self.shape, "dtype": self.dtype}
        d.update(kw)
        return Type(**d)

    @property
    def nrows(self) -> Dim:
        return self.shape[0]

    @property
    def ncols(self) -> Dim:
        return self.shape[1]


@dataclass(frozen=True)
class TupleType:
    """Several values at once: what a while loop produces (ITEM nodes take them apart)."""
    items: tuple

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


def shape_str(shape) -> str:
    return f"[{shape[0]}, {shape[1]}]"


def concrete(dim: Dim, dims: Mapping[str, int], what: str = "") -> int:
    """A dim's size: itself when a literal, else its binding in ``dims`` (an InputError when none)."""
    if isinstance(dim, int):
        return dim
    if dim not in dims:
        raise InputError(f"dimension {dim!r}{' of ' + what if what else ''} is not bound by any input")
    return dims[dim]
