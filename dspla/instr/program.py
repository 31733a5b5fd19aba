"""One rank's program, and the placeholder a product holds until its plan is chosen."""
from __future__ import annotations

from dataclasses import dataclass, field

from .base import Instr, Where
from .loops import Loop, walk


@dataclass(frozen=True, eq=False)
class Choice(Instr):
    """Where a distributed product goes until plan choice replaces it by the chosen candidate's
    instructions (only between the lower and choose steps of the compiler)."""
    PLACEHOLDER = True


@dataclass
class RankProgram:
    """Everything one rank runs. ``consts`` preload slots with planning-time pieces; ``inputs``
    and ``outputs`` map program names to slots and their layouts; ``splits`` are the colour of
    this rank in each sub-communicator the program uses (group g+1 is splits[g]; group 0 is
    the world); ``windows`` lists (nrows, row_bytes) of each one-sided window this rank exposes
    (every rank creates the same windows, in order, at set-up)."""
    rank: int
    P: int
    instrs: list
    n_slots: int
    consts: dict
    inputs: dict          # name -> slot
    outputs: dict         # name -> (slot, layout)
    splits: list = field(default_factory=list)
    windows: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    setup: list = field(default_factory=list)   # run once, before the first run: deferred static values
    products: dict = field(default_factory=dict)   # product index -> its expression, for messages

    def group_sizes(self, all_splits: list | None = None) -> tuple:
        """The size of each group this rank may use; needs every rank's colours (``all_splits``:
        per group, the colour of each rank), which only planning has. The runtime reads the
        sizes off its communicators instead."""
        sizes = [self.P]
        for colors in all_splits or []:
            c = colors[self.rank]
            sizes.append(sum(1 for x in colors if x == c) if c is not None else 0)
        return tuple(sizes)

    def data_dependent(self) -> set:
        """The products whose traffic on this rank depends on the data (a sparse operand's messages
        carry only its present entries): their planned words are the most they can move, not
        what they will move (loop bodies and conditions included)."""
        return {i.product for i in (*walk(self.setup), *walk(self.instrs))
                if type(i) is not Loop and i.product is not None and i.dynamic}

    def loop_words(self, where: Where) -> dict:
        """loop id -> (words the products send, words sent outside products, exact) on this rank
        in one iteration: the condition checked once, the body once, the loop's broadcast of the
        condition. Outside products: scalar allreduces, redistributions, the broadcast. A sparse
        operand's messages count their most (exact False), as its product's do; a loop nested in
        the body is counted apart, for its own iterations."""
        out: dict = {}

        def walk(instrs):
            for i in instrs:
                if type(i) is not Loop:
                    continue
                prod = other = 0
                exact = True
                for j in (*i.cond, *i.body):
                    if type(j) is Loop:
                        continue
                    w = j.traffic(where).words_sent
                    exact = exact and not j.dynamic
                    if j.product is None:
                        other += w
                    else:
                        prod += w
                out[i.loop] = (prod, other + i.traffic(where, 1).words_sent, exact)
                walk(i.cond)
                walk(i.body)
        walk(self.setup)   # (a loop over static values only runs there, once: its words count too)
        walk(self.instrs)
        return out

    def __str__(self) -> str:
        lines = [f"rank {self.rank} of {self.P}: {len(self.instrs)} instructions, {len(self.consts)} planned pieces"]
        for name, slot in self.inputs.items():
            lines.append(f"  s{slot} <- input {name}")
        if self.setup:
            lines.append("  setup (first run only):")
            lines += [f"    {i}" for i in self.setup]
        for i in self.instrs:
            lines.append(f"  {i}")
        for name, (slot, layout) in self.outputs.items():
            lines.append(f"  output {name} <- s{slot} ({layout})")
        return "\n".join(lines)
