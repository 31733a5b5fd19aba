"""Golden cases through the expression-file language: the same semantics as the embedded DSL
(every named semiring x dtype, and a many-operation program), checked against the oracle."""
from __future__ import annotations

import numpy as np
import pytest

import dspla as dp
from dspla.frontend.parser import parse

from . import oracle
from .gen import check, random_mat, seed_of, to_input
from .oracle import OracleDomainError

SHORT = {"float64": "f64", "int64": "i64", "bool": "bool"}


def compile_text(text: str):
    return dp.Function(parse(text, "golden.dspla"))


@pytest.mark.parametrize("dt", ("float64", "int64", "bool"), ids=SHORT.get)
@pytest.mark.parametrize("sr", list(oracle.SEMIRINGS))
def test_file_mxm(sr, dt):
    rng = np.random.default_rng(seed_of(f"file-mxm-{sr}-{dt}"))
    A, B = random_mat(rng, (5, 4), dt, "sparse"), random_mat(rng, (4, 3), dt, "half")
    text = (f"input A : sparse[n, k] {dt}\ninput B : sparse[k, m] {dt}\n"
            f"C = mxm(A, B, {sr})\nD = mxm(A, B.T.T, {sr}) \noutput C, D\n")
    mon, mult = oracle.SEMIRINGS[sr]
    try:
        expected = oracle.mxm(A, B, mon, mult)
    except OracleDomainError:
        with pytest.raises(dp.DomainMismatch, match="golden.dspla:3"):
            compile_text(text)
        return
    out = compile_text(text)(A=to_input(A, "sparse"), B=to_input(B, "sparse"))
    check(out["C"], expected, "C")
    check(out["D"], expected, "D")


PROGRAM = """\
# many operations on the same operands
input X : sparse[n, m] {dt}
input Y : sparse[n, m] {dt}
input v : sparse[n, 1] {dt}
input W : dense[m, 3] {dt}
U = X + Y
D = X - Y
H = X * Y
Q = ewise_add(X, v, min)
Z = ewise_mult(v, Y, first)
R = reduce_rows(X, max)
K = reduce_cols(Y, plus)
S = select(X, ">", 0.5)
L = select(X, tril, -1)
M = mask(X, Y, structure=true)
N = mask(X, Y, complement=true)
P = 2 * X - 1
T = X.T @ Y
G = mxm(X, W, min_plus)
E = apply(X, max, left=0)
output U, D, H, Q, Z, R, K, S, L, M, N, P, T, G, E
"""


@pytest.mark.parametrize("shape", ((5, 4), (1, 1), (6, 1)), ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dt", ("float64", "int64"), ids=SHORT.get)
@pytest.mark.parametrize("seed", range(3))
def test_file_program(seed, dt, shape):
    rng = np.random.default_rng(seed_of(f"file-program-{seed}-{dt}-{shape}"))
    n, m = shape
    X, Y = random_mat(rng, shape, dt, ("sparse", "half", "empty")[seed]), random_mat(rng, shape, dt, "half")
    v, W = random_mat(rng, (n, 1), dt, "half"), random_mat(rng, (m, 3), dt, "full")
    o = oracle
    expected = {
        "U": o.ewise_add(X, Y, "plus"), "D": o.subtract(X, Y), "H": o.ewise_mult(X, Y, "times"),
        "Q": o.ewise_add(X, v, "min"), "Z": o.ewise_mult(v, Y, "first"), "R": o.reduce(X, "max", "rows"),
        "K": o.reduce(Y, "plus", "cols"), "S": o.select(X, ">", 0.5), "L": o.select(X, "tril", -1),
        "M": o.mask(X, Y, structure=True), "N": o.mask(X, Y, complement=True),
        "P": o.apply_bind(o.apply_bind(X, "times", 2, "left"), "minus", 1, "right"),
        "T": o.mxm(o.transpose(X), Y, "plus", "times"), "G": o.mxm(X, W, "min", "plus"),
        "E": o.apply_bind(X, "max", 0, "left"),
    }
    out = compile_text(PROGRAM.format(dt=dt))(X=to_input(X, "sparse"), Y=to_input(Y, "sparse"),
                                              v=to_input(v, "sparse"), W=W.values)
    assert set(out) == set(expected)
    for k, e in expected.items():
        check(out[k], e, k)
