"""A loop's words per iteration, predicted from the plan (ir.RankProgram.loop_words) and shown
by explain and the run's stats, products' and outside products' apart (scalar allreduces, the
condition's broadcast): equal to what every iteration measured when nothing depends on the
data, the most it can move when a sparse operand's does (BFS), for every P."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.analysis import comm_stats
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession


def _pagerank():
    A = dp.sparse("A", ("n", "n"))
    r0 = dp.dense("r0", ("n", 1))
    outdeg = dp.reduce_rows(A)
    n = dp.reduce_all(dp.apply(r0, "one"))

    def step(r, delta):
        w = r / outdeg
        dangling = dp.reduce_all(r) - dp.reduce_all(w * outdeg)
        new = 0.85 * (A.T @ w) + (0.85 * dangling + 0.15) / n
        return new, dp.reduce_all(dp.abs(new - r))
    r = r0 / dp.reduce_all(r0)
    (r, _), _ = dp.while_loop(lambda r, d: d > 1e-9, step, (r, dp.reduce_all(r)), 50, count=True)
    return dp.function({"r": r})


def _bfs():
    A, s = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1), dtype="bool")
    AT = dp.cast(A.T, "bool")

    def step(f, v):
        f2 = dp.mxm(AT, f, "any_pair", mask=v, complement=True, structure=True)
        return f2, dp.ewise_add(v, f2, "lor")
    (f, v), _ = dp.while_loop(lambda f, v: dp.nvals(f) > 0, step, (s, s), "n", count=True)
    return dp.function({"v": v})


def _graph(n=120, seed=0):
    A = sp.random_array((n, n), density=0.04, rng=np.random.default_rng(seed), format="csr")
    A.data[:] = 1.0
    return A


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("plan", ["p2p1d", "allgather1d"])
def test_an_exact_loop_measures_what_was_predicted_every_iteration(P, plan):
    A = _graph(seed=P)
    f = _pagerank()

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan=plan, partition="random", seed=1))
        s.run({"A": A, "r0": np.ones((A.shape[0], 1))} if comm.rank == 0 else None)
        return s.last_stats, s.explain() if comm.rank == 0 else "", s.plan.dims["n"].parts
    stats, after, parts = run_simulated(P, body, timeout=120)[0]
    (lp,) = stats["loops"]
    assert lp["loop_words_predicted"] == "exact" and lp["iterations"] > 2
    assert lp["words_per_iteration"] == [lp["words_predicted_per_iteration"]] * lp["iterations"]
    # the products' part, counted independently: p2p1d's volume by the analysis layer for the
    # partition used; allgather1d's every rank's rows to every other rank (n (P - 1))
    n = A.shape[0]
    want = comm_stats(sp.csr_array(A.T), parts, P, b_parts=parts).volume_total if plan == "p2p1d" else n * (P - 1)
    assert lp["words_predicted_products"] == want
    (prod,) = stats["products"]
    assert prod["words_sent_per_iteration"] == want
    # outside the product: three scalars per iteration (the two sums of the dangling mass, the
    # change), each rank's sent to each other rank; the condition is agreed (no broadcast)
    assert lp["words_predicted_outside_products"] == 3 * P * (P - 1)
    # explain, planning the same (no run), says the same
    text = f.explain(np=P, A=A, r0=np.ones((A.shape[0], 1)), options={"plan": plan, "partition": "random", "seed": 1})
    assert (f"loop 0: words sent per iteration, all ranks: {lp['words_predicted_per_iteration']} "
            f"(products {lp['words_predicted_products']}, outside products "
            f"{lp['words_predicted_outside_products']}") in text
    assert text[text.index("loop 0: words"):].splitlines()[0] in after   # the session's, after its run
    js = f.explain(np=P, A=A, r0=np.ones((A.shape[0], 1)), json=True,
                   options={"plan": plan, "partition": "random", "seed": 1})
    assert js["loops"] == [{"loop": 0, "words_per_iteration": lp["words_predicted_per_iteration"],
                            "products": lp["words_predicted_products"],
                            "outside_products": lp["words_predicted_outside_products"], "words_predicted": "exact"}]


@pytest.mark.parametrize("P", [2, 3])
def test_a_sparse_operands_loop_predicts_the_most_it_can_move(P):
    A = _graph(n=150, seed=10 + P)
    f = _bfs()
    s0 = sp.csr_array(([True], ([0], [0])), shape=(150, 1))

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=1))
        s.run({"A": A, "s": s0} if comm.rank == 0 else None)
        return s.last_stats
    stats = run_simulated(P, body, timeout=120)[0]
    (lp,) = stats["loops"]
    assert lp["loop_words_predicted"] == "at most"
    assert max(lp["words_per_iteration"]) <= lp["words_predicted_per_iteration"]
    assert min(lp["words_per_iteration"]) < lp["words_predicted_per_iteration"]   # a frontier is not all rows


def test_spmd_planning_adds_up_every_ranks_loop_words():
    """Sharded inputs: each rank plans its own program; explain's loop words are every rank's
    added up, and equal what the run measured."""
    import graphblas as gb

    from dspla.instr.layout import DimPart
    from dspla.values import Array, Dist
    P = 3
    A = _graph(seed=5)
    n = A.shape[0]
    part = DimPart("n", np.random.default_rng(2).integers(0, P, n), P, "test")
    f = _pagerank()

    def body(comm):
        rows = part.owned[comm.rank]
        dist = Dist("row", "n", part, comm)
        ins = {"A": Array(gb.io.from_scipy_sparse(A[rows]), "A", dist, A.shape),
               "r0": Array(gb.Matrix.from_dense(np.ones((rows.size, 1))), "r0", dist, (n, 1))}
        s = DistSession(f.compiled, comm, Options(plan="p2p1d"))
        s.run(ins)
        return s.last_stats, s.explain() if comm.rank == 0 else "", s.plan.planning
    stats, text, planning = run_simulated(P, body, timeout=120)[0]
    (lp,) = stats["loops"]
    assert planning == "spmd" and lp["words_per_iteration"] == [lp["words_predicted_per_iteration"]] * lp["iterations"]
    assert f"loop 0: words sent per iteration, all ranks: {lp['words_predicted_per_iteration']} " in text
