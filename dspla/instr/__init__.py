"""The plan IR, a stage of its own below planning, the cost model and the runtime: one module per
kind of instruction (as the runtime's handlers are: compute, messages, collectives, loops,
one-sided), a rank's program, and how values are laid out across ranks (layout.py)."""
from .base import INSTRUCTIONS, NO_TRAFFIC, Instr, Traffic, Where
from .collectives import (
    AllgatherRows,
    AllgatherSparse,
    Allreduce,
    Alltoall,
    AlltoallSparse,
    Bcast,
    BcastSparse,
    IBcast,
    ISmallAllreduce,
    Redistribute,
    SmallAllreduce,
    TransposeRows,
    WaitAllreduce,
    ring_allreduce_words,
)
from .compute import CastTo, DropRows, Empty, Fill, Free, Local, MxM, Pack, StackedMxM, TakeCols, TakeRows, Unpermute
from .loops import Loop, walk
from .messages import (
    FetchGather,
    FetchMxM,
    PackSparse,
    Recv,
    RecvMxM,
    SampledMxM,
    Send,
    SendRecvRows,
    StackMxM,
    StackRows,
    WaitSends,
)
from .onesided import Get, WinExpose
from .program import Choice, RankProgram

# the instructions the members of a group must call together, in the same order
COLLECTIVES = tuple(c for c in INSTRUCTIONS if c.COLLECTIVE)

__all__ = [
    "COLLECTIVES", "INSTRUCTIONS", "NO_TRAFFIC", "AllgatherRows", "AllgatherSparse", "Allreduce", "Alltoall",
    "AlltoallSparse", "Bcast",
    "BcastSparse", "CastTo", "Choice", "DropRows", "Empty", "FetchGather", "FetchMxM", "Fill", "Free", "Get", "IBcast",
    "ISmallAllreduce",
    "Instr", "Local", "Loop", "MxM", "Pack", "PackSparse", "RankProgram", "Recv", "RecvMxM", "Redistribute",
    "SampledMxM", "Send", "SendRecvRows", "SmallAllreduce", "StackMxM", "StackRows", "StackedMxM", "TakeCols",
    "TakeRows", "Traffic",
    "TransposeRows", "Unpermute", "WaitAllreduce", "WaitSends", "Where", "WinExpose", "ring_allreduce_words", "walk",
]
