"""The values a program takes and returns: ``Array`` (a result, whole or distributed over a job,
with GraphBLAS semantics: a missing entry is not a zero) and how the caller's data becomes the
matrices a run binds (array.py, conversion.py, binding.py). Vectors and scalars get modules of their own beside it."""
from ..ir.types import concrete
from .array import (
    Array,
    Communicator,
    Dist,
    InputValue,
    LocalPiece,
    Meta,
    Owners,
    meet,
)
from .binding import bind_inputs
from .conversion import bind_dims, check_shapes, to_matrix

__all__ = ["Array", "Communicator", "Dist", "InputValue", "LocalPiece", "Meta", "Owners", "bind_dims", "bind_inputs",
           "check_shapes", "concrete", "meet", "to_matrix"]
