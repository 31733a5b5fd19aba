"""p2p1d on a vector with missing entries (PageRank's r / outdeg, a distance vector): one product
over the rank's own rows stacked with the arrived ones (StackMxM) instead of a local product
and the arrived rows' product accumulated into a bitmap. Same results as the dense numpy oracle
(GraphBLAS semantics) for every P, with messages cut into chunks, with a mask, and with a
semiring without an identity-free shortcut (min_plus); the plan really uses it, and only there."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.plan import ir
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.runtime.session import DistSession


def _problem(seed: int, k: int = 1):
    rng = np.random.default_rng(seed)
    A = sp.random_array((70, 70), density=0.1, random_state=rng, format="csr").tolil()
    A[4, :] = 0                      # an empty row: its output is missing
    A = A.tocsr()
    A.data[:] = rng.integers(1, 9, A.nnz)
    x = rng.integers(-4, 9, (70, k)).astype(float)
    return A, x, x > 0                # select(x, ">", 0): missing where not positive


def _oracle(A, x, present, semiring):
    Ad, Ap = A.toarray(), A.toarray() != 0
    pres = (Ap.astype(int) @ present.astype(int)) > 0
    if semiring == "plus_times":
        vals = Ad @ np.where(present, x, 0.0)
    else:   # min_plus: the least A[i, j] + x[j] over present pairs
        s = np.where(Ap[:, :, None] & present[None, :, :], Ad[:, :, None] + x[None, :, :], np.inf)
        vals = s.min(axis=1)
    return vals, pres


def _program(semiring: str, masked: bool):
    A_, x_ = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", "k"))
    v = dp.select(x_, ">", 0)
    y = dp.mxm(A_, v, semiring, mask=v) if masked else dp.mxm(A_, v, semiring)
    return dp.function({"y": y})


def _run(f, A, x, P, message_bytes=1 << 20):
    def body(comm):
        s = DistSession(f, comm, Options(plan="p2p1d", partition="random", seed=1, message_bytes=message_bytes))
        out = s.run({"A": A, "x": x} if comm.rank == 0 else None, repeat=2)
        return out["y"].to_graphblas(), s.runtime.program
    return run_simulated(P, body, timeout=120)


def _kinds(prog):
    return {type(i) for i in prog.instrs}


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("semiring", ["plus_times", "min_plus"])
@pytest.mark.parametrize("masked", [False, True], ids=["", "masked"])
@pytest.mark.parametrize("chunks", [False, True], ids=["whole", "chunked"])
def test_stacked_product_equals_the_oracle(P, semiring, masked, chunks):
    A, x, present = _problem(P)
    res = _run(_program(semiring, masked), A, x, P, message_bytes=3 * 9 if chunks else 1 << 20)
    y = res[0][0]
    vals, pres = _oracle(A, x, present, semiring)
    if masked:
        pres &= present
    r, c, v = y.to_coo()
    got = np.zeros(pres.shape, bool)
    got[r, c] = True
    assert np.array_equal(got, pres)
    assert np.array_equal(v, vals[r, c])
    assert all(ir.StackMxM in _kinds(prog) and ir.RecvMxM not in _kinds(prog) for _, prog in res)


def test_only_vectors_with_missing_entries_are_stacked():
    A, x, _ = _problem(0, k=3)        # several columns: the overlapping product stays
    f = _program("plus_times", False)
    assert all(ir.RecvMxM in _kinds(prog) and ir.StackMxM not in _kinds(prog) for _, prog in _run(f, A, x, 2))
    A_, x_ = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    full = dp.function({"y": A_ @ x_})   # a full vector: accumulated in place as before
    res = _run(full, A, np.ones((70, 1)), 2)
    assert all(ir.StackMxM not in _kinds(prog) for _, prog in res)
