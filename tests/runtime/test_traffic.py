"""One account of traffic: what the runtime reports moving equals what the cost model predicted
for the chosen plan, per rank and per product, for every plan (both come from the plan
instructions' own ``traffic``); and the p2p1d volume equals the analysis layer's, an
independent count from the matrix and the partition."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.analysis import comm_stats
from dspla.plan.options import Options
from dspla.plan.plans import plan_names
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession

OPTS = {"shift1d": {"replication": 2}, "15d": {"replication": 2}, "twoface": {"stripe_width": 4},
        "vertexcut": {"partition": "spac"}, "p2p1d_node": {"ranks_per_node": 2}}


def _run(plan, P, full=True):
    A_ = dp.sparse("A", ("n", "n"))
    X_ = dp.dense("X", ("n", "k"))
    f = dp.function({"C": A_ @ X_})
    rng = np.random.default_rng(P)
    A = sp.random_array((48, 48), density=0.12, random_state=rng, format="csr")
    X = rng.random((48, 4))

    def body(comm):
        s = DistSession(f.compiled, comm, Options(**{"plan": plan, "partition": "random", "seed": 2,
                                                     **OPTS.get(plan, {})}))
        s.run({"A": A, "X": X} if comm.rank == 0 else None, repeat=2)
        return s.plan, s.last_stats
    plan_, stats = run_simulated(P, body, timeout=120)[0]
    return A, plan_, stats


# the plans of a sparse x dense product (the sparse x sparse ones: tests/plan/test_spgemm.py)
DENSE_B = [p for p in plan_names() if p not in ("summa2d_sparse", "spgemm3d")]


@pytest.mark.parametrize("plan", DENSE_B)
def test_measured_equals_predicted_per_rank(plan):
    P = 4
    A, distplan, stats = _run(plan, P)
    info = distplan.products[0]
    assert info.plan == plan
    predicted = info.counts[plan]
    measured = [r["words_sent"] for r in stats["per_rank"]]
    assert measured == [int(c.get("words_sent", 0)) for c in predicted]
    assert [r["messages_sent"] for r in stats["per_rank"]] == [int(c.get("messages_sent", 0)) for c in predicted]
    assert stats["products"][0]["words_sent_max"] == info.predicted["words_max"]
    # conservation: every word sent is received by some rank
    assert sum(r["words_sent"] for r in stats["per_rank"]) == sum(r["words_received"] for r in stats["per_rank"]) > 0
    assert sum(r["messages_sent"] for r in stats["per_rank"]) == sum(r["messages_received"] for r in stats["per_rank"])


def test_p2p1d_volume_is_the_analysis_layers():
    A, distplan, stats = _run("p2p1d", 3)
    parts = distplan.dims["n"].parts
    want = comm_stats(A, parts, 3, b_parts=parts)
    assert stats["words_sent_total"] == want.volume_total * 4
    assert stats["messages_sent_total"] == want.messages_total


def test_data_dependent_words_are_marked_as_a_bound():
    """A sparse right operand's messages carry its present entries only: what it moves is known
    when it runs, and its prediction is the most it can move. The stats, explain and explain
    --compare say so ("at most") for that product alone; the dense product and the one in a loop
    stay exact. The measured words are the analysis layer's: present entries of the rows sent."""
    from dspla.analysis import comm_plan
    from dspla.plan.explain import compare

    P, n = 3, 48
    rng = np.random.default_rng(5)
    A = sp.random_array((n, n), density=0.12, random_state=rng, format="csr")
    S = sp.random_array((n, 3), density=0.2, random_state=rng, format="csr")
    X = rng.random((n, 3))
    A_, S_, X_ = dp.sparse("A", ("n", "n")), dp.sparse("S", ("n", 3)), dp.dense("X", ("n", 3))
    x, _ = dp.while_loop(lambda x, i: i < 3, lambda x, i: (A_ @ x, i + 1), (X_, dp.reduce_all(X_) * 0.0), 5)
    f = dp.function({"C": A_ @ S_, "D": A_ @ X_, "L": x})
    opts = dict(plan="p2p1d", partition="random", seed=2)

    def body(comm):
        s = DistSession(f.compiled, comm, Options(**opts))
        s.run({"A": A, "S": S, "X": X} if comm.rank == 0 else None)
        return s.plan, s.last_stats
    distplan, stats = run_simulated(P, body, timeout=120)[0]
    C, D, L = stats["products"]
    assert (C["words_predicted"], D["words_predicted"], L["words_predicted"]) == ("at most", "exact", "exact")
    rows = comm_plan(A, distplan.dims["n"].parts, P, b_parts=distplan.dims["n"].parts).rows
    assert C["words_sent_total"] == int(np.diff(S.indptr)[rows].sum()) < C["predicted"]["words"]
    assert D["words_sent_total"] == D["predicted"]["words"] == rows.size * 3
    assert L["iterations"] == 3 and L["words_sent_per_iteration"] == L["predicted"]["words"]
    text = compare(stats)
    assert f"words sent: predicted at most {C['predicted']['words']}, measured {C['words_sent_total']}\n" in text
    assert f"words sent: predicted {D['predicted']['words']}, measured {D['words_sent_total']}\n" in text
    assert f"per iteration: predicted {L['predicted']['words']}, measured" in text
    plan = f.explain(np=P, json=True, A=A, S=S, options=opts)
    assert [p["words_predicted"] for p in plan["products"]] == ["at most", "exact", "exact"]
    assert f.explain(np=P, A=A, S=S, options=opts).count("words depend on the data") == 1


def test_loop_words_per_iteration_include_the_conditions_broadcast():
    """An iteration's words are what one more iteration adds to the run's total: its body and its
    condition check, including rank 0's broadcast of the answer when the ranks do not compute
    the condition alike (an Allreduce of floats in the condition: the loop is not 'agreed')."""
    from dspla.instr import Loop

    P, n = 3, 40
    rng = np.random.default_rng(3)
    A = sp.random_array((n, n), density=0.1, random_state=rng, format="csr")
    X = rng.random((n, 30))
    A_, X_ = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", 30))
    totals = {}
    for bound in (3, 4):
        x, _ = dp.while_loop(lambda x, i, b=bound: dp.reduce_all(dp.transpose(x) @ x) * 0.0 + i < b,
                             lambda x, i: (A_ @ x * 0.5, i + 1), (X_, dp.reduce_all(X_) * 0.0), 10)
        f = dp.function({"L": x})

        def body(comm, f=f):
            s = DistSession(f.compiled, comm, Options(plan="p2p1d", partition="random", seed=1))
            s.run({"A": A, "X": X} if comm.rank == 0 else None)
            return s.last_stats, [i.agreed for i in s.runtime.program.instrs if type(i) is Loop]
        stats, agreed = run_simulated(P, body, timeout=120)[0]
        assert agreed == [False]
        (loop,) = stats["loops"]
        assert loop["iterations"] == bound and len(set(loop["words_per_iteration"])) == 1
        totals[bound] = (stats["words_sent_total"], loop["words_per_iteration"][0])
    assert totals[4][0] - totals[3][0] == totals[4][1] == totals[3][1]
