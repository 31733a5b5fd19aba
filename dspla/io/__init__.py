"""Reading graphs and arrays, writing and reading results.

- :func:`load_graph`: any graph file (MatrixMarket, edge list, scipy .npz) or a networkx graph ->
  a :class:`Graph` (its matrix and original node ids);
- :func:`load_mtx`, :func:`load_snap`, :func:`load_npz`, :func:`load_planetoid`: one format each;
- :func:`read_input`: ``dspla run --input NAME=SPEC``; :func:`write_results`: its output file,
  which :func:`read_results` reads back.
"""
from .graph import Graph, load_graph
from .inputs import generate_inputs, is_generated, read_input
from .mtx import load_mtx
from .npz import load_npz
from .planetoid import PlanetoidData, load_planetoid
from .results import read_results, write_results
from .snap import load_snap

__all__ = ["Graph", "load_graph", "load_mtx", "load_snap", "load_npz", "load_planetoid", "PlanetoidData",
           "read_input", "read_results", "write_results", "generate_inputs", "is_generated"]
