"""The expression IR as data: types, the node (an op applied to arguments), programs, and the
checks of a whole program a user's mistakes can fail (check.py, lint.py). The ops and their
rules are dspla/ops; ``make`` (ops) builds a node by its op's type rule."""
from .node import Node, Op
from .program import Program
from .types import Dim, DType, Kind, Type, promote

__all__ = ["DType", "Dim", "Kind", "Node", "Op", "Program", "Type", "promote"]
