"""Vector-Jacobian products: one rule per op (the VJP table, with a coverage check like the other
per-op tables), in the style of JAX's ``primitive_transposes``.

A rule gets the forward node ``n``, the cotangent ``g`` of its value (a node of n's shape),
which arguments need a cotangent, and a Builder; it returns one cotangent node per argument
(None: no contribution). ``linked(n)`` says which arguments the value depends on
differentiably at all (a mask argument, a dropout mask, ``0 * x`` do not), so the transform
never builds what it would throw away.

GraphBLAS semantics: a cotangent exists on present entries only. Rules keep one invariant
instead of masking everywhere: a cotangent may hold extra entries only at positions where the
forward value is *missing*, and every rule maps such entries to positions missing in its
arguments (a missing entry takes part in no term of any op), so they never reach a present
entry. The transform masks the final gradient to the parameter's pattern.

min/max (products over min_plus, max_plus, min_times, max_times, ..., reductions, unions and
intersections with min/max) route the cotangent to the winning term. Ties go to the lowest
inner index (products, reductions: lowest column, or row, or row-major position for reduce
all), to the first operand (element-wise min/max), and to the bound scalar (max(x, s) at
x == s; relu at 0 gives 0). The winner is a node computed from the forward values (the forward
result compared with its terms: element-wise ops for a vector operand, the ARGBEST op for two
matrices), once, and shared by every cotangent that needs it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ..ir import Node, Op
from ..ir.types import Kind
from .builders import Builder


class NoGradient(Exception):
    """The op (as used) has no gradient; the message says why and what to do instead."""


@dataclass(frozen=True)
class Rule:
    vjp: Callable
    linked: Callable = lambda n: (True,) * len(n.args)


VJP: dict[Op, Rule] = {}


def vjp_rule(*ops: Op, linked: Callable | None = None):
    def register(fn):
        for op in ops:
            VJP[op] = Rule(fn, linked) if linked else Rule(fn)
        return fn
    return register


def _none(n):
    return (False,) * len(n.args)


# ---------------------------------------------------------------------------------- leaves
@vjp_rule(Op.INPUT, Op.IDENTITY)
def _leaf(n, g, needs, b):
    return ()


@vjp_rule(Op.DROPOUT_MASK, Op.NVALS, linked=_none)
def _constant(n, g, needs, b):
    """A dropout mask is 1/(1-p) on the kept entries, and a count of entries does not depend on
    their values: constants of the step."""
    return (None,) * len(n.args)


def _no_gradient(why: str):
    def rule(n, g, needs, b):
        raise NoGradient(why)
    return rule


vjp_rule(Op.UPDATE)(_no_gradient("update (C<M> accum= T) has no gradient rule; write it with ewise_add and mask"))
vjp_rule(Op.ARGBEST, Op.ROUTE)(_no_gradient("the winners of a min/max product are piecewise constant (a "
                                           "gradient of a gradient through min/max has no rule)"))
vjp_rule(Op.WHILE, Op.ITEM)(_no_gradient("loops are not differentiated; unroll the iterations in Python "
                                         "(a for loop building the expression) to differentiate them"))


# -------------------------------------------------------------------------------- products
_PLUS_MULTS = {"times", "first", "second"}
_TROPICAL_MULTS = {"plus", "times", "first", "second"}


def _mult_linked(mult: str) -> tuple:
    return {"first": (True, False), "second": (False, True)}.get(mult, (True, True))


def _mxm_linked(n):
    return _mult_linked(n.attr("semiring").mult.name) + (False,) * (len(n.args) - 2)


@vjp_rule(Op.MXM, linked=_mxm_linked)
def _mxm(n, g, needs, b):
    sr = n.attr("semiring")
    mon, mult = sr.monoid.name, sr.mult.name
    if mon == "plus" and mult in _PLUS_MULTS:
        return _plus_product(n, g, needs, b, mult) + (None,) * (len(n.args) - 2)
    if mon in ("min", "max") and mult in _TROPICAL_MULTS:
        return _tropical_product(n, g, needs, b, mult) + (None,) * (len(n.args) - 2)
    raise NoGradient(f"products over {sr.name} have no gradient (differentiable: plus_times, plus_first, "
                     "plus_second, and min/max with plus, times, first or second)")


def _plus_product(n, g, needs, b, mult):
    """C = A ⊕.⊗ B over plus: dA = G Bᵀ, dB = Aᵀ G, each restricted to its operand's pattern when
    that operand is sparse (a masked product: the sampled dense-dense product, SDDMM, for a sparse
    parameter). first/second drop the other operand's value: a plus_first/plus_second product."""
    A, B = n.args[0], n.args[1]
    dA = dB = None
    if needs[0]:
        sr = "plus_times" if mult == "times" else "plus_first"
        dA = b.mxm(g, b.T(B), sr, mask=A if A.type.kind is Kind.sparse else None)
    if needs[1]:
        sr = "plus_times" if mult == "times" else "plus_second"
        if _row_sum_form(A, B):
            dB = b.T(b.mxm(b.T(g), A, "plus_times" if mult == "times" else "plus_first"))
        else:
            dB = b.mxm(b.T(A), g, sr, mask=B if B.type.kind is Kind.sparse else None)
    return dA, dB


