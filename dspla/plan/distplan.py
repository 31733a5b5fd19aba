"""What planning produces: one RankProgram per process, and what explain and the stats say
about it (per product: the plans considered, their predictions, the choice)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ProductInfo:
    index: int
    expr: str
    plan: str
    a: str
    b: str
    K: int
    notes: list = field(default_factory=list)
    predicted: dict = field(default_factory=dict)
    candidates: list = field(default_factory=list)   # one dict per plan considered (see costmodel)
    why: str = ""
    counts: dict = field(default_factory=dict, repr=False)   # plan -> per-rank cost-model counts (fitting)
    loop: int | None = None        # the loop whose body holds it (its costs are per iteration)
    requested: str = "auto"        # the plan asked for it by name (options.forced), else auto


@dataclass
class DistPlan:
    P: int
    programs: list
    dims: dict
    input_layouts: dict            # name -> Layout of the dynamic inputs
    output_layouts: dict           # name -> Layout
    products: list
    partition: dict
    planning_s: float = 0.0
    program: object = None          # the program planned (after the size-dependent passes)
    static_outputs: frozenset = frozenset()   # outputs computed once, at planning (their pieces are planned)
    steps_s: dict = field(default_factory=dict)   # compiler step -> seconds
    # "rank 0" (rank 0 planned every rank's program) or "spmd" (every rank its own: programs
    # holds this rank's only); ``planning_note``: why a job with sharded inputs was not SPMD
    planning: str = "rank 0"
    planning_note: str | None = None
    # loop -> (products' words, outside products', exact) per iteration, all ranks (explain.loop_words),
    # kept when the programs go to their ranks
    loop_words: dict = field(default_factory=dict)
