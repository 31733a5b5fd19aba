"""A right operand full wherever the product reads it (plan/facts.py: ``over``, ``covers``).
PageRank's r / outdeg misses the dangling nodes, whose columns of Aᵀ are empty: p2p1d then
sends its rows as values only (no presence byte) and stacks them with the rank's own into one
full column. Where the product does read a missing row, the presence byte stays. Checked
against dense numpy with GraphBLAS semantics (a missing entry is not a zero) for every P, with
SPMD and rank-0 planning."""
from __future__ import annotations

import gc

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.plan import facts
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession

from harness import check_present as check
from harness import product_oracle as oracle

N = 60


def graph(seed: int, dangling=(2, 7, 31), sinks_read: bool = True) -> sp.csr_array:
    """A random directed graph whose ``dangling`` nodes have no out-edges (empty rows). With
    ``sinks_read`` they still have in-edges (so A's columns there are not empty)."""
    rng = np.random.default_rng(seed)
    A = sp.random_array((N, N), density=0.08, rng=rng, format="lil")
    for d in dangling:
        A[d, :] = 0
        if sinks_read:
            A[(d + 1) % N, d] = 1.0
    A = sp.csr_array(A)
    A.eliminate_zeros()
    A.data[:] = rng.integers(1, 9, A.nnz)
    return A


def run(f, inputs: dict, P: int, spmd: bool):
    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=3, spmd=spmd))
        out = s.run(inputs if comm.rank == 0 else None, repeat=2)
        return out["y"].to_numpy(fill=np.nan), s.runtime.program
    return run_simulated(P, body, timeout=120)


def recvs(res) -> list:
    return [i for _, prog in res for i in prog.instrs if type(i) is ir.Recv]


def kinds(res) -> set:
    return {type(i) for _, prog in res for i in prog.instrs}


# ------------------------------------------------------------------------------ the proof
def test_covers_reads_the_columns_against_the_full_rows():
    """covers(S, [Z]): every column of S with an entry is a row of Z with all its entries."""
    S = gb.Matrix.from_coo([0, 1, 2], [0, 0, 2], 1.0, nrows=3, ncols=4)    # reads columns 0 and 2
    Z = gb.Matrix.from_coo([0, 0, 2, 2, 3], [0, 1, 0, 1, 0], 1.0, nrows=4, ncols=2)
    assert facts.covers(S, [Z])                       # rows 0 and 2 full (1 missing, 3 half)
    assert not facts.covers(S, [Z[[0, 1, 3, 2], :].new()])   # row 2 is now row 3's: half full
    S2 = gb.Matrix.from_coo([0], [3], 1.0, nrows=3, ncols=4)
    assert not facts.covers(S2, [Z])                  # column 3 read, row 3 of Z half full
    assert facts.covers(S, [Z, Z[:, [0]].new()]) and not facts.covers(S, [Z, gb.Matrix(float, 3, 1)])
    assert np.array_equal(facts.full_rows(Z).to_coo()[0], [0, 2])


def test_over_follows_the_ops():
    """The bound of an intersection is both operands', of a union the tighter one's; a product
    or a select bounds nothing; a row reduction keeps its operand's."""
    a, b = facts.Facts(False, over=frozenset({1})), facts.Facts(False, over=frozenset({2}))
    x = dp.dense("x", ("n", 1))
    mult, add = dp.ewise_mult(x, x, "times").node, dp.ewise_add(x, x, "plus").node
    assert facts.FACTS[mult.op](mult, [a, b]).over == {1, 2}
    assert facts.FACTS[add.op](add, [a, b]).over in ({1}, {2})
    assert facts.FACTS[add.op](add, [a, facts.NOTHING]).over == {1}
    assert facts.FACTS[mult.op](mult, [a, facts.NOTHING]).over is None
    assert facts.Facts(True, over=frozenset({5})).over == frozenset()   # full: nothing bounds it


def test_a_union_is_full_where_an_operand_is():
    """ewise_union holds an entry wherever either operand does (eWiseAdd's pattern): a union
    with a full value is full, so a later subtraction needs no negated copy of its right side."""
    x, y = dp.dense("x", ("n", 1)), dp.sparse("y", ("n", 1))
    u = dp.ewise_union(y, x, "plus", 0, 0).node
    assert facts.FACTS[u.op](u, [facts.NOTHING, facts.Facts(True)]).full
    assert not facts.FACTS[u.op](u, [facts.NOTHING, facts.Facts(False, rows=True)]).full
    A = dp.sparse("A", ("n", "n"))
    s = dp.reduce_all(y)                      # missing when y has no entry
    new = A @ x + dp.ewise_union(s, dp.reduce_all(x), "plus", 0, 0)
    f = dp.function({"d": new - x}, inputs=[A, x, y])
    Av = sp.random_array((N, N), density=0.1, format="csr", random_state=3)
    xv = np.arange(1.0, N + 1.0).reshape(N, 1)
    for yv, extra in ((sp.csr_array((N, 1)), 0.0), (sp.csr_array(([2.5], ([4], [0])), shape=(N, 1)), 2.5)):
        got = f(A=Av, x=xv, y=yv)["d"].to_numpy()
        want = np.where(Av.toarray() != 0, Av.toarray(), 0) @ xv + (extra + xv.sum()) - xv
        np.testing.assert_allclose(got, want, rtol=1e-13)
    steps = [i.node for i in f.plan(1, {"A": Av, "x": xv, "y": yv}).plan.programs[0].instrs if hasattr(i, "node")]
    assert not any(n.op is dp.ir.Op.APPLY for n in steps)   # (x - y as x + (-y): y's negation)


