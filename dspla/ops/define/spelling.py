"""How users write an op: its Python builder (``dp.NAME``) and, when files may call it, its
parameters in the file language. Both front ends read the one registry, SPELLINGS: the Python
namespace is filled from it, and the parser's function table is made from it.

    @spelling(file=(("a", EXPR), ("b", EXPR), ("semiring", SEMIRING), *MASKED))
    def mxm(a: Expr, b: Expr, semiring: SemiringLike = "plus_times", *, mask: Expr | None = None, ...) -> Expr:

A file parameter's default is the Python parameter's. The kinds say how a file reads the
argument: an expression, a name from an algebra table, a literal.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable, TypeVar

# parameter kinds: 'expr' evaluates an expression; the others read a bare name (or a string)
# from an algebra table, or a literal
EXPR, SEMIRING, BINARY, MONOID, UNARY, SELECT, SCALAR, DTYPE, AXIS, BOOL, DIM = (
    "expr", "semiring", "binary operator", "monoid", "unary operator", "select predicate", "scalar", "dtype", "axis",
    "bool", "dim")
OPERATOR = "op"   # a unary or a binary operator (apply's)
INDEX_UNARY = "index-unary operator"   # a name apply_index knows (rowindex, tril, ...), read as a word
THUNK = "number or 1 x 1 value"   # a literal, or an expression of a 1 x 1 value (select's thunk)
MASKED = (("mask", EXPR), ("complement", BOOL), ("structure", BOOL))
REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Spelling:
    name: str            # as users write it: dp.NAME, NAME(...) in files
    fn: Callable         # the Python builder
    file: tuple | None   # ((parameter, kind), ...) in the file language; None: Python only

    def file_params(self) -> list[tuple]:
        """[(parameter, kind, default or REQUIRED)] in the file language's order."""
        sig = inspect.signature(self.fn).parameters
        return [(p, kind, sig[p].default) for p, kind in self.file or ()]


SPELLINGS: dict[str, Spelling] = {}
_F = TypeVar("_F", bound=Callable)


def spelling(name: str | None = None, file: tuple | None = None) -> Callable[[_F], _F]:
    """Register a builder as ``dp.NAME`` (default: the function's name) and, with ``file``, as a
    function of the file language taking those parameters."""
    def register(fn: _F) -> _F:
        key = name or fn.__name__
        if key in SPELLINGS:
            raise AssertionError(f"{key!r} is spelled twice")
        SPELLINGS[key] = Spelling(key, fn, tuple(file) if file is not None else None)
        return fn
    return register


def builder(name: str) -> Callable:
    return SPELLINGS[name].fn
