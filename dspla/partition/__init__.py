"""Row partitioners and edge partitioners for 1D distributed products.

    from dspla.partition import partition, edge_partition, METHODS
    r = partition(A, 64, "hypergraph", eps=0.03, seed=0)   # r.parts: row -> process
    e = edge_partition(A, 64, "spac")                        # e.parts: edge -> part, e.vertex_cut

Methods live in registry tables (METHODS, EDGE_METHODS); reading one fills them. The names are
loaded on first use (a run on one process, or by blocks of rows, partitions nothing: it does not
load the partitioners' modules).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .edge import (
        EdgePartitionResult,
        SplitGraph,
        contracted_split_graph,
        edge_hypergraph,
        edge_partition,
        split_graph,
        undirected_edges,
        vertex_cut,
    )
    from .hypergraph import Hypergraph, column_net
    from .partitioner import PartitionResult, edge_methods, methods, partition
    from .registry import EDGE_METHODS, METHODS, Method, register
    from .simple import block_parts, random_parts
    from .stochastic import UniformNodeSampler, nets_needed

_WHERE = {
    "PartitionResult": "partitioner", "edge_methods": "partitioner", "methods": "partitioner",
    "partition": "partitioner",
    "EdgePartitionResult": "edge", "SplitGraph": "edge", "contracted_split_graph": "edge", "edge_hypergraph": "edge",
    "edge_partition": "edge", "split_graph": "edge", "undirected_edges": "edge", "vertex_cut": "edge",
    "Hypergraph": "hypergraph", "column_net": "hypergraph", "EDGE_METHODS": "registry", "METHODS": "registry",
    "Method": "registry", "register": "registry", "block_parts": "simple", "random_parts": "simple",
    "UniformNodeSampler": "stochastic", "nets_needed": "stochastic",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    importlib.import_module(f"{__name__}.registry").load_methods()
    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


__all__ = ["EDGE_METHODS", "EdgePartitionResult", "Hypergraph", "METHODS", "Method", "PartitionResult",
           "SplitGraph", "UniformNodeSampler", "block_parts", "column_net", "contracted_split_graph",
           "edge_hypergraph", "edge_methods", "edge_partition", "methods", "nets_needed", "partition",
           "random_parts", "register", "split_graph", "undirected_edges", "vertex_cut"]
