"""Static values (computed once from the graph) against dense numpy: A + Aᵀ and A * Aᵀ, whose
transpose GraphBLAS reads through a descriptor instead of building it, and the same with Aᵀ
also needed on its own."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp

from harness import run_dist


def _oracle(A):
    d = A.toarray()
    p = d != 0
    union = np.where(p | p.T, np.where(p, d, 0) + np.where(p.T, d.T, 0), 0)
    inter = np.where(p & p.T, d * d.T, 0)
    return union, p | p.T, inter, p & p.T


@pytest.mark.parametrize("also_transpose", [False, True])
def test_sum_and_product_with_the_transpose(also_transpose):
    rng = np.random.default_rng(4)
    A = sp.random_array((40, 40), density=0.1, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    Asym, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 1))
    S, M = Asym + Asym.T, Asym * Asym.T
    outs = {"SX": S @ X, "MX": M @ X}
    if also_transpose:
        outs["TX"] = Asym.T @ X
    f = dp.function(outputs=outs)
    x = rng.integers(1, 5, (40, 1)).astype(float)
    union, up, inter, ip = _oracle(A)
    for P in (1, 2, 3):
        got = f(A=A, X=x) if P == 1 else run_dist(f, {"A": A, "X": x}, P, plan="p2p1d", partition="random", seed=P)[0]
        np.testing.assert_array_equal(got["SX"].to_numpy(fill=0), union @ x)
        np.testing.assert_array_equal(got["MX"].to_numpy(fill=0), inter @ x)
        # rows with no entry in S / M are missing, not zero
        np.testing.assert_array_equal(got["SX"].present()[:, 0], up.any(axis=1))
        np.testing.assert_array_equal(got["MX"].present()[:, 0], ip.any(axis=1))
        if also_transpose:
            np.testing.assert_array_equal(got["TX"].to_numpy(fill=0), A.toarray().T @ x)


def test_a_cast_of_a_static_sum_is_one_pass():
    """cast(A + Aᵀ, bool) and cast(A * Aᵀ, int64) computed with the cast as the op's output
    typecast: the same values as the two steps."""
    rng = np.random.default_rng(6)
    A = sp.random_array((30, 30), density=0.15, random_state=rng, format="csr")
    A.data[:] = rng.integers(-3, 4, A.nnz) + 0.5                  # signs, fractions: casts matter
    Asym, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 1), dtype="int64")
    B = dp.cast(Asym + Asym.T, "bool")
    M = dp.cast(Asym * Asym.T, "int64")
    f = dp.function(outputs={"BX": dp.mxm(B, X, "plus_second"), "VX": dp.mxm(dp.cast(B, "int64"), X),
                             "MX": dp.mxm(M, X, "plus_times")})
    x = rng.integers(1, 5, (30, 1))
    union, up, inter, ip = _oracle(A)
    want_b = np.where(up, union != 0, False)
    want_m = np.where(ip, np.trunc(inter).astype(np.int64), 0)
    for P in (1, 2):
        got = f(A=A, X=x) if P == 1 else run_dist(f, {"A": A, "X": x}, P, plan="p2p1d", partition="random", seed=P)[0]
        np.testing.assert_array_equal(got["BX"].to_numpy(fill=0), up.astype(np.int64) @ x)  # counts entries
        np.testing.assert_array_equal(got["VX"].to_numpy(fill=0), want_b.astype(np.int64) @ x)  # the values
        np.testing.assert_array_equal(got["MX"].to_numpy(fill=0), want_m @ x)
    assert (up & ~want_b).any()   # some present entries of A + Aᵀ are 0: cast to a present False


@pytest.fixture
def built(monkeypatch):
    """Every identity matrix the kernels build (arguments of gbops.identity), recorded."""
    from dspla.kernels import gbops
    calls = []
    real = gbops.identity
    monkeypatch.setattr(gbops, "identity", lambda *a: calls.append(a) or real(*a))
    return calls


@pytest.mark.parametrize("monoid", ["plus", "min", "max", "times"])
def test_a_reduced_identity_is_a_full_vector_of_one(monoid, built):
    """reduce_rows(eye(n)) (cc's labels start from it) and reduce_cols: one entry per row, so a
    full vector of 1 whatever the monoid; the identity itself is never built. Used as a product's
    operand and after rowindex, for P = 1 and 2."""
    rng = np.random.default_rng(3)
    A = sp.random_array((25, 25), density=0.2, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    Asym = dp.sparse("A", ("n", "n"))
    dtype, eye = "float64", dp.eye("n")
    v, w = dp.reduce_rows(eye, monoid), dp.reduce_cols(eye, monoid)
    f = dp.function({"v": v, "w": w, "lab": dp.apply(v, "rowindex"), "Av": dp.mxm(Asym, dp.cast(v, "float64"))},
                    inputs=[Asym])
    for P in (1, 2):
        got = f(A=A) if P == 1 else run_dist(f, {"A": A}, P, plan="p2p1d", partition="random", seed=P)[0]
        np.testing.assert_array_equal(got["v"].to_numpy(), np.ones((25, 1), dtype=dtype))
        assert got["v"].to_numpy().dtype == np.dtype(dtype) and got["v"].present().all()
        np.testing.assert_array_equal(got["w"].to_numpy(), np.ones((1, 25), dtype=dtype))
        np.testing.assert_array_equal(got["lab"].to_numpy()[:, 0], np.arange(25))
        np.testing.assert_array_equal(got["Av"].to_numpy(fill=0)[:, 0], A.toarray().sum(axis=1))
    assert not built


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
def test_a_cast_identity_is_the_identity_of_that_dtype(dtype, built):
    """cast(eye(n), t) is eye(n) in t (1 cast is 1): reduced by rows it is a full vector of 1 in t
    and is never built (a maximal independent set's every-node vector); as a product's operand it
    gives the other operand back; for P = 1 and 2."""
    rng = np.random.default_rng(5)
    X = sp.random_array((20, 3), density=0.3, random_state=rng, format="csr")
    X.data[:] = rng.integers(1, 9, X.nnz)
    Xs = dp.sparse("X", ("n", "f"))
    monoid, semiring = ("lor", "lor_land") if dtype == "bool" else ("plus", "plus_times")
    f = dp.function({"v": dp.reduce_rows(dp.cast(dp.eye("n"), dtype), monoid), "d": dp.reduce_rows(Xs, "plus")},
                    inputs=[Xs])   # (d reads X, whose rows are partitioned)
    g = dp.function({"IX": dp.mxm(dp.cast(dp.eye("n"), dtype), dp.cast(Xs, dtype), semiring)}, inputs=[Xs])
    for P in (1, 2):
        got = f(X=X) if P == 1 else run_dist(f, {"X": X}, P, plan="p2p1d", partition="random", seed=P)[0]
        assert got["v"].present().all() and got["v"].to_numpy().dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got["v"].to_numpy(), np.ones((20, 1), dtype=dtype))
    assert not built
    for P in (1, 2):
        got = g(X=X) if P == 1 else run_dist(g, {"X": X}, P, partition="random", seed=P)[0]
        np.testing.assert_array_equal(got["IX"].present(), X.toarray() != 0)
        np.testing.assert_array_equal(got["IX"].to_numpy(fill=0), X.toarray().astype(dtype))


@pytest.mark.parametrize("P", [2, 3])
def test_an_identity_on_a_dim_no_value_partitions(P):
    """eye(n) where n is bound by an input's rows that planning lays out whole (a sparse n x 3
    input and no n x n one): every rank builds it from n's size, and a vector reduced from it
    is n trues."""
    X = sp.random_array((20, 3), density=0.3, random_state=1, format="csr")
    f = dp.function({"v": dp.reduce_rows(dp.eye("n", "bool"), "lor")}, inputs=[dp.sparse("X", ("n", 3))])
    got = run_dist(f, {"X": X}, P, plan="p2p1d", partition="random", seed=2)[0]["v"].to_numpy()
    np.testing.assert_array_equal(got.ravel(), np.ones(20, dtype=bool))
