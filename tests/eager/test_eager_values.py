"""Eager values on one process: every dp function and python-graphblas method run at once on
concrete values (dspla's, numpy's, scipy's, python-graphblas's) equals python-graphblas's own
call on the same data (GraphBLAS semantics: a missing entry is not a zero), and returns a value
that supports every operation again."""
import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp
from eager_oracle import assert_same

import dspla as dp
from dspla.eager import dispatch
from dspla.kernels.overflow import IntegerOverflow


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    a = sp.random_array((40, 40), density=0.12, random_state=rng, format="csr")
    a.data[:] = rng.integers(1, 9, a.nnz)
    b = sp.random_array((40, 40), density=0.12, random_state=rng, format="csr")
    b.data[:] = rng.integers(-4, 9, b.nnz)
    x = rng.integers(-3, 7, (40, 5)).astype(float)
    v = rng.integers(1, 6, 40).astype(float)
    return a, b, x, v


def _gb(a):
    return gb.io.from_scipy_sparse(a) if sp.issparse(a) else gb.Matrix.from_dense(a)


@pytest.mark.parametrize("sr", ["plus_times", "min_plus", "max_times", "plus_second", "any_pair"])
def test_mxm_on_values_and_on_raw_data(data, sr):
    a, b, x, _ = data
    want = _gb(a).mxm(_gb(b), getattr(gb.semiring, sr)).new()
    assert_same(dp.array(a).mxm(dp.array(b), sr), want)
    assert_same(dp.mxm(a, b, sr), want)                        # scipy in, a value out
    assert_same(dp.mxm(_gb(a), _gb(b), getattr(dp.semiring, sr)), want)   # graphblas in
    assert_same(dp.array(a) @ x, _gb(a).mxm(_gb(x), gb.semiring.plus_times).new())


def test_masked_products_on_values(data):
    a, b, _, _ = data
    ga, gb_ = _gb(a), _gb(b)
    want = gb.Matrix(gb.dtypes.FP64, 40, 40)
    want(mask=gb_.S) << ga.mxm(ga, gb.semiring.plus_times)
    assert_same(dp.mxm(dp.array(a), a, mask=b, structure=True), want)
    want = gb.Matrix(gb.dtypes.FP64, 40, 40)
    want(mask=~gb_.S) << ga.mxm(ga, gb.semiring.min_plus)
    assert_same(dp.array(a).mxm(dp.array(a), "min_plus", mask=dp.array(b), complement=True, structure=True), want)


def test_mxv_vxm_and_vectors_as_numpy_or_graphblas(data):
    a, _, _, v = data
    A, gv = dp.array(a), gb.Vector.from_dense(v)
    assert_same(A.mxv(v, "min_plus"), _gb(a).mxv(gv, gb.semiring.min_plus).new())
    assert_same(A.mxv(gv), _gb(a).mxv(gv, gb.semiring.plus_times).new())
    assert_same(dp.array(v).vxm(A, "max_plus"), gv.vxm(_gb(a), gb.semiring.max_plus).new())


@pytest.mark.parametrize("op", ["plus", "min", "times", "minus", "first", "second"])
def test_ewise(data, op):
    a, b, _, _ = data
    A, B = dp.array(a), dp.array(b)
    assert_same(A.ewise_add(B, op), _gb(a).ewise_add(_gb(b), getattr(gb.binary, op)).new())
    assert_same(A.ewise_mult(B, op), _gb(a).ewise_mult(_gb(b), getattr(gb.binary, op)).new())


