"""Reading graphs and arrays, writing and reading results.

- :func:`load_graph`: any graph file (MatrixMarket, edge list, scipy .npz) or a networkx graph ->
  a :class:`Graph` (its matrix and original node ids);
- :func:`load_mtx`, :func:`load_snap`, :func:`load_npz`, :func:`load_planetoid`: one format each;
- :func:`read_input`: ``dspla run --input NAME=SPEC``; :func:`write_results`: its output file,
  which :func:`read_results` reads back.

The names load their module on first use (``dspla.formats.files``, which every command imports, must
not bring scipy and every reader along).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .graph import Graph, load_graph
    from .inputs import generate_inputs, read_input
    from .mtx import load_mtx
    from .npz import load_npz
    from .planetoid import PlanetoidData, load_planetoid
    from .results import read_results, write_results
    from .snap import load_snap
    from .specs import is_generated

_WHERE = {"Graph": "graph", "load_graph": "graph", "generate_inputs": "inputs", "is_generated": "specs",
          "read_input": "inputs", "load_mtx": "mtx", "load_npz": "npz", "PlanetoidData": "planetoid",
          "load_planetoid": "planetoid", "read_results": "results", "write_results": "results", "load_snap": "snap"}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


__all__ = ["Graph", "load_graph", "load_mtx", "load_snap", "load_npz", "load_planetoid", "PlanetoidData",
           "read_input", "read_results", "write_results", "generate_inputs", "is_generated"]
