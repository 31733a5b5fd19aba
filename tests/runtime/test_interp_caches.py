"""What the interpreter finds once and keeps (a step's op facts, a prepared step matched to its
operands, a product's dtypes and typed semiring, float64 1 x 1 arithmetic by Python floats),
checked against a dense numpy oracle over several iterations and calls, on 1, 2 and 4 simulated
ranks: a loop of an accumulating product over a graph of ones (run as plus_second) and over a
weighted one, scalar steps with a division, and int64 values (checked for overflow)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp

from harness import run_dist

ITERS = 4


def _both(f, inputs: dict, P: int) -> dict:
    return f(**inputs) if P == 1 else run_dist(f, inputs, P)[0]


def _program(dtype: str):
    A = dp.sparse("A", ("n", "n"), dtype=dtype)
    x0 = dp.dense("x0", ("n", 1), dtype=dtype)
    k0 = dp.reduce_all(dp.apply(x0, "one")) * 0            # 1 x 1 zero of x0's dtype

    def step(x, k):
        s = dp.reduce_all(x)
        if dtype == "float64":
            new = A.T @ x + (s * 0.5 + 1.0) / 3.0          # the accumulate fold, a scalar chain
            new = new / dp.reduce_all(new)
        else:
            new = A.T @ x + (s - 2 * s + 1)
        return new, k + 1

    (x, k), its = dp.while_loop(lambda x, k: k < ITERS, step, (x0, k0), 10, count=True)
    return dp.function({"x": x, "its": its}, inputs=[A, x0])


def _oracle(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The loop in numpy: every row of Aᵀ @ x is present once the 1 x 1 term is added (a union
    with it), so the dense product with missing as 0 is the same."""
    for _ in range(ITERS):
        s = x.sum()
        if x.dtype == np.float64:
            x = A.T @ x + (s * 0.5 + 1.0) / 3.0
            x = x / x.sum()
        else:
            x = A.T @ x + (s - 2 * s + 1)
    return x


def _graph(n: int, seed: int, ones: bool, dtype) -> sp.csr_array:
    A = sp.random_array((n, n), density=0.2, random_state=seed, format="csr")
    A.data = np.ones_like(A.data) if ones else np.round(A.data * 5) + 1
    return A.astype(dtype)


@pytest.mark.parametrize("P", [1, 2, 4])
def test_a_float_loop_over_ones_then_weights_equals_numpy(P):
    f = _program("float64")
    n = 23
    for seed, ones in ((1, True), (2, False), (1, True)):   # (a new graph, then the first again)
        A = _graph(n, seed, ones, np.float64)
        x0 = np.linspace(1.0, 2.0, n).reshape(n, 1)
        for _ in range(2):   # (the second call runs on what the first found)
            out = _both(f, {"A": A, "x0": x0}, P)
            assert int(out["its"].to_numpy()[0, 0]) == ITERS
            np.testing.assert_allclose(out["x"].to_numpy(), _oracle(A.toarray(), x0), rtol=1e-12)
    if P == 1:   # (the paths named above were the ones taken)
        rt = f.session().runtime
        assert rt.routes["accumulate"] > 0 and rt.steps.by_op.get("ewise_mult", 0) > 0
        assert [sr.name for _, sr in rt.units.values()] == ["plus_second"]


@pytest.mark.parametrize("P", [1, 2, 4])
def test_an_int64_loop_equals_numpy(P):
    f = _program("int64")
    n = 19
    A = _graph(n, 3, False, np.int64)
    x0 = np.arange(1, n + 1, dtype=np.int64).reshape(n, 1)
    for _ in range(2):
        out = _both(f, {"A": A, "x0": x0}, P)
        assert np.array_equal(out["x"].to_numpy(), _oracle(A.toarray(), x0))
