"""Compiler passes on the expression IR: pure functions Program -> Program, and the IR verifier
(verify.py) run after each. The order they run in is dspla.compiler.PIPELINE."""
from __future__ import annotations

from .chain import chain_order
from .cse import cse
from .simplify import simplify
from .verify import verify

__all__ = ["chain_order", "cse", "simplify", "verify"]