def test_apply_select_and_operators(data):
    a, b, _, _ = data
    A, B, ga, gb_ = dp.array(a), dp.array(b), _gb(a), _gb(b)
    assert_same(A.apply("neg"), ga.apply(gb.unary.ainv).new())
    assert_same(A.apply(dp.binary.times, right=3.0), ga.apply(gb.binary.times, right=3.0).new())
    assert_same(A.apply("minus", left=1.0), ga.apply(gb.binary.minus, left=1.0).new())
    assert_same(A.select("tril", 0), ga.select("tril", 0).new())
    assert_same(B.select(">", 2), gb_.select(">", 2).new())
    assert_same(A + 1, ga.apply(gb.binary.plus, right=1).new())
    assert_same(2 * A, ga.apply(gb.binary.times, left=2).new())
    assert_same(A + B, ga.ewise_add(gb_, gb.binary.plus).new())
    assert_same(A * B, ga.ewise_mult(gb_, gb.binary.times).new())
    assert_same(A - B, ga.ewise_add(gb_.apply(gb.unary.ainv).new(), gb.binary.plus).new())
    assert_same(-A, ga.apply(gb.unary.ainv).new())
    assert_same(abs(B), gb_.apply(gb.unary.abs).new())


def test_comparisons_are_values_not_bools(data):
    a, b, _, _ = data
    A, B, ga, gb_ = dp.array(a), dp.array(b), _gb(a), _gb(b)
    for got, want in ((A == B, ga.ewise_mult(gb_, gb.binary.eq)), (A < B, ga.ewise_mult(gb_, gb.binary.lt)),
                      (A >= 3, ga.apply(gb.binary.ge, right=3)), (A != 2, ga.apply(gb.binary.ne, right=2)),
                      (3 > A, ga.apply(gb.binary.lt, right=3))):
        assert isinstance(got, dp.Array)
        assert_same(got, want.new())
    with pytest.raises(TypeError, match="ambiguous"):
        bool(A == B)
    assert (A == None) is False and (A != "x") is True   # noqa: E711  (not a value: Python's identity)
    # values and expressions hash by identity: usable as keys and in sets
    seen = {A: 1, B: 2}
    assert seen[A] == 1 and len({A, B, A}) == 2


def test_reductions_structure_and_scalars(data):
    a, b, _, _ = data
    A, ga = dp.array(a), _gb(a)
    assert_same(A.reduce_rowwise(), ga.reduce_rowwise(gb.monoid.plus).new())
    assert_same(A.reduce_rowwise("max"), ga.reduce_rowwise(gb.monoid.max).new())
    col = A.reduce_columnwise("min")
    assert col.shape in ((40, 1), (40,))     # a vector (held as a column)
    assert_same(col, ga.reduce_columnwise(gb.monoid.min).new())
    s = A.reduce_scalar()
    assert float(s) == ga.reduce_scalar(gb.monoid.plus).new().value == s.value
    assert A.nvals == ga.nvals
    assert A.shape == (40, 40) and A.dtype == np.float64
    assert_same(A.T, ga.T.new())
    assert_same(A.T.T.mxm(A.T), ga.mxm(ga.T, gb.semiring.plus_times).new())
    empty = dp.array(sp.csr_array((3, 3))).reduce_scalar()
    assert empty.value is None
    with pytest.raises(ValueError, match="missing"):
        float(empty)
    assert bool(dp.array(np.ones((2, 2))).reduce_scalar() == 4.0)


def test_a_repeated_call_is_traced_once(data, monkeypatch):
    a, b, _, _ = data
    A, B = dp.array(a), dp.array(b)
    traced = []
    real = dispatch._trace
    monkeypatch.setattr(dispatch, "_trace", lambda *a, **k: traced.append(1) or real(*a, **k))
    dispatch._CACHE.clear()
    for _ in range(3):
        A.mxm(B, "min_plus")
        A.ewise_add(B, "max")
    assert len(traced) == 2
    A.mxm(B, "max_plus")                  # another semiring: traced again
    dp.array(sp.random_array((40, 41), density=0.1, random_state=1, format="csr")).reduce_rowwise()
    assert len(traced) == 4


