"""The local product's route table (kernels/routes.py): which route each case takes, every route
equal to a dense numpy oracle with GraphBLAS semantics (a missing entry is not a zero), the
route taken reported in the run stats and shown by explain."""
from collections import Counter

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.algebra import SEMIRINGS
from dspla.frontend.parser import parse
from dspla.ir.types import DType
from dspla.kernels import gbops, routes
from dspla.plan.explain import local_routes

F64 = DType.float64


def _oracle(a, ap, b, bp, add, mult, ident):
    """C[i, j] = add over k where a[i, k] and b[k, j] are both present; missing when no k."""
    n, m = a.shape[0], b.shape[1]
    C = np.full((n, m), ident, dtype=float)
    present = np.zeros((n, m), dtype=bool)
    for i in range(n):
        for j in range(m):
            ks = np.flatnonzero(ap[i] & bp[:, j])
            for k in ks:
                C[i, j] = add(C[i, j], mult(a[i, k], b[k, j]))
            present[i, j] = ks.size > 0
    return C, present


def _matrix(vals, present):
    r, c = np.nonzero(present)
    return gb.Matrix.from_coo(r, c, vals[r, c], nrows=vals.shape[0], ncols=vals.shape[1], dtype=float)


CASES = {
    "plus_times": (np.add, np.multiply, 0.0),
    "min_plus": (np.fmin, np.add, np.inf),
    "max_times": (np.fmax, np.multiply, -np.inf),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("a_full,b_full", [(False, True), (False, False), (True, True)])
def test_every_route_equals_the_oracle(name, a_full, b_full):
    rng = np.random.default_rng(7)
    n, k, m = 9, 7, 4
    a, b = rng.random((n, k)) + 0.5, rng.random((k, m)) + 0.5
    ap = np.ones((n, k), bool) if a_full else rng.random((n, k)) < 0.3
    if not a_full:
        ap[2] = False     # an empty row of A: its row of C is missing
    bp = np.ones((k, m), bool) if b_full else rng.random((k, m)) < 0.5
    add, mult, ident = CASES[name]
    want, present = _oracle(a, ap, b, bp, add, mult, ident)
    sr = SEMIRINGS[name]
    taken: Counter = Counter()
    C = gbops.mxm(_matrix(a, ap), _matrix(b, bp), sr, F64, taken=taken)
    expect = routes.choose(sr, F64, a_full=a_full, b_full=b_full)
    assert taken == {expect.name: 1}
    got = np.full((n, m), np.nan)
    r, c, v = C.to_coo()
    got[r, c] = v
    assert (~np.isnan(got) == present).all()
    np.testing.assert_allclose(got[present], want[present], rtol=1e-12)


def test_the_table_picks_by_semiring_dtype_and_format():
    pt = SEMIRINGS["plus_times"]
    assert routes.choose(pt, F64, a_full=True, b_full=True).name == "blas"
    assert routes.choose(pt, DType.int64, a_full=True, b_full=True).name == "full-c"    # BLAS is for floats
    assert routes.choose(pt, F64, a_full=False, b_full=True).name == "full-c"
    assert routes.choose(pt, F64, a_full=False, b_full=False).name == "new"
    assert routes.choose(pt, F64, a_full=False, b_full=True, masked=True).name == "masked"
    assert routes.choose(pt, F64, a_full=False, b_full=True, b_any=False).name == "new"   # nothing to fill for
    assert all(r.says for r in routes.ROUTES)


def test_in_place_only_where_the_table_says_it_pays():
    """kernels/routes.py IN_PLACE, by semiring, dtype and K (measured: docs/local.md)."""
    def route(name, dtype=F64, k=16, **kw):
        return routes.choose(SEMIRINGS[name], dtype, a_full=False, b_full=kw.pop("b_full", True), k=k, **kw).name
    # where SuiteSparse's own product was the faster one: min_plus, lor_land, plus_pair, min_second
    assert route("min_plus") == route("min_second") == route("plus_pair") == "new"
    assert route("lor_land", DType.bool) == route("max_plus") == "new"
    assert route("min_first", DType.int64) == "new" and route("min_first", DType.float32) == "full-c"
    # the least K, per dtype
    assert [route("plus_times", F64, k) for k in (1, 2, 16)] == ["new", "full-c", "full-c"]
    assert [route("plus_times", DType.float32, k) for k in (2, 3, 4)] == ["new", "new", "full-c"]
    assert [route("plus_times", DType.int64, k) for k in (2, 3)] == ["new", "full-c"]
    assert route("plus_times", F64, 0) == "full-c"          # K not known (explain on symbolic types): wide
    # one column with missing entries A never reads (PageRank's r / outdeg): in place at any K
    assert route("plus_times", F64, 1, b_full=False, b_covered=True) == "full-c"
    assert route("min_plus", F64, 1, b_full=False, b_covered=True) == "new"


@pytest.mark.parametrize("key", sorted(routes.IN_PLACE))
def test_each_in_place_row_equals_the_oracle_on_both_sides_of_its_least_k(key):
    """Every (semiring, dtype) the table sends in place, at its least K (full-c) and below it
    (new), against the dense oracle with GraphBLAS semantics."""
    monoid, mult = key
    add = {"plus": np.add, "min": np.fmin, "max": np.fmax}[monoid]
    mul = {"times": np.multiply, "first": lambda x, y: x, "second": lambda x, y: y}[mult]
    ident = {"plus": 0.0, "min": np.inf, "max": -np.inf}[monoid]
    sr = SEMIRINGS[f"{monoid}_{mult}"]
    rng = np.random.default_rng(5)
    n, k = 12, 9
    for dtype, least in routes.IN_PLACE[key].items():
        for m in sorted({1, least - 1, least} - {0}):
            a, b = rng.integers(1, 9, (n, k)).astype(float), rng.integers(1, 9, (k, m)).astype(float)
            ap = rng.random((n, k)) < 0.4
            ap[3] = False                                   # an empty row of A: missing in C
            want, present = _oracle(a, ap, b, np.ones((k, m), bool), add, mul, ident)
            r, c = np.nonzero(ap)
            A = gb.Matrix.from_coo(r, c, a[r, c].astype(dtype.np), nrows=n, ncols=k, dtype=dtype.gb)
            B = gb.Matrix.from_dense(b.astype(dtype.np), dtype=dtype.gb)
            taken: Counter = Counter()
            C = gbops.mxm(A, B, sr, dtype, taken=taken)
            assert taken == {("full-c" if m >= least else "new"): 1}, (dtype, m)
            got = np.full((n, m), np.nan)
            r, c, v = C.to_coo()
            got[r, c] = v
            assert (~np.isnan(got) == present).all()
            np.testing.assert_array_equal(got[present], want[present])   # (small integers: exact)


def test_a_masked_product_takes_the_masked_route_and_the_stats_say_so():
    L = dp.sparse("L", ("n", "n"))
    f = dp.function({"T": dp.mxm(L, dp.transpose(L), "plus_pair", mask=L)})
    rng = np.random.default_rng(1)
    a = sp.random_array((30, 30), density=0.2, random_state=rng, format="csr")
    f(L=a)
    assert f.last_stats["routes"] == {"masked": 1}


def test_stats_count_the_route_of_every_iteration():
    A, x0 = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    (x,), its = dp.while_loop(lambda x: dp.reduce_all(x) < 1e6, lambda x: ((A @ x) * 2.0,), (x0,), 50, count=True)
    f = dp.function({"x": x, "its": its})
    a = sp.random_array((20, 20), density=0.3, random_state=np.random.default_rng(2), format="csr") + sp.eye_array(20)
    out = f(A=a, x=np.ones((20, 1)))
    n_its = int(out["its"].to_numpy()[0, 0])
    assert f.last_stats["routes"] == {"new": n_its}   # one full column: the dot product (IN_PLACE)


def test_explain_lists_each_product_with_its_route():
    prog = parse("input A : sparse[n, n]\ninput x : dense[n, 1]\ny = A @ x\noutput y\n", "t.dspla")
    rows = local_routes(prog)
    assert [r["route"] for r in rows] == ["new"] and rows[0]["else"] is None and rows[0]["covered"] == "full-c"
    assert rows[0]["at"].startswith("t.dspla:3:")
    wide = local_routes(parse("input A : sparse[n, n]\ninput X : dense[n, k]\nY = A @ X\noutput Y\n", "w.dspla"))
    assert [(r["route"], r["else"], r["covered"]) for r in wide] == [("full-c", "new", None)]


# ----------------------------------------------------------- a sparse column read as a bitmap
def _sparse_column(n: int, rows, dtype=float):
    rows = np.asarray(rows, dtype=np.int64)
    return gb.Matrix.from_coo(rows, np.zeros(rows.size, np.int64), np.arange(1, rows.size + 1, dtype=float) / 7,
                              nrows=n, ncols=1, dtype=dtype)


def test_a_sparse_column_is_read_from_a_bitmap_copy_and_the_callers_matrix_is_untouched():
    rng = np.random.default_rng(3)
    n = 3000
    a = gb.io.from_scipy_sparse(sp.random_array((n, n), density=0.002, random_state=rng, format="csr"))
    b = _sparse_column(n, [5, 17, 2999])
    assert b.ss.format in ("csc", "hypercsc", "csr", "hypercsr")
    before = (b.ss.format, dict(b.ss.config))
    B = gbops.lookup_operand(a, b)
    assert B is not b and B.ss.format.startswith("bitmap") and B.isequal(b)
    assert (b.ss.format, dict(b.ss.config)) == before     # (a user's input may be this matrix)


def test_other_operands_are_left_to_suitesparse():
    n = 3000
    a = gb.io.from_scipy_sparse(sp.random_array((n, n), density=0.002, random_state=0, format="csr"))
    wide = gb.Matrix.from_coo([1, 7], [0, 1], [1.0, 2.0], nrows=n, ncols=2)
    full = gb.Matrix.from_dense(np.ones((n, 1)))
    assert gbops.lookup_operand(a, wide) is wide            # an n x K operand: its bitmap would be n x K
    assert gbops.lookup_operand(a, full) is full
    few = gb.Matrix.from_coo([0], [0], [1.0], nrows=10, ncols=n)   # 1 entry: the copy would cost more
    assert gbops.lookup_operand(few, _sparse_column(n, [3])).ss.format not in ("bitmapc", "bitmapr")


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("masked", [False, True])
def test_products_with_a_sparse_column_equal_the_oracle(name, masked):
    """BFS's and SSSP's shape: a matrix with more entries than rows times a column with a few
    entries (read from a bitmap copy), unmasked and under a complemented structural mask."""
    rng = np.random.default_rng(11)
    n = 400   # 3 entries of 400: below SuiteSparse's bitmap switch, so b is held sparse
    a, ap = rng.random((n, n)) + 0.5, rng.random((n, n)) < 0.02
    ap[4] = False
    b, bp = rng.random((n, 1)) + 0.5, np.zeros((n, 1), bool)
    bp[[3, 17, 341]] = True
    A, B = _matrix(a, ap), _matrix(b, bp)
    assert gbops.lookup_operand(A, B) is not B                # the case under test
    add, mult, ident = CASES[name]
    want, present = _oracle(a, ap, b, bp, add, mult, ident)
    seen = np.zeros((n, 1), bool)
    seen[rng.random(n) < 0.4] = True
    mask = None
    if masked:
        mask = gbops.mask_of(_matrix(np.ones((n, 1)), seen), "structure", True)
        present &= ~seen
    C = gbops.mxm(A, B, SEMIRINGS[name], F64, mask=mask)
    got = np.full((n, 1), np.nan)
    r, c, v = C.to_coo()
    got[r, c] = v
    assert (~np.isnan(got) == present).all()
    np.testing.assert_allclose(got[present], want[present], rtol=1e-12)
