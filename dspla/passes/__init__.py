"""Compiler passes: pure functions Program -> Program, run in the order of PIPELINE and
verified after each one."""
from __future__ import annotations

from ..ir import Program, verify
from .cse import cse
from .simplify import simplify

PIPELINE = [
    ("simplify", simplify),
    ("cse", cse),
]


def run_pipeline(program: Program, passes=None) -> Program:
    program = verify(program, after="frontend")
    for name, fn in (PIPELINE if passes is None else passes):
        program = verify(fn(program), after=name)
    return program


__all__ = ["PIPELINE", "run_pipeline", "cse", "simplify"]