def test_traced_functions_and_eager_ones_agree(data):
    a, _, x, v = data

    def step(A, X, r):
        return (A.mxm(X, "plus_times") * 0.5).reduce_rowwise("max").ewise_add(r, "min")

    f = dp.function(step)
    eager = step(dp.array(a), x, v)
    compiled = f(dp.array(a), x, v)
    ga = _gb(a)
    want = ga.mxm(_gb(x), gb.semiring.plus_times).new().apply(gb.binary.times, right=0.5).new() \
        .reduce_rowwise(gb.monoid.max).new().ewise_add(gb.Vector.from_dense(v), gb.binary.min).new()
    assert_same(eager, want)
    assert_same(compiled, want)
    assert f(dp.array(a), x, v) is not None and len(f._cache) == 1   # compiled once for this signature


def test_every_method_traced_equals_python_graphblas(data):
    a, b, x, v = data

    def many(A, B, X, u):
        return {"mxm": A.mxm(B, "min_plus"), "mxv": A.mxv(u), "vxm": u.vxm(A, "max_times"),
                "add": A.ewise_add(B, "max"), "mult": A.ewise_mult(B, "minus"), "apply": A.apply("abs"),
                "bound": A.apply("minus", left=10.0), "select": B.select("triu", 1), "rows": A.reduce_rowwise("min"),
                "cols": B.reduce_columnwise("max"), "all": A.reduce_scalar("plus"), "T": B.T, "lt": A < B,
                "eq": A == 3.0, "neg": -A + 1.0, "at": A @ X}
    out = dp.function(many)(dp.array(a), dp.array(b), x, v)
    ga, gb_, gv = _gb(a), _gb(b), gb.Vector.from_dense(v)
    want = {"mxm": ga.mxm(gb_, gb.semiring.min_plus), "mxv": ga.mxv(gv, gb.semiring.plus_times),
            "vxm": gv.vxm(ga, gb.semiring.max_times), "add": ga.ewise_add(gb_, gb.binary.max),
            "mult": ga.ewise_mult(gb_, gb.binary.minus), "apply": ga.apply(gb.unary.abs),
            "bound": ga.apply(gb.binary.minus, left=10.0), "select": gb_.select("triu", 1),
            "rows": ga.reduce_rowwise(gb.monoid.min), "cols": gb_.reduce_columnwise(gb.monoid.max),
            "all": ga.reduce_scalar(gb.monoid.plus), "T": gb_.T, "lt": ga.ewise_mult(gb_, gb.binary.lt),
            "eq": ga.apply(gb.binary.eq, right=3.0),
            "neg": ga.apply(gb.unary.ainv).new().apply(gb.binary.plus, right=1.0),
            "at": ga.mxm(_gb(x), gb.semiring.plus_times)}
    for k, w in want.items():
        assert_same(out[k], w.new(), exact=True)   # (integer-valued data: exact)


def test_expressions_still_trace_and_mixing_is_refused(data):
    a, _, _, _ = data
    A = dp.sparse("A", ("n", "n"))
    assert isinstance(A.mxm(A, "min_plus"), dp.Expr) and isinstance(dp.mxm(A, A), dp.Expr)
    assert A.mxm(A, "min_plus").node == dp.mxm(A, A, "min_plus").node
    rowwise = getattr(dp, "reduce_rowwise", dp.reduce_rows)   # (a vector-valued spelling, where defined)
    assert A.reduce_rowwise("max").node == rowwise(A, "max").node
    assert (A == A).node.op.value == "ewise_mult"
    with pytest.raises(TypeError, match="concrete value .csr_array. meets a traced expression"):
        dp.mxm(A, a)   # a concrete value inside a traced program: an argument of the function instead
    with pytest.raises(TypeError, match="meets a traced expression"):
        A.mxm(np.ones((3, 3)))
    assert len({A, A.T, A}) == 2 and {A: 1}[A] == 1   # expressions hash by identity too


