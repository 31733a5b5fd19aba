"""Inputs passed again as the same objects are unchanged (docs/user-guide.md "What is computed
once"): such a call is neither checked nor bound again; a new object is, and a numpy array
changed in place counts only after ``invalidate()``. The oracle is scipy's product."""
import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DsplaError
from dspla.session import inputs as inputs_module


@pytest.fixture
def binds(monkeypatch):
    """The inputs of every call the session binds (checks and converts): values.bind_inputs, as
    the session calls it."""
    calls = []
    real = inputs_module.bind_inputs

    def spy(decls, inputs, *rest):
        calls.append(sorted(inputs))
        return real(decls, inputs, *rest)
    monkeypatch.setattr(inputs_module, "bind_inputs", spy)
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


def _with_param():
    A, X, W = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "f")), dp.param("W", ("f", 3))
    return dp.function(outputs={"H": A @ X @ W})


def test_a_parameter_updated_in_place_is_read_again():
    # parameters are what a trainer updates, often in place: they are read on every call
    A = sp.random(30, 30, density=0.2, format="csr", random_state=1)
    X = np.random.default_rng(1).random((30, 4))
    W = np.random.default_rng(2).random((4, 3))
    f = _with_param()
    np.testing.assert_allclose(f(A=A, X=X, W=W)["H"].to_numpy(fill=0.0), A @ X @ W, rtol=1e-12)
    W -= 0.5
    np.testing.assert_allclose(f(A=A, X=X, W=W)["H"].to_numpy(fill=0.0), A @ X @ W, rtol=1e-12)


@pytest.mark.parametrize("P", [2, 3])
def test_a_parameter_updated_in_place_is_sent_again_on_p_processes(P):
    from dspla.runtime.comm.sim import run_simulated
    A = sp.random(40, 40, density=0.15, format="csr", random_state=3)
    X = np.random.default_rng(3).random((40, 4))
    W = np.random.default_rng(4).random((4, 3))
    want = [A @ X @ W, A @ X @ (W - 0.5)]

    def body(comm):
        f = _with_param()
        w = W.copy()
        got = []
        for _ in range(2):
            out = f.run({"A": A, "X": X, "W": w} if comm.rank == 0 else None, comm=comm, plan="p2p1d")
            got.append(out["H"].to_numpy(fill=0.0))
            if comm.rank == 0:
                w -= 0.5   # in place, on the rank that holds the host inputs
        return got

    for got in run_simulated(P, body):
        for g, w_ in zip(got, want):
            np.testing.assert_allclose(g, w_, rtol=1e-12)


def test_a_plain_call_reuses_its_session_until_the_options_change():
    # a plain call finds its session without building Options again; configure() and
    # invalidate() must still reach the next call, and run(..., option=) its own session
    f, A, X = _case()
    np.testing.assert_allclose(_dense(f(A=A, X=X)), A @ X)
    s = f.session()
    f(A=A, X=X)
    assert f.session() is s
    f.configure(seed=7)
    np.testing.assert_allclose(_dense(f(A=A, X=X)), A @ X)
    assert f.session() is not s and f.session().opt.seed == 7
    s7 = f.session()
    f.run({"A": A, "X": X}, seed=8)
    assert f.session(seed=8) is not s7 and f.session(seed=8).opt.seed == 8
    assert f.session() is s7   # (the option-less call still finds the configured one)
    f.invalidate()
    np.testing.assert_allclose(_dense(f(A=A, X=X)), A @ X)
    assert f.session() is not s7 and f.session().opt.seed == 7
