"""The plan verifier accepts every plan the planner makes, and rejects each kind of broken plan
with a message naming the rank and the instruction (instead of a hang at run time)."""
import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.errors import PlanError, VerificationError
from dspla.plan.options import Options
from dspla.plan.plans import plan_names
from dspla.plan.verify import verify_plan

OPTS = {"shift1d": {"replication": 2}, "15d": {"replication": 2}, "twoface": {"stripe_width": 4},
        "p2p1d_node": {"ranks_per_node": 2}}


def _plan(plan: str, P: int = 4, semiring="plus_times", full=True, **options):
    A_ = dp.sparse("A", ("n", "n"))
    X_ = dp.dense("X", ("n", "k")) if full else dp.sparse("X", ("n", "k"))
    f = dp.function({"C": dp.mxm(A_, X_, semiring), "s": dp.reduce_all(X_)})
    rng = np.random.default_rng(3)
    A = sp.random_array((40, 40), density=0.15, random_state=rng, format="csr")
    X = rng.random((40, 3)) if full else sp.random_array((40, 3), density=0.5, random_state=rng, format="csr")
    opt = Options(plan=plan, partition="random", **{**OPTS.get(plan, {}), **options})
    return f.plan(P, {"A": A, "X": X}, opt).plan.programs


# (the plans that run any sparse x dense product on any row partition; sparse x sparse plans have
# their own tests, tests/plan/test_spgemm.py; vertexcut, on an edge partition, tests/plan/test_gcn_plans.py)
SPARSE_DENSE = plan_names(general=True)


@pytest.mark.parametrize("plan", SPARSE_DENSE)
@pytest.mark.parametrize("full", [True, False])
def test_every_plan_the_planner_makes_verifies(plan, full):
    if not full and plan in ("15d_sparse", "p2p1d_node"):
        with pytest.raises(PlanError, match="a sparse B travels by p2p1d"):
            _plan(plan, full=full)
        return
    if not full and plan != "p2p1d":   # (a sparse n x k X: its columns are a distributed dim too)
        with pytest.raises(PlanError, match=f"plan {plan}, asked for .* only p2p1d's sparse exchange moves its rows"):
            _plan(plan, full=full)
        return
    programs = _plan(plan, full=full)
    assert verify_plan(programs) is programs


def _first(programs, cls, rank=None):
    for p in programs:
        if rank is not None and p.rank != rank:
            continue
        for k, i in enumerate(p.instrs):
            if type(i) is cls:
                return p, k, i
    raise AssertionError(f"no {cls.__name__}")


def test_a_send_nobody_receives():
    programs = _plan("p2p1d")
    p = programs[0]
    k, i = next((k, i) for k, i in enumerate(p.instrs) if type(i) is ir.Send and i.dest < 3)
    p.instrs[k] = dataclasses.replace(i, dest=3)
    # pairs are checked in order: the receiver left waiting is reported first, at its Recv
    with pytest.raises(VerificationError, match=rf"rank {i.dest}, instruction \d+ \(Recv.*rank 0 sends 0 message\(s\) "
                                                rf"with tag {i.tag} to rank {i.dest}, which receives 1"):
        verify_plan(programs)


def test_a_completed_receive_that_was_never_posted():
    programs = _plan("p2p1d")
    p, k, _ = _first(programs, ir.Recv)
    del p.instrs[k]
    with pytest.raises(VerificationError, match="is completed here but no receive posted it"):
        verify_plan(programs)


def test_a_receive_of_the_wrong_size():
    programs = _plan("p2p1d")
    p, k, i = _first(programs, ir.Recv)
    p.instrs[k] = dataclasses.replace(i, nrows=i.nrows + 1)
    with pytest.raises(VerificationError, match=rf"rank {p.rank}, instruction {k} \(Recv.*receives {(i.nrows + 1) * 3} "
                                                rf"words of float64 .* which sends {i.nrows * 3} words"):
        verify_plan(programs)


def test_a_receive_of_the_wrong_dtype():
    programs = _plan("p2p1d")
    p, k, i = _first(programs, ir.Recv)
    p.instrs[k] = dataclasses.replace(i, dtype="float32")
    with pytest.raises(VerificationError, match="receives .* of float32"):
        verify_plan(programs)


def _swap_first(p, a_cls, b_cls):
    a = next(k for k, i in enumerate(p.instrs) if type(i) is a_cls)
    b = next(k for k, i in enumerate(p.instrs) if type(i) is b_cls)
    p.instrs[a], p.instrs[b] = p.instrs[b], p.instrs[a]


def test_a_collective_whose_arguments_disagree():
    programs = _plan("allgather1d")
    p, k, i = _first(programs, ir.AllgatherRows, rank=1)
    p.instrs[k] = dataclasses.replace(i, k=i.k + 1)
    with pytest.raises(VerificationError, match=rf"rank 1, instruction {k} .*collective \('AllgatherRows', .* meets "
                                                r"\('AllgatherRows'.* on rank 0"):
        verify_plan(programs)


def test_collectives_of_two_groups_ordered_into_a_deadlock():
    # 15d at P = 4, c = 2: ranks (i, j) = (0,0) (0,1) (1,0) (1,1); each Allgathers in its process
    # row, then broadcasts in its column. Swapped on ranks 1 and 2, the four calls wait in a cycle.
    programs = _plan("15d")
    for r in (1, 2):
        _swap_first(programs[r], ir.AllgatherRows, ir.Bcast)
    with pytest.raises(VerificationError, match="in a cycle of collectives"):
        verify_plan(programs)


