"""One-sided communication: windows exposed, rows fetched from them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Instr, Traffic


@dataclass(frozen=True, eq=False)
class WinExpose(Instr):
    """Copy the dense local piece ``src`` into window ``win`` (double-buffered by iteration) and
    make it visible to every rank's gets (sync + barrier). ``served_words/messages`` are what
    others will get from this rank (known at planning), counted as sent by it."""
    win: int
    src: int
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    served_words: int = 0
    served_messages: int = 0
    READS = ("src",)
    COLLECTIVE = True

    def traffic(self, where, payload=None):
        return Traffic(self.served_words, self.served_messages, 0, 0)


@dataclass(frozen=True, eq=False)
class Get(Instr):
    """Post one MPI_Rget of the row runs (starts[i], counts[i]) of ``target``'s window ``win``
    through an indexed datatype (only the needed rows, nearby ones coalesced); completed by RecvMxM."""
    out: int
    win: int
    target: int
    target_nrows: int    # rows the target exposes (its buffer is double: parity x target_nrows)
    starts: np.ndarray
    counts: np.ndarray
    nrows: int
    k: int
    dtype: str
    presence: bool = False
    WRITES = ("out",)

    def traffic(self, where, payload=None):
        return Traffic(0, 0, self.nrows * self.k, 1)