def _row_sum_form(A, B) -> bool:
    """Aᵀ G written (Gᵀ A)ᵀ, as examples/gcn.dspla does by hand, for a sparse A over two
    different data-bound dims (features: n x f) and a dense B (a weight): both dims of A are
    partitioned, so Aᵀ would be laid out by f and G gathered whole; Gᵀ A keeps A and G in their
    row layout and sums the small partial products with one Allreduce."""
    r, c = A.type.shape
    return (A.type.kind is Kind.sparse and B.type.kind is not Kind.sparse and isinstance(r, str)
            and isinstance(c, str) and r != c)


def _tropical_product(n, g, needs, b, mult):
    """C = A min.⊗ B with one operand a vector: the terms A[i,k] ⊗ B[k] (or u[k] ⊗ B[k,j]) are a
    broadcast element-wise product T on A's (B's) pattern; the winner of each result entry is the
    lowest k whose term equals it, K; the cotangent goes to that term only."""
    A, B = n.args[0], n.args[1]
    if B.type.shape[1] == 1:        # mxv: C[i] = ⊕_k A[i,k] ⊗ B[k]
        terms = b.mul(A, b.T(B), mult)
        idx, axis, other = b.un(terms, "colindex"), "rows", "cols"
    elif A.type.shape[0] == 1:      # vxm: C[j] = ⊕_k A[k] ⊗ B[k,j]
        terms = b.mul(b.T(A), B, mult)
        idx, axis, other = b.un(terms, "rowindex"), "cols", "rows"
    else:
        return _tropical_matrices(n, g, needs, b, mult)
    hits = b.mul(terms, n, "eq")                                  # terms equal to their result
    K = b.reduce(b.mask(idx, hits), "min", axis)                  # the lowest winning k: the tie rule
    win = b.mask(b.spread(terms, g), b.mul(idx, K, "eq"))         # G on the winning term of each entry
    # d(a ⊗ b)/da and /db: plus -> 1, times -> the other factor, first/second -> 1 for the kept one
    mat_is_A = axis == "rows"
    mat, vec = (A, B) if mat_is_A else (B, A)
    vec_b = b.T(vec)                                              # broadcast like the terms
    d_mat = b.mul(win, vec_b) if mult == "times" else win
    d_vec = b.mul(win, mat) if mult == "times" else win
    g_mat = d_mat if needs[0 if mat_is_A else 1] else None
    g_vec = b.T(b.reduce(d_vec, "plus", other)) if needs[1 if mat_is_A else 0] else None
    return (g_mat, g_vec) if mat_is_A else (g_vec, g_mat)


def _tropical_matrices(n, g, needs, b, mult):
    """Both operands matrices (max aggregation: A max.+ H): the winners K are one ARGBEST node
    computed from the forward operands and result; ROUTE sends G[i,j] to A[i, K[i,j]] and to
    B[K[i,j], j] (times the other factor for a times multiply)."""
    A, B = n.args[0], n.args[1]
    K = b.make(Op.ARGBEST, (A, B, n), (("semiring", n.attr("semiring")),))
    factor = mult == "times"
    dA = b.make(Op.ROUTE, (g, K, B), (("axis", "cols"), ("factor", factor))) if needs[0] else None
    dB = b.make(Op.ROUTE, (g, K, A), (("axis", "rows"), ("factor", factor))) if needs[1] else None
    return dA, dB


# -------------------------------------------------------------------------- element-wise
def _ew_linked(n):
    return _mult_linked(n.attr("op").name) if n.attr("op").name in ("first", "second") else (True, True)


def _same_shape(n, why):
    A, B = n.args
    if tuple(A.type.shape) != tuple(B.type.shape):
        raise NoGradient(f"{why} is differentiated for operands of one shape (here {A.type} and {B.type})")


def _minmax_losers(n, b, op):
    """(where A loses, where B loses) where both are present; ties go to A."""
    A, B = n.args
    if op == "min":
        return b.mul(A, B, "gt"), b.mul(A, B, "le")
    return b.mul(A, B, "lt"), b.mul(A, B, "ge")


