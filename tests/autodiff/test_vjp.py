"""Every VJP rule against central finite differences (float64) on seeded random inputs with
missing entries and empty rows (ties have probability zero with continuous values), and
gradients present exactly where their parameter is."""
from __future__ import annotations

import pytest

import dspla as dp
from dspla.autodiff import VJP
from dspla.ir import Op

from .fd import I, P, check

n, k, m = 5, 4, 3
SA, DA = P("sparse", (n, k)), P("dense", (n, k))
SB, DB = P("sparse", (k, m)), P("dense", (k, m))
X, Y = P("sparse", (n, m)), P("sparse", (n, m))
Xd, Yd = P("dense", (n, m)), P("dense", (n, m))
Xpos, Ypos = P("sparse", (n, m), "pos"), P("dense", (n, m), "pos")
V, DB2 = P("sparse", (n, 1), density=0.8), P("dense", (2, 3))


CASES = {
    # an op that drops present entries, its cotangent from a union (which spans both operands)
    "mask then a union": (lambda D, C: dp.mask(D, C, structure=True, complement=True) + D,
                          {"D": P("dense", (n, m)), "C": I("sparse", (n, m))}),
    "value mask then a union": (lambda D, C: dp.mask(D, C) + D, {"D": P("dense", (n, m)), "C": I("sparse", (n, m))}),
    "select then a union": (lambda D: dp.select(D, ">", 0) + D, {"D": P("dense", (n, m))}),
    "masked product then a union": (lambda A, B, M, D: dp.mxm(A, B, mask=M, structure=True, complement=True) + D,
                                    {"A": DA, "B": DB, "M": I("sparse", (n, m)), "D": P("dense", (n, m))}),
    # products over plus
    "plus_times sparse A (SDDMM)": (lambda A, B: A @ B, {"A": SA, "B": DB}),
    "plus_times sparse B (SDDMM)": (lambda A, B: A @ B, {"A": DA, "B": SB}),
    "plus_times both sparse": (lambda A, B: A @ B, {"A": SA, "B": SB}),
    "plus_times masked": (lambda A, B, M: dp.mxm(A, B, mask=M, structure=True),
                          {"A": DA, "B": DB, "M": I("sparse", (n, m))}),
    "plus_times complement mask": (lambda A, B, M: dp.mxm(A, B, mask=M, structure=True, complement=True),
                                   {"A": SA, "B": DB, "M": I("sparse", (n, m))}),
    "plus_first": (lambda A, B: dp.mxm(A, B, "plus_first"), {"A": SA, "B": I("sparse", (k, m))}),
    "plus_second": (lambda A, B: dp.mxm(A, B, "plus_second"), {"A": I("sparse", (n, k)), "B": DB}),
    "plus_times transposed input": (lambda F, W: F.T @ W, {"F": I("sparse", (6, 4)), "W": P("dense", (6, 2))}),
    "mxv plus_times": (lambda A, v: dp.mxv(A, v), {"A": SA, "v": P("sparse", (k, 1), density=0.8)}),
    "vxm plus_second": (lambda u, B: dp.vxm(u, B, "plus_second"), {"u": I("sparse", (1, k)), "B": SB}),
    "vxm plus_first": (lambda u, B: dp.vxm(u, B, "plus_first"), {"u": P("dense", (1, k)), "B": I("sparse", (k, m))}),
    # tropical products with a vector operand
    "mxv min_plus": (lambda A, v: dp.mxv(A, v, "min_plus"), {"A": SA, "v": P("sparse", (k, 1), density=0.8)}),
    "mxv max_plus": (lambda A, v: dp.mxv(A, v, "max_plus"), {"A": SA, "v": P("dense", (k, 1))}),
    "mxv min_times": (lambda A, v: dp.mxv(A, v, "min_times"),
                      {"A": P("sparse", (n, k), "pos"), "v": P("dense", (k, 1), "pos")}),
    "mxv max_times": (lambda A, v: dp.mxv(A, v, "max_times"),
                      {"A": P("sparse", (n, k), "pos"), "v": P("dense", (k, 1), "pos")}),
    "mxv min_second": (lambda A, v: dp.mxv(A, v, "min_second"), {"A": I("sparse", (n, k)), "v": P("dense", (k, 1))}),
    "mxv max_first": (lambda A, v: dp.mxv(A, v, "max_first"), {"A": SA, "v": I("sparse", (k, 1), density=0.8)}),
    "vxm min_plus": (lambda u, B: dp.vxm(u, B, "min_plus"), {"u": P("dense", (1, k)), "B": SB}),
    "vxm max_plus": (lambda u, B: dp.vxm(u, B, "max_plus"), {"u": P("sparse", (1, k), density=0.8), "B": SB}),
    "vxm max_times": (lambda u, B: dp.vxm(u, B, "max_times"),
                      {"u": P("dense", (1, k), "pos"), "B": P("sparse", (k, m), "pos")}),
    # tropical products of two matrices (max aggregation)
    "mxm max_plus": (lambda A, B: dp.mxm(A, B, "max_plus"), {"A": SA, "B": DB}),
    "mxm min_plus sparse B": (lambda A, B: dp.mxm(A, B, "min_plus"), {"A": SA, "B": P("sparse", (k, m), density=0.7)}),
    "mxm max_times": (lambda A, B: dp.mxm(A, B, "max_times"),
                      {"A": P("sparse", (n, k), "pos"), "B": P("dense", (k, m), "pos")}),
    "mxm min_times": (lambda A, B: dp.mxm(A, B, "min_times"),
                      {"A": P("dense", (n, k), "pos"), "B": P("sparse", (k, m), "pos", density=0.7)}),
    "mxm max_second": (lambda A, B: dp.mxm(A, B, "max_second"), {"A": I("sparse", (n, k)), "B": DB}),
    "mxm min_first masked": (lambda A, B, M: dp.mxm(A, B, "min_first", mask=M, structure=True),
                             {"A": SA, "B": I("sparse", (k, m), density=0.7), "M": I("sparse", (n, m))}),
    # unions
    "ewise_add plus": (lambda X, Y: X + Y, {"X": X, "Y": Y}),
    "ewise_add plus column broadcast": (lambda X, c: X + c, {"X": X, "c": P("dense", (n, 1))}),
    "ewise_add plus row broadcast": (lambda X, r: X + r, {"X": X, "r": P("sparse", (1, m), density=0.7)}),
    "ewise_add plus 1x1": (lambda X, s: X + s, {"X": Xd, "s": P("dense", (1, 1))}),
    "X - Y": (lambda X, Y: X - Y, {"X": X, "Y": Y}),
    "ewise_add minus (GraphBLAS)": (lambda X, Y: dp.ewise_add(X, Y, "minus"), {"X": X, "Y": Y}),
    "ewise_add min": (lambda X, Y: dp.ewise_add(X, Y, "min"), {"X": X, "Y": Y}),
    "ewise_add max": (lambda X, Y: dp.ewise_add(X, Y, "max"), {"X": X, "Y": Yd}),
    "ewise_add first": (lambda X, Y: dp.ewise_add(X, Y, "first"), {"X": X, "Y": Y}),
    "ewise_add second": (lambda X, Y: dp.ewise_add(X, Y, "second"), {"X": X, "Y": Y}),
    # intersections
    "ewise_mult times": (lambda X, Y: X * Y, {"X": X, "Y": Yd}),
    "ewise_mult times column broadcast": (lambda X, c: X * c, {"X": X, "c": P("sparse", (n, 1), density=0.7)}),
    "ewise_mult times 1x1": (lambda X, s: X * s, {"X": X, "s": P("dense", (1, 1))}),
    "ewise_mult div": (lambda X, Y: X / Y, {"X": X, "Y": Ypos}),
    "ewise_mult rdiv": (lambda X, Y: dp.ewise_mult(X, Y, "rdiv"), {"X": Xpos, "Y": Yd}),
    "ewise_mult plus": (lambda X, Y: dp.ewise_mult(X, Y, "plus"), {"X": X, "Y": Y}),
    "ewise_mult minus": (lambda X, Y: dp.ewise_mult(X, Y, "minus"), {"X": X, "Y": Yd}),
    "ewise_mult rminus": (lambda X, Y: dp.ewise_mult(X, Y, "rminus"), {"X": X, "Y": Yd}),
    "ewise_mult min": (lambda X, Y: dp.ewise_mult(X, Y, "min"), {"X": Xd, "Y": Yd}),
    "ewise_mult max": (lambda X, Y: dp.ewise_mult(X, Y, "max"), {"X": X, "Y": Yd}),
    "ewise_mult first": (lambda X, Y: dp.ewise_mult(X, Y, "first"), {"X": X, "Y": Yd}),
    "ewise_mult second": (lambda X, Y: dp.ewise_mult(X, Y, "second"), {"X": X, "Y": Yd}),
    "ewise_mult pow": (lambda X, Y: dp.ewise_mult(X, Y, "pow"), {"X": Xpos, "Y": Ypos}),
    # unary operators
    **{f"apply {u}": ((lambda u: lambda X: dp.apply(X, u))(u), {"X": X})
       for u in ("relu", "exp", "sigmoid", "tanh", "abs", "neg", "square", "identity", "expm1")},
    **{f"apply {u}": ((lambda u: lambda X: dp.apply(X, u))(u), {"X": Xpos})
       for u in ("log", "sqrt", "log1p", "minv")},
    # bound scalars
    "X + 2": (lambda X: X + 2.0, {"X": X}),
    "2 - X": (lambda X: 2.0 - X, {"X": X}),
    "X - 2": (lambda X: X - 2.0, {"X": X}),
    "3 * X": (lambda X: 3.0 * X, {"X": X}),
    "X / 3": (lambda X: X / 3.0, {"X": X}),
    "3 / X": (lambda X: 3.0 / X, {"X": Xpos}),
    "X ** 2": (lambda X: X ** 2, {"X": X}),
    "X ** 3": (lambda X: X ** 3, {"X": X}),
    "X ** -0.5": (lambda X: X ** -0.5, {"X": Xpos}),
    "2 ** X": (lambda X: dp.apply(X, "pow", left=2.0), {"X": X}),
    "rminus bound": (lambda X: dp.apply(X, "rminus", right=2.0), {"X": X}),
    "rdiv bound": (lambda X: dp.apply(X, "rdiv", right=2.0), {"X": Xpos}),
    "max(X, 0.3)": (lambda X: dp.apply(X, "max", right=0.3), {"X": X}),
    "min(0.3, X)": (lambda X: dp.apply(X, "min", left=0.3), {"X": X}),
    "first(X, s)": (lambda X: dp.apply(X, "first", right=0.3) * X, {"X": X}),
    # reductions
    "reduce plus rows": (lambda X: dp.reduce_rows(X), {"X": X}),
    "reduce plus cols": (lambda X: dp.reduce_cols(X), {"X": X}),
    "reduce plus all": (lambda X: dp.reduce_all(X), {"X": X}),
    "reduce min rows": (lambda X: dp.reduce_rows(X, "min"), {"X": X}),
    "reduce max rows": (lambda X: dp.reduce_rows(X, "max"), {"X": Xd}),
    "reduce max cols": (lambda X: dp.reduce_cols(X, "max"), {"X": X}),
    "reduce min cols": (lambda X: dp.reduce_cols(X, "min"), {"X": Xd}),
    "reduce max all": (lambda X: dp.reduce_all(X, "max"), {"X": X}),
    "reduce min all": (lambda X: dp.reduce_all(X, "min"), {"X": Xd}),
    # composites and structure
    "softmax": (lambda X: dp.softmax(X), {"X": X}),
    "log_softmax": (lambda X: dp.log_softmax(X), {"X": X}),
    "softmax dense": (lambda X: dp.softmax(X), {"X": Xd}),
    "log_softmax of a product": (lambda A, B: dp.log_softmax(A @ B), {"A": SA, "B": DB}),
    "transpose": (lambda X: X.T, {"X": X}),
    "select > 0": (lambda X: dp.select(X, ">", 0), {"X": X}),
    "mask (structure)": (lambda X, M: dp.mask(X, M, structure=True), {"X": Xd, "M": I("sparse", (n, m))}),
    "mask (value, complement)": (lambda X, M: dp.mask(X, M > 0, complement=True), {"X": X, "M": I("dense", (n, m))}),
    "dropout": (lambda X, s: X * dp.dropout_mask(X, 0.4, s), {"X": Xd, "s": I("seed", (1, 1))}),
    "dropout keeping the pattern": (lambda X, s: X * (dp.dropout_mask(X, 0.4, s) + 0 * X),
                                    {"X": X, "s": I("seed", (1, 1))}),
    "cast": (lambda X: dp.cast(X, "float64") * X, {"X": X}),
    # indexing and structure (GraphBLAS's extract, assign, diag, resize, kronecker, eWiseUnion)
    "extract rows and columns (repeats)": (lambda X: dp.extract(X, [3, 0, 3], [2, 1]), {"X": X}),
    "extract a slice": (lambda X: X[1:4, :], {"X": Xd}),
    "extract from a vector": (lambda v: dp.as_matrix(dp.extract(dp.as_vector(v), [4, 1, 1])), {"v": V}),
    "assign": (lambda C, A: dp.assign(C, A, [3, 1], [0, 2]), {"C": X, "A": P("sparse", (2, 2), density=0.7)}),
    "assign accum plus": (lambda C, A: dp.assign(C, A, [3, 1], [0, 2], accum="plus"),
                          {"C": X, "A": P("sparse", (2, 2), density=0.7)}),
    "assign accum minus": (lambda C, A: dp.assign(C, A, [3, 1], None, accum="minus"),
                           {"C": Xd, "A": P("sparse", (2, m), density=0.7)}),
    "assign accum minus, sparse C": (lambda C, A: dp.assign(C, A, [3, 1], None, accum="minus"),
                                     {"C": X, "A": P("sparse", (2, m), density=0.7)}),
    "assign accum max": (lambda C, A: dp.assign(C, A, [4, 2], [1, 0], accum="max"),
                           {"C": X, "A": P("dense", (2, 2))}),
    "assign a scalar": (lambda C: dp.assign(C, 2.0, [3, 1], [0, 2]), {"C": X}),
    "assign a scalar, accum times": (lambda C: dp.assign(C, 2.0, [3, 1], [0, 2], accum="times"), {"C": X}),
    "kronecker div": (lambda A, B: dp.kronecker(A, B, "div"),
                      {"A": P("sparse", (2, 2), density=0.7), "B": P("sparse", (2, 3), "pos", density=0.7)}),
    "assign masked": (lambda C, A, M: dp.assign(C, A, [3, 1], [0, 2], mask=M, structure=True),
                      {"C": Xd, "A": P("sparse", (2, 2), density=0.7), "M": I("sparse", (n, m))}),
    "assign complement mask, replace": (
        lambda C, A, M: dp.assign(C, A, [3, 1], [0, 2], mask=M, structure=True, complement=True, replace=True),
        {"C": Xd, "A": P("dense", (2, 2)), "M": I("sparse", (n, m))}),
    "assign a row from a vector": (lambda C, v: dp.assign(C, dp.as_vector(v), 2, None),
                                   {"C": X, "v": P("sparse", (m, 1), density=0.7)}),
    "diag of a vector": (lambda v: dp.diag(dp.as_vector(v), 1), {"v": V}),
    "diag of a matrix": (lambda X: dp.as_matrix(dp.diag(X, -1)), {"X": Xd}),
    "diag of a square matrix": (lambda X: dp.as_matrix(dp.diag(X, 1)), {"X": P("sparse", (4, 4), density=0.7)}),
    "resize": (lambda X: dp.resize(X, 3, 6), {"X": Xd}),
    "ewise_union plus": (lambda X, Y: dp.ewise_union(X, Y, "plus", 0.5, -2.0), {"X": X, "Y": Y}),
    "ewise_union times": (lambda X, Y: dp.ewise_union(X, Y, "times", 0.5, -2.0), {"X": X, "Y": Y}),
    "ewise_union minus": (lambda X, Y: dp.ewise_union(X, Y, "minus", 0.5, -2.0), {"X": X, "Y": Yd}),
    "ewise_union div": (lambda X, Y: dp.ewise_union(X, Y, "div", 0.5, 2.0), {"X": X, "Y": Xpos}),
    "kronecker times": (lambda A, B: dp.kronecker(A, B, "times"),
                        {"A": P("sparse", (3, 2), density=0.7), "B": P("sparse", (2, 3), density=0.7)}),
    "kronecker plus": (lambda A, B: dp.kronecker(A, B, "plus"), {"A": P("sparse", (3, 2), density=0.7), "B": DB2}),
    "kronecker minus, one column": (lambda A, B: dp.kronecker(A, B, "minus"),
                                    {"A": P("sparse", (3, 2), density=0.7), "B": P("dense", (2, 1))}),
    "kronecker first": (lambda A, B: dp.kronecker(A, B, "first"),
                        {"A": P("sparse", (3, 2), density=0.7), "B": P("sparse", (2, 2), density=0.8)}),
    "kronecker second": (lambda A, B: dp.kronecker(A, B, "second"),
                         {"A": P("dense", (3, 2)), "B": P("dense", (2, 2))}),
    "kronecker first times second": (lambda A, B: dp.kronecker(A, B, "first") * dp.kronecker(A, B, "second"),
                                   {"A": P("sparse", (3, 2), density=0.7), "B": P("sparse", (2, 2), density=0.8)}),
    "relu of a two-layer product": (lambda A, W1, W2: A @ dp.relu(A.T @ A @ W1) @ W2,
                                    {"A": I("sparse", (n, n), density=0.6), "W1": P("dense", (n, 2)),
                                     "W2": P("dense", (2, m))}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rule_against_finite_differences(name):
    build, specs = CASES[name]
    check(build, specs, seed=sum(map(ord, name)))


def test_every_op_has_a_rule():
    assert set(VJP) == set(Op)
