"""Scalars: dp.full (and full() in files) makes a constant with every entry present, at P = 1 and
distributed; `x + c` on an operand that may have missing entries is warned about by check and
explain; comparisons of expressions are element-wise."""
import os

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.cli.main import main
from dspla.errors import DsplaError
from dspla.frontend.parser import parse

from harness import run_dist

A = sp.csr_array(np.array([[0, 2.0, 0, 0], [0, 0, 0, 0], [1.0, 0, 0, 3.0], [0, 0, 0, 0]]))
x = np.array([[1.0], [2.0], [3.0], [4.0]])


def _program():
    Ae, xe = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    y = Ae @ xe                                   # rows 1 and 3 of A are empty: y lacks them
    return dp.function(outputs={"skips": 0.5 * y + 1.0, "every": dp.ewise_add(y, dp.full(y, 0.0)) * 0.5 + 1.0,
                                "c": dp.full(xe, 7), "b": dp.full(Ae, True)})


def _check(out):
    y = A @ x
    has = np.array([True, False, True, False])
    assert np.array_equal(out["skips"].present()[:, 0], has)
    assert np.array_equal(out["skips"].to_numpy(fill=np.nan)[has, 0], 0.5 * y[has, 0] + 1.0)
    assert np.array_equal(out["every"].to_numpy()[:, 0], np.where(has, 0.5 * y[:, 0], 0.0) + 1.0)
    assert out["c"].to_numpy().tolist() == [[7.0]] * 4 and out["c"].dtype == np.float64
    assert out["b"].to_numpy().all() and out["b"].dtype == bool and out["b"].shape == (4, 4)


def test_full_on_one_process():
    _check(_program()(A=A, x=x))


@pytest.mark.parametrize("P", [2, 3])
def test_full_distributed(P):
    got, _ = run_dist(_program(), {"A": A, "x": x}, P, plan="p2p1d", partition="random", seed=P)
    _check(got)


def test_full_dtypes():
    xi = dp.dense("x", ("n", 1), dtype="int64")
    assert str(dp.full(xi, 2).dtype) == "int64" and str(dp.full(xi, 2.5).dtype) == "float64"
    assert str(dp.full(xi, 1, "float32").dtype) == "float32"
    with pytest.raises(TypeError, match="number or a bool"):
        dp.full(xi, "one")


PROG = """input A : sparse[n, n]
input x : dense[n, 1]
y = A @ x
z = 0.85 * y + 0.15
w = ewise_add(y, full(y, 0)) + 0.15
u = x + 1
output z, w, u
"""


def test_check_warns_where_a_scalar_skips_missing_entries(tmp_path, capsys):
    (tmp_path / "p.dspla").write_text(PROG)
    assert main(["check", str(tmp_path / "p.dspla")]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "warning" in ln]
    # messages name a file by the shorter of its path and its path relative to the working directory
    where = min(str(tmp_path / "p.dspla"), os.path.relpath(tmp_path / "p.dspla"), key=len)
    assert len(lines) == 1 and lines[0].startswith(f"{where}:4:5: warning: the scalar 0.15")
    assert "full(" in lines[0]


def test_explain_shows_the_warning():
    f = dp.Function(parse(PROG, "p.dspla"))
    assert "p.dspla:4:5: warning" in f.explain() and "p.dspla:4:5: warning" in f.explain(np=2, dims={"n": 40})


def test_comparisons_are_element_wise():
    a, b = dp.dense("a", ("n", 1)), dp.dense("b", ("n", 1))
    f = dp.function(outputs={"eq": a == b, "lt": a < b, "ne": a != 2.0})
    out = f(a=np.array([[1.0], [2.0]]), b=np.array([[1.0], [3.0]]))
    assert out["eq"].to_numpy()[:, 0].tolist() == [True, False]
    assert out["lt"].to_numpy()[:, 0].tolist() == [False, True]
    assert out["ne"].to_numpy()[:, 0].tolist() == [True, False]
    with pytest.raises(TypeError, match="no truth value"):
        bool(a == b)


def test_a_value_is_not_iterable_and_says_so_at_once():
    """Python iterates an object with __getitem__ by indexing 0, 1, ... until an IndexError: an
    expression over a dim of unknown size never raised one, so list(A) (or a shape given as an
    expression, as dp.build(I, J, X, A) does) built extracts until memory ran out."""
    A, v = dp.sparse("A", ("n", "n")), dp.dense("v", ("n", 1), "int64")
    for it in (lambda: list(A), lambda: [x for x in A.T], lambda: tuple(v), lambda: list(dp.array(np.ones((3, 2))))):
        with pytest.raises(TypeError, match="not iterable"):
            it()
    with pytest.raises(DsplaError, match="build: a shape is a dim or a pair of dims"):
        dp.build(v, v, v, A)

