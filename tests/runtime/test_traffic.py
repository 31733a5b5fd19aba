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
from dspla.runtime.session import DistSession

OPTS = {"shift1d": {"replication": 2}, "15d": {"replication": 2}, "twoface": {"stripe_width": 4}}


def _run(plan, P, full=True):
    A_ = dp.sparse("A", ("n", "n"))
    X_ = dp.dense("X", ("n", "k"))
    f = dp.function({"C": A_ @ X_})
    rng = np.random.default_rng(P)
    A = sp.random_array((48, 48), density=0.12, random_state=rng, format="csr")
    X = rng.random((48, 4))

    def body(comm):
        s = DistSession(f, comm, Options(plan=plan, partition="random", seed=2, **OPTS.get(plan, {})))
        s.run({"A": A, "X": X} if comm.rank == 0 else None, repeat=2)
        return s.plan, s.last_stats
    plan_, stats = run_simulated(P, body, timeout=120)[0]
    return A, plan_, stats


@pytest.mark.parametrize("plan", plan_names())
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
