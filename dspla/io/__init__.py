"""Reading graphs and arrays, writing results.

- :func:`load_graph`: any graph file (MatrixMarket, edge list, scipy .npz) -> csr_array;
- :func:`load_mtx`, :func:`load_snap`, :func:`load_npz`, :func:`load_planetoid`: one format each;
- :func:`read_input`: ``dspla run --input NAME=PATH``; :func:`write_results`: its output file,
  :func:`read_results` reads it back.
"""
from .graph import load_graph
from .inputs import generate_inputs, is_generated, read_input
from .mtx import load_mtx
from .npz import load_npz
from .planetoid import PlanetoidData, load_planetoid
from .results import read_results, write_results
from .snap import load_snap

__all__ = ["load_graph", "load_mtx", "load_snap", "load_npz", "load_planetoid", "PlanetoidData",
           "read_input", "read_results", "write_results", "generate_inputs", "is_generated"]
