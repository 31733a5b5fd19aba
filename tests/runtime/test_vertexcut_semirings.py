"""vertexcut on any semiring whose multiply leaves a value unchanged for some u (u ⊗ x = x: its
identity, or any u for second): the partial rows summed at their owners by a product with a
selection of u. Results equal one process's, exactly (integer data), with missing entries where
no term exists; a multiply without one (first, pair) is refused with the reason."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DsplaError

from harness import assert_same, run_dist

SEMIRINGS = ["plus_times", "plus_second", "min_plus", "lor_land", "max_min", "min_times"]


def _case(sr, seed):
    rng = np.random.default_rng(seed)
    A = sp.random_array((40, 40), density=0.1, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    A = (A + A.T).tolil()
    A[5, :] = 0                                   # a row with no term: missing in every output
    A = sp.csr_array(A)
    A.eliminate_zeros()
    X = rng.integers(-5, 9, (40, 3)).astype(float)
    dtype = "bool" if sr == "lor_land" else "float64"
    if sr == "lor_land":
        A, X = sp.csr_array(A, dtype=bool), X > 0
    a, x = dp.sparse("A", ("n", "n"), dtype=dtype), dp.dense("X", ("n", "k"), dtype=dtype)
    f = dp.function(outputs={"C": dp.mxm(a, x, sr)})
    return f, A, X


@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("sr", SEMIRINGS)
def test_vertexcut_equals_one_process(sr, P):
    f, A, X = _case(sr, P + len(sr))
    got, _ = run_dist(f, {"A": A, "X": X}, P, plan="vertexcut", partition="spac", seed=1)
    assert_same(got, f(A=A, X=X), exact=True)


def test_a_multiply_without_a_unit_is_refused():
    f, A, X = _case("plus_first", 3)
    with pytest.raises(DsplaError, match="needs a multiply with an identity.*'first'"):
        run_dist(f, {"A": A, "X": X}, 2, plan="vertexcut", partition="spac", seed=1)
