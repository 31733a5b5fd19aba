"""Inputs passed again as the same objects are unchanged (docs/user-guide.md "What is computed
once"): such a call is neither checked nor bound again; a new object is, and a numpy array
changed in place counts only after ``invalidate()``. The oracle is scipy's product."""
import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DsplaError
from dspla.function import Function


@pytest.fixture
def binds(monkeypatch):
    calls = []
    real = Function.bind

    def spy(self, inputs):
        calls.append(sorted(inputs))
        return real(self, inputs)
    monkeypatch.setattr(Function, "bind", spy)
    return calls


def _case(seed=0):
    A = sp.random(30, 30, density=0.2, format="csr", random_state=seed)
    X = np.random.default_rng(seed).random((30, 4))
    f = dp.function(outputs={"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    return f, A, X


def _dense(out):
    return out["C"].to_numpy(fill=0.0)


@pytest.mark.parametrize("kind", ["scipy", "graphblas"])
def test_the_same_objects_are_bound_once(binds, kind):
    f, A, X = _case()
    a, x = (A, X) if kind == "scipy" else (gb.io.from_scipy_sparse(A), gb.Matrix.from_dense(X))
    for _ in range(3):
        np.testing.assert_allclose(_dense(f(A=a, X=x)), A @ X, rtol=1e-12)
    assert len(binds) == 1


def test_a_new_object_is_bound_and_used(binds):
    f, A, X = _case()
    f(A=A, X=X)
    X2 = X * 3 + 1
    np.testing.assert_allclose(_dense(f(A=A, X=X2)), A @ X2, rtol=1e-12)
    assert len(binds) == 2
    # back to the first object: a new call, bound again (only the last call's objects are kept)
    np.testing.assert_allclose(_dense(f(A=A, X=X)), A @ X, rtol=1e-12)
    assert len(binds) == 3


def test_a_new_object_of_the_wrong_shape_is_still_refused():
    f, A, X = _case()
    f(A=A, X=X)
    with pytest.raises(DsplaError, match="X"):
        f(A=A, X=np.ones((29, 4)))


def test_an_array_changed_in_place_counts_after_invalidate():
    f, A, X = _case()
    before = A @ X
    f(A=A, X=X)
    X *= 2
    np.testing.assert_allclose(_dense(f(A=A, X=X)), before, rtol=1e-12)   # documented: not noticed
    f.invalidate()
    np.testing.assert_allclose(_dense(f(A=A, X=X)), A @ X, rtol=1e-12)
