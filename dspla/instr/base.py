"""The plan IR: what each process does, and how data moves. The expression IR says *what* is
computed; a RankProgram says, for one rank, which local products run on which pieces and
which messages and collectives move rows between processes.

Instructions are plain frozen data over numbered slots (a rank's local values). Arrays in
instructions (send lists, local matrix pieces) are computed once at planning time. ``product``
tags an instruction with the index of the distributed product it belongs to (for stats).

Each instruction also states, for the verifier and for accounting:

- ``READS`` / ``WRITES``: the fields naming the slots it reads and writes (a field may hold a
  slot, None, or a tuple of slots);
- ``traffic(where)``: the words (matrix entries) and messages it sends and receives on the rank
  ``where`` describes. The cost model's predictions and the runtime's counters both come from
  this one method, so measured traffic equals predicted traffic by construction. Instructions
  whose traffic depends on run-time data (``DYNAMIC``) are told the payload when they run.

Every instruction class defined (a subclass of ``Instr``) is registered in ``INSTRUCTIONS``; the
runtime's handlers and the cost model's rules are checked against it. ``COLLECTIVE = True``
marks those the members of a group must call together, in the same order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

INSTRUCTIONS: list[type] = []   # every instruction class, in definition order (Instr.__init_subclass__)


class Traffic(NamedTuple):
    """What one instruction moves on one rank: words are matrix entries (a presence bitmap
    travelling with them is not counted), messages are point-to-point transfers or a rank's
    sends/receives inside a collective."""
    words_sent: int = 0
    messages_sent: int = 0
    words_received: int = 0
    messages_received: int = 0

    def __add__(self, other: "Traffic") -> "Traffic":  # type: ignore[override]
        return Traffic(*(a + b for a, b in zip(self, other)))


NO_TRAFFIC = Traffic()


class Where(NamedTuple):
    """The rank an instruction runs on, as traffic rules see it: its world rank and the size of
    every group it may use (group 0 is the world; 0 where it is not a member)."""
    rank: int
    group_sizes: tuple


@dataclass(frozen=True, eq=False)
class Instr:
    product: int | None = field(default=None, kw_only=True)
    READS = ()
    WRITES = ()
    DYNAMIC = False   # traffic depends on run-time data (the runtime passes the payload)
    COLLECTIVE: ClassVar[bool] = False   # the whole group calls it together, in the same order
    PLACEHOLDER: ClassVar[bool] = False  # only between two compiler steps (no handler, no cost rule)

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if not cls.__dict__.get("PLACEHOLDER", False):
            INSTRUCTIONS.append(cls)

    @property
    def dynamic(self) -> bool:
        return self.DYNAMIC

    def traffic(self, where: Where, payload=None) -> Traffic:
        return NO_TRAFFIC

    def slots_in(self, fields) -> list[int]:
        out = []
        for name in fields:
            v = getattr(self, name)
            if isinstance(v, tuple):
                out.extend(v)
            elif v is not None:
                out.append(v)
        return out

    def reads(self) -> list[int]:
        return self.slots_in(self.READS)

    def writes(self) -> list[int]:
        return self.slots_in(self.WRITES)

    def __str__(self) -> str:
        parts = []
        for k, v in self.__dict__.items():
            if k == "product":
                continue
            parts.append(f"{k}={_short(v)}")
        tag = f"  [product {self.product}]" if self.product is not None else ""
        return f"{type(self).__name__}({', '.join(parts)}){tag}"


def _short(v) -> str:
    if isinstance(v, np.ndarray):
        return f"<{v.size} {v.dtype}>"
    if isinstance(v, tuple) and len(v) > 6:
        return f"<{len(v)} items>"
    if hasattr(v, "nvals") and hasattr(v, "nrows"):
        return f"<{v.nrows}x{v.ncols} matrix, {v.nvals} entries>"
    if hasattr(v, "op_text"):
        return v.op_text()
    return str(v)
