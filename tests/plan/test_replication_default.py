"""shift1d and 15d without an explicit replication: c = 2 when it divides P, else 1, so an odd
P runs them instead of falling back to another plan. The oracle is scipy's product."""
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.plan.options import Options
from dspla.plan.plans.p2p1d import replication, replication_check
from dspla.runtime.comm.sim import run_simulated


@pytest.mark.parametrize("plan", ["shift1d", "15d"])
@pytest.mark.parametrize("P", [2, 3, 4])
def test_the_default_replication_runs_the_plan_asked_for(plan, P):
    rng = np.random.default_rng(P)
    a = sp.random_array((48, 48), density=0.1, random_state=rng, format="csr")
    x = rng.random((48, 4))
    f = dp.function({"T": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})

    def body(comm):
        out = f.run({"A": a, "X": x} if comm.rank == 0 else None, comm=comm, plan=plan, partition="random")
        return out["T"].to_numpy(fill=0.0), f.last_stats if comm.rank == 0 else None

    got = run_simulated(P, body)
    for T, _ in got:
        np.testing.assert_allclose(T, a @ x, rtol=1e-12)
    stats = got[0][1]
    assert stats["plan"] == plan and not stats["products"][0]["notes"], stats["products"][0]["notes"]


@pytest.mark.parametrize("P,given,want,name", [(2, None, 2, "shift1d"), (3, None, 1, "shift1d"),
                                               (4, None, 2, "shift1d"), (6, 3, 3, "shift1d"), (3, 2, 2, "15d"),
                                               (2, None, 1, "15d"), (4, None, 2, "15d"), (2, 2, 2, "15d")])
def test_replication_is_the_one_given_else_2_when_it_divides_p_else_1(P, given, want, name):
    """(15d's default is 2 from P = 4 only: at P = 2, c = 2 gave one rank all of the product.)"""
    ctx = SimpleNamespace(P=P, opt=Options(replication=given), name=name)
    assert replication(ctx) == want
    assert (replication_check(ctx) is None) == (P % want == 0)
