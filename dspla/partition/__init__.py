"""Row partitioners and edge partitioners for 1D distributed products.

    from dspla.partition import partition, edge_partition, METHODS
    r = partition(A, 64, "hypergraph", eps=0.03, seed=0)   # r.parts: row -> process
    e = edge_partition(A, 64, "spac")                        # e.parts: edge -> part, e.vertex_cut

Methods live in registry tables (METHODS, EDGE_METHODS); importing this package fills them.
"""
from . import graph, hp, simple, stochastic, vertex_owners  # noqa: F401  (register the row methods)
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

__all__ = ["EDGE_METHODS", "EdgePartitionResult", "Hypergraph", "METHODS", "Method", "PartitionResult",
           "SplitGraph", "UniformNodeSampler", "block_parts", "column_net", "contracted_split_graph",
           "edge_hypergraph", "edge_methods", "edge_partition", "methods", "nets_needed", "partition",
           "random_parts", "register", "split_graph", "undirected_edges", "vertex_cut"]
