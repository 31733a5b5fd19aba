"""Local work: element-wise steps, products, fills, rows dropped, packed for sending or taken,
casts, frees."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import Instr


@dataclass(frozen=True, eq=False)
class Local(Instr):
    """out = the expression op ``node`` evaluated on local pieces (reference semantics). ``work``:
    the entries it touches on this rank at most (its op's work rule), which the cost model prices."""
    out: int
    node: Any
    args: tuple
    work: int = 0
    # written into its first argument, a loop-carried value no later step reads (ops/update.py)
    in_place: bool = False
    # (with in_place) that argument is a value of the block that only this step reads: written
    # into when no other slot, input or static value holds its object (Runtime.exclusive)
    temporary: bool = False
    READS, WRITES = ("args",), ("out",)


@dataclass(frozen=True, eq=False)
class MxM(Instr):
    """out = a ⊕.⊗ b, or out ⊕= a ⊕.⊗ b with the semiring's monoid when accumulate; with a
    ``mask`` slot (kind 'value'/'structure', maybe complemented), only entries inside it."""
    out: int
    a: int
    b: int
    semiring: Any
    accumulate: bool = False
    mask: int | None = None
    mask_kind: str | None = None
    complement: bool = False
    a_empty_rows: Any = None   # a static a's empty rows, found at planning (not at every run)
    b_covered: bool = False    # b full wherever a reads it, proved at planning (plan/facts.covers)
    # b a sparse vector under a complemented mask: the slot of the planning-time pieces
    # (kernels/spmspv.Frontier) that let each run push the frontier or pull it, by its size
    push: int | None = None
    count: int | None = None   # b's entries over all ranks (1 x 1), the loop test's; None: b's own
    label: str = ""            # the value it makes, for messages (an integer product that overflows)
    b_transposed: bool = False  # b's slot holds Bᵀ: read through SuiteSparse's transpose descriptor
    # a holds a column u and out = (uᵀ ⊕.⊗ b)ᵀ, a column (vxm on a vector), inside a column mask:
    # GraphBLAS's vxm on u as a vector, with no transposes (one process)
    vxm: bool = False
    WRITES = ("out",)

    def reads(self) -> list[int]:
        return [self.a, self.b] + ([self.out] if self.accumulate else []) + \
            ([self.mask] if self.mask is not None else []) + ([self.push] if self.push is not None else []) + \
            ([self.count] if self.count is not None else [])


@dataclass(frozen=True, eq=False)
class StackedMxM(Instr):
    """out = [a_0 a_1 ...] ⊕.⊗ [b_0; b_1; ...]: one product over the pieces of a sparse x sparse
    product's inner dimension that arrived stage by stage (Sparse SUMMA's stages), where
    accumulating a product per stage would merge the output once per stage. Inside ``mask`` when
    there is one; the pieces are freed once used. ``out_entries``: planning's estimate of the
    output's entries (plan/spgemm_size.py); ``flops``: its multiply-adds, exact. ``batches``: when
    C's block would not fit the memory per rank, the positions of B's columns in each column
    batch: out then holds the stacked operands, and the AlltoallSparse that returns C's rows
    makes and returns one batch at a time (runtime/interp/collectives.py)."""
    out: int
    a_parts: tuple
    b_parts: tuple
    semiring: Any
    mask: int | None = None
    mask_kind: str | None = None
    complement: bool = False
    out_entries: int = 0
    flops: int = 0
    batches: tuple = ()
    READS, WRITES = ("a_parts", "b_parts", "mask"), ("out",)


@dataclass(frozen=True, eq=False)
class Fill(Instr):
    """out = a full nrows x k matrix of the monoid's identity (products then accumulate into it
    in place, which SuiteSparse does much faster than building a new output). With a ``value``
    slot (a 1 x 1), of that value instead, broadcast as ewise_add broadcasts it (a missing value:
    no entries), for ``P ⊕ s`` accumulated into it (ops/mxm.py, _plus_constant)."""
    out: int
    nrows: int
    k: int
    monoid: Any
    dtype: str
    value: int | None = None
    READS, WRITES = ("value",), ("out",)


@dataclass(frozen=True, eq=False)
class DropRows(Instr):
    """Make ``rows`` of out missing (rows of A with no entries have no product entries)."""
    out: int
    rows: np.ndarray
    READS, WRITES = ("out",), ("out",)


@dataclass(frozen=True, eq=False)
class Pack(Instr):
    """out = rows ``rows`` of the dense local piece ``src`` as one contiguous message buffer."""
    out: int
    src: int
    rows: np.ndarray
    presence: bool = False  # carry a presence bitmap (the planner could not prove src full)
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class Unpermute(Instr):
    """out = rows of src reordered: out[order[i]] = src[i] (gathered blocks -> global order)."""
    out: int
    src: int
    order: np.ndarray
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class TakeRows(Instr):
    """out = rows ``rows`` of src (a replicated value sliced to this rank's rows)."""
    out: int
    src: int
    rows: np.ndarray
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class TakeCols(Instr):
    out: int
    src: int
    cols: np.ndarray
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class CastTo(Instr):
    """out = src cast to dtype (a product computed in one dtype whose result is another)."""
    out: int
    src: int
    dtype: str
    READS, WRITES = ("src",), ("out",)


@dataclass(frozen=True, eq=False)
class Empty(Instr):
    """out = an nrows x k matrix with no entries (a partial result no stage contributes to)."""
    out: int
    nrows: int
    k: int
    dtype: str
    WRITES = ("out",)


@dataclass(frozen=True, eq=False)
class Free(Instr):
    """Drop slots that are dead from here on (keeps peak memory down)."""
    slots: tuple
