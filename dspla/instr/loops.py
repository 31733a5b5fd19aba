"""Loops: a while loop's condition and body, run on every rank."""
from __future__ import annotations

from dataclasses import dataclass

from .base import NO_TRAFFIC, Instr, Traffic


@dataclass(frozen=True, eq=False)
class Loop(Instr):
    """A while loop: ``carry`` slots start as ``init``; then, at most ``max_iter`` times, the
    ``cond`` instructions run and, unless ``cond_slot`` holds a true 1 x 1 value (rank 0's,
    broadcast, so every rank takes the same branch; not broadcast when ``agreed``: every rank
    computes it from the same bits), the loop ends; else the ``body`` runs and
    its ``results`` become the carried values. ``count`` gets the iterations run. Slots the
    body reads from outside the loop are computed once, before it. ``loop`` numbers the loops
    of a program (for stats)."""
    init: tuple
    carry: tuple
    cond: list
    cond_slot: int
    body: list
    results: tuple
    count: int
    max_iter: int
    loop: int = 0
    where: str = ""   # the loop's source position, for the report of a loop that hit its bound
    agreed: bool = False   # every rank computes the condition bitwise alike: no broadcast needed
    owned: tuple = ()      # carried values (their positions) the body writes into: copied at the start
    READS, WRITES = ("init",), ("carry", "count")
    DYNAMIC = True   # what it moves is its body's, times the iterations

    def __str__(self) -> str:
        head = (f"Loop {self.loop} (at most {self.max_iter} times): carry {self.carry} from {self.init}, "
                f"results {self.results}, count -> s{self.count}"
                + ("; condition agreed (no broadcast)" if self.agreed else ""))
        cond = "\n".join(f"    {i}" for i in self.cond)
        body = "\n".join(f"    {i}" for i in self.body)
        return f"{head}\n  while s{self.cond_slot} after:\n{cond}\n  do:\n{body}".replace("\n", "\n  ")

    def traffic(self, where, payload=None):
        # the condition's broadcast: root to every other rank, one word per check
        if payload is None or where.group_sizes[0] < 2 or self.agreed:
            return NO_TRAFFIC
        g, checks = where.group_sizes[0], payload
        return Traffic(checks * (g - 1), checks * (g - 1), 0, 0) if where.rank == 0 else Traffic(0, 0, checks, checks)


def walk(instrs):
    """Every instruction of a block and, recursively, of its loops' conditions and bodies (each
    loop itself included, before its blocks)."""
    for i in instrs:
        yield i
        if type(i) is Loop:
            yield from walk(i.cond)
            yield from walk(i.body)
