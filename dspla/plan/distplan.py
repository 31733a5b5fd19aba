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


@dataclass
class DistPlan:
    P: int
    programs: list
    dims: dict
    input_layouts: dict            # name -> Layout of the dynamic inputs
    output_layouts: dict           # name -> Layout, or None for outputs computed at planning
    static_outputs: dict           # name -> graphblas Matrix
    products: list
    partition: dict
    planning_s: float = 0.0
    program: object = None          # the program planned (after the size-dependent passes)
    steps_s: dict = field(default_factory=dict)   # compiler step -> seconds

    def explain(self) -> str:
        lines = [f"distributed plan for P = {self.P}"]
        for d, dp in self.dims.items():
            lines.append(f"  dim {d}: {dp.size} indices, partition {dp.method}, rows per process "
                         f"{dp.counts.min()}..{dp.counts.max()}")
        for p in self.products:
            pred = ", ".join(f"{k} {v}" for k, v in p.predicted.items())
            lines.append(f"  product {p.index}: {p.expr}  [{p.a} x {p.b}, K={p.K}] -> plan {p.plan}"
                         + (f" ({pred})" if pred else ""))
            for note in p.notes:
                lines.append(f"      note: {note}")
        for name, lay in self.output_layouts.items():
            lines.append(f"  output {name}: " + ("computed at planning on rank 0" if lay is None else f"{lay}"))
        return "\n".join(lines)
