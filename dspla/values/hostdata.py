"""What the caller's data becomes before it is a GraphBLAS matrix: a graph read with its ids
(``Graph``) or a networkx graph gives its matrix; float data for an int64 input gives its
integers, when every value is a whole number that fits."""
from __future__ import annotations

from typing import Any

import graphblas as gb
from graphblas import Matrix

from ..errors import InputError
from ..formats.graph import Graph, from_networkx, is_networkx
from ..formats.whole import what, whole_to_int


def host_value(value: Any) -> Any:
    """A ``Graph`` or networkx graph as the scipy matrix a program reads (anything else as it is)."""
    if is_networkx(value):
        value = from_networkx(value)
    return value.matrix if isinstance(value, Graph) else value


def whole_ints(name: str, m: Matrix) -> Matrix:
    """A float matrix as int64 when every present value is a whole number that fits (else an
    InputError naming input ``name`` and its first other entry)."""
    r, c, v = m.to_coo()

    def error(at: tuple[int, ...], value: float) -> InputError:
        k = at[0]
        return InputError(f"input {name!r} is declared int64 but its entry ({int(r[k])}, {int(c[k])}) is {value!r}, "
                          f"{what(value)}; round it, or declare the input a float")
    return gb.Matrix.from_coo(r, c, whole_to_int(v, error), nrows=m.nrows, ncols=m.ncols, dtype="INT64")
