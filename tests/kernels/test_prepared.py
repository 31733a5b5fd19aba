"""Prepared local steps (kernels/prepared.py): the element-wise ops, reductions and 1 x 1 arithmetic
a loop repeats run as one GraphBLAS C call, writing into the previous call's result once it is
free. Each case is called twice with fresh operands (the second writes into the first's memory)
and checked against the dense-numpy oracle of the golden tests; the runtime must have used the
prepared step, or, for the cases the table leaves to the evaluation rules, must still be right."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import dspla as dp
from tests.reference.golden import oracle
from tests.reference.golden.gen import check, random_mat, to_input

SHAPES = {"1x1": (1, 1), "col": (7, 1), "mat": (5, 4)}


def operand(name: str, shape, dt: str):
    """A value the runtime computes (not one planning evaluates once: that takes only sparse
    inputs): a dense input's values on a sparse input's pattern, so it may have missing entries."""
    decl = tuple(("n", "m")[k] if d > 1 else 1 for k, d in enumerate(shape))
    return dp.mask(dp.dense(name + "_v", decl, dt), dp.sparse(name + "_p", decl, "bool"), structure=True)


def feed(name: str, M) -> dict:
    """The inputs ``operand`` reads for the oracle matrix M."""
    vals = np.where(M.present, M.values, np.zeros((), M.values.dtype))
    return {name + "_v": vals, name + "_p": to_input(oracle.Mat(M.present.copy(), M.present.copy()), "sparse")}


def _twice(outputs: dict, draw, expect, prepared: bool = True, prepared_mask: bool = False):
    f = dp.function(outputs=outputs)
    rng = np.random.default_rng(0)
    for _ in range(2):
        mats = draw(rng)
        inputs = {k: v for name, M in mats.items() for k, v in feed(name, M).items()}
        out = f(**inputs)
        for k, e in expect(*mats.values()).items():
            check(out[k], e, k)
        del out
        gc.collect()
    by_op = dict(f.session().runtime.steps.by_op)
    if not prepared_mask:
        by_op.pop("mask", None)   # (operand's own mask)
    taken = sum(by_op.values())
    assert (taken > 0) == prepared, f"prepared steps taken: {by_op}"


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("dt", ("float64", "int64", "float32"))
@pytest.mark.parametrize("how", [("times", 2.5, "left"), ("minus", 1, "right"), ("minus", 1, "left"),
                                 ("max", 0, "right"), ("plus", 0.5, "right"), ("gt", 0, "right")], ids=str)
def test_apply_bind(how, dt, shape):
    op, s, side = how
    _twice({"Y": dp.apply(operand("X", SHAPES[shape], dt), op, **{side: s})},
           lambda rng: {"X": random_mat(rng, SHAPES[shape], dt, "half")},
           lambda M: {"Y": oracle.apply_bind(M, op, s, side)})


@pytest.mark.parametrize("dt", ("float64", "int64"))
@pytest.mark.parametrize("op", ("abs", "neg"))
def test_apply(op, dt):
    _twice({"Y": dp.apply(operand("X", (5, 4), dt), op)},
           lambda rng: {"X": random_mat(rng, (5, 4), dt, "half")}, lambda M: {"Y": oracle.apply(M, op)})


def _applies(op: str, dt: str) -> bool:
    try:
        oracle.binop_types(op, np.dtype(dt), np.dtype(dt))
        return True
    except oracle.OracleDomainError:   # (the golden tests check the refusal)
        return False


@pytest.mark.parametrize("op,union,dt,shape", [
    pytest.param(op, union, dt, shape, id=f"{op}-{'add' if union else 'mult'}-{dt}-{shape}")
    for op in ("plus", "minus", "times", "min", "lor", "gt", "second") for union in (True, False)
    for dt in ("float64", "int64", "bool") for shape in SHAPES if _applies(op, dt)])
def test_ewise_same_shape(op, union, dt, shape):
    sh = SHAPES[shape]
    fn = dp.ewise_add if union else dp.ewise_mult
    # lor computes in bool: a union of cast operands is left to the rule (a lone entry is cast
    # straight into the result's dtype by GraphBLAS, not through the compute dtype)
    by_rule = union and op == "lor" and dt != "bool" and shape != "1x1"
    _twice({"C": fn(operand("A", sh, dt), operand("B", sh, dt), op)},
           lambda rng: {"A": random_mat(rng, sh, dt, "half"), "B": random_mat(rng, sh, dt, "half")},
           lambda a, b: {"C": oracle.ewise(a, b, op, union)}, prepared=not by_rule)


def _union_oracle(a, b, op: str, left, right):
    """GxB_eWiseUnion in dense numpy: op(a, b) where both are present, op(a, right) where only a
    is, op(left, b) where only b is, missing elsewhere (the defaults in the compute dtype)."""
    compute, out = oracle.binop_types(op, a.dtype, b.dtype)
    av, bv = oracle.cast(a.values, compute), oracle.cast(b.values, compute)
    lv, rv = np.full(av.shape, left, compute), np.full(av.shape, right, compute)
    x, y = np.where(a.present, av, lv), np.where(b.present, bv, rv)
    vals = oracle.cast(oracle.binop(op, x, y, compute), out)
    return oracle.Mat(np.asarray(vals, out), a.present | b.present)


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("op,da,db,left,right", [("gt", "float64", "float64", 0.0, -1.0),
                                                 ("max", "int64", "int64", 2, 3),
                                                 ("minus", "float32", "float32", 1.5, -2.5),
                                                 ("first", "bool", "bool", True, False),
                                                 ("minus", "int64", "float64", 1, 2)], ids=str)
def test_ewise_union(op, da, db, left, right, shape):
    """One GxB_eWiseUnion with the defaults made once (operands of the operator's dtype); mixed
    dtypes take the evaluation rule."""
    sh = SHAPES[shape]
    _twice({"C": dp.ewise_union(operand("A", sh, da), operand("B", sh, db), op, left, right)},
           lambda rng: {"A": random_mat(rng, sh, da, "half"), "B": random_mat(rng, sh, db, "half")},
           lambda a, b: {"C": _union_oracle(a, b, op, left, right)}, prepared=da == db)


@pytest.mark.parametrize("side", ("left", "right"))
@pytest.mark.parametrize("dens", ("full", "half"))
@pytest.mark.parametrize("s_present", (True, False), ids=("s", "no-s"))
@pytest.mark.parametrize("union", (True, False), ids=("add", "mult"))
@pytest.mark.parametrize("op,dt", [("minus", "float64"), ("minus", "int64"), ("gt", "float64"), ("max", "int64")])
def test_ewise_with_a_1x1(op, dt, union, s_present, dens, side):
    """x ⊕ s with s 1 x 1: one bound apply; a union over a non-full x, whose missing positions
    take s alone, one union with an iso-valued full matrix of s (operands in their order). A
    union with a missing s is x, cast by the rule when the result's dtype differs (gt)."""
    X, S = operand("X", (5, 4), dt), operand("S", (1, 1), dt)
    fn = dp.ewise_add if union else dp.ewise_mult
    expr = fn(S, X, op) if side == "left" else fn(X, S, op)

    def expect(x, s):
        a, b = (s, x) if side == "left" else (x, s)
        return {"C": oracle.ewise(a, b, op, union)}
    _twice({"C": expr}, lambda rng: {"X": random_mat(rng, (5, 4), dt, dens),
                                     "S": random_mat(rng, (1, 1), dt, "full" if s_present else "empty")},
           expect, prepared=not (union and not s_present and op == "gt"))


@pytest.mark.parametrize("dens", ("half", "empty", "full"))
@pytest.mark.parametrize("dt,monoid", [("float64", "plus"), ("float64", "max"), ("int64", "plus"), ("int64", "min"),
                                       ("bool", "lor"), ("bool", "land"), ("float32", "times")])
def test_reduce_all(dt, monoid, dens):
    _twice({"r": dp.reduce_all(operand("X", (5, 4), dt), monoid)},
           lambda rng: {"X": random_mat(rng, (5, 4), dt, dens)}, lambda M: {"r": oracle.reduce(M, monoid, "all")})


@pytest.mark.parametrize("dens", ("half", "empty"))
def test_nvals(dens):
    _twice({"c": dp.nvals(operand("X", (5, 4), "float64"))},
           lambda rng: {"X": random_mat(rng, (5, 4), "float64", dens)}, lambda M: {"c": oracle.nvals(M)})


@pytest.mark.parametrize("complement", (False, True), ids=("mask", "complement"))
@pytest.mark.parametrize("structure", (False, True), ids=("value", "structure"))
@pytest.mark.parametrize("dt", ("float64", "int64", "bool"))
def test_mask(dt, structure, complement):
    """C<M, replace> = x as one assign, into the first call's result on the second."""
    _twice({"C": dp.mask(operand("X", (5, 4), dt), operand("M", (5, 4), "bool"), structure=structure,
                         complement=complement)},
           lambda rng: {"X": random_mat(rng, (5, 4), dt, "half"), "M": random_mat(rng, (5, 4), "bool", "half")},
           lambda x, m: {"C": oracle.mask(x, m, complement, structure)}, prepared_mask=True)


@pytest.mark.parametrize("thunk", ("number", "value"))
@pytest.mark.parametrize("op", ("<=", ">", "=="))
@pytest.mark.parametrize("dt", ("float64", "int64"))
def test_select_by_value(dt, op, thunk):
    """A value predicate against a number or a 1 x 1 value of x's dtype: one typed GrB_select."""
    k = 0.25 if dt == "float64" else 0
    x = operand("X", (5, 4), dt)
    if thunk == "number":
        expr, draw = dp.select(x, op, k), lambda rng: {"X": random_mat(rng, (5, 4), dt, "half")}
    else:
        t = dp.reduce_all(operand("T", (1, 1), dt), "max")   # (a value of the program, computed at run time)
        expr = dp.select(x, op, t)
        draw = lambda rng: {"X": random_mat(rng, (5, 4), dt, "half"), "T": oracle.mat(np.array([[k]], dt))}  # noqa: E731
    _twice({"C": expr}, draw, lambda x, *_: {"C": oracle.select(x, op, k)})


def test_a_loop_runs_on_prepared_steps_and_matches_numpy():
    """PageRank's element-wise chain in a loop: every iteration reuses the previous buffers."""
    rng = np.random.default_rng(3)
    n = 40
    a = (rng.random((n, n)) < 0.1).astype(float)
    a[5] = 0   # a dangling node
    A = dp.sparse("A", ("n", "n"))
    r0 = dp.dense("r0", ("n", 1))
    outdeg = dp.reduce_rows(A)

    def step(r, delta):
        w = r / outdeg
        dangling = dp.reduce_all(r) - dp.reduce_all(w * outdeg)
        new = 0.85 * (A.T @ w) + (0.85 * dangling + 0.15) / n
        return new, dp.reduce_all(dp.abs(new - r))
    (r, _), its = dp.while_loop(lambda r, d: d > 1e-12, step, (r0 / n, dp.reduce_all(r0)), 300, count=True)
    f = dp.function({"r": r, "its": its})
    import scipy.sparse as sp
    out = f(A=sp.csr_array(a), r0=np.ones((n, 1)))
    deg = a.sum(1)
    want = np.full(n, 1.0 / n)
    for _ in range(int(out["its"].to_numpy()[0, 0])):
        w = np.where(deg > 0, want / np.where(deg > 0, deg, 1), 0)
        dangling = want[deg == 0].sum()
        want = 0.85 * (a.T @ w) + (0.85 * dangling + 0.15) / n
    np.testing.assert_allclose(out["r"].to_numpy()[:, 0], want, rtol=1e-10)
    assert f.session().runtime.steps.taken > 5 * int(out["its"].to_numpy()[0, 0])