@vjp_rule(Op.EWISE_ADD)
def _ewise_add(n, g, needs, b):
    """Union: an entry present in one operand only passes through (its cotangent is G there)."""
    A, B = n.args
    op = n.attr("op").name
    if op == "plus":
        gA, gB = g, g
    elif op == "minus":   # GraphBLAS eWiseAdd minus: A - B where both, a lone B entry passes unchanged
        _same_shape(n, "ewise_add with minus")
        gA = g
        gB = b.add(b.mask(g, A, structure=True, complement=True), b.neg(b.mask(g, A, structure=True)))
    elif op in ("min", "max"):
        loseA, loseB = _minmax_losers(n, b, op)
        gA, gB = b.mask(g, loseA, complement=True), b.mask(g, loseB, complement=True)
    elif op in ("first", "second"):
        _same_shape(n, f"ewise_add with {op}")
        keep, other = (A, B) if op == "first" else (B, A)
        gk, go = g, b.mask(g, keep, structure=True, complement=True)
        gA, gB = (gk, go) if op == "first" else (go, gk)
    else:
        raise NoGradient(f"ewise_add with {op} has no gradient rule (differentiable: plus, minus, min, max, "
                         "first, second)")
    return (b.unbroadcast(gA, A, n) if needs[0] else None, b.unbroadcast(gB, B, n) if needs[1] else None)


@vjp_rule(Op.EWISE_MULT, linked=_ew_linked)
def _ewise_mult(n, g, needs, b):
    """Intersection: every entry of the result has both operands."""
    A, B = n.args
    op = n.attr("op").name
    if op == "times":
        gA, gB = (lambda: b.mul(g, B)), (lambda: b.mul(g, A))
    elif op == "div":
        gA, gB = (lambda: b.mul(g, B, "div")), (lambda: b.neg(b.mul(b.mul(g, n), B, "div")))
    elif op == "rdiv":   # B / A
        gA, gB = (lambda: b.neg(b.mul(b.mul(g, n), A, "div"))), (lambda: b.mul(g, A, "div"))
    elif op in ("plus", "first", "second"):
        gA = gB = (lambda: g)
    elif op == "minus":
        gA, gB = (lambda: g), (lambda: b.neg(g))
    elif op == "rminus":
        gA, gB = (lambda: b.neg(g)), (lambda: g)
    elif op in ("min", "max"):
        loseA, loseB = _minmax_losers(n, b, op)
        gA, gB = (lambda: b.mask(g, loseA, complement=True)), (lambda: b.mask(g, loseB, complement=True))
    elif op == "pow":   # A ** B: d/dA = B A^(B-1) = C B / A, d/dB = C log A
        gA = lambda: b.mul(b.mul(g, n), b.mul(B, A, "div"))        # noqa: E731
        gB = lambda: b.mul(b.mul(g, n), b.un(A, "log"))             # noqa: E731
    else:
        raise NoGradient(f"ewise_mult with {op} has no gradient" + (
            " (a comparison is piecewise constant; use its result as a mask)" if n.attr("op").kind == "compare"
            else ""))
    return (b.unbroadcast(gA(), A, n) if needs[0] else None, b.unbroadcast(gB(), B, n) if needs[1] else None)


# ------------------------------------------------------------------------------- apply
def _unary_vjp(n, g, b):
    x, name = n.args[0], n.attr("op").name
    if name == "relu":            # 0 at x = 0 (relu_grad is x > 0)
        return b.mul(g, b.un(x, "relu_grad"))
    if name == "exp":
        return b.mul(g, n)
    if name == "expm1":
        return b.mul(g, b.bind(n, "plus", 1.0))
    if name == "log":
        return b.mul(g, x, "div")
    if name == "log1p":
        return b.mul(g, b.bind(x, "plus", 1.0), "div")
    if name == "sigmoid":
        return b.mul(g, b.mul(n, b.bind(n, "minus", 1.0, "left")))
    if name == "tanh":
        return b.mul(g, b.bind(b.mul(n, n), "minus", 1.0, "left"))
    if name == "sqrt":
        return b.mul(g, b.bind(n, "times", 2.0), "div")
    if name == "minv":
        return b.neg(b.mul(g, b.mul(n, n)))
    if name == "abs":             # sign(0) = 0
        return b.mul(g, b.un(x, "sign"))
    if name == "neg":
        return b.neg(g)
    if name == "square":
        return b.mul(g, b.bind(x, "times", 2.0))
    if name == "identity":
        return g
    raise NoGradient(f"{name} is piecewise constant (or an index): its gradient is zero wherever it exists; "
                     "compute it from values that do not depend on the parameters, or use it as a mask")


