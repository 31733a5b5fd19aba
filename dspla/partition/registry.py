"""Method tables: adding a partitioner is adding an entry (``register(Method(...))``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ..errors import UnknownNameError
from .progress import Progress


@dataclass
class Job:
    """What a method gets: the pattern of A (csr, sorted, no duplicates) and the request."""

    A: sp.csr_matrix
    P: int
    eps: float
    seed: int
    backend: str | None
    params: dict[str, Any]
    progress: Progress
    info: dict[str, Any] = field(default_factory=dict)  # a method may leave numbers here (objective, ...)
    cache: bool = True   # whether a method may read and write the partition cache itself (--no-cache: no)

    def row_nnz(self) -> np.ndarray:
        return np.diff(self.A.indptr).astype(np.int64)


@dataclass(frozen=True)
class Method:
    name: str
    run: Callable[[Job], np.ndarray]  # -> parts (row -> process, or edge -> part for edge methods)
    weight: str  # what balance is measured on: "rows" (count), "nnz" (row nonzeros) or "edges"
    summary: str
    square_only: bool = False
    backends: tuple[str, ...] = ()  # valid backends; the first is the default
    params: tuple[str, ...] = ()  # extra keyword parameters the method accepts
    cacheable: bool = True  # cheap methods skip the disk cache


METHODS: dict[str, Method] = {}  # row partitioners
EDGE_METHODS: dict[str, Method] = {}  # edge partitioners


def register(method: Method, table: dict[str, Method] | None = None) -> Method:
    (METHODS if table is None else table)[method.name] = method
    return method


def load_methods() -> None:
    """Import the modules whose methods register themselves (they are imported when first asked
    for, not with the package)."""
    import importlib

    for m in ("graph", "hp", "simple", "stochastic", "edge", "vertex_owners"):
        importlib.import_module(f"{__package__}.{m}")


def get(name: str, table: dict[str, Method] | None = None, kind: str = "partitioning method") -> Method:
    load_methods()
    table = METHODS if table is None else table
    try:
        return table[name]
    except KeyError:
        raise UnknownNameError(kind, name, table) from None
