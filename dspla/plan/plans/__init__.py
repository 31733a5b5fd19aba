"""Data-movement plans for C = A ⊕.⊗ B (A a static sparse matrix, row-distributed; B a
row-distributed dense value). Each plan is a registry entry: adding a plan is adding a module
with ``@register_plan``; the planner and the CLI find it by name."""
from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ...errors import DsplaError, UnknownNameError

if TYPE_CHECKING:
    from ...ir import Program

# every plan's name, known without importing the plans' modules (a command checks --plan before it
# starts any process; _load checks this list against the plans that register)
NAMES = ("p2p1d", "p2p1d_node", "allgather1d", "shift1d", "twoface", "15d", "2d", "15d_sparse", "3d", "vertexcut",
         "summa2d_sparse", "spgemm3d")


@dataclass(frozen=True)
class PlanSpec:
    name: str
    lower: Callable          # lower(ctx: ProductContext) -> None (emits instructions)
    doc: str
    check: Callable | None = None   # check(ctx) -> None or a reason the plan cannot run
    spmd: Callable | None = None    # lower(ctx) on one rank from its own rows (plan/spmd.py); None: not yet
    auto: bool = True               # a candidate of --plan auto (False: by name, or on a described cluster)
    general: bool = True            # runs any sparse x dense product on any row partition (False: sparse x
                                    # sparse only, or an edge partition): the generic plan tests run every such plan


PLANS: dict[str, PlanSpec] = {}


def register_plan(name: str, doc: str = "", check: Callable | None = None, spmd: Callable | bool | None = None,
                  auto: bool = True, general: bool = True):
    """``spmd``: the plan's lowering for one rank from its own rows (True: ``fn`` itself works so).
    ``auto``: a candidate of ``--plan auto`` on this machine. ``general``: it runs any sparse x
    dense product on any row partition (False: it needs a sparse B, or an edge partition)."""
    def register(fn):
        PLANS[name] = PlanSpec(name, fn, doc or (fn.__doc__ or "").strip().splitlines()[0], check,
                               fn if spmd is True else spmd or None, auto, general)
        return fn
    return register


def spmd_names(general: bool = False) -> list[str]:
    """The plans that can be lowered SPMD (every rank from its own rows); with ``general``, those of
    them that run any sparse x dense product."""
    _load()
    return [n for n, p in PLANS.items() if p.spmd is not None and (p.general or not general)]


def get_plan(name: str) -> PlanSpec:
    if name not in NAMES:
        raise UnknownNameError("plan", name, list(NAMES) + ["auto"])
    _load()
    return PLANS[name]


def plan_names(auto: bool = False, general: bool = False) -> list[str]:
    """Every plan; with ``auto``, those --plan auto considers; with ``general``, those that run any
    sparse x dense product on any row partition."""
    _load()
    return [n for n, p in PLANS.items() if (p.auto or not auto) and (p.general or not general)]


@functools.cache   # (the package's directory is listed once: every call checks a plan name)
def _load():
    for m in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{m.name}")
    assert set(PLANS) == set(NAMES), f"plans.NAMES lists {sorted(NAMES)}, the plans registered are {sorted(PLANS)}"


def product_names(program: Program) -> list[str]:
    """The names a plan may be asked for by: every named product (mxm) of the program, its loops'
    bodies and conditions included."""
    out: list[str] = []

    from ...ir import Op, Program  # (the IR: not for a command that only checks --plan and launches)

    def walk(prog: Program, names: dict) -> None:
        for n in prog.toposort():
            label = names.get(id(n), n.label)
            if n.op is Op.MXM and not label.startswith("%") and label not in out:
                out.append(label)
            for _, v in n.attrs:
                if isinstance(v, Program):
                    walk(v, v.names())

    walk(program, program.names())
    return out


def check_plan_option(plan, program: Program | None = None) -> None:
    """A plan option names plans that exist and, per product, products of ``program`` (when given):
    an UnknownNameError with the valid names (and the closest) otherwise. Imports no plan."""
    if isinstance(plan, str):
        if plan != "auto" and plan not in NAMES:
            raise UnknownNameError("plan", plan, list(NAMES) + ["auto"])
        return
    if not isinstance(plan, Mapping):
        raise DsplaError(f"plan takes a plan name or a dict of product name -> plan name, got {type(plan).__name__}")
    valid = product_names(program) if program is not None else None
    for name, asked in plan.items():
        if not isinstance(asked, str):
            raise DsplaError(f"plan for {name!r}: a plan name, got {type(asked).__name__}")
        if valid is not None and name not in valid:
            raise UnknownNameError("product", name, valid, context="in the plan option (products are named by "
                                   "their output or value name)")
        check_plan_option(asked)


def check_choices(plan, partition: str, program: Program | None = None) -> None:
    """The plan (or plans per product of ``program``) and partition method a run names exist (an
    UnknownNameError listing the valid ones otherwise): the command line checks them before it
    starts any process, the session before planning."""
    check_plan_option(plan, program)
    if partition not in ("file", "auto", "block"):   # (others load the partitioners' table)
        from ...partition import METHODS
        if partition not in METHODS:
            raise UnknownNameError("partition method", partition, [*METHODS, "auto"])
