"""User-defined operators in one process, against dense numpy: Python functions as binary and
unary operators, monoids (with their declared identity) and semirings; python-graphblas
operator objects wherever a name is; clear errors for what cannot work."""
import math

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DsplaError, UnknownNameError
from dspla.ir.types import DType

A = sp.csr_array(np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, -1.0, 4.0]]))
X = np.array([[1.0, 5.0], [3.0, 4.0], [-2.0, 0.5]])


def _sym():
    return dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))


def test_a_newcomers_semiring_from_python_functions():
    """A user's script, as first written: a max-times semiring of functions."""
    def mx(x, y):
        return x if x > y else y

    def mul(x, y):
        return x * y

    sr = dp.semiring.define("newcomer_max_times", monoid=mx, op=mul, identity=-math.inf)
    Ae, Xe = _sym()
    got = dp.function(outputs={"C": dp.mxm(Ae, Xe, sr)})(A=A, X=X)["C"]
    want = np.array([[6.0, 8.0], [np.nan, np.nan], [1.0, 5.0]])   # row 2: max(1*1, -1*3, 4*-2), ...
    assert np.array_equal(got.present(), ~np.isnan(want))
    assert np.array_equal(got.to_numpy(fill=np.nan)[~np.isnan(want)], want[~np.isnan(want)])


def test_graphblas_operator_objects_are_names():
    Ae, Xe = _sym()
    f = dp.function(outputs={"S": dp.mxm(Ae, Xe, gb.semiring.min_plus), "R": dp.reduce_rows(Xe, gb.monoid.max),
                             "E": dp.ewise_add(Xe, Xe, gb.binary.plus), "U": dp.apply(Xe, gb.unary.abs)})
    out = f(A=A, X=X)
    assert out["S"].to_numpy(fill=np.inf)[2].tolist() == [2.0, 3.0]   # min(1+1, -1+3, 4-2), min(1+5, -1+4, 4+.5)
    assert out["R"].to_numpy()[:, 0].tolist() == [5.0, 4.0, 0.5]
    assert np.array_equal(out["E"].to_numpy(), 2 * X) and np.array_equal(out["U"].to_numpy(), np.abs(X))
    assert dp.semiring.get_semiring(gb.semiring.min_plus["FP64"]) is dp.semiring.min_plus   # typed too


def test_a_graphblas_user_defined_operator_is_taken_over():
    op = gb.core.operator.BinaryOp.register_anonymous(lambda x, y: x - 2 * y, "test_userops_gbudf")
    Xe = dp.dense("X", ("n", "k"))
    got = dp.function(outputs={"E": dp.ewise_mult(Xe, Xe, op)})(X=X)["E"].to_numpy()
    assert np.array_equal(got, -X)


def test_user_unary_and_binary_with_scalars_and_reductions():
    dp.unary.define("test_userops_cube", lambda x: x * x * x)
    dp.binary.define("test_userops_hinge", lambda x, y: x - y if x > y else 0.0)
    dp.monoid.define("test_userops_absmax", lambda x, y: max(abs(x), abs(y)), 0)
    Xe = dp.dense("X", ("n", "k"))
    out = dp.function(outputs={"c": dp.apply(Xe, "test_userops_cube"),
                               "h": dp.apply(Xe, "test_userops_hinge", right=1.0),
                               "m": dp.reduce_all(Xe, "test_userops_absmax")})(X=X)
    assert np.array_equal(out["c"].to_numpy(), X ** 3)
    assert np.array_equal(out["h"].to_numpy(), np.where(X > 1, X - 1, 0.0))
    assert out["m"].to_numpy()[0, 0] == 5.0


def test_int64_identity_of_an_infinite_one():
    m = dp.monoid.define("test_userops_imin", lambda x, y: x if x < y else y, math.inf)
    assert m.identity(DType.int64) == np.iinfo(np.int64).max
    Xe = dp.dense("X", ("n", "k"), dtype="int64")
    got = dp.function(outputs={"m": dp.reduce_cols(Xe, m)})(X=np.array([[3, -7], [2, 9]]))["m"].to_numpy()
    assert got[0].tolist() == [2, -7]


@pytest.mark.parametrize("call,msg", [
    (lambda: dp.semiring.define("t_bad1", monoid=lambda x, y: min(x, y), op="plus"), "needs its identity"),
    (lambda: dp.semiring.define("t_bad2", monoid="min", op="plus", identity=0.0), "identity= is for a monoid"),
    (lambda: dp.binary.define("t_bad3", lambda x, y: str(x) + y), "does not compile"),
    (lambda: dp.binary.define("plus", lambda x, y: x + y), r"already defined \(built in\)"),
    (lambda: dp.monoid.define("t_bad4", "plus", 0.0), "built in"),
    (lambda: dp.monoid.define("t_bad5", lambda x, y: x + y, 0.5), "not a whole number"),
    (lambda: dp.monoid.define("t_bad6", lambda x, y: x + y, float("nan")), "NaN"),
    (lambda: dp.binary.define("t bad", lambda x, y: x), "identifier"),
    (lambda: dp.binary.define("t_bad7", 3), "Python function"),
])
def test_bad_definitions_are_refused_where_they_are_made(call, msg):
    with pytest.raises(DsplaError, match=msg):
        call()
    assert not [n for n in dp.binary.names() + dp.monoid.names() if n.startswith("t_bad")]   # nothing left behind


def test_redefining_with_the_same_code_is_allowed_and_different_code_is_not():
    for _ in range(2):   # a notebook cell run again: a new function object of the same code
        dp.binary.define("t_twice", lambda x, y: x + 2 * y)
    with pytest.raises(DsplaError, match="already defined"):
        dp.binary.define("t_twice", lambda x, y: x + 3 * y)


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(UnknownNameError, match="valid monoids: .*min"):
        dp.reduce_rows(dp.dense("X", ("n", "k")), "mni")
    with pytest.raises(AttributeError, match="valid monoids"):
        dp.monoid.nope  # noqa: B018



def test_graphblas_spellings_of_builtins():
    from dspla.algebra import get_binary, get_select
    assert get_binary(gb.binary.truediv).name == "div" and get_select(gb.select.valuegt).name == "gt"
    Xe = dp.dense("X", ("n", "k"))
    got = dp.function(outputs={"S": dp.select(Xe, gb.select.valuegt, 1.0)})(X=X)["S"]
    assert np.array_equal(got.present(), X > 1.0)
