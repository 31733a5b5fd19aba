"""Masked products C<M> = A ⊕.⊗ B (value or structural masks, complemented) and GraphBLAS's
update C<M, replace> accum= T, against the dense oracle: the product computed whole and then
masked there, by independent code. Every one also runs on P simulated processes."""
import numpy as np
import pytest

import dspla as dp

from . import oracle
from .gen import check, random_mat, seed_of, to_input
from harness import run_dist

SEMIRINGS = ["plus_times", "min_plus", "max_times", "lor_land", "any_pair", "plus_pair"]
MASKS = [("value", False), ("value", True), ("structure", False), ("structure", True)]


def _sr_dtype(sr):
    return "bool" if sr == "lor_land" else "int64"


@pytest.mark.parametrize("sr", SEMIRINGS)
@pytest.mark.parametrize("kind,complement", MASKS)
@pytest.mark.parametrize("b_kind", ["dense", "sparse"])
def test_masked_product(sr, kind, complement, b_kind):
    rng = np.random.default_rng(seed_of(repr(("masked", sr, kind, complement, b_kind))))
    dt = _sr_dtype(sr)
    A = random_mat(rng, (7, 6), dt)
    B = random_mat(rng, (6, 3), dt, "full" if b_kind == "dense" else "half")
    M = random_mat(rng, (7, 3), "int64")          # values 0 and others: a value mask drops the zeros
    a, b = dp.sparse("A", ("n", "k"), dt), dp.declare("B", b_kind, ("k", "f"), dt)
    m = dp.sparse("M", ("n", "f"), "int64")
    f = dp.function({"C": dp.mxm(a, b, sr, mask=m, complement=complement, structure=kind == "structure")})
    monoid, mult = sr.split("_", 1)
    want = oracle.mask(oracle.mxm(A, B, monoid, mult), M, complement=complement, structure=kind == "structure")
    inputs = {"A": to_input(A, "sparse"), "B": to_input(B, b_kind), "M": to_input(M, "sparse")}
    check(f(**inputs)["C"], want, f"C<{'~' if complement else ''}{kind}> = A {sr} B")
    check(f._reference(inputs)["C"], want, "reference executor")


@pytest.mark.parametrize("plan,P", [(p, P) for p in ("p2p1d", "allgather1d", "shift1d", "twoface") for P in (2, 3, 4)
                                    if p != "shift1d" or P % 2 == 0])   # shift1d: replication 2 divides P
@pytest.mark.parametrize("b_kind", ["dense", "sparse"])
def test_masked_product_distributed(plan, P, b_kind):
    rng = np.random.default_rng(seed_of(repr(("masked-dist", plan, P, b_kind))))
    A = random_mat(rng, (23, 23), "int64", "sparse")
    B = random_mat(rng, (23, 2), "int64", "full" if b_kind == "dense" else "half")
    M = random_mat(rng, (23, 2), "int64")
    a, b, m = dp.sparse("A", ("n", "n"), "int64"), dp.declare("B", b_kind, ("n", 2), "int64"), \
        dp.sparse("M", ("n", 2), "int64")
    f = dp.function({"C": dp.mxm(a, b, "min_plus", mask=m, complement=True, structure=True)})
    want = oracle.mask(oracle.mxm(A, B, "min", "plus"), M, complement=True, structure=True)
    got, stats = run_dist(f, {"A": to_input(A, "sparse"), "B": to_input(B, b_kind), "M": to_input(M, "sparse")}, P,
                          plan=plan, partition="random", replication=2, stripe_width=3)
    check(got["C"], want, f"{plan} P={P}")
    assert stats["products"][0]["plan"] == plan


@pytest.mark.parametrize("plan", ["15d", "2d"])
def test_plans_that_cannot_mask_say_so(plan):
    a, b, m = dp.sparse("A", ("n", "n")), dp.dense("B", ("n", 2)), dp.sparse("M", ("n", 2))
    f = dp.function({"C": dp.mxm(a, b, mask=m)})
    rng = np.random.default_rng(0)
    A, B, M = (random_mat(rng, s, "float64", d)
               for s, d in (((16, 16), "sparse"), ((16, 2), "full"), ((16, 2), "half")))
    text = f.explain(np=4, plan="auto", partition="random", A=to_input(A, "sparse"), B=to_input(B, "dense"),
                     M=to_input(M, "sparse"))
    assert f"{plan}" in text and "does not run masked products" in text