@vjp_rule(Op.APPLY)
def _apply(n, g, needs, b):
    return (_unary_vjp(n, g, b),)


def _bind_linked(n):
    op, s, side = n.attr("op").name, n.attr("scalar"), n.attr("side")
    if op == "times" and s == 0 or op == "pow" and side == "right" and s == 0:
        return (False,)          # 0 * x, x ** 0: constants (the "+ 0 * X" pattern of dropout)
    if op in ("first", "second") and (op == "first") != (side == "right"):
        return (False,)          # the result is the scalar
    return (True,)


@vjp_rule(Op.APPLY_BIND, linked=_bind_linked)
def _apply_bind(n, g, needs, b):
    x = n.args[0]
    op, s, side = n.attr("op").name, n.attr("scalar"), n.attr("side")
    right = side == "right"
    if op in ("plus", "first", "second"):
        return (g,)
    if op in ("minus", "rminus"):   # x - s, s - x, rminus(x, s) = s - x, rminus(s, x) = x - s
        return (g if right == (op == "minus") else b.neg(g),)
    if op == "times":
        return (b.bind(g, "times", s),)
    if op in ("div", "rdiv") and right == (op == "div"):    # x / s
        return (b.bind(g, "div", s),)
    if op in ("div", "rdiv"):                                 # s / x: -s / x^2 = -y / x
        return (b.neg(b.mul(b.mul(g, n), x, "div")),)
    if op == "pow" and right and s == 2:
        return (b.mul(g, b.bind(x, "times", 2.0)),)
    if op == "pow" and right:                                 # x ** s
        return (b.mul(g, b.bind(b.bind(x, "pow", s - 1), "times", s)),)
    if op == "pow":                                           # s ** x
        if s <= 0:
            raise NoGradient(f"{s} ** x has no gradient for a base <= 0")
        return (b.mul(g, b.bind(n, "times", math.log(s))),)
    if op in ("max", "min"):                                  # ties go to the scalar (relu at 0: 0)
        return (b.mask(g, b.bind(x, "gt" if op == "max" else "lt", s)),)
    raise NoGradient(f"apply with {op} has no gradient" + (
        " (a comparison is piecewise constant; use its result as a mask)" if n.attr("op").kind == "compare" else ""))


# ------------------------------------------------------------------------ structure
@vjp_rule(Op.SELECT)
def _select(n, g, needs, b):
    """Pass-through on the kept entries (g lives on them)."""
    return (g,)


@vjp_rule(Op.MASK, linked=lambda n: (True, False))
def _mask(n, g, needs, b):
    return (g, None)


@vjp_rule(Op.TRANSPOSE)
def _transpose(n, g, needs, b):
    return (b.T(g),)


@vjp_rule(Op.CAST)
def _cast(n, g, needs, b):
    x = n.args[0]
    if not x.type.dtype.is_float:
        name = x.name + " = " if x.name else ""
        raise NoGradient(f"its argument {name}{x.op_text()} has {x.type.dtype} values, which have no gradient"
                         + (" (a comparison is piecewise constant; use it as a mask instead)"
                            if x.type.dtype.value == "bool" else ""))
    return (b.cast(g, x.type.dtype),)


@vjp_rule(Op.REDUCE)
def _reduce(n, g, needs, b):
    x = n.args[0]
    mon, axis = n.attr("monoid").name, n.attr("axis")
    if mon == "plus":
        return (b.spread(x, g),)
    if mon not in ("min", "max"):
        raise NoGradient(f"reductions with {mon} have no gradient rule (differentiable: plus, min, max)")
    cand = b.mask(x, b.mul(x, n, "eq"))          # entries equal to their row's (column's, ...) result
    if axis == "rows":
        idx = b.un(cand, "colindex")
        win = b.mul(idx, b.reduce(idx, "min", "rows"), "eq")
        return (b.mask(b.spread(cand, g), win),)
    if axis == "cols":
        idx = b.un(cand, "rowindex")
        win = b.mul(idx, b.reduce(idx, "min", "cols"), "eq")
        return (b.mask(b.spread(cand, g), win),)
    ri = b.un(cand, "rowindex")                   # all: the first winner in row-major order
    row = b.mask(cand, b.mul(ri, b.reduce(ri, "min", "all"), "eq"))
    ci = b.un(row, "colindex")
    win = b.mul(ci, b.reduce(ci, "min", "all"), "eq")
    return (b.mask(b.spread(row, g), win),)


def check_rules_cover_ops():
    missing = [op for op in Op if op not in VJP]
    assert not missing, f"ops without a VJP rule: {missing}"


check_rules_cover_ops()

__all__ = ["VJP", "Builder", "NoGradient", "Node", "Rule"]
