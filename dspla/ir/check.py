"""Checks of a whole program for mistakes a user can make that no single node's type rule
sees: they run when a Function is made, before any data is read, and report user errors
(the IR verifier, run after every pass, reports compiler bugs)."""
from __future__ import annotations

from collections.abc import Iterable

from ..errors import DimensionMismatch, DomainMismatch, InputError, Span, UnknownNameError
from .node import Node, Op
from .program import Program
from .types import Dim


def check_program(program: Program) -> Program:
    """``program``, once its inputs, loop bounds and dims bound to sizes are known to be
    consistent."""
    _check_input_types(program)
    for name, v in program.outputs:   # (a stack's values are read with top() inside the program)
        if getattr(v.type, "is_stack", False):
            raise DomainMismatch(f"output {name!r} is a {v.type}: a program's outputs are matrices, vectors or "
                                 "scalars (give top(s), or each value as its own output)", v.span)
    _check_loop_bounds(program, input_dims(program.inputs))
    dim_bindings(program)
    return program


def dim_bindings(program: Program) -> dict[str, tuple[int, Span | None]]:
    """dim -> (the size it is bound to, where it first was) over the program and its loops'
    sub-programs: a symbol that met a size (``ir/typing.py``: unify). One symbol bound to two
    sizes is a DimensionMismatch naming both places."""
    out: dict[str, tuple[int, Span | None]] = {}
    stack = [program]
    while stack:
        for n in stack.pop().toposort():
            for sym, size in n.binds:
                first = out.setdefault(sym, (size, n.span))
                if first[0] != size:
                    at = f" at {first[1]}" if first[1] is not None else ""
                    raise DimensionMismatch(f"{sym!r} is {first[0]} (bound where it first met that size{at}) but "
                                            f"{n.label} needs it to be {size}", n.span)
            stack.extend(v for _, v in n.attrs if isinstance(v, Program))
    return out


def input_dims(inputs: Iterable[Node]) -> set[str]:
    """The dim names the inputs' shapes give (a run binds each from the data)."""
    return {d for n in inputs for d in n.type.shape if isinstance(d, str)}


def check_loop_bound(bound: Dim, dims: set[str], span: Span | None) -> None:
    """A loop bound that is a name must be one of the inputs' dims: nothing else gives it a size."""
    if isinstance(bound, str) and bound not in dims:
        raise UnknownNameError("dim", bound, dims, span, context="in the loop bound")


_ROLE = {"input": "data input", "param": "parameter", "loop": "loop-carried value"}


def _check_input_types(program: Program) -> None:
    """Inputs are bound by name, so one name declared with two types cannot be given data."""
    seen: dict[str, Node] = {}
    for n in (*program.declared, *program.toposort()):
        if n.op is not Op.INPUT:
            continue
        name = n.attr("name")
        first = seen.setdefault(name, n)
        where = f" (first at {first.span})" if first.span is not None else ""
        if first.type != n.type:
            raise InputError(f"input {name!r} is declared twice with different types: {first.type}{where} "
                             f"and {n.type}", n.span)
        if first.attr("role") != n.attr("role"):   # (a parameter is read on every call, data is not)
            raise InputError(f"{name!r} is declared both as a {_ROLE[first.attr('role')]}{where} and as a "
                             f"{_ROLE[n.attr('role')]}: one name, one kind of input", n.span)


def _check_loop_bounds(program: Program, dims: set[str]) -> None:
    for n in program.toposort():
        if n.op is not Op.WHILE:
            continue
        check_loop_bound(n.attr("max_iter"), dims, n.span)
        for _, sub in n.attrs:   # loops nested in the condition or the body
            if isinstance(sub, Program):
                _check_loop_bounds(sub, dims)
