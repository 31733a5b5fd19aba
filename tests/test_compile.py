"""The compiler is one list of steps: each named, run in order, timed, and printable."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import compiler
from dspla.errors import UnknownNameError
from dspla.plan.options import Options

ORDER = ["verify", "simplify", "cse", "chain-order", "static-eval", "partition", "facts", "lower", "choose", "fuse",
         "verify-plan"]


def _f():
    A, X, W = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "f")), dp.param("W", ("f", 2))
    Ahat = A + A.T
    return dp.function({"H": dp.relu(Ahat @ X @ W), "d": dp.reduce_rows(Ahat)})


def _data():
    rng = np.random.default_rng(0)
    return {"A": sp.random_array((30, 30), density=0.2, random_state=rng, format="csr"), "X": rng.random((30, 5)),
            "W": rng.random((5, 2))}


def test_the_pipeline_is_the_documented_list():
    assert compiler.step_names() == ORDER


def test_every_step_is_timed_and_the_plan_records_them():
    f = _f()
    assert list(f.compiled.timings) == ORDER[:3]
    c = f.plan(3, _data(), Options(plan="p2p1d", partition="random"))
    assert list(c.timings) == ORDER[4:]
    assert all(t >= 0 for t in c.timings.values())
    assert list(c.plan.steps_s) == ORDER[4:] and c.plan.planning_s >= sum(c.timings.values()) * 0.99


@pytest.mark.parametrize("step", ORDER)
def test_every_step_prints_what_it_produced(step):
    out = _f().explain(np=2, dump_after=step, partition="random", **_data())
    assert isinstance(out, str) and out.strip()
    if step in ("verify", "simplify", "cse", "chain-order"):
        assert out.startswith("program(")
    if step == "chain-order":   # (Ahat X) W re-associated to Ahat (X W): width 2 instead of 5
        assert "mxm[plus_times](X, W)" in out
    if step == "verify-plan":
        assert out.startswith("rank 0 of 2")


def test_timings_are_printed_on_request():
    out = _f().explain(np=2, timings=True, partition="random", **_data())
    tail = out.split("compiler steps:")[1]
    assert [ln.split()[0] for ln in tail.strip().splitlines()] == ORDER


def test_an_unknown_step_names_the_valid_ones():
    with pytest.raises(UnknownNameError, match="verify-plan"):
        compiler.run(compiler.Compilation(_f().program), stop="plan-choice")


def test_a_step_without_what_it_needs_is_an_error():
    with pytest.raises(dp.DsplaError, match="'chain-order' needs the sizes of a run"):
        compiler.run(compiler.Compilation(_f().program), stop="static-eval")
    sized = compiler.Compilation(_f().program, sizes={"n": 30, "f": 5})
    with pytest.raises(dp.DsplaError, match="'static-eval' needs the P of a run"):
        compiler.run(sized, start="static-eval")


def test_run_stats_carry_the_step_times(tmp_path):
    from harness import run_dist
    _, stats = run_dist(_f(), _data(), 2, plan="allgather1d", partition="random")
    assert list(stats["compile_s"]) == ORDER[4:]
