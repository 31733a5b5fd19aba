"""The expression IR: types, the node, programs, type rules and the verifier."""
from .node import Node, Op
from .program import Program
from .types import Dim, DType, Kind, Type, promote
from .typing import make
from .verify import verify

__all__ = ["DType", "Dim", "Kind", "Node", "Op", "Program", "Type", "make", "promote", "verify"]
