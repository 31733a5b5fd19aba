"""The embedded DSL: ``Expr`` (an IR node with Python's operators) and the Python spelling of
every op, each registered by its definition (dspla/ops: ``@spelling``), so this namespace — and
``dp.NAME`` — is filled from them; and ``grad``, reverse mode as a builder. The expression-file
front end calls the same builders, so both produce the same IR.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, overload

from ..errors import DsplaError, Span
from ..ops import SPELLINGS, Expr
from ..ops.define import node_of, span_or_caller


def builders() -> dict[str, Callable[..., Any]]:
    """name -> the Python builder of every op's spelling (``dp.NAME``), in definition order."""
    return {name: sp.fn for name, sp in SPELLINGS.items()}


globals().update(builders())
abs_ = SPELLINGS["abs"].fn   # (``abs`` shadows Python's; dp.abs is this)


@overload
def grad(loss: Expr, wrt: Expr, /, *, span: Span | None = None) -> Expr: ...
@overload
def grad(loss: Expr, wrt: list[Expr] | tuple[Expr, ...], /, *, span: Span | None = None) -> list[Expr]: ...
@overload
def grad(loss: Expr, w1: Expr, w2: Expr, /, *wrt: Expr, span: Span | None = None) -> tuple[Expr, ...]: ...


def grad(loss: Expr, *wrt: Expr | list[Expr] | tuple[Expr, ...],
         span: Span | None = None) -> Expr | list[Expr] | tuple[Expr, ...]:
    """The gradient of a 1 x 1 ``loss`` with respect to parameters, as expressions built by reverse
    mode over the program (docs/autodiff.md): ``dW = grad(loss, W)``, ``dW1, dW2 = grad(loss, W1,
    W2)`` or ``grad(loss, [W1, W2])`` (a list). Each gradient has its parameter's shape and is
    present exactly where the parameter has entries."""
    span = span_or_caller(span)
    seq = wrt[0] if len(wrt) == 1 and isinstance(wrt[0], (list, tuple)) else None
    as_list = seq is not None
    params: list[Any] = list(seq) if seq is not None else list(wrt)
    if not params:
        raise DsplaError("grad(loss, W, ...) needs at least one parameter", span)
    from ..autodiff import grad as _grad  # (the VJP table: loaded by the programs that differentiate)
    nodes = _grad(node_of(loss, "the loss"), [node_of(w, "a parameter") for w in params], span)
    names = [w.attr("name") for w in (node_of(p) for p in params)]
    out = [Expr(n.replace(name="d" + nm)) for n, nm in zip(nodes, names)]
    if as_list:
        return out
    return out[0] if len(out) == 1 else tuple(out)


__all__ = ["Expr", "abs_", "builders", "grad", *SPELLINGS]
