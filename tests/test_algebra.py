"""Facts on the algebra rows, checked against independent sources: GraphBLAS's own monoid
identities, numpy reductions, and the dense oracle for associativity."""
import graphblas as gb
import numpy as np
import pytest

from dspla.algebra import MONOIDS, REDUCTIONS, SEMIRINGS
from dspla.ir.types import DType

from reference.golden import oracle

DTYPES = [DType.float64, DType.float32, DType.int64, DType.bool]
# every built-in monoid with every dtype of its domain (user monoids, which other test modules
# define at import, are tested where they are defined)
CASES = [(m.name, dt) for m in MONOIDS.values() if m.builtin for dt in DTYPES
         if not (m.domain == "numeric" and dt is DType.bool or m.domain == "bool" and dt is not DType.bool)]


@pytest.mark.parametrize("name,dt", CASES, ids=str)
def test_identity_is_graphblas_identity(name, dt):
    m = MONOIDS[name]
    gbm = getattr(gb.monoid, m.gb)
    try:
        want = gbm[dt.gb].identity
    except (KeyError, AttributeError):
        pytest.skip("GraphBLAS has no typed instance")
    ours = m.identity(dt)
    if name == "any":
        assert ours is None      # any has no identity: every present value is acceptable
    else:
        assert ours == want and np.asarray(ours).dtype == dt.np


@pytest.mark.parametrize("name,dt", CASES, ids=str)
def test_reduction_across_processes_is_the_monoid(name, dt):
    """Combining per-process partial values with the row's reduction (missing entries filled with
    its fill) gives what the oracle's monoid gives over the present terms."""
    m = MONOIDS[name]
    rng = np.random.default_rng(1)
    vals = (rng.integers(-5, 6, (4, 7)) if dt is not DType.bool else rng.integers(0, 2, (4, 7))).astype(dt.np)
    present = rng.random((4, 7)) < 0.6
    red = m.reduction(dt)
    filled = np.where(present, vals, red.fill(dt))
    got = red.ufunc.reduce(filled, axis=0).astype(dt.np)
    want_dt = oracle.monoid_type(name, dt.np)
    want = oracle.monoid_reduce(name, vals.astype(want_dt), present, axis=0)
    any_present = present.any(axis=0)
    if name == "any":       # any accepts every present candidate; reducing by max picks one of them
        for j in np.flatnonzero(any_present):
            assert got[j] in vals[present[:, j], j]
    else:
        np.testing.assert_array_equal(got[any_present], np.asarray(want[0] if isinstance(want, tuple) else want)
                                      [any_present].astype(dt.np))


def test_every_reduction_fill_is_its_identity():
    used = set()
    for name, dt in CASES:
        red = MONOIDS[name].reduction(dt)
        used.add(red.name)
        x = np.array([3, 0, -1], dtype=dt.np) if dt is not DType.bool else np.array([True, False, True])
        assert np.array_equal(red.ufunc(x, red.fill(dt)).astype(dt.np), x), (name, red.name, dt)
    assert used == {n for n, r in REDUCTIONS.items() if r.func is None}   # user monoids bring their own


@pytest.mark.parametrize("name", ["min", "max"])
def test_a_missing_float_entry_leaves_a_nan_one_process_has_as_nan(name):
    """An entry present only as NaN on one process (all its terms NaN: GraphBLAS's product keeps
    it NaN) and missing on the others stays NaN when combined; a number still wins over the fill."""
    red = MONOIDS[name].reduction(DType.float64)
    fill = red.fill(DType.float64)
    assert np.isnan(red.ufunc.reduce(np.array([np.nan, fill, fill])))
    assert red.ufunc.reduce(np.array([fill, 2.5, fill])) == 2.5


def _random(rng, shape, density=0.6):
    return oracle.mat(rng.integers(-3, 4, shape).astype(np.int64), rng.random(shape) < density)


@pytest.mark.parametrize("name", sorted(n for n, s in SEMIRINGS.items() if s.associative))
def test_semirings_marked_associative_are(name):
    """(A B) C == A (B C) exactly, presence and values, on integer data (no rounding)."""
    sr = SEMIRINGS[name]
    rng = np.random.default_rng(7)
    for _ in range(20):
        A, B, C = _random(rng, (5, 4)), _random(rng, (4, 6)), _random(rng, (6, 3))
        if sr.mult.kind == "logical" or sr.monoid.domain == "bool":
            A, B, C = (oracle.mat(x.values != 0, x.present) for x in (A, B, C))
        left = oracle.mxm(oracle.mxm(A, B, sr.monoid.name, sr.mult.name), C, sr.monoid.name, sr.mult.name)
        right = oracle.mxm(A, oracle.mxm(B, C, sr.monoid.name, sr.mult.name), sr.monoid.name, sr.mult.name)
        assert np.array_equal(left.present, right.present)
        if name != "any_pair":   # any: every candidate acceptable; pair makes them all 1
            assert np.array_equal(left.values[left.present], right.values[right.present])


@pytest.mark.parametrize("name", ["plus_second", "plus_pair", "plus_first", "plus_min", "min_times"])
def test_the_flag_is_not_vacuous(name):
    """Semirings left unmarked do change their result with the grouping (a counterexample is found)."""
    sr = SEMIRINGS[name]
    assert not sr.associative
    rng = np.random.default_rng(3)
    for _ in range(200):
        A, B, C = _random(rng, (3, 3)), _random(rng, (3, 3)), _random(rng, (3, 3))
        left = oracle.mxm(oracle.mxm(A, B, sr.monoid.name, sr.mult.name), C, sr.monoid.name, sr.mult.name)
        right = oracle.mxm(A, oracle.mxm(B, C, sr.monoid.name, sr.mult.name), sr.monoid.name, sr.mult.name)
        if not np.array_equal(left.values[left.present], right.values[right.present]):
            return
    pytest.fail(f"{name}: no grouping changed the result")
