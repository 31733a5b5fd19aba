"""A size binds a symbolic dim the first time they meet (``dense[n, 4] + dense[n, c]``: c = 4),
in Python and in files; two sizes for one symbol, or data of another size, are errors naming both;
distributed runs equal the reference. Oracles: numpy."""
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DimensionMismatch, InputError
from dspla.frontend.parser import parse

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
from harness import run_dist  # noqa: E402


def test_a_size_binds_a_symbol_it_meets():
    X, Y = dp.dense("X", ("n", 4)), dp.dense("Y", ("n", "c"))
    Z = X + Y                                    # was DimensionMismatch "(4 != c)"
    assert Z.node.type.shape == ("n", "c")      # the symbol stays (it may be partitioned)
    f = dp.function({"Z": Z, "E": dp.reduce_all(dp.eye("c"))})
    assert f.bound_dims["c"][0] == 4
    x, y = np.ones((3, 4)), np.arange(12.0).reshape(3, 4)
    out = f(X=x, Y=y)
    np.testing.assert_array_equal(out["Z"].to_numpy(), x + y)
    assert out["E"].to_numpy()[0, 0] == 4.0     # eye("c") is 4 x 4: c is bound, though no input gives 4
    with pytest.raises(InputError, match="dimension 'c' is 4 from the program, where it meets that size .*test_dim_"
                                         "binding.py:.*but input 'Y' has 3 columns"):
        f(X=x, Y=np.ones((3, 3)))


def test_a_product_binds_its_inner_dim():
    F, W = dp.dense("F", ("n", "f")), dp.param("W", (16, 7))
    out = dp.function({"H": F @ W})(F=np.ones((5, 16)), W=np.ones((16, 7)))
    np.testing.assert_array_equal(out["H"].to_numpy(), np.full((5, 7), 16.0))


def test_one_symbol_two_sizes_is_an_error_naming_both():
    X, Y, V = dp.dense("X", ("n", 4)), dp.dense("Y", ("n", "c")), dp.dense("V", (5, 2))
    a, b = X + Y, Y @ V                          # each alone binds c: 4, then 5
    with pytest.raises(DimensionMismatch, match=r"'c' is 4 \(bound where it first met that size at .*\) but "
                                                r"mxm\[plus_times\] needs it to be 5"):
        dp.function({"a": a, "b": b})
    with pytest.raises(DimensionMismatch, match=r"\(4 != 5\)"):   # two sizes never unify
        dp.dense("P", ("n", 4)) + dp.dense("Q", ("n", 5))
    with pytest.raises(DimensionMismatch, match=r"\(c != k\)"):   # nor two symbols
        Y + dp.dense("K", ("n", "k"))


def test_a_one_broadcasts_and_binds_nothing():
    Y, r = dp.dense("Y", ("n", "c")), dp.dense("r", ("n", 1))
    f = dp.function({"Z": Y * r})
    assert f.bound_dims == {}
    out = f(Y=np.ones((2, 3)), r=np.array([[2.0], [3.0]]))
    np.testing.assert_array_equal(out["Z"].to_numpy(), [[2, 2, 2], [3, 3, 3]])


def test_files_bind_alike():
    prog = parse("input X : dense[n, 4]\ninput Y : dense[n, c]\nZ = X + Y\nT = Y @ transpose(X)\noutput Z, T\n",
                 "b.dspla")
    f = dp.Function(prog)
    assert f.bound_dims["c"][0] == 4
    x, y = np.ones((2, 4)), np.arange(8.0).reshape(2, 4)
    out = f(X=x, Y=y)
    np.testing.assert_array_equal(out["T"].to_numpy(), y @ x.T)


def test_a_loop_carried_value_meeting_a_size():
    X, y0 = dp.dense("X", ("n", 3)), dp.dense("y", ("n", "c"))
    (y, _), its = dp.while_loop(lambda y, k: k < 2, lambda y, k: (y + X, k + 1), (y0, dp.nvals(y0) * 0), 5,
                                count=True)
    out = dp.function({"y": y})(X=np.ones((2, 3)), y=np.zeros((2, 3)))
    np.testing.assert_array_equal(out["y"].to_numpy(), np.full((2, 3), 2.0))


@pytest.mark.parametrize("P", [2, 3])
def test_distributed_equals_reference_with_a_partitioned_dim_bound(P):
    A, B = dp.sparse("A", ("n", "n")), dp.dense("B", (60, 3))    # n (partitioned) meets 60
    X, Y = dp.dense("X", ("n", 4)), dp.dense("Y", ("n", "c"))
    f = dp.function({"T": A @ B, "U": (A @ X) + Y, "V": dp.relu(A.T @ (X + Y))})
    rng = np.random.default_rng(1)
    a = sp.random_array((60, 60), density=0.1, format="csr", rng=rng)
    b, x, y = rng.random((60, 3)), rng.random((60, 4)), rng.random((60, 4))
    for plan in ("p2p1d", "allgather1d"):
        out, _ = run_dist(f, dict(A=a, B=b, X=x, Y=y), P, plan=plan)
        np.testing.assert_allclose(out["T"].to_numpy(fill=0), a @ b, rtol=1e-12)
        np.testing.assert_allclose(out["U"].to_numpy(), a @ x + y, rtol=1e-12)
        np.testing.assert_allclose(out["V"].to_numpy(fill=0), np.maximum(a.T @ (x + y), 0), rtol=1e-12)
