"""Hand-computed tie cases of the min/max rules (the documented winners), and the errors for
what has no gradient: the op, where it was written, and the path to the loss."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.autodiff import NoGradientError
from dspla.errors import DsplaError
from dspla.frontend.parser import parse


def _grads(build, values: dict, sparse=()):
    ex = {k: dp.param(k, v.shape, kind="sparse" if k in sparse else "dense") for k, v in values.items()}
    loss = dp.reduce_all(build(**ex))
    gs = dp.grad(loss, list(ex.values()))
    out = dp.function({k: g for k, g in zip(ex, gs)})(
        **{k: sp.csr_array(v) if k in sparse else v for k, v in values.items()})
    return {k: (out[k].to_numpy(fill=np.nan)) for k in ex}


def test_reduce_max_rows_tie_goes_to_the_lowest_column():
    g = _grads(lambda X: dp.reduce_rows(X, "max"), {"X": np.array([[1.0, 3, 3], [2, 2, 1]])})
    np.testing.assert_array_equal(g["X"], [[0, 1, 0], [1, 0, 0]])


def test_reduce_min_cols_tie_goes_to_the_lowest_row():
    g = _grads(lambda X: dp.reduce_cols(X, "min"), {"X": np.array([[1.0, 2], [1, 0]])})
    np.testing.assert_array_equal(g["X"], [[1, 0], [0, 1]])


def test_reduce_max_all_tie_goes_to_the_first_in_row_major_order():
    g = _grads(lambda X: dp.reduce_all(X, "max"), {"X": np.array([[1.0, 5], [5, 2]])})
    np.testing.assert_array_equal(g["X"], [[0, 1], [0, 0]])


def test_mxv_min_plus_tie_goes_to_the_lowest_inner_index():
    # terms 1 + 2 = 3 (k = 0) and 2 + 1 = 3 (k = 1)
    g = _grads(lambda A, v: dp.mxv(A, v, "min_plus"), {"A": np.array([[1.0, 2]]), "v": np.array([[2.0], [1]])})
    np.testing.assert_array_equal(g["A"], [[1, 0]])
    np.testing.assert_array_equal(g["v"], [[1], [0]])


def test_vxm_max_times_tie():
    # terms 2 * 1 = 2 (k = 0) and 1 * 2 = 2 (k = 1): d/du[0] = B[0, 0] = 1, d/dB[0, 0] = u[0] = 2
    g = _grads(lambda u, B: dp.vxm(u, B, "max_times"), {"u": np.array([[2.0, 1]]), "B": np.array([[1.0], [2]])})
    np.testing.assert_array_equal(g["u"], [[1, 0]])
    np.testing.assert_array_equal(g["B"], [[2], [0]])


def test_mxm_max_plus_tie_between_two_matrices():
    # C[0, 0] = max(1 + 2, 2 + 1): both terms 3, k = 0 wins; C[0, 1] = max(1 + 0, 2 + 5) = 7: k = 1
    g = _grads(lambda A, B: dp.mxm(A, B, "max_plus"), {"A": np.array([[1.0, 2]]), "B": np.array([[2.0, 0], [1, 5]])})
    np.testing.assert_array_equal(g["A"], [[1, 1]])
    np.testing.assert_array_equal(g["B"], [[1, 0], [0, 1]])


def test_ewise_min_tie_goes_to_the_first_operand_and_lone_entries_pass():
    X = np.array([[1.0, 0.0]])      # (0, 1) missing in the sparse X
    g = _grads(lambda X, Y: dp.ewise_add(X, Y, "min"), {"X": X, "Y": np.array([[1.0, 3]])}, sparse=("X",))
    np.testing.assert_array_equal(g["X"], [[1, np.nan]])     # a gradient only where X has an entry
    np.testing.assert_array_equal(g["Y"], [[0, 1]])


def test_bound_max_tie_goes_to_the_scalar_and_relu_abs_at_zero():
    g = _grads(lambda X: dp.apply(X, "max", right=0.5), {"X": np.array([[0.5, 1.0, 0.2]])})
    np.testing.assert_array_equal(g["X"], [[0, 1, 0]])
    g = _grads(lambda X: dp.relu(X) + dp.abs(X), {"X": np.array([[0.0, 2.0, -1.0]])})
    np.testing.assert_array_equal(g["X"], [[0, 2, -1]])


def test_tie_winner_is_the_same_on_every_process_count():
    from tests.harness import run_dist
    A, v = dp.param("A", ("n", "n"), kind="sparse"), dp.param("v", ("n", 1))
    loss = dp.reduce_all(dp.mxv(A, v, "min_plus"))
    dA, dv = dp.grad(loss, [A, v])
    f = dp.function({"dA": dA, "dv": dv})
    a = sp.csr_array(np.ones((8, 8)))             # every term of a row ties
    x = np.ones((8, 1))
    one = f(A=a, v=x)
    for P in (2, 4):
        got, _ = run_dist(f, {"A": a, "v": x}, P)
        np.testing.assert_array_equal(got["dA"].to_numpy(fill=0), one["dA"].to_numpy(fill=0))
        np.testing.assert_array_equal(got["dv"].to_numpy(fill=0), one["dv"].to_numpy(fill=0))
    assert one["dA"].to_numpy(fill=0)[:, 0].tolist() == [1] * 8 and one["dv"].to_numpy()[0, 0] == 8


# ------------------------------------------------------------------------------- errors
def test_comparison_on_the_path_names_op_place_and_path():
    src = """input X : dense[n, f]