def test_bad_input_is_reported_clearly(data):
    a, _, _, _ = data
    with pytest.raises(dp.DimensionMismatch, match="inner dimensions"):
        dp.array(a).mxm(np.ones((3, 2)))
    with pytest.raises(dp.UnknownNameError, match="semiring"):
        dp.array(a).mxm(dp.array(a), "plus_bogus")
    with pytest.raises(dp.InputError, match="not supported"):
        dp.array(np.ones(3, dtype=np.complex128))


def test_scalars_of_another_type_are_another_operation():
    # 2 == 2.0 == True as dict keys, but the scalar's type sets the result's dtype
    A = dp.array(np.array([[1, 2], [3, 4]]))
    assert A.apply("times", right=2).dtype == np.int64
    assert A.apply("times", right=2.0).dtype == np.float64
    assert (A * 2).dtype == np.int64 and (A * 2.5).to_numpy().tolist() == [[2.5, 5.0], [7.5, 10.0]]


def test_a_result_is_freed_when_dropped_without_the_collector(data):
    """An eager result holds no reference cycle: dropped, its matrix goes at once (an n x 64
    product waited for the collector, and the heap grew by its size at every call)."""
    import gc
    import weakref
    a, _, x, _ = data
    A = dp.array(a)
    gc.disable()
    try:
        r = dp.mxm(A, x)
        assert r.gb.ss.format   # (python-graphblas's accessor, read as a user would: still no cycle)
        gone = weakref.ref(r.gb)
        del r
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "float32", "int32"])
def test_reduce_by_rows_is_one_prepared_call_equal_to_numpy(dtype):
    """A repeated eager reduction by rows runs its prepared C call (ops/reduce.py), into an n x 1
    column: equal to numpy's sums over the present entries, a row without entries missing."""
    rng = np.random.default_rng(3)
    dense = rng.integers(-5, 9, (30, 20)).astype(dtype)
    present = rng.random((30, 20)) < 0.2
    present[[4, 11, 29]] = False                      # rows with no entries
    r, c = np.nonzero(present)
    A = dp.array(sp.csr_array((dense[r, c], (r, c)), shape=(30, 20)))
    monoid, fold = ("lor", np.logical_or) if dtype == "bool" else ("plus", np.add)
    dispatch._CACHE.clear()
    for _ in range(2):
        got = A.reduce_rowwise(monoid)
    rows, _, vals = got.to_coo()
    want = {i: fold.reduce(dense[i, present[i]]) for i in range(30) if present[i].any()}
    assert rows.tolist() == sorted(want) and got.to_numpy(fill=0).shape == (30,)
    np.testing.assert_array_equal(vals, np.array([want[i] for i in sorted(want)], dtype=dense.dtype))
    (traced,) = dispatch._CACHE.values()
    assert traced.steps.by_op.get("reduce") == 2


@pytest.mark.parametrize("reduce", ["reduce_rows", "reduce_all"])
def test_a_prepared_int64_reduction_is_checked_for_overflow(reduce):
    """A repeated eager int64 reduction takes its prepared C call, which still raises when the
    true value leaves int64 (2^62 + 2^62 = 2^63 > int64's largest), and is exact below it."""
    big = sp.csr_array((np.array([2**62, 2**62, 5], dtype=np.int64), ([0, 0, 1], [0, 1, 1])), shape=(3, 3))
    fits = sp.csr_array((np.array([2**62, 2**62 - 1, -7], dtype=np.int64), ([0, 0, 2], [0, 1, 2])), shape=(3, 3))
    dispatch._CACHE.clear()
    for _ in range(2):
        with pytest.raises(IntegerOverflow, match="overflows int64"):
            getattr(dp, reduce)(big, "plus")
        got = getattr(dp, reduce)(fits, "plus")
    if reduce == "reduce_rows":
        rows, _, vals = got.to_coo()
        assert rows.tolist() == [0, 2] and vals.tolist() == [2**63 - 1, -7]   # (row 1 has no entries)
    else:
        assert got.value == 2**63 - 8
    (traced,) = dispatch._CACHE.values()
    assert traced.steps.by_op.get("reduce") == 4
