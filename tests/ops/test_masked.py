"""mask(X ⊕ Y, M) folded by simplify into one element-wise op computed inside the mask
(ops/masked.py): the same values as dense numpy's union/intersection then mask (tests/ops/gbsem.py),
for both element-wise ops, value and structure masks, complemented or not, several dtypes, the
reference executor and P = 1..4; left alone where the element-wise result is read elsewhere too
or broadcasts."""
import numpy as np
import pytest
from gbsem import check, masked, rand, rng_for, run, to_sparse

import dspla as dp
from dspla.ir import Op
from dspla.passes import simplify


def _ewise(x, y, op, union):
    (xv, xp), (yv, yp) = x, y
    both = xp & yp
    if union:
        vals = np.where(both, op(xv, yv), np.where(xp, xv, yv))
        return vals.astype(xv.dtype), xp | yp
    return np.where(both, op(xv, yv), 0).astype(xv.dtype), both


def _ops(program):
    return [n.op for n in program.toposort()]


@pytest.mark.parametrize("P", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8"])
def test_folded_mask_equals_the_two_steps(dtype, P):
    rng = rng_for("masked", dtype, P)
    x, y, m = (rand(rng, (13, 6), dtype, density=0.6) for _ in range(3))
    X, Y, M = (dp.sparse(k, ("n", 6), dtype) for k in "XYM")
    outs, want = {}, {}
    for union, fn in ((True, dp.ewise_add), (False, dp.ewise_mult)):
        for structure in (True, False):
            for complement in (True, False):
                k = f"{'add' if union else 'mult'}_{structure}_{complement}"
                outs[k] = dp.mask(fn(X, Y, "max"), M, structure=structure, complement=complement)
                want[k] = masked(_ewise(x, y, np.maximum, union), (np.zeros_like(x[0]), np.zeros_like(x[1])), m,
                                 complement=complement, structure=structure)
    f = dp.function(outs)
    assert Op.MASK not in _ops(f.compiled.program) and Op("masked") in _ops(f.compiled.program)
    got = run(f, {"X": to_sparse(x), "Y": to_sparse(y), "M": to_sparse(m)}, P)
    for k in outs:
        check(got[k], want[k], k)


def test_left_alone_when_the_result_is_read_twice_or_broadcasts():
    X, Y, M = (dp.sparse(k, ("n", "n")) for k in "XYM")
    s = X * Y
    shared = simplify(dp.function({"a": dp.mask(s, M), "b": s}).compiled.program)
    assert Op.MASK in _ops(shared) and Op("masked") not in _ops(shared)
    v = dp.dense("v", ("n", 1))
    broad = simplify(dp.function({"a": dp.mask(X * v, M)}).compiled.program)
    assert Op.MASK in _ops(broad) and Op("masked") not in _ops(broad)
