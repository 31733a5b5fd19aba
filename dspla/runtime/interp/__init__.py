"""The plan interpreter: runs one rank's RankProgram on a communicator, counting what moves.

One handler per instruction type in the EXEC table. What an instruction moves (words: matrix
entries sent to or received from another process; messages) is the instruction's own
``traffic``, the same account the cost model predicts from: the static part is summed per
product once, at set-up; instructions whose traffic depends on the data report their payload
when they run. Handlers time three phases: compute (local GraphBLAS work), pack (gathering rows
into buffers and back) and wait (blocked in communication).
"""
from __future__ import annotations

from ... import kernels as _kernels  # noqa: F401  (python-graphblas initialised before messages imports gb.ss)
from ...instr import INSTRUCTIONS
from . import collectives, compute, fetch, loops, messages, onesided  # noqa: F401  (their handlers fill EXEC)
from .interpreter import EXEC, Runtime, handler

assert set(EXEC) == set(INSTRUCTIONS), f"instructions without a handler: {set(INSTRUCTIONS) - set(EXEC)}"

__all__ = ["EXEC", "Runtime", "handler"]