# ------------------------------------------------------------------ the plan and the results
def pagerank_step():
    """y = Aᵀ ⊕.⊗ (x / reduce_rows(A)), as PageRank's product."""
    A, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    return A, x, x / dp.reduce_rows(A)


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("spmd", [True, False], ids=["spmd", "rank0"])
@pytest.mark.parametrize("semiring", ["plus_times", "min_plus"])
def test_a_vector_full_where_read_moves_values_only(P, spmd, semiring):
    A_, x_, w_ = pagerank_step()
    f = dp.function({"y": dp.mxm(A_.T, w_, semiring)})
    A = graph(P)
    x = np.random.default_rng(P).integers(1, 9, (N, 1)).astype(float)
    res = run(f, {"A": A, "x": x}, P, spmd)
    deg = A.toarray().sum(axis=1)
    present = (deg > 0)[:, None]
    w = np.where(present, x / np.where(present[:, 0], deg, 1)[:, None], np.nan)
    vals, pres = oracle(A.toarray().T, w, present, semiring)
    for got, _ in res:
        check(got, vals, pres)
    rv = recvs(res)
    assert rv and not any(r.presence or r.sparse for r in rv)       # values only
    assert ir.StackMxM in kinds(res) and ir.RecvMxM not in kinds(res)


@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("spmd", [True, False], ids=["spmd", "rank0"])
def test_a_missing_row_the_product_reads_keeps_its_presence(P, spmd):
    """A (not Aᵀ) reads the dangling nodes' rows of x / outdeg (they have in-edges): presence
    travels, and the missing entries take no part."""
    A_, x_, w_ = pagerank_step()
    f = dp.function({"y": A_ @ w_})
    A = graph(10 + P)
    x = np.random.default_rng(P).integers(1, 9, (N, 1)).astype(float)
    res = run(f, {"A": A, "x": x}, P, spmd)
    deg = A.toarray().sum(axis=1)
    present = (deg > 0)[:, None]
    w = np.where(present, x / np.where(present[:, 0], deg, 1)[:, None], 0.0)
    vals, pres = oracle(A.toarray(), w, present, "plus_times")
    for got, _ in res:
        check(got, vals, pres)
    rv = recvs(res)
    assert rv and all(r.presence for r in rv)


@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("spmd", [True, False], ids=["spmd", "rank0"])
@pytest.mark.parametrize("transposed", [True, False], ids=["AT", "A"])
def test_a_block_bounded_by_a_broadcast_vector(P, spmd, transposed):
    """K = 3: W = X / outdeg, the n x 1 out-degrees broadcast along X's columns, bounds W's
    rows as it bounds x / outdeg's: Aᵀ reads only full rows (values only, accumulated in place
    into a full output, not stacked), A the dangling ones too (presence)."""
    A_, X_ = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 3))
    S_ = A_.T if transposed else A_
    f = dp.function({"y": S_ @ (X_ / dp.reduce_rows(A_))})
    A = graph(20 + P)
    X = np.random.default_rng(P).integers(1, 9, (N, 3)).astype(float)
    res = run(f, {"A": A, "X": X}, P, spmd)
    deg = A.toarray().sum(axis=1)
    present = np.repeat((deg > 0)[:, None], 3, axis=1)
    W = np.where(present, X / np.where(deg > 0, deg, 1)[:, None], 0.0)
    S = A.toarray().T if transposed else A.toarray()
    vals, pres = oracle(S, W, present, "plus_times")
    for got, _ in res:
        check(got, vals, pres)
    rv = recvs(res)
    assert rv and all(r.presence != transposed and not r.sparse for r in rv)
    assert ir.StackMxM not in kinds(res)   # several columns: the overlapping product stays
    assert (ir.Fill in kinds(res)) == transposed   # in place into a full output


# ------------------------------------------------------------------ the runtime's two copies
def _held(values: np.ndarray, present: np.ndarray, fmt: str) -> gb.Matrix:
    idx = np.flatnonzero(present)
    M = gb.Matrix.from_coo(idx, np.zeros(idx.size, np.int64), values[idx], nrows=len(values), ncols=1)
    M.ss.config["sparsity_control"] = [fmt]
    assert M.ss.format.startswith(fmt if fmt != "sparse" else ("csr", "csc", "coo"))
    return M


