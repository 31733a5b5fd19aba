"""Data-movement plans for C = A ⊕.⊗ B (A a static sparse matrix, row-distributed; B a
row-distributed dense value). Each plan is a registry entry: adding a plan is adding a module
with ``@register_plan``; the planner and the CLI find it by name."""
from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

from ...errors import UnknownNameError


@dataclass(frozen=True)
class PlanSpec:
    name: str
    lower: Callable          # lower(ctx: ProductContext) -> None (emits instructions)
    doc: str
    check: Callable | None = None   # check(ctx) -> None or a reason the plan cannot run
    spmd: Callable | None = None    # lower(ctx) on one rank from its own rows (plan/spmd.py); None: not yet
    auto: bool = True               # a candidate of --plan auto (False: by name, or on a described cluster)


PLANS: dict[str, PlanSpec] = {}


def register_plan(name: str, doc: str = "", check: Callable | None = None, spmd: Callable | bool | None = None,
                  auto: bool = True):
    """``spmd``: the plan's lowering for one rank from its own rows (True: ``fn`` itself works so).
    ``auto``: a candidate of ``--plan auto`` on this machine."""
    def register(fn):
        PLANS[name] = PlanSpec(name, fn, doc or (fn.__doc__ or "").strip().splitlines()[0], check,
                               fn if spmd is True else spmd or None, auto)
        return fn
    return register


def spmd_names() -> list[str]:
    """The plans that can be lowered SPMD (every rank from its own rows)."""
    _load()
    return [n for n, p in PLANS.items() if p.spmd is not None]


def get_plan(name: str) -> PlanSpec:
    _load()
    if name not in PLANS:
        raise UnknownNameError("plan", name, list(PLANS) + ["auto"])
    return PLANS[name]


def plan_names(auto: bool = False) -> list[str]:
    """Every plan; with ``auto``, those --plan auto considers."""
    _load()
    return [n for n, p in PLANS.items() if p.auto or not auto]


@functools.cache   # (the package's directory is listed once: every call checks a plan name)
def _load():
    for m in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{m.name}")
