"""p2p1d with rows cut into messages of at most ``message_bytes``, a window of two of them posted
at a time: the same results as one process (dense numpy oracle, GraphBLAS semantics), the same
words as the uncut plan and the analysis layer, one message per chunk, and deferred receives
that really are posted late."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.analysis import comm_plan, comm_stats
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession


def _problem(seed: int, missing: bool):
    rng = np.random.default_rng(seed)
    A = sp.random_array((60, 60), density=0.15, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    X = rng.integers(-4, 9, (60, 5)).astype(float)
    present = X > 0 if missing else np.ones(X.shape, bool)   # select(X, ">", 0) in the program
    return A, X, present


def _oracle(A, X, present):
    """plus_times with GraphBLAS semantics: C[i,k] is present iff some A[i,j] and X[j,k] are."""
    Ad, Ap = A.toarray(), A.toarray() != 0
    vals = Ad @ np.where(present, X, 0.0)
    pres = (Ap.astype(int) @ present.astype(int)) > 0
    return vals, pres


def _run(A, X, P: int, message_bytes: int, missing: bool = False):
    A_ = dp.sparse("A", ("n", "n"))
    X_ = dp.dense("X", ("n", "k"))
    f = dp.function({"C": A_ @ (dp.select(X_, ">", 0) if missing else X_)})

    def body(comm):
        opts = Options(plan="p2p1d", partition="random", seed=3, message_bytes=message_bytes)
        s = DistSession(f.compiled, comm, opts)
        out = s.run({"A": A, "X": X} if comm.rank == 0 else None, repeat=2)
        whole = out["C"].to_graphblas()
        return whole, s.plan, s.last_stats, s.runtime.program
    return run_simulated(P, body, timeout=120)   # per rank


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("missing", [False, True], ids=["full", "missing"])
@pytest.mark.parametrize("shm", ["1", "0"], ids=["one-node", "messages"])
def test_chunked_rows_give_the_reference_result(P, missing, shm, monkeypatch):
    # (on one node each chunk has its region of shared memory; else each is a message)
    monkeypatch.setenv("DSPLA_SHM", shm)
    A, X, present = _problem(P, missing)
    # 3 rows a message (5 values of 8 bytes, plus a presence byte each when X may miss entries)
    row = 5 * (8 + (1 if missing else 0))
    results = _run(A, X, P, message_bytes=3 * row, missing=missing)
    C = results[0][0]
    vals, pres = _oracle(A, X, present)
    r, c, v = C.to_coo()
    got_pres = np.zeros(pres.shape, bool)
    got_pres[r, c] = True
    assert np.array_equal(got_pres, pres)
    assert np.array_equal(v, vals[r, c])


def test_chunks_move_the_same_words_in_one_message_each():
    P = 3
    A, X, present = _problem(7, False)
    per = 3
    cut = _run(A, X, P, message_bytes=per * 5 * 8)[0]
    whole = _run(A, X, P, message_bytes=1 << 30)[0]
    _, plan_cut, stats_cut, _ = cut
    _, plan_whole, stats_whole, _ = whole
    parts = plan_cut.dims["n"].parts
    want = comm_stats(A, parts, P, b_parts=parts)
    # the same words as the uncut plan and the analysis layer's independent count
    assert stats_cut["words_sent_total"] == stats_whole["words_sent_total"] == want.volume_total * 5
    assert stats_whole["messages_sent_total"] == want.messages_total
    # one message per chunk of each pair's rows: ceil(rows / per), independently of the plan
    cp = comm_plan(A, parts, P, b_parts=parts)
    chunks = sum(-(-lst.size // per) for r in range(P) for lst in cp.receives(r).values())
    assert chunks > want.messages_total
    assert stats_cut["messages_sent_total"] == sum(r["messages_received"] for r in stats_cut["per_rank"]) == chunks
    assert plan_cut.products[0].predicted["messages"] == chunks


def test_receives_past_the_window_are_deferred_and_the_rest_posted_at_once(monkeypatch):
    monkeypatch.setenv("DSPLA_SHM", "0")   # (messages: the window is theirs)
    from dspla.plan.plans.p2p1d import chunked
    lists = {0: np.arange(7), 2: np.arange(3), 3: np.arange(20, 25)}
    got = chunked(lists, 3)
    # round robin over peers, each peer's chunks in order (MPI matches one source's messages in order)
    assert [k for k, _ in got] == [(0, 0), (2, 0), (3, 0), (0, 1), (3, 1), (0, 2)]
    assert [list(v) for _, v in got] == [[0, 1, 2], [0, 1, 2], [20, 21, 22], [3, 4, 5], [23, 24], [6]]
    assert [k for k, _ in chunked(lists, None)] == [(0, 0), (2, 0), (3, 0)]

    P = 2
    A, X, present = _problem(11, False)
    row = 5 * 8
    progs = [prog for _, _, _, prog in _run(A, X, P, message_bytes=2 * row)]
    recvs = [i for prog in progs for i in _walk(prog) if type(i) is ir.Recv]
    assert len(progs) == P and recvs and any(i.deferred for i in recvs)
    # the window holds two messages: per rank, at most the first two receives are posted at once
    for prog in progs:
        rs = [i for i in _walk(prog) if type(i) is ir.Recv]
        posted = [i for i in rs if not i.deferred]
        assert sum(i.nrows for i in posted) * row <= 2 * 2 * row
        # once deferring starts it never stops: each source's chunks stay in order
        flags = [i.deferred for i in rs]
        assert flags == sorted(flags)
    mxms = [i for prog in progs for i in _walk(prog) if type(i) is ir.RecvMxM]
    assert mxms and all(m.window == 2 * 2 * row for m in mxms)


def _walk(prog):
    for i in list(getattr(prog, "setup", ())) + list(prog.instrs):
        yield i
        for body in (getattr(i, "cond", None), getattr(i, "body", None)):
            if body:
                yield from body