@pytest.mark.parametrize("fmt", ["full", "bitmap", "sparse"])
def test_values_only_pack_and_stack_read_the_present_rows(fmt):
    """pack_rows without presence on a column with missing entries sends the rows asked for
    (all present); stack_values puts own's values then each message's into one full column,
    also when written into the last stack again; own is left as it was."""
    from dspla.ir.types import DType
    from dspla.kernels import buffers
    rng = np.random.default_rng(7)
    last = None
    for _ in range(3):
        v = rng.random(12)
        present = np.ones(12, bool) if fmt == "full" else rng.random(12) < 0.6
        present[[1, 4, 9]] = True
        own = _held(v, present, fmt)
        packed = buffers.pack_rows(own, np.array([9, 1, 4]), DType.float64, False)
        assert np.array_equal(np.asarray(packed).reshape(-1), v[[9, 1, 4]])
        again = buffers.pack_rows(own, np.array([4, 9, 1]), DType.float64, False, out=packed)
        assert again is packed and np.array_equal(again.reshape(-1), v[[4, 9, 1]])   # written where it lies
        m1, m2 = rng.random(3), rng.random(2)
        B = buffers.stack_values(own, [(m1.reshape(3, 1), 3), (m2.reshape(2, 1), 2)], DType.float64, last)
        assert last is None or B is last
        assert B.shape == (17, 1) and B.nvals == 17
        got = B[:, 0].new().to_dense()
        assert np.array_equal(got[:12][present], v[present]) and np.array_equal(got[12:], np.r_[m1, m2])
        assert own.nvals == present.sum()
        last = B


def _times(x, y):
    return x * y


@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("semiring", ["plus_times", "user"])
def test_the_stacked_product_writes_into_its_last_output_only_when_dropped(P, semiring):
    """StackMxM's output is written into on the next call once nothing holds it; results the
    caller keeps (as distributed values) stay as they were. The stacked column is full but
    covered (its own missing rows filled), so plus_times at K = 1 takes the covered case's
    route (kernels/routes.py), and a user's semiring its compiled kernel, both into a full output."""
    A_, x_, w_ = pagerank_step()
    sr = "plus_times" if semiring == "plus_times" else \
        dp.semiring.define("covered_plus_times", monoid="plus", op=_times)
    f = dp.function({"y": dp.mxm(A_.T, w_, sr)})
    A = graph(30 + P)
    xs = [np.random.default_rng(s).integers(1, 9, (N, 1)).astype(float) for s in range(3)]
    deg = A.toarray().sum(axis=1)
    present = (deg > 0)[:, None]

    def want(x):
        w = np.where(present, x / np.where(present[:, 0], deg, 1)[:, None], np.nan)
        return oracle(A.toarray().T, w, present, "plus_times")

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=3))
        kept = [s.run({"A": A, "x": x} if comm.rank == 0 else None)["y"] for x in xs]   # all held
        last, same = None, 0
        for x in xs * 2:                                                                # dropped at once
            y = s.run({"A": A, "x": x} if comm.rank == 0 else None)["y"]
            same += id(y._piece) == last       # (the pool holds the last one: its id is not reused)
            last = id(y._piece)
            check(y.to_numpy(fill=np.nan), *want(x))
            del y
            gc.collect()
        assert ir.StackMxM in {type(i) for i in s.runtime.program.instrs}
        return [k.to_numpy(fill=np.nan) for k in kept], same, set(s.runtime.routes)
    for kept, same, taken in run_simulated(P, body, timeout=120):
        assert taken == {"full-c" if semiring == "plus_times" else "udf-full"}
        assert same == 2 * len(xs) - 1   # every later call wrote into the one before's output
        for got, x in zip(kept, xs):
            check(got, *want(x))


@pytest.mark.parametrize("transposed", [True, False], ids=["AT", "A"])
@pytest.mark.parametrize("semiring", ["plus_times", "min_plus"])
def test_one_process_takes_the_full_output_route_when_covered(transposed, semiring):
    """One process: Aᵀ ⊕.⊗ (x / outdeg) accumulates into an output started full at the identity
    (route full-c, A's empty rows made missing after), where A ⊕.⊗ (x / outdeg), which reads
    missing rows, takes GraphBLAS's own product (new); both equal the dense oracle, also for a
    node nothing points to (its output row is missing). min_plus is not one of the semirings
    accumulated in place (kernels/routes.py IN_PLACE): new either way."""
    A_, x_, w_ = pagerank_step()
    f = dp.function({"y": dp.mxm(A_.T if transposed else A_, w_, semiring)})
    A = graph(40).tolil()
    A[:, 5] = 0           # nothing points to node 5: row 5 of Aᵀ is empty
    A = sp.csr_array(A)
    A.eliminate_zeros()
    x = np.random.default_rng(1).integers(1, 9, (N, 1)).astype(float)
    deg = A.toarray().sum(axis=1)
    present = (deg > 0)[:, None]
    w = np.where(present, x / np.where(present[:, 0], deg, 1)[:, None], 0.0)
    vals, pres = oracle(A.toarray().T if transposed else A.toarray(), w, present, semiring)
    for _ in range(2):   # (the second call writes into the first's output)
        check(f(A=A, x=x)["y"].to_numpy(fill=np.nan), vals, pres)
        assert f.last_stats["routes"] == {"full-c" if transposed and semiring == "plus_times" else "new": 1}
    assert not pres[5 if transposed else 2].any()
