"""The four algorithms of "Reducing Communication in Graph Neural Network Training" (section IV)
move, per rank and epoch of an L-layer GCN, exactly the words of the paper's L-layer totals.

The paper's assumptions, which the schedules share: every layer has the same width f (its
"average" f), n and nnz divide evenly (exact fractions here), a collective on a buffer of m words
costs each member m (pipelined ring broadcasts, root included; all-reduce and reduce-scatter
their input buffer; all-gather its output), a sparse block one word per nonzero. Its totals drop
some f^2 terms of the weight gradient (1.5D: "ignoring f^2 bandwidth terms"; 3D: eq. 4's f^2 is
not in the total); the expectations below add them back, as the per-equation costs state them.
"""
from __future__ import annotations

import math
from fractions import Fraction as F

import pytest

from dspla.costmodel import cagnet

CASES = [(3600, 50_000, 16), (14400, 123_457, 64), (2_000_000, 40_000_000, 128)]


@pytest.mark.parametrize("n, nnz, f", CASES)
@pytest.mark.parametrize("P", [4, 16, 36, 64, 100])
@pytest.mark.parametrize("L", [2, 3])
def test_1d(n, nnz, f, P, L):
    s = cagnet.one_d(n, nnz, [f] * (L + 1), P)
    assert s.words() == L * (2 * n * f + f * f)              # §IV-A5, simplified form
    # latency: alpha (lg P + 2P) per layer: 2P broadcasts and one all-reduce
    assert sum(c.count for c in s.colls if c.kind == "bcast") == 2 * P * L
    assert sum(c.count for c in s.colls if c.kind == "allreduce") == L


@pytest.mark.parametrize("n, nnz", [(3600, 50_000), (40_000, 1_000_001)])
def test_1d_per_layer_widths(n, nnz):
    f, P = [602, 16, 16, 41], 64
    s = cagnet.one_d(n, nnz, f, P)
    assert s.words() == sum(n * f[i] + n * f[i + 1] + f[i] * f[i + 1] for i in range(3))   # §IV-A5, first form


@pytest.mark.parametrize("n, nnz, f", CASES)
@pytest.mark.parametrize("P, c", [(16, 2), (16, 4), (36, 2), (64, 2), (64, 4), (100, 2)])
def test_15d(n, nnz, f, P, c):
    L = 3
    s = cagnet.one_five_d(n, nnz, [f] * (L + 1), P, c)
    assert s.words() == L * (F(2 * n * f, c) + F(2 * n * f * c, P)) + L * f * f   # §IV-B5 (+ the f^2 it ignores)
    assert s.words(("fwd",)) == L * (F(n * f, c) + F(n * f * c, P))               # §IV-B1
    # latency: P/c^2 broadcasts per SpMM
    assert sum(c_.count for c_ in s.colls if c_.kind == "bcast") == 2 * L * P // (c * c)


@pytest.mark.parametrize("n, nnz, f", CASES)
@pytest.mark.parametrize("P", [4, 16, 36, 64, 100])
def test_2d(n, nnz, f, P):
    L, r = 3, math.isqrt(P)
    s = cagnet.two_d(n, nnz, [f] * (L + 1), P)
    assert s.words() == L * (F(8 * n * f, r) + F(2 * nnz, r) + f * f)   # §IV-C5
    assert s.words(("fwd",)) == L * (F(nnz, r) + F(2 * n * f, r))       # §IV-C1
    assert s.words(("dW",)) == L * (F(2 * n * f, r) + f * f)            # §IV-C4


@pytest.mark.parametrize("n, nnz, f", CASES)
@pytest.mark.parametrize("P", [8, 27, 64, 125])
def test_3d(n, nnz, f, P):
    L, q = 3, round(P ** (1 / 3))
    s = cagnet.three_d(n, nnz, [f] * (L + 1), P)
    p23 = q * q
    assert s.words() == L * (F(2 * nnz, p23) + F(12 * n * f, p23)) + L * f * f     # §IV-D5 (+ eq. 4's f^2)
    assert s.words(("fwd",)) == L * (F(nnz, p23) + F(4 * n * f, p23))             # §IV-D1
    assert s.words(("softmax",)) == L * F(n * f, p23)                               # §IV-D2
    assert s.words(("bwd",)) == L * (F(nnz, p23) + F(5 * n * f, p23))             # §IV-D3
    assert s.words(("dW",)) == L * (F(2 * n * f, p23) + f * f)                     # §IV-D4


def test_3d_general_grid_reduces_to_the_cube_and_to_2d():
    n, nnz, f = 6000, 77_777, [32] * 4
    assert cagnet.three_d(n, nnz, f, 64, (4, 4, 4)).words() == cagnet.three_d(n, nnz, f, 64).words()
    # a rectangular X x Y x Z grid: A moves nnz/(XZ), H nf/(YZ), the fiber reduces nf/(XY) per SpMM
    s = cagnet.three_d(n, nnz, f, 32, (2, 4, 4))
    X, Y, Z = 2, 4, 4
    assert s.words(("fwd",)) == 3 * (F(nnz, X * Z) + 2 * F(n * 32, Y * Z) + 2 * F(n * 32, X * Y))


def test_grids_reject_what_the_paper_does_not_define():
    with pytest.raises(ValueError, match="square"):
        cagnet.two_d(100, 1000, [8, 8], 8)
    with pytest.raises(ValueError, match="c\\^2"):
        cagnet.one_five_d(100, 1000, [8, 8], 8, 4)
    with pytest.raises(ValueError, match="cube"):
        cagnet.three_d(100, 1000, [8, 8], 16)
    assert cagnet.grid3(64) == (4, 4, 4) and cagnet.grid3(16) == (2, 2, 4) and cagnet.grid3(1024) == (8, 8, 16)
