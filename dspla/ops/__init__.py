"""The ops, one module each (or one per family: ewise_add and ewise_mult, apply and apply_bind,
while and item, the winners of min/max products), in the manner of JAX's lax: each module holds
everything about its op — its spelling in both front ends, type rule and attributes, reference
evaluation, the facts planning proves, lowering, local work, gradient, and the kernels it runs —
registered with the means in ``define/``. Every stage reads the definitions through its own
table (``table(rule)``); this package loads every module in it, so a new op is a new module, and
checks that every op has every rule (an import error otherwise).

Also here, spellings without an op of their own: ``full`` and ``softmax``/``log_softmax``, built
from other ops."""
from __future__ import annotations

import importlib
import pkgutil

from .define import (
    COMPOSITES,
    DEFINITIONS,
    SPELLINGS,
    Definition,
    Env,
    Expr,
    Facts,
    builder,
    check,
    definition,
    make,
    table,
)

for _m in pkgutil.iter_modules(__path__):
    if not _m.ispkg:
        importlib.import_module(f"{__name__}.{_m.name}")
check()

__all__ = ["COMPOSITES", "DEFINITIONS", "SPELLINGS", "Definition", "Env", "Expr", "Facts", "builder", "check",
           "definition", "make", "table"]
