"""Warnings about programs that are valid but likely not what was meant (``dspla check``,
``explain``): a scalar added to an operand that may have missing entries; a loop whose bound
lets its body never run.

GraphBLAS binds a scalar to the present entries only: ``x + 1`` leaves an entry x lacks missing
(it does not become 1). That is right for a sparse graph and surprising for ``d * x + c`` when x
came out of a product with empty rows. "May have missing entries" is judged from the program
alone (no data): a sparse input, an identity, a product with a sparse operand, a selection or
mask, and what carries them on; dense inputs (numpy arrays) are full, and values whose presence
depends on a loop are not judged.
"""
from __future__ import annotations

from .node import Node, Op
from .program import Program

MAYBE, FULL, UNKNOWN = "maybe", "full", "unknown"
_ADDS = ("plus", "minus", "rminus")


def _presence(n: Node, of: dict) -> str:
    args = [of[id(a)] for a in n.args]
    if n.op is Op.INPUT:
        return MAYBE if n.type.kind.value == "sparse" else FULL
    if n.op is Op.IDENTITY and n.type.shape == (1, 1):
        return FULL   # eye(1): a present 1 x 1 constant, which broadcasts to every entry (dp.full)
    if n.op in (Op.IDENTITY, Op.SELECT, Op.MASK, Op.DROPOUT_MASK):
        return MAYBE
    if n.op is Op.MXM:
        return MAYBE if MAYBE in args[:2] or n.attr("mask") is not None else FULL if args[:2] == [FULL, FULL] \
            else UNKNOWN
    if n.op is Op.EWISE_ADD:   # a union: missing only where both are
        return FULL if FULL in args else MAYBE if args == [MAYBE, MAYBE] else UNKNOWN
    if n.op is Op.EWISE_MULT:  # an intersection
        return MAYBE if MAYBE in args else FULL if args == [FULL, FULL] else UNKNOWN
    if n.op in (Op.APPLY, Op.APPLY_BIND, Op.CAST, Op.TRANSPOSE, Op.REDUCE):
        return args[0] if args else UNKNOWN
    return UNKNOWN


def scalar_on_missing(program: Program) -> list[str]:
    """One message per `x + c` (or `x - c`, `c - x`) whose x may have missing entries."""
    of: dict[int, str] = {}
    out = []
    for n in program.toposort():
        of[id(n)] = _presence(n, of)
        if n.op is Op.APPLY_BIND and n.attr("op").name in _ADDS and of[id(n.args[0])] == MAYBE:
            where = f"{n.span}: " if n.span is not None else ""
            x, c = n.args[0].name or "v", n.attr("scalar")
            what = f"{x}" if n.args[0].name else "the operand"
            out.append(f"{where}warning: the scalar {c!r} reaches only the entries present in {what}, which "
                       f"may have missing entries (GraphBLAS: a missing entry stays missing, it does not "
                       f"become {c!r}); to reach every entry: ewise_add({x}, full({x}, 0)) with {c!r}")
    return out


def loop_never_runs(program: Program) -> list[str]:
    """One message per loop bounded by ``max 0`` (literal): its body never runs, so its results
    are its starting values whatever the condition says. Loops inside loops too."""
    out = []
    for n in program.toposort():
        if n.op is not Op.WHILE:
            continue
        if n.attr("max_iter") == 0:
            where = f"{n.span}: " if n.span is not None else ""
            out.append(f"{where}warning: this loop runs at most 0 times (max 0): its body never runs and its "
                       f"values stay what they were before it; give the largest number of iterations "
                       f"to allow (or a dim, such as max n)")
        for sub in (n.attr("cond"), n.attr("body")):
            out += loop_never_runs(sub)
    return out


def lint_warnings(program: Program) -> list[str]:
    """Every warning of this module, for ``dspla check`` and ``explain``."""
    return scalar_on_missing(program) + loop_never_runs(program)
