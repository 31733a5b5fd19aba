"""The whole-program user checks (dspla.ir.check) against the verifier: the same inconsistency is
a user error in the program a user wrote and a compiler bug after a pass."""
import pytest

import dspla as dp
from dspla.errors import InputError, UnknownNameError, VerificationError
from dspla.ir import Program
from dspla.ir.check import check_loop_bound, check_program, input_dims
from dspla.passes import verify


def _two_typed_inputs() -> Program:
    a, b = dp.sparse("A", ("n", "n")), dp.dense("A", ("n", "n"))
    return Program((("C", (a @ b).node),))


def test_an_input_with_two_types_is_a_user_error_before_the_passes_and_a_bug_after():
    with pytest.raises(InputError) as info:
        check_program(_two_typed_inputs())
    msg = info.value.message
    assert msg.startswith("input 'A' is declared twice with different types: sparse[n, n] float64 (first at ")
    assert msg.endswith(") and dense[n, n] float64")
    with pytest.raises(VerificationError, match="after pass 'cse'"):
        verify(_two_typed_inputs(), after="cse")


def test_input_dims_are_the_symbols_of_the_input_shapes():
    ins = [dp.sparse("A", ("n", 3)).node, dp.dense("x", ("k", "n")).node]
    assert input_dims(ins) == {"n", "k"}


def test_an_integer_bound_needs_no_dim():
    check_loop_bound(0, set(), None)
    check_loop_bound(7, {"n"}, None)
    with pytest.raises(UnknownNameError, match="^unknown dim 'm' in the loop bound; valid dims: k, n$"):
        check_loop_bound("m", {"n", "k"}, None)


def test_one_name_as_data_and_as_a_parameter_is_a_user_error():
    # a parameter is read on every call, data is not: one name cannot be both
    w, p, x = dp.dense("W", ("f", 3)), dp.param("W", ("f", 3)), dp.dense("X", ("n", "f"))
    with pytest.raises(InputError, match=r"'W' is declared both as a data input \(first at .*\) and as a parameter"):
        check_program(Program((("y", (x @ w + x @ p).node),)))
