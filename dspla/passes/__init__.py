"""Compiler passes on the expression IR: pure functions Program -> Program. The order they run
in, and the verification after each, is dspla.compile.PIPELINE."""
from __future__ import annotations

from .chain import chain_order
from .cse import cse
from .simplify import simplify

__all__ = ["chain_order", "cse", "simplify"]
