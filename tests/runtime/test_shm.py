"""Rows written by the sender straight into the receiver's memory (runtime/interp/shm.py):
results against dense numpy with GraphBLAS semantics for P = 2..4, with and without presence,
in one call, over repeated calls and in a loop, with the route checked taken (and not taken
with DSPLA_SHM=0); the round protocol itself under a slow reader; the lent array."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.ir.types import DType
from dspla.kernels import lend
from dspla.plan.options import Options
from dspla.runtime.comm.sim import SimComm, run_simulated
from dspla.runtime.interp import shm
from dspla.session import DistSession

from harness import check_present as check
from harness import product_oracle as oracle

N = 80


def matrix(seed: int) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    A = sp.random_array((N, N), density=0.07, rng=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    return A


def run(f, inputs: dict, P: int, repeat: int = 1, plan: str = "p2p1d"):
    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan=plan, partition="random", seed=P))
        for _ in range(repeat):
            out = s.run(inputs if comm.rank == 0 else None)
        return {k: v.to_numpy(fill=np.nan) for k, v in out.items()}, s.runtime.shm_sends, len(s.runtime.shm.stacks)
    return run_simulated(P, body, timeout=120)


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("semiring", ["plus_times", "min_plus"])
@pytest.mark.parametrize("missing", [False, True], ids=["full", "missing"])
@pytest.mark.parametrize("on", ["1", "0"], ids=["shm", "messages"])
def test_products_equal_the_dense_oracle(P, semiring, missing, on, monkeypatch):
    """A ⊕.⊗ X, and with missing rows A ⊕.⊗ (X / reduce_rows(B)) (B's empty rows: missing, so
    presence travels with the values), three calls on one session (three rounds)."""
    monkeypatch.setenv("DSPLA_SHM", on)
    A, B = matrix(P), matrix(40 + P)
    B = sp.csr_array(B.multiply(np.random.default_rng(P).random((N, 1)) > 0.3))   # empty rows
    B.eliminate_zeros()
    X = np.random.default_rng(10 + P).integers(-4, 9, (N, 8)).astype(float)   # (rows of a cache line: stacked)
    a, b, x = dp.sparse("A", ("n", "n")), dp.sparse("B", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"y": dp.mxm(a, x / dp.reduce_rows(b) if missing else x, semiring)})
    inputs = {"A": A, "X": X, **({"B": B} if missing else {})}
    deg = B.toarray().sum(axis=1)
    present = np.repeat((deg != 0)[:, None], 8, axis=1) if missing else np.ones((N, 8), bool)
    Xe = X / np.where(deg != 0, deg, 1)[:, None] if missing else X
    res = run(f, inputs, P, repeat=3)
    vals, pres = oracle(A.toarray(), Xe, present, semiring)
    assert pres.any() and (not missing or not present.all())
    for out, sent, stacks in res:
        check(out["y"], vals, pres)
        assert (sent > 0) == (on == "1")   # every rank sends rows here (random partition)
        # full rows: one product over own's and the arrived rows where they lie
        assert stacks == (on == "1" and not missing)


@pytest.mark.parametrize("P", [2, 4])
@pytest.mark.parametrize("k", [1, 8], ids=["column", "stacked"])
@pytest.mark.filterwarnings("ignore::dspla.errors.LoopBoundWarning")   # (it runs to its bound on purpose)
def test_a_loop_runs_its_rounds_through_the_regions(P, k):
    """y <- A y / sum(A y), seven times: a product per iteration, every round through the same
    regions (k = 8: the same stacked area, own rows copied anew each round); against numpy's
    iteration (A's empty rows: missing in y)."""
    A = matrix(20 + P)
    a, y0 = dp.sparse("A", ("n", "n")), dp.dense("y0", ("n", k))

    def body(y):
        z = a @ y
        return (z / dp.reduce_all(z),)
    (y,), its = dp.while_loop(lambda y: dp.reduce_all(y) > -1.0, body, (y0,), 7, count=True)
    f = dp.function({"y": y, "its": its})
    start = np.random.default_rng(P).random((N, k)) + 0.5
    y_np = start
    for _ in range(7):
        z = A @ y_np
        y_np = z / z.sum()
    for out, sent, stacks in run(f, {"A": A, "y0": start}, P):
        rows = A.toarray().any(axis=1)   # (an empty row of A: missing in y)
        np.testing.assert_allclose(out["y"][rows], y_np[rows], rtol=1e-12)
        assert np.isnan(out["y"][~rows]).all() and out["its"][0, 0] == 7
        assert sent >= 7 and stacks == (k == 8)


def test_a_round_is_never_overwritten_before_it_is_read():
    """The protocol alone, on two simulated ranks: the sender packs 60 rounds as fast as it can,
    the reader sleeps at random before reading each; every round reads what was packed for it."""
    spec = (5, 2, "float64", False)
    comms = SimComm.create(2, timeout=30)
    segs = [None, None]

    def make(r):
        segs[r] = comms[r].segments(shm.HEADER + 128)
    threads = [threading.Thread(target=make, args=(r,)) for r in (0, 1)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    H = shm.HEADER
    send_end = shm.End(segs[1], segs[1].peer(0)[:H], segs[1].peer(0)[H:H + 80], spec, 0)
    recv_end = shm.End(segs[0], segs[0].mine[:H], segs[0].mine[H:H + 80], spec, 1)
    seen, rng = [], np.random.default_rng(0)

    def sender():
        for t in range(1, 61):
            M = gb.Matrix.from_dense(np.full((5, 2), float(t)))
            shm.publish(shm.pack(send_end, M, np.arange(5), DType.float64, False))

    def reader():
        for _ in range(60):
            arrival = shm.Arrival(recv_end)
            arrival.wait()
            time.sleep(rng.random() * 2e-3)
            seen.append(np.unique(recv_end.view).tolist())
            arrival.release()
    threads = [threading.Thread(target=sender), threading.Thread(target=reader)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    assert seen == [[float(t)] for t in range(1, 61)]


def test_foreign_values_are_lent_and_taken_back():
    v = np.arange(12.0).reshape(4, 3)
    M = gb.Matrix(gb.dtypes.FP64, 4, 3)
    C = gb.Matrix.from_dense(np.ones((4, 3)))
    A = gb.Matrix.from_coo([0, 1, 3], [1, 1, 2], [2.0, 1.0, -1.0], nrows=4, ncols=4)
    with lend.foreign_full(v, M):
        C(gb.binary.plus) << A.mxm(M, gb.semiring.plus_times)
    assert M.nvals == 0 and np.array_equal(v, np.arange(12.0).reshape(4, 3))   # back, unchanged
    np.testing.assert_array_equal(C.to_dense(), 1.0 + A.to_dense(fill_value=0) @ v)
    with pytest.raises(ValueError):
        with lend.foreign_full(v[:, :2], M):
            pass


@pytest.mark.mpi
def test_under_mpiexec_the_sends_go_through_shared_memory(tmp_path):
    """Real MPI, one node, P = 2 and 3: the sends are written into the receivers' memory (rows of
    12 values: stacked after the receiver's own, one product) and the result is A X, over three
    runs of one job (the later ones sending the unchanged rows as they lie); with DSPLA_SHM=0
    they are messages, with the same result."""
    rng = np.random.default_rng(3)
    A = matrix(7)
    X = rng.integers(-5, 9, (N, 12)).astype(float)
    import scipy.io
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "p.dspla").write_text("input A : sparse[n, n]\ninput X : dense[n, k]\nY = A @ X\noutput Y\n")
    dspla = str(Path(sys.executable).parent / "dspla")
    for P in (2, 3):
        for on in ("1", "0"):
            stats = tmp_path / f"s{P}{on}.json"
            out = tmp_path / f"y{P}{on}.npz"
            r = subprocess.run([dspla, "run", str(tmp_path / "p.dspla"), "-i", f"A={tmp_path / 'a.mtx'}",
                                "-i", f"X={tmp_path / 'x.npy'}", "--np", str(P), "--plan", "p2p1d",
                                "--partition", "random", "--stats", str(stats), "-o", str(out), "--repeat", "3"],
                               capture_output=True, text=True, timeout=180, env={**os.environ, "DSPLA_SHM": on})
            assert r.returncode == 0, r.stderr
            from dspla.formats.results import read_results
            vals, pres = read_results(out)["Y"]
            want = A @ X
            assert np.array_equal(pres, np.repeat(A.toarray().any(axis=1)[:, None], 12, axis=1))
            np.testing.assert_allclose(vals[pres], want[pres], rtol=1e-13)
            sent = [r["shm_sends"] for r in json.loads(stats.read_text())["per_rank"]]
            assert all(s > 0 for s in sent) if on == "1" else not any(sent), sent


def test_a_wait_on_a_peer_whose_process_is_gone_ends_with_an_error():
    """No MPI call is made while a rank polls a flag, so a dead peer (killed, under a launcher
    that leaves the others running) is looked for by its process: an error within about a
    second, not a wait for ever. A zombie (exited, not yet reaped) counts as gone."""
    from types import SimpleNamespace

    from dspla.formats.files import process_alive as _alive
    from dspla.runtime.comm.mpi import MPISegments
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()                                      # exited and reaped: no such process
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while _alive(zombie.pid) and time.monotonic() < deadline:
        time.sleep(0.01)                              # exited, not reaped (no wait() yet)
    assert _alive(os.getpid()) and not _alive(child.pid) and not _alive(zombie.pid)
    zombie.wait()
    flags = np.zeros(16, dtype=np.int64)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="rank 1 has ended"):
        MPISegments.wait(SimpleNamespace(_pids=[os.getpid(), child.pid]), flags, 0, 1, 1)
    assert time.monotonic() - t0 < 10
    flags[0] = 1   # and a flag already set returns at once, the peer not looked at
    MPISegments.wait(SimpleNamespace(_pids=[os.getpid(), child.pid]), flags, 0, 1, 1)


@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("on", ["1", "0"], ids=["shm", "messages"])
def test_an_unchanged_input_is_not_packed_again(P, on, monkeypatch):
    """Calls with X, X (the same object: its rows are sent as they were packed), X2 (a new
    object: packed again), X2, then X once more (packed again): each result against numpy, and
    the packs reused counted on every rank that sends (the calls that reuse and no others)."""
    monkeypatch.setenv("DSPLA_SHM", on)
    A = matrix(P)
    rng = np.random.default_rng(P)
    X, X2 = rng.random((N, 8)), rng.random((N, 8))
    f = dp.function({"y": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    calls = [X, X, X2, X2, X]

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=P))
        got = []
        for x in calls:
            out = s.run({"A": A, "X": x} if comm.rank == 0 else None)
            got.append((out["y"].to_numpy(fill=np.nan), s.runtime.packs_reused, s.runtime.shm_sends))
        return got

    Ad = A.toarray()
    present = np.ones((N, 8), bool)   # (X is full)
    for per_rank in run_simulated(P, body, timeout=120):
        reused = [r for _, r, _ in per_rank]
        assert [r > 0 for r in reused] == [False, True, False, True, False]
        for (y, _, sent), x in zip(per_rank, calls):
            check(y, *oracle(Ad, x, present, "plus_times"))
            assert (sent > 0) == (on == "1")


@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("semiring", ["plus_times", "min_plus"])
def test_new_rows_are_read_where_they_lie_in_two_blocks(P, semiring, monkeypatch):
    """On the stacked path a new X (every call here) is not copied into the area: own's block of
    A reads X's own rows in place and the peers' block the rows they wrote (gbops.mxm_blocks), where
    the full-C route applies (plus_times; min_plus copies and makes one product); then the same X
    again (one product over the area, own's rows copied once) and a new one. Each against numpy."""
    from dspla.kernels import gbops
    monkeypatch.setenv("DSPLA_SHM", "1")
    blocks = []
    real = gbops.mxm_blocks
    monkeypatch.setattr(gbops, "mxm_blocks", lambda *a, **k: blocks.append(1) or real(*a, **k))
    A = matrix(7 + P)
    rng = np.random.default_rng(P)
    xs = [rng.integers(-4, 9, (N, 8)).astype(float) for _ in range(3)]
    calls = [xs[0], xs[1], xs[1], xs[1], xs[2]]
    f = dp.function({"y": dp.mxm(dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k")), semiring)})

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=P))
        return [s.run({"A": A, "X": x} if comm.rank == 0 else None)["y"].to_numpy(fill=np.nan) for x in calls]

    for per_rank in run_simulated(P, body, timeout=120):
        for y, x in zip(per_rank, calls):
            check(y, *oracle(A.toarray(), x, np.ones((N, 8), bool), semiring))
    # new X on calls 1, 2 and 5 on every rank that receives rows; none for min_plus
    assert len(blocks) == (3 * P if semiring == "plus_times" else 0)


@pytest.mark.parametrize("on", ["1", "0"], ids=["shm", "messages"])
def test_repeats_move_the_inputs_as_new_ones_would_be(on, monkeypatch):
    """``run(..., repeat=3)`` is a benchmark's three iterations: every repeat packs and sends X's
    rows (none reused), where a second call with the same X reuses its pack; the results match
    numpy."""
    monkeypatch.setenv("DSPLA_SHM", on)
    P = 2
    A = matrix(P)
    X = np.random.default_rng(5).random((N, 8))
    f = dp.function({"y": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=P))
        out = s.run({"A": A, "X": X} if comm.rank == 0 else None, repeat=3)
        first = (out["y"].to_numpy(fill=np.nan), s.runtime.packs_reused)
        out = s.run({"A": A, "X": X} if comm.rank == 0 else None)
        return first, s.runtime.packs_reused

    for (y, reused_in_repeats), reused_after in run_simulated(P, body, timeout=120):
        check(y, *oracle(A.toarray(), X, np.ones((N, 8), bool), "plus_times"))
        assert reused_in_repeats == 0 and reused_after > 0


@pytest.mark.parametrize("on", ["1", "0"], ids=["shm", "messages"])
def test_a_distributed_input_written_into_between_calls_is_packed_again(on, monkeypatch):
    """A distributed value's piece is the caller's (``.local.matrix``): passed again as the same
    object after the caller doubled it in place, its rows are packed anew (against numpy)."""
    monkeypatch.setenv("DSPLA_SHM", on)
    P, A = 3, matrix(7)
    x0 = np.random.default_rng(7).random((N, 8))
    a, x = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 8))
    make = dp.function({"y": a @ x + x})
    g = dp.function({"z": a @ x})

    def body(comm):
        opts = {"comm": comm, "plan": "p2p1d", "partition": "random"}
        y = make.run({"A": A, "x": x0} if comm.rank == 0 else None, **opts)["y"]
        first = g.run({"A": A if comm.rank == 0 else None, "x": y}, **opts)["z"].to_numpy(fill=np.nan)
        M = y.local.matrix
        M << M.apply(gb.binary.times, right=2.0)   # in place: the same object, new values
        second = g.run({"A": A if comm.rank == 0 else None, "x": y}, **opts)["z"].to_numpy(fill=np.nan)
        return first, second

    Ad = A.toarray()
    y1 = Ad @ x0 + x0
    present = np.ones((N, 8), bool)   # (y is full: A x's missing rows + x)
    for first, second in run_simulated(P, body, timeout=120):
        check(first, *oracle(Ad, y1, present, "plus_times"))
        check(second, *oracle(Ad, 2 * y1, present, "plus_times"))


@pytest.mark.parametrize("K", [8, 12])
def test_a_stack_without_room_in_shared_memory_is_copied(K, monkeypatch):
    """Planned to stack in shared memory (one node), but the segments do not fit (no room in
    /dev/shm): the rows come as messages and are stacked by copies; the same results."""
    monkeypatch.setattr(shm, "_room", lambda: 0.0)
    P, A = 3, matrix(11)
    X = np.random.default_rng(K).random((N, K))
    f = dp.function({"y": dp.mxm(dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k")), "min_plus")})

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=P))
        outs = [s.run({"A": A, "X": X} if comm.rank == 0 else None)["y"].to_numpy(fill=np.nan) for _ in range(2)]
        shared = [i for i in s.runtime.program.instrs if type(i).__name__ == "StackMxM" and i.shared]
        return outs, len(shared), len(s.runtime.shm.stacks), s.runtime.shm_sends

    for outs, shared, stacks, sent in run_simulated(P, body, timeout=120):
        assert (shared, stacks, sent) == (1, 0, 0)
        for y in outs:
            check(y, *oracle(A.toarray(), X, np.ones((N, K), bool), "min_plus"))
