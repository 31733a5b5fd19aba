"""The documented errors: DomainMismatch for operators that do not apply to a dtype,
DimensionMismatch naming both shapes, InputError naming the offending input and why, and
UnknownNameError listing the valid names."""
from __future__ import annotations

import re

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp


def sparse_int(n, m):
    return sp.csr_array(np.arange(n * m).reshape(n, m) % 3)


# --------------------------------------------------------------------------- domain
@pytest.mark.parametrize("sr", ("plus_times", "plus_second", "plus_pair", "min_plus", "max_times", "min_times"))
def test_arithmetic_semiring_on_bool_is_a_domain_mismatch(sr):
    A, B = dp.sparse("A", ("n", "k"), "bool"), dp.sparse("B", ("k", "m"), "bool")
    with pytest.raises(dp.DomainMismatch, match=sr):
        dp.mxm(A, B, sr)


def test_matmul_operator_on_bool_names_the_way_out():
    A = dp.sparse("A", ("n", "n"), "bool")
    with pytest.raises(dp.DomainMismatch) as e:
        A @ A
    assert "lor_land" in str(e.value)


@pytest.mark.parametrize("build", [
    lambda B: B + B, lambda B: B * B, lambda B: B - B, lambda B: dp.relu(B), lambda B: -B,
    lambda B: dp.reduce_rows(B, "plus"), lambda B: dp.reduce_all(B, "times"), lambda B: dp.softmax(B),
    lambda B: dp.ewise_mult(B, B, "pow"), lambda B: dp.abs(B),
], ids=["add", "mul", "sub", "relu", "neg", "reduce_plus", "reduce_times", "softmax", "pow", "abs"])
def test_arithmetic_on_bool_is_a_domain_mismatch(build):
    with pytest.raises(dp.DomainMismatch):
        build(dp.sparse("B", ("n", "m"), "bool"))


def test_bool_operations_that_do_apply():
    B = dp.sparse("B", ("n", "m"), "bool")
    for expr in (dp.ewise_add(B, B, "lor"), dp.reduce_rows(B, "lor"), dp.mxm(B, B.T, "lor_land"),
                 dp.mxm(B, B.T, "any_pair"), dp.reduce_cols(B, "max"), dp.select(B, "nonzero")):
        assert str(expr.dtype) == "bool"


# ------------------------------------------------------------------------ dimensions
def test_inner_dimension_mismatch_names_both_shapes():
    A, B = dp.sparse("A", (3, 4)), dp.dense("B", (5, 2))
    with pytest.raises(dp.DimensionMismatch) as e:
        dp.mxm(A, B, "min_plus")
    msg = str(e.value)
    assert "[3, 4]" in msg and "[5, 2]" in msg, msg
    assert "A" in msg and "B" in msg


def test_inner_dimension_mismatch_with_symbols_names_both():
    A, B = dp.sparse("A", ("n", "k")), dp.dense("B", ("m", "f"))
    with pytest.raises(dp.DimensionMismatch) as e:
        A @ B
    msg = str(e.value)
    assert "[n, k]" in msg and "[m, f]" in msg, msg


def test_matmul_operator_mismatch_points_at_this_file():
    A, B = dp.sparse("A", (3, 4)), dp.sparse("B", (3, 4))
    with pytest.raises(dp.DimensionMismatch) as e:
        A @ B
    assert "test_golden_errors.py" in str(e.value)


@pytest.mark.parametrize("fn", (dp.ewise_add, dp.ewise_mult))
def test_elementwise_shapes_that_do_not_broadcast(fn):
    with pytest.raises(dp.DimensionMismatch) as e:
        fn(dp.sparse("X", (3, 4)), dp.sparse("Y", (3, 5)))
    assert "[3, 4]" in str(e.value) and "[3, 5]" in str(e.value)


def test_mask_shape_mismatch():
    with pytest.raises(dp.DimensionMismatch):
        dp.mask(dp.sparse("X", (3, 4)), dp.sparse("M", (4, 3)))


def test_mxv_needs_a_column_vector():
    with pytest.raises(dp.DimensionMismatch):
        dp.mxv(dp.sparse("A", ("n", "k")), dp.dense("V", ("k", "m")))
    with pytest.raises(dp.DimensionMismatch):
        dp.vxm(dp.dense("U", ("m", "n")), dp.sparse("A", ("n", "k")))


# ------------------------------------------------------------------------- run-time inputs
@pytest.fixture
def f():
    A, X = dp.sparse("A", ("n", "k"), "int64"), dp.dense("X", ("k", 2))
    return dp.function(outputs={"C": dp.mxm(A, X, "min_plus")})


def test_missing_input_is_named(f):
    with pytest.raises(dp.InputError, match="missing input 'X'"):
        f(A=sparse_int(3, 4))


def test_extra_input_is_named(f):
    with pytest.raises(dp.InputError, match="unexpected input 'Y'"):
        f(A=sparse_int(3, 4), X=np.ones((4, 2)), Y=np.ones(3))


def test_dense_array_for_a_sparse_input(f):
    with pytest.raises(dp.InputError, match="'A'.*sparse"):
        f(A=np.ones((3, 4), dtype=np.int64), X=np.ones((4, 2)))


def test_sparse_matrix_for_a_dense_input(f):
    with pytest.raises(dp.InputError, match="'X'.*dense"):
        f(A=sparse_int(3, 4), X=sp.csr_array(np.ones((4, 2))))


def test_dense_input_with_missing_entries(f):
    X = gb.Matrix.from_coo([0, 1], [0, 1], [1.0, 2.0], nrows=4, ncols=2)
    with pytest.raises(dp.InputError, match=r"'X'.*missing"):
        f(A=sparse_int(3, 4), X=X)


def test_inconsistent_dimension_binding(f):
    with pytest.raises(dp.InputError) as e:
        f(A=sparse_int(3, 4), X=np.ones((5, 2)))
    msg = str(e.value)
    assert "'k'" in msg and "'X'" in msg and "5" in msg and "4" in msg, msg


def test_wrong_shape_for_a_fixed_dimension(f):
    with pytest.raises(dp.InputError, match=r"'X'.*3 columns"):
        f(A=sparse_int(3, 4), X=np.ones((4, 3)))


def test_unsafe_dtype_is_refused(f):
    with pytest.raises(dp.InputError, match="'A'.*int64"):
        f(A=sp.csr_array(np.array([[0.5, 0, 1, 0]])), X=np.ones((4, 2)))


def test_unsupported_dtype_is_refused(f):
    with pytest.raises(dp.InputError, match="'X'"):
        f(A=sparse_int(3, 4), X=np.ones((4, 2), dtype=np.complex128))


def test_a_wrong_object_is_refused(f):
    with pytest.raises(dp.InputError, match="'A'"):
        f(A="not a matrix", X=np.ones((4, 2)))


def test_unknown_semiring_lists_the_valid_names():
    with pytest.raises(dp.UnknownNameError) as e:
        dp.mxm(dp.sparse("A", ("n", "n")), dp.sparse("B", ("n", "n")), "min_plsu")
    msg = str(e.value)
    assert "min_plsu" in msg
    for name in ("plus_times", "min_plus", "lor_land", "any_pair"):
        assert re.search(rf"\b{name}\b", msg)