def test_collectives_of_two_groups_reordered_on_one_rank_is_no_deadlock():
    programs = _plan("15d")
    _swap_first(programs[1], ir.AllgatherRows, ir.Bcast)
    verify_plan(programs)


def test_a_collective_one_member_never_calls():
    programs = _plan("allgather1d")
    p, k, _ = _first(programs, ir.AllgatherRows, rank=2)
    del p.instrs[k]
    with pytest.raises(VerificationError):
        verify_plan(programs)


def test_a_broadcast_whose_root_has_no_data():
    programs = _plan("15d")
    p, k, i = next((p, k, i) for p in programs for k, i in enumerate(p.instrs)
                   if type(i) is ir.Bcast and i.src is not None)
    p.instrs[k] = dataclasses.replace(i, src=None)
    with pytest.raises(VerificationError, match="is the root but has nothing to send"):
        verify_plan(programs)


def test_a_slot_read_before_it_is_written():
    programs = _plan("allgather1d")
    p, k, i = _first(programs, ir.MxM, rank=0)
    p.instrs[k] = dataclasses.replace(i, a=10_000)
    with pytest.raises(VerificationError, match="reads slot s10000, which is never written before"):
        verify_plan(programs)


def test_a_slot_read_after_it_was_freed():
    programs = _plan("allgather1d")
    p, k, i = _first(programs, ir.MxM, rank=0)
    p.instrs.insert(k, ir.Free((i.b,)))
    with pytest.raises(VerificationError, match=f"reads slot s{i.b}, which is freed"):
        verify_plan(programs)


def test_a_posted_receive_nobody_completes():
    programs = _plan("p2p1d")
    p, k, _ = _first(programs, ir.RecvMxM)
    del p.instrs[k]
    with pytest.raises(VerificationError, match="never completed"):
        verify_plan(programs)


def test_a_get_outside_the_target_window():
    programs = _plan("twoface", memory_cap=1)    # over the cap: every stripe is fetched one-sided
    p, k, i = _first(programs, ir.Get)
    p.instrs[k] = dataclasses.replace(i, starts=i.starts + i.target_nrows)
    with pytest.raises(VerificationError, match="outside the .* rows rank"):
        verify_plan(programs)


def test_a_placeholder_left_unchosen():
    programs = _plan("allgather1d")
    programs[0].instrs.append(ir.Choice(product=0))
    with pytest.raises(VerificationError, match="placeholder"):
        verify_plan(programs)


def test_stacked_rows_must_arrive_by_receives_posted_at_once():
    """StackMxM waits for every receive it stacks: one left for RecvMxM's window to post
    (deferred) would never be posted, a broken plan."""
    A_, x_ = dp.sparse("A", ("n", "n")), dp.dense("x", ("n", 1))
    f = dp.function({"y": dp.mxm(A_, dp.select(x_, ">", 0.5))})   # a vector with missing entries
    rng = np.random.default_rng(5)
    A = sp.random_array((40, 40), density=0.15, random_state=rng, format="csr")
    x = rng.random((40, 1))
    programs = f.plan(2, {"A": A, "x": x}, Options(plan="p2p1d", partition="random")).plan.programs
    assert verify_plan(programs) is programs
    p, k, i = _first(programs, ir.StackMxM)
    j = next(j for j, r in enumerate(p.instrs[:k]) if type(r) is ir.Recv and r.out in i.recvs)
    p.instrs[j] = dataclasses.replace(p.instrs[j], deferred=True)
    with pytest.raises(VerificationError,
                       match=rf"rank {p.rank}, instruction {k} \(StackMxM.*not a Recv's posted at once"):
        verify_plan(programs)


def test_a_posted_allreduce_must_be_completed_once():
    programs = _plan("p2p1d")
    p, k, i = _first(programs, ir.WaitAllreduce)
    del p.instrs[k]
    with pytest.raises(VerificationError, match="is not computed"):   # (its result is an output here)
        verify_plan(programs)
    programs = _plan("p2p1d")   # one posted and never completed
    p, k, i = _first(programs, ir.ISmallAllreduce)
    p.instrs.insert(k + 1, dataclasses.replace(i, req=p.n_slots))
    p.n_slots += 1
    with pytest.raises(VerificationError, match="never completed"):
        verify_plan(programs)
    programs = _plan("p2p1d")
    p, k, i = _first(programs, ir.WaitAllreduce)
    p.instrs.insert(k + 1, i)
    with pytest.raises(VerificationError, match="waited for here but no ISmallAllreduce posted it"):
        verify_plan(programs)


def test_a_posted_allreduce_meeting_a_blocking_one_is_refused():
    """MPI matches a non-blocking collective only with the same non-blocking call."""
    programs = _plan("p2p1d")
    p, k, i = _first(programs, ir.ISmallAllreduce, rank=1)
    w = next(j for j, x in enumerate(p.instrs) if type(x) is ir.WaitAllreduce and x.req == i.req)
    del p.instrs[w]
    p.instrs[k] = ir.SmallAllreduce(i.outs, i.srcs, i.monoids, i.entries, group=i.group)
    with pytest.raises(VerificationError, match="collective .*SmallAllreduce.* meets .*ISmallAllreduce"):
        verify_plan(programs)
