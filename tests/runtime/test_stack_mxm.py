"""p2p1d on a vector with missing entries (PageRank's r / outdeg, a distance vector): one product
over the rank's own rows stacked with the arrived ones (StackMxM) instead of a local product
and the arrived rows' product accumulated into a bitmap. Same results as the dense numpy oracle
(GraphBLAS semantics) for every P, with messages cut into chunks, with a mask, and with a
semiring without an identity-free shortcut (min_plus); the plan really uses it, and only there."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession


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
        opts = Options(plan="p2p1d", partition="random", seed=1, message_bytes=message_bytes)
        s = DistSession(f.compiled, comm, opts)
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


def test_only_vectors_with_missing_entries_are_stacked(monkeypatch):
    monkeypatch.setenv("DSPLA_SHM", "0")   # (messages: ranks on several nodes)
    A, x, _ = _problem(0, k=3)        # several columns: the overlapping product stays
    f = _program("plus_times", False)
    assert all(ir.RecvMxM in _kinds(prog) and ir.StackMxM not in _kinds(prog) for _, prog in _run(f, A, x, 2))
    A_, x_ = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    full = dp.function({"y": A_ @ x_})   # a full vector: accumulated in place as before
    res = _run(full, A, np.ones((70, 1)), 2)
    assert all(ir.StackMxM not in _kinds(prog) for _, prog in res)


def test_on_one_node_full_rows_are_stacked_in_shared_memory():
    """Ranks sharing a node (simulated ranks do): full rows of a cache line or more (K = 8 and 12
    float64) are stacked where the senders write them (StackMxM, shared); narrower ones (K = 1,
    3) keep the overlapping product, as do rows with missing entries (presence)."""
    A, x, _ = _problem(0, k=12)
    A_, x_ = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", "k"))
    full = dp.function({"y": A_ @ x_})
    for k in (12, 8, 3, 1):
        X = x[:, :k]
        vals, pres = _oracle(A, X, np.ones(X.shape, bool), "plus_times")
        for y, prog in _run(full, A, X, 3):
            stacks = [i for i in prog.instrs if type(i) is ir.StackMxM]
            if k >= 8:
                assert ir.RecvMxM not in _kinds(prog) and len(stacks) == 1 and stacks[0].shared
            else:
                assert ir.RecvMxM in _kinds(prog) and not stacks
            r, c, v = y.to_coo()
            assert np.array_equal(np.isin(np.arange(70), r), pres[:, 0]) and np.array_equal(v, vals[r, c])
    missing = _program("plus_times", False)
    assert all(ir.RecvMxM in _kinds(prog) and ir.StackMxM not in _kinds(prog)
               for _, prog in _run(missing, A, x[:, :8], 2))


def _column(values, present):
    """An n x 1 matrix with values where present (SuiteSparse holds it as a bitmap or full)."""
    import graphblas as gb
    idx = np.nonzero(present)[0]
    M = gb.Vector.from_coo(idx, values[idx], size=len(values))._as_matrix().dup()
    M << M.apply(gb.unary.identity)
    return M


def _wire(values, present, with_presence):
    from dspla.ir.types import DType
    from dspla.kernels import buffers
    buf = buffers.recv_buffer(len(values), 1, DType.float64, with_presence)
    if with_presence:
        nb = len(values) * 8
        buf[:nb].view(np.float64)[:] = np.where(present, values, 0.0)
        buf[nb:] = present
    else:
        buf[:, 0] = values
    return buf


def _sparse_wire(values, present):
    """A sparse Recv's buffer as PackSparse makes it: the count, then positions, then values."""
    import graphblas as gb

    from dspla.ir.types import DType
    from dspla.kernels import buffers
    rows = np.arange(len(values))
    M = gb.Matrix.from_coo(rows[present], np.zeros(int(present.sum()), np.int64), values[present],
                           nrows=len(values), ncols=1)
    return buffers.pack_sparse_rows(M, rows, DType.float64)


