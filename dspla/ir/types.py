"""Types of IR values: a kind (sparse or dense storage), a 2-D shape of dims, a dtype and a form.

Every value is stored and planned as a matrix; a vector is n x 1 and a scalar 1 x 1, and the
form (matrix, vector, scalar) says how a result presents itself (a vector's ``to_numpy()`` has
shape (n,), a scalar converts with float()). Semantics never depend on kind: a missing entry is
missing whatever the storage. Kind says how the value is stored and laid out (CSR vs. a values
array with a presence bitmap) and, for inputs, what a caller must pass: a dense input must have
every entry present.
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
    int8 = "int8"
    int16 = "int16"
    int32 = "int32"
    uint8 = "uint8"
    uint16 = "uint16"
    uint32 = "uint32"
    uint64 = "uint64"

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
        if isinstance(name, str) and name.lower() in ("fp32", "fp64"):   # GraphBLAS's spelling
            name = "float" + name[2:]
        try:
            return cls(np.dtype(name).name)
        except (TypeError, ValueError):
            pass
        raise UnknownNameError("dtype", str(name), [d.value for d in cls])

    @classmethod
    def of_numpy(cls, dtype) -> "DType":
        """The dspla dtype of a numpy dtype (every GraphBLAS built-in type is one)."""
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
        if dt.kind in "iuf" and dt.itemsize <= 8:
            return cls(dt.name)
        raise TypeError(f"no dspla dtype holds numpy {dt}")


_NP = {d: np.dtype(d.value) for d in DType}
_GB = {d: d.value.upper().replace("FLOAT", "FP") for d in DType}
_OF_NUMPY: dict = {}
_PROMOTE = {(a, b): DType.of_numpy(np.result_type(_NP[a], _NP[b])) for a in DType for b in DType}


def promote(a: DType, b: DType) -> DType:
    """numpy's promotion of dspla dtypes (bool + int -> int, int + float -> float64)."""
    return _PROMOTE[a, b]


class Kind(enum.Enum):
    sparse = "sparse"
    dense = "dense"

    def __str__(self) -> str:
        return self.value


FORMS = ("matrix", "vector", "scalar")
STACK = "stack of "   # a form's prefix: a stack of values of the rest (ops/stack.py)


@dataclass(frozen=True)
class Type:
    kind: Kind
    shape: tuple[Dim, Dim]
    dtype: DType = DType.float64
    form: str = "matrix"   # how a result presents itself; a vector is n x 1, a scalar 1 x 1

    def __str__(self) -> str:
        if self.is_stack:
            return STACK + str(self.element())
        if self.form == "vector":
            return f"{self.kind} vector[{self.shape[0]}] {self.dtype}"
        if self.form == "scalar":
            return f"scalar {self.dtype}"
        return f"{self.kind}[{self.shape[0]}, {self.shape[1]}] {self.dtype}"

    @property
    def is_stack(self) -> bool:
        return self.form.startswith(STACK)

    def element(self) -> "Type":
        """The type of a stack's values."""
        return self.with_(form=self.form[len(STACK):])

    def stacked(self) -> "Type":
        """The type of a stack of values of this type."""
        return self.with_(form=STACK + self.form)

    def with_(self, **kw) -> "Type":
        d = {"kind": self.kind, "shape": self.shape, "dtype": self.dtype, "form": self.form}
        d.update(kw)
        d["form"] = fitting(d["form"], d["shape"])
        return Type(**d)

    @property
    def nrows(self) -> Dim:
        return self.shape[0]

    @property
    def ncols(self) -> Dim:
        return self.shape[1]


def fitting(form: str, shape) -> str:
    """``form`` when a value of ``shape`` can have it (a vector is n x 1, a scalar 1 x 1), else
    the nearest that can (a transposed vector is a 1 x n matrix)."""
    if form == "scalar" and tuple(shape) != (1, 1):
        form = "vector"
    if form == "vector" and shape[1] != 1:
        form = "matrix"
    return form


def joined(shape, *types) -> str:
    """The form of an element-wise result of ``types``: theirs when they agree, else a scalar or
    a vector when any is one and the shape allows it (a scalar broadcast over a vector: a vector),
    else a matrix."""
    forms = {t.form for t in types}
    if len(forms) == 1:
        return fitting(forms.pop(), shape)
    return fitting("scalar" if "scalar" in forms else "vector" if "vector" in forms else "matrix", shape)


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
