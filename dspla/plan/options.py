"""What a user may choose about a distributed run: the plan, the partition, and plan knobs."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np


@dataclass
class Options:
    # a name in dspla.plan.plans.PLANS, or "auto" (lowest predicted time); or per product, a dict of
    # the product's name (its output's or value's) -> plan name, the products not named auto
    plan: str | dict = "auto"
    partition: str = "auto"        # a partition method, "auto" (plan/partition_choice.py), or "file" with parts
    parts: np.ndarray | None = None
    seed: int = 0
    eps: float = 0.03
    replication: int | None = None   # shift1d / 15d / 15d_sparse; None: 2 if it divides P (15d_sparse: the model's c)
    stripe_width: int | None = None  # twoface
    grid: tuple | None = None        # 3d: the X x Y x Z process grid (None: closest to a cube, Z <= K)
    memory_cap: float | None = None  # twoface, bytes per process
    cache: bool = True
    progress: bool | None = None
    coefficients: object = None    # a dspla.costmodel.Coefficients; None: the calibrated (or shipped) ones
    iterations: int | None = None  # how many times the plan will run (None: unknown; see partitioning)
    spmd: bool = True              # every rank plans its own program (False: rank 0 plans all and sends them)
    message_bytes: int = 32 << 20  # p2p1d: larger row sets travel in chunks of this size, two posted at a time
    ranks_per_node: int | None = None  # p2p1d_node: consecutive ranks sharing a node (None: all on one)
    # bytes a rank may share with the others when all are on one node (0: not on one node, or
    # DSPLA_SHM=0): the session sets it; p2p1d then stacks the rows it receives after its own
    shared_memory_bytes: int = 0
    # what an int64 sum or product whose true value leaves int64 does (exec/overflow.py): an
    # error ("error"), GraphBLAS's wrap-around ("wrap"); "float64" promotes at compile time
    overflow: str = "error"

    def key(self) -> tuple:
        plan = self.plan if isinstance(self.plan, str) else tuple(sorted(self.plan.items()))
        return (plan, self.partition, None if self.parts is None else self.parts.tobytes(), self.seed, self.eps,
                self.replication, self.stripe_width, self.memory_cap, id(self.coefficients), self.iterations, self.spmd,
                self.message_bytes, self.shared_memory_bytes, self.overflow, self.grid, self.ranks_per_node)


def memory_cap(opt, P: int) -> float:
    """Bytes a process may use for a product's buffers: --memory-cap, else half the machine's
    memory shared by the P processes."""
    if opt.memory_cap:
        return float(opt.memory_cap)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 << 30
    return 0.5 * total / max(1, P)


def forced(opt, product: str) -> str:
    """The plan asked for the product named ``product`` (its label): the one plan asked for every
    product, its own entry when plans are asked per product, else "auto"."""
    if isinstance(opt.plan, str):
        return opt.plan
    return opt.plan.get(product, "auto")


def forced_names(plan) -> set:
    """Every plan name a plan option asks for (without "auto")."""
    names = {plan} if isinstance(plan, str) else set(plan.values())
    return names - {"auto"}