param W : dense[f, 3]
Z = X @ W
S = cast(Z > 0, float64)
loss = reduce_all(S * Z)
dW = grad(loss, W)
output dW
"""
    with pytest.raises(NoGradientError) as e:
        parse(src, "model.dspla")
    msg = str(e.value)
    assert "model.dspla:4:" in msg and "cast" in msg and "comparison" in msg
    assert "S (cast" in msg and "-> loss" in msg


def test_comparison_used_as_a_mask_is_fine():
    src = """input X : dense[n, f]
param W : dense[f, 3]
Z = X @ W
loss = reduce_all(mask(Z, Z > 0))
dW = grad(loss, W)
output dW
"""
    p = parse(src)
    x, w = np.random.default_rng(0).normal(size=(6, 4)), np.random.default_rng(1).normal(size=(4, 3))
    got = dp.Function(p)(X=x, W=w)["dW"].to_numpy()
    np.testing.assert_allclose(got, x.T @ ((x @ w) > 0).astype(float), rtol=1e-12)


@pytest.mark.parametrize("build,words", [
    (lambda A, W: dp.mxm(A, W, "plus_pair"), ["plus_pair", "no gradient"]),
    (lambda A, W: dp.mxm(A, W, "min_max"), ["min_max"]),
    (lambda A, W: dp.apply(A @ W, "rowindex") * (A @ W), ["rowindex"]),
    (lambda A, W: dp.ewise_mult(A @ W, A @ W, "lt") * (A @ W), ["comparison"]),
    (lambda A, W: dp.assign(A @ W, W[0:2, :], [1, 2], None, accum="times"), ["assign with accum=times"]),
    (lambda A, W: dp.kronecker(W, W, "lt") * dp.kronecker(W, W), ["kronecker", "comparison"]),
])
def test_ops_without_gradient(build, words):
    A, W = dp.dense("A", (4, 4)), dp.param("W", (4, 2))
    with pytest.raises(NoGradientError) as e:
        dp.grad(dp.reduce_all(build(A, W)), W)
    assert all(w in str(e.value) for w in words), str(e.value)
    assert "test_ties_and_errors.py" in str(e.value)        # where the op was written


def test_loops_are_not_differentiated():
    W = dp.param("W", (3, 1))
    (x,) = dp.while_loop(lambda x: dp.reduce_all(x) < 10.0, lambda x: (x * 2.0,), (W,), 5)
    with pytest.raises(NoGradientError, match="loops are not differentiated"):
        dp.grad(dp.reduce_all(x), W)


def test_bad_grad_calls():
    W, X = dp.param("W", (3, 2)), dp.dense("X", (4, 3))
    with pytest.raises(DsplaError, match="1 x 1"):
        dp.grad(X @ W, W)
    with pytest.raises(DsplaError, match="inputs"):
        dp.grad(dp.reduce_all(X @ W), X @ W)
    # a loss that does not depend on a parameter: its gradient is zero on its entries
    V = dp.param("V", (2, 2))
    g = dp.function({"g": dp.grad(dp.reduce_all(X @ W), V)})(V=np.ones((2, 2)))["g"]
    np.testing.assert_array_equal(g.to_numpy(), np.zeros((2, 2)))


@pytest.mark.parametrize("line,words", [
    ("a, b = relu(Z)", ["only grad(...)"]),
    ("a, b = grad(loss, W)", ["1 gradients", "2 names"]),
    ("a = grad(loss, W, V)", ["assign them"]),
    ("a = grad(loss, Z)", ["not an input"]),
    ("a = grad(loss, Q)", ["unknown variable 'Q'"]),
    ("a = grad(loss)", ["at least one parameter"]),
    ("a, a = grad(loss, W, V)", ["assigned twice"]),
])
def test_grad_in_files_errors(line, words):
    src = f"""input X : dense[n, f]
param W : dense[f, 3]
param V : dense[3, 2]
Z = X @ W @ V
loss = reduce_all(Z)
{line}
output a
"""
    with pytest.raises(DsplaError) as e:
        parse(src, "m.dspla")
    assert "m.dspla:6:" in str(e.value)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_file_and_python_build_the_same_program():
    src = """input A : sparse[n, n]
input X : dense[n, f]
param W1 : dense[f, h]
param W2 : dense[h, 2]
H = relu(A @ (X @ W1))
loss = reduce_all(log_softmax(A @ (H @ W2)))
dW1, dW2 = grad(loss, W1, W2)
output loss, dW1, dW2
"""
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "f"))
    W1, W2 = dp.param("W1", ("f", "h")), dp.param("W2", ("h", 2))
    H = dp.relu(A @ (X @ W1))
    loss = dp.reduce_all(dp.log_softmax(A @ (H @ W2)))
    dW1, dW2 = dp.grad(loss, W1, W2)
    assert parse(src) == dp.function({"loss": loss, "dW1": dW1, "dW2": dW2}).source_program
