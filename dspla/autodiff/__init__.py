"""Automatic differentiation of semiring programs: reverse mode over the IR, one VJP rule per op.

``grad(loss, wrt)`` returns gradient nodes; the backward program is ordinary IR (docs/autodiff.md).
"""
from .grad import NoGradientError, grad
from .vjp import VJP, NoGradient

__all__ = ["VJP", "NoGradient", "NoGradientError", "grad"]
