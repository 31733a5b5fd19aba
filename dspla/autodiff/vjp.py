"""Vector-Jacobian products: each op's gradient rule is its definition's (dspla/ops; every op has
one, checked when the ops load), read here through the VJP table, in the style of JAX's
``primitive_transposes``. A rule reads the algebraic facts of the operator rows it meets
(algebra.py: which monoid is linear or selects, each operator's ``Derivatives``), never their
names, so a new semiring from a differentiable monoid and multiply has its gradient already.

A rule gets the forward node ``n``, the cotangent ``g`` of its value (a node of n's shape),
which arguments need a cotangent, and a Builder; it returns one cotangent node per argument
(None: no contribution). ``linked(n)`` says which arguments the value depends on
differentiably at all (a mask argument, a dropout mask, ``0 * x`` do not), so the transform
never builds what it would throw away.

GraphBLAS semantics: a cotangent exists on present entries only. Rules keep one invariant
instead of masking everywhere: a cotangent may hold extra entries only at positions where the
forward value is *missing* (a union's cotangent spans both operands), and every rule maps such
entries to positions missing in its arguments (a missing entry takes part in no term of any op),
so they never reach a present entry; an op that drops present entries of an argument (mask,
select, a masked product) restricts G to what it kept first. The transform masks the final
gradient to the parameter's pattern.

min/max (products over min_plus, max_plus, min_times, max_times, ..., reductions, unions and
intersections with min/max) route the cotangent to the winning term. Ties go to the lowest
inner index (products, reductions: lowest column, or row, or row-major position for reduce
all), to the first operand (element-wise min/max), and to the bound scalar (max(x, s) at
x == s; relu at 0 gives 0). The winner is a node computed from the forward values (the forward
result compared with its terms: element-wise ops for a vector operand, the ARGBEST op for two
matrices), once, and shared by every cotangent that needs it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import NoGradient
from ..ir import Node
from ..ops import DEFINITIONS
from .builders import Builder


@dataclass(frozen=True)
class Rule:
    vjp: Callable
    linked: Callable


VJP = {op: Rule(d.vjp, d.linked) for op, d in DEFINITIONS.items()}

__all__ = ["VJP", "Builder", "NoGradient", "Node", "Rule"]
