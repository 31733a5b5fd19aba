"""Original node ids through a run: the inputs that carry them (a ``Graph`` read from an edge
list or a networkx graph, an ``Array`` that has them) give them to their symbolic dims, and
every result whose rows (columns) are such a dim gets them (``Array.ids``, ``Array.col_ids``).
Positions are what a program computes with; ids are metadata on this process, never sent."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..formats.graph import Graph, from_networkx, is_networkx
from ..ir import Node
from .array import Array


def graphs_read(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The inputs with every networkx graph read once into a ``Graph`` (its matrix and ids)."""
    if not any(is_networkx(v) for v in inputs.values()):
        return inputs   # (the common case, on every call: nothing made)
    return {k: from_networkx(v) if is_networkx(v) else v for k, v in inputs.items()}


def value_ids(value: Any) -> tuple[NDArray[Any] | None, NDArray[Any] | None]:
    """(row ids, column ids) an input carries: a ``Graph``'s ids on both axes, an ``Array``'s own."""
    if isinstance(value, Graph):
        return value.ids, value.ids
    if isinstance(value, Array):
        return value.ids, value.col_ids
    return None, None


def dim_ids(decls: Mapping[str, Node], inputs: Mapping[str, Any]) -> dict[str, NDArray[Any]]:
    """dim -> the original ids of its indices, from the inputs that carry ids; two inputs that
    number the same dim's nodes differently are an error (their positions would pair different
    nodes)."""
    out: dict[str, NDArray[Any]] = {}
    given: dict[str, str] = {}
    for name, value in inputs.items():
        if not isinstance(value, (Graph, Array)):
            continue
        decl = decls.get(name)
        if decl is None:
            continue
        for d, ids in zip(decl.type.shape, value_ids(value)):
            if not isinstance(d, str) or ids is None:
                continue
            if d in out and ids is not out[d] and not np.array_equal(ids, out[d]):
                raise InputError(f"inputs {given[d]!r} and {name!r} number the nodes of {d!r} differently (their "
                                 "node ids differ): row k would be another node in each; read the second with the "
                                 f"first's ids (dp.load_graph(..., ids={given[d]}_graph.ids))")
            out.setdefault(d, ids)
            given.setdefault(d, name)
    return out


def with_ids(results: dict[str, Array], outputs: Iterable[tuple[str, Node]],
             ids: Mapping[str, NDArray[Any]]) -> dict[str, Array]:
    """The results, each given the ids of its rows' and columns' dims (when they have some)."""
    if ids:
        for name, node in outputs:
            arr = results.get(name)
            if isinstance(arr, Array):
                r, c = node.type.shape
                arr.ids = ids.get(r) if isinstance(r, str) else None
                arr.col_ids = ids.get(c) if isinstance(c, str) else None
    return results