def test_stack_column_writes_own_then_arrived_rows_into_the_last_stack():
    """The stacked column equals own's rows then each message's (values where present), also
    when a later stack writes into the matrix the previous one returned (nothing stale stays),
    for dense messages with and without presence, sparse ones (present entries only, as a BFS
    frontier's), and own held full, as a bitmap or sparse."""
    from dspla.ir.types import DType
    from dspla.kernels import buffers
    rng = np.random.default_rng(3)
    last = None
    for round_ in range(6):
        own_v, own_p = rng.random(9), rng.random(9) < (0.6 if round_ != 1 else 1.1)   # round 1: own full
        m1_v, m1_p = rng.random(4), rng.random(4) < (0.5 if round_ != 2 else 1.1)     # round 2: m1 full
        m2_v = rng.random(3)                                   # a message without presence: all present
        m3_v, m3_p = rng.random(5), rng.random(5) < (0.4 if round_ != 4 else -1)      # round 4: no entries
        own = _column(own_v, own_p)
        if round_ in (3, 5):   # own held sparse (its entries' rows): how SuiteSparse holds a small frontier
            own.ss.config["sparsity_control"] = ["sparse"]
            assert own.ss.format in ("csc", "csr")
        B = buffers.stack_column(own, [(_wire(m1_v, m1_p, True), 4, True, False),
                                       (_wire(m2_v, None, False), 3, False, False),
                                       (_sparse_wire(m3_v, m3_p), 5, False, True)], DType.float64, last)
        assert last is None or B is last   # written where it lies
        want_p = np.concatenate([own_p, m1_p, np.ones(3, bool), m3_p])
        want_v = np.concatenate([own_v, m1_v, m2_v, m3_v])
        idx, vals = B[:, 0].new().to_coo()
        assert B.shape == (21, 1) and B.nvals == want_p.sum() and np.array_equal(idx, np.nonzero(want_p)[0])
        assert np.array_equal(vals, want_v[want_p])
        assert np.array_equal(own[:, 0].new().to_coo()[0], np.nonzero(own_p)[0])   # own is left as it was
        last = B


def test_stack_column_declines_what_it_cannot_stack_and_stacks_an_iso_column():
    import graphblas as gb

    from dspla.ir.types import DType
    from dspla.kernels import buffers
    iso = gb.Matrix.from_coo([0, 2], [0, 0], 1.0, nrows=5, ncols=1)   # an iso-valued column: its entries
    assert buffers.stack_column(iso, [], DType.float64).isequal(iso)
    wide = gb.Matrix.from_dense(np.ones((3, 2)))
    assert buffers.stack_column(wide, [], DType.float64) is None
    ints = _column(np.arange(5), np.ones(5, bool))
    assert buffers.stack_column(ints, [], DType.float64) is None   # another dtype


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("semiring", ["plus_times", "min_plus"])
@pytest.mark.parametrize("mask", [None, "complement"])
def test_a_sparse_vector_is_stacked_from_its_present_entries(P, semiring, mask):
    """A sparse right operand (a BFS frontier): its present entries arrive (count, then entries)
    and are stacked with the rank's own into one bitmap for one product (no RecvMxM), under a
    complemented structural mask as BFS's; equal to the dense oracle for every P. Also with no
    entries at all, and a process whose own rows hold none."""
    A, x, present = _problem(10 + P)
    A_, s_, seen_ = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1)), dp.sparse("seen", ("n", 1))
    y = dp.mxm(A_, s_, semiring, mask=seen_, complement=True, structure=True) if mask else dp.mxm(A_, s_, semiring)
    f = dp.function({"y": y})
    rng = np.random.default_rng(P)
    seen = rng.random((70, 1)) < 0.3
    for pres in (present, np.zeros_like(present), np.arange(70)[:, None] >= 60):
        s = sp.csr_array((x[pres], (np.nonzero(pres)[0], np.zeros(int(pres.sum()), int))), shape=(70, 1))

        def body(comm):
            sess = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=1))
            inputs = {"A": A, "s": s, **({"seen": sp.csr_array(seen.astype(float))} if mask else {})}
            out = sess.run(inputs if comm.rank == 0 else None, repeat=2)
            return out["y"].to_graphblas(), sess.runtime.program
        res = run_simulated(P, body, timeout=120)
        vals, want = _oracle(A, x, pres, semiring)
        if mask:
            want &= ~seen
        r, c, v = res[0][0].to_coo()
        got = np.zeros(want.shape, bool)
        got[r, c] = True
        assert np.array_equal(got, want)
        assert np.array_equal(v, vals[r, c])
        for _, prog in res:
            assert ir.StackMxM in _kinds(prog) and ir.RecvMxM not in _kinds(prog)
            assert all(i.sparse for i in prog.instrs if type(i) is ir.Recv)
