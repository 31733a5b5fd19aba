"""The file language's GraphBLAS statements: ``A[I, J]``, ``C[I, J] = ...``, ``C += ...``, the new
functions and declarations (``vector[n]``, ``scalar``, every dtype), against dense numpy, at
P = 1 and on simulated processes; and their errors, with the place they were written."""
import sys
from pathlib import Path

import numpy as np
import pytest

import dspla as dp
from dspla.frontend.parser import parse

sys.path.insert(0, str(Path(__file__).parents[1] / "ops"))
from gbsem import check, rand, rng_for, run, to_sparse  # noqa: E402

PROGRAM = """\
input A : sparse[n, n] int64
input v : vector[n] int32
input k : scalar int64
B = A[0:3, 0:4]
C = A * 1
C[1, 2:4] = 7
C[[0, 2], 0] = v[1:3]
D = A @ A
D += A
T = kron(B, B, times)
w = v[-1 + 2]
d = diag(A, 0)
s = select(A, rowle, 4)
u = ewise_union(A, A.T, minus, 0, 0)
kk = k * 2
ok = isequal(A, A.T)
output B, C, D, T, w, d, s, u, kk, ok
"""


@pytest.mark.parametrize("P", [1, 2, 4])
def test_a_program_of_graphblas_statements(P):
    rng = rng_for("lang", P)
    n = 7
    a, v = rand(rng, (n, n), "int64"), rand(rng, (n, 1), "int32", full=True)
    f = dp.Function(parse(PROGRAM, "g.dspla"))
    got = run(f, {"A": to_sparse(a), "v": v[0][:, 0], "k": 5}, P)
    av, ap = a
    check(got["B"], (av[:3, :4], ap[:3, :4]))
    cv, cp = av.copy(), ap.copy()
    cv[1, 2:4], cp[1, 2:4] = 7, True
    cv[[0, 2], 0], cp[[0, 2], 0] = v[0][1:3, 0], True
    check(got["C"], (cv, cp))
    pairs = ap[:, :, None] & ap[None, :, :]
    dv = np.where(pairs, av[:, :, None] * av[None, :, :], 0).sum(1) + np.where(ap, av, 0)
    check(got["D"], (np.where(pairs.any(1) | ap, dv, 0), pairs.any(1) | ap))
    assert got["T"][0].shape == (9, 16) and got["T"][1].sum() == ap[:3, :4].sum() ** 2
    check(got["w"], (v[0][1:2], v[1][1:2], ()))
    i = np.arange(n)
    check(got["d"], (av[i, i][:, None], ap[i, i][:, None], (n,)))
    keep = ap & (np.arange(n)[:, None] <= 4)
    check(got["s"], (np.where(keep, av, 0), keep))
    union = ap | ap.T
    uv = np.where(ap, av, 0) - np.where(ap.T, av.T, 0)
    check(got["u"], (np.where(union, uv, 0), union))
    check(got["kk"], (np.array([[10]]), np.ones((1, 1), bool), ()))
    assert bool(got["ok"][0][0, 0]) is bool(np.array_equal(ap, ap.T) and np.array_equal(av[ap], av.T[ap]))


ACCUMULATE = """\
input A : sparse[n, n] int64
input B : sparse[2, 3] int64
E = A
E[[4, 1], [0, 2, 5]] += B
F = A
F[2, :] += 3
while nvals(F) >= 0 max 2 {
  F[[0, 6], [6]] += 1
}
output E, F
"""


@pytest.mark.parametrize("P", [1, 2])
def test_an_assign_into_a_region_with_plus(P):
    """``C[I, J] += T``: inside the region, an entry of both is their sum, of one alone that
    one; outside it C stays (GrB_assign with GrB_PLUS as accum)."""
    rng = rng_for("accumulate", P)
    n = 7
    a, b = rand(rng, (n, n), "int64"), rand(rng, (2, 3), "int64")
    got = run(dp.Function(parse(ACCUMULATE, "acc.dspla")), {"A": to_sparse(a), "B": to_sparse(b)}, P)
    (av, ap), (bv, bp) = a, b
    ev, ep = np.where(ap, av, 0), ap.copy()
    rows, cols = np.ix_([4, 1], [0, 2, 5])
    ev[rows, cols] += np.where(bp, bv, 0)
    ep[rows, cols] |= bp
    check(got["E"], (ev, ep))
    fv, fp = np.where(ap, av, 0), ap.copy()
    fv[2, :] += 3
    fp[2, :] = True
    fv[[0, 6], 6] += 2
    fp[[0, 6], 6] = True
    check(got["F"], (fv, fp))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64", "fp32", "fp64"])
def test_every_dtype_can_be_declared(dtype):
    p = parse(f"input A : sparse[n, n] {dtype}\ninput s : scalar {dtype}\nB = A[0:2, 0:2]\noutput B, s\n")
    want = {"fp32": "float32", "fp64": "float64"}.get(dtype, dtype)
    assert {n.type.dtype.value for n in p.inputs} == {want}
    assert dict(p.outputs)["s"].type.form == "scalar"


@pytest.mark.parametrize("text,message,where", [
    ("input A : sparse[n, n]\nB = A[k, 0]\noutput B\n", "integer literal", "2:7"),
    ("input A : sparse[n, n]\nB = A[2:, 0]\noutput B\n", "non-negative start and stop", "2:5"),
    ("input A : sparse[4, 4]\nB = A[9]\noutput B\n", "out of range", "2:5"),
    ("input A : sparse[n, n]\nA[0, 0] = 1\noutput A\n", "it is an input", "2:1"),
    ("input A : sparse[n, n]\nB = A\nB[0, 0] = A\noutput B\n", "region", "3:1"),
    ("input A : sparse[n, n]\nB += A\noutput B\n", "unknown variable", "2:1"),
])
def test_errors_say_where(text, message, where):
    with pytest.raises(dp.DsplaError, match=message) as e:
        parse(text, "e.dspla")
    assert f"e.dspla:{where}" in str(e.value)


def test_a_scalar_input_on_the_command_line():
    from dspla.formats.inputs import generate_inputs, is_generated
    p = parse("input A : sparse[n, n]\ninput k : scalar int8\ninput t : scalar\ninput b : scalar bool\n"
              "output A, k, t, b\n")
    decls = {n.attr("name"): n.type for n in p.inputs}
    specs = {"k": "-3", "t": "1e-6", "b": "true"}
    assert all(is_generated(s) for s in specs.values()) and not is_generated("graph.mtx")
    got = generate_inputs(specs, decls, {})
    assert got["k"].dtype == np.int8 and got["k"].tolist() == [[-3]] and got["t"].tolist() == [[1e-6]]
    assert got["b"].tolist() == [[True]]
    for spec, message in (("2.5", "whole number"), ("300", "does not fit"), ("7", None)):
        if message is None:
            with pytest.raises(dp.DsplaError, match="a number is a scalar's value"):
                generate_inputs({"A": spec}, decls, {})
        else:
            with pytest.raises(dp.DsplaError, match=message):
                generate_inputs({"k": spec}, decls, {})
