"""Data-movement plans for C = A ⊕.⊗ B (A a static sparse matrix, row-distributed; B a
row-distributed dense value). Each plan is a registry entry: adding a plan is adding a module
with ``@register_plan``; the planner and the CLI find it by name."""
from __future__ import annotations

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


PLANS: dict[str, PlanSpec] = {}


def register_plan(name: str, doc: str = "", check: Callable | None = None):
    def register(fn):
        PLANS[name] = PlanSpec(name, fn, doc or (fn.__doc__ or "").strip().splitlines()[0], check)
        return fn
    return register


def get_plan(name: str) -> PlanSpec:
    _load()
    if name not in PLANS:
        raise UnknownNameError("plan", name, list(PLANS) + ["auto"])
    return PLANS[name]


def plan_names() -> list[str]:
    _load()
    return list(PLANS)


def _load():
    for m in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{m.name}")