def _update_oracle(C, T, M, accum, kind, complement, replace):
    """GraphBLAS C<M, replace> accum= T, written out: Z = accum(C, T) on the union (T alone
    without accum); inside the mask the result is Z (an entry Z lacks is deleted), outside it C,
    or nothing with replace."""
    zv, zp = T.values.copy(), T.present.copy()
    if accum is not None:
        both = C.present & T.present
        zv = np.where(T.present, T.values, C.values)
        zv[both] = oracle.binop(accum, C.values[both], T.values[both], np.dtype("int64"))
        zp = C.present | T.present
    holds = np.ones(C.shape, bool) if M is None else (M.present if kind == "structure" else M.present & (M.values != 0))
    if M is not None and complement:
        holds = ~holds
    present = np.where(holds, zp, C.present & ~np.full(C.shape, replace))
    values = np.where(holds, zv, C.values)
    return oracle.Mat(values, present)


@pytest.mark.parametrize("accum", [None, "plus", "min"])
@pytest.mark.parametrize("kind,complement,replace", [(k, c, r) for k, c in MASKS for r in (False, True)]
                         + [(None, False, False)])   # without a mask nothing is outside it: no replace
def test_update(accum, kind, complement, replace):
    rng = np.random.default_rng(seed_of(repr(("update", accum, kind, complement, replace))))
    C, T, M = (random_mat(rng, (6, 4), "int64") for _ in range(3))
    c, t, m = (dp.sparse(nm, ("n", "f"), "int64") for nm in "CTM")
    f = dp.function({"R": dp.update(c, t, accum=accum, mask=m if kind else None, complement=complement,
                                    structure=kind == "structure", replace=replace)},
                    inputs=[c, t, m])
    want = _update_oracle(C, T, M if kind else None, accum, kind, complement, replace)
    inputs = {"C": to_input(C, "sparse"), "T": to_input(T, "sparse"), "M": to_input(M, "sparse")}
    check(f(**inputs)["R"], want, f"update accum={accum} mask={kind} complement={complement} replace={replace}")
    got, _ = run_dist(f, inputs, 3, partition="random")
    check(got["R"], want, "P=3")


@pytest.mark.parametrize("accum", [None, "plus"])
@pytest.mark.parametrize("kind,complement", MASKS + [(None, False)])
def test_update_with_a_scalar(accum, kind, complement):
    """A 1 x 1 T is GrB_assign's scalar: the oracle's T is that value at every position."""
    rng = np.random.default_rng(seed_of(repr(("update-scalar", accum, kind, complement))))
    C, M = (random_mat(rng, (6, 4), "int64") for _ in range(2))
    v = int(rng.integers(-5, 5))
    c, m = (dp.sparse(nm, ("n", "f"), "int64") for nm in "CM")
    t = dp.dense("t", (1, 1), "int64")
    f = dp.function({"R": dp.update(c, t, accum=accum, mask=m if kind else None, complement=complement,
                                    structure=kind == "structure")}, inputs=[c, t, m])
    T = oracle.mat(np.full(C.shape, v, dtype=np.int64))
    want = _update_oracle(C, T, M if kind else None, accum, kind, complement, False)
    inputs = {"C": to_input(C, "sparse"), "t": np.array([[v]], dtype=np.int64), "M": to_input(M, "sparse")}
    check(f(**inputs)["R"], want, f"update scalar accum={accum} mask={kind} complement={complement}")
    got, _ = run_dist(f, inputs, 3, partition="random")
    check(got["R"], want, "P=3")


@pytest.mark.parametrize("kind,complement", MASKS)
def test_update_in_a_loop_written_in_place(kind, complement):
    """A loop-carried C updated (in place: no later step reads it) three times, each with a
    scalar and with a T; the start (an input) is left as it was."""
    rng = np.random.default_rng(seed_of(repr(("update-loop", kind, complement))))
    C, T, M = (random_mat(rng, (6, 4), "int64") for _ in range(3))
    c, t, m = (dp.sparse(nm, ("n", "f"), "int64") for nm in "CTM")
    k0 = dp.dense("k", (1, 1), "int64")

    def body(x, k):
        x = dp.update(x, k, mask=m, complement=complement, structure=kind == "structure")
        return dp.update(x, t, accum="plus", mask=m, complement=complement, structure=kind == "structure"), k + 1

    (r, _), _ = dp.while_loop(lambda x, k: k < 3, body, (c, k0), 5, count=True)
    f = dp.function({"R": r}, inputs=[c, t, m, k0])
    want = C
    for k in range(3):
        want = _update_oracle(want, oracle.mat(np.full(C.shape, k, dtype=np.int64)), M, None, kind, complement, False)
        want = _update_oracle(want, T, M, "plus", kind, complement, False)
    inputs = {"C": to_input(C, "sparse"), "T": to_input(T, "sparse"), "M": to_input(M, "sparse"),
              "k": np.zeros((1, 1), dtype=np.int64)}
    start = inputs["C"].copy()
    for _ in range(2):
        check(f(**inputs)["R"], want, f"loop update mask={kind} complement={complement}")
        assert (inputs["C"] != start).nnz == 0
    got, _ = run_dist(f, inputs, 3, partition="random")
    check(got["R"], want, "P=3")
