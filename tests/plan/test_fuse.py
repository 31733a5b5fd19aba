"""Small Allreduces: independent ones travel together (plan rewrite), and the one-collective
implementation combines values and presence as GraphBLAS does (a missing partial takes no part;
a result no rank holds stays missing) for every monoid and P."""
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla import instr as ir
from dspla.algebra import MONOIDS
from dspla.plan.fuse import SMALL, fuse_list
from dspla.plan.options import Options

from harness import run_dist

PLUS = MONOIDS["plus"]


def _ar(out, src, entries=1, **kw):
    return ir.Allreduce(out, src, PLUS, entries=entries, **kw)


def _loc(out, *args):
    return ir.Local(out, None, args)


def _shape(instrs):
    return [(type(i).__name__, getattr(i, "outs", None) or getattr(i, "out", None)) for i in instrs]


def test_independent_allreduces_meet_where_a_result_is_needed():
    got = fuse_list([_loc(1, 0), _ar(2, 1), _loc(3, 0), _ar(4, 3), _loc(5, 2, 4)])
    assert _shape(got) == [("Local", 1), ("Local", 3), ("SmallAllreduce", (2, 4)), ("Local", 5)]


def test_a_dependent_allreduce_waits_for_the_one_it_reads():
    got = fuse_list([_loc(1, 0), _ar(2, 1), _loc(3, 2), _ar(4, 3)])
    assert _shape(got) == [("Local", 1), ("SmallAllreduce", (2,)), ("Local", 3), ("SmallAllreduce", (4,))]


def test_communication_keeps_its_order():
    gather = ir.AllgatherRows(9, 0, np.array([1, 1]), 1, "float64")
    got = fuse_list([_ar(2, 1), gather, _ar(4, 3)])
    assert _shape(got) == [("SmallAllreduce", (2,)), ("AllgatherRows", 9), ("SmallAllreduce", (4,))]


def test_overwriting_or_freeing_an_operand_stops_the_move():
    got = fuse_list([_ar(2, 1), _loc(1, 0), _ar(4, 3)])            # slot 1 rewritten after its Allreduce
    assert _shape(got)[0] == ("SmallAllreduce", (2,))
    got = fuse_list([_ar(2, 1), ir.Free((1,)), _ar(4, 3)])
    assert _shape(got)[:2] == [("SmallAllreduce", (2,)), ("Free", None)]


def test_large_and_product_allreduces_are_left_alone():
    big, prod = _ar(2, 1, entries=SMALL + 1), _ar(4, 3, product=0)
    assert fuse_list([big, prod]) == [big, prod]


def test_loop_bodies_are_rewritten():
    loop = ir.Loop((0,), (10,), [_loc(11, 10)], 11, [_loc(1, 10), _ar(2, 1), _loc(3, 10), _ar(4, 3)], (2,), 12, 5)
    (got,) = fuse_list([loop])
    assert _shape(got.body) == [("Local", 1), ("Local", 3), ("SmallAllreduce", (2, 4))]


# ----------------------------------------------------------------- values, against numpy
def _program():
    A = dp.sparse("A", ("n", "n"))          # partitions n, so D's rows are spread over the ranks
    D = dp.dense("D", ("n", "k"))          # a dense (dynamic) input: reductions are planned, not static
    S = dp.select(D, ">", 0.0)              # entries <= 0 are missing
    ints = dp.cast(dp.select(S, "<", 3.5), "int64")
    return dp.function(outputs={
        "sum": dp.reduce_all(S), "min": dp.reduce_all(S, "min"), "colmax": dp.reduce_cols(S, "max"),
        "any": dp.reduce_all(S > 2.5, "lor"), "none": dp.reduce_all(dp.select(S, ">", 100.0)),
        "prod": dp.reduce_all(ints, "times"), "spmm": dp.reduce_all(A @ D)})


def _data(seed):
    rng = np.random.default_rng(seed)
    n, k = 13, 3
    vals = rng.integers(1, 5, (n, k)).astype(float)
    present = rng.random((n, k)) < 0.5
    present[:5] = False                      # some ranks hold no entry at all
    A = sp.random_array((n, n), density=0.3, random_state=rng, format="csr")
    return {"A": A, "D": np.where(present, vals, -1.0)}, vals, present


def _oracle(inputs, vals, present):
    """Dense numpy with GraphBLAS semantics: a reduction of no entries is missing (None)."""
    v = vals[present]
    colmax = [vals[present[:, j], j].max() if present[:, j].any() else None for j in range(vals.shape[1])]
    small = present & (vals < 3.5)
    return {"sum": v.sum() if v.size else None, "min": v.min() if v.size else None, "colmax": colmax,
            "any": bool((v > 2.5).any()) if v.size else None, "none": None,
            "prod": int(np.prod(vals[small].astype(np.int64))) if small.any() else None,
            "spmm": float((inputs["A"].toarray() @ inputs["D"]).sum())}


def _as_python(arr):
    M = arr.to_graphblas()
    cells = [[None] * M.ncols for _ in range(M.nrows)]
    r, c, v = M.to_coo()
    for i, j, x in zip(r, c, v):
        cells[i][j] = x.item()
    return cells[0][0] if (M.nrows, M.ncols) == (1, 1) else cells[0]


@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_small_allreduces_equal_numpy(P):
    f = _program()
    inputs, vals, present = _data(P)
    want = _oracle(inputs, vals, present)
    got, _ = run_dist(f, inputs, P, plan="p2p1d", partition="random", seed=P)
    for k, w in want.items():
        g = _as_python(got[k])
        assert g == w or k == "spmm" and abs(g - w) < 1e-12 * abs(w), (k, g, w)


def test_the_reductions_of_one_step_travel_together():
    f = _program()
    inputs = _data(0)[0]
    c = f.plan(3, inputs, Options(plan="p2p1d", partition="random"))
    instrs = c.plan.programs[0].instrs
    small = [i for i in instrs if isinstance(i, ir.SmallAllreduce)]
    assert not any(isinstance(i, ir.Allreduce) for i in instrs)
    # the six reductions of D's pieces in one collective; the product's own after its messages
    assert [len(x.outs) for x in small] == [6, 1]


# ------------------------------------------------- loops whose condition needs no broadcast
def _program_of(instrs, consts=None, rank=0):
    return ir.RankProgram(rank, 2, list(instrs), 20, dict(consts or {}), {}, {})


def _loop(init, cond, results, body):
    return ir.Loop((init,), (10,), cond, 11, body, (results,), 12, 5)


def _agreed(*programs):
    from dspla.plan.fuse import fuse
    return [p.instrs[-1].agreed for p in fuse(list(programs))]


def test_a_condition_from_small_allreduces_is_agreed():
    body = [_loc(1, 10), _ar(2, 1)]
    prog = [_loc(3, 0), _ar(4, 3), _loop(4, [_loc(11, 10)], 2, body)]
    assert _agreed(_program_of(prog), _program_of(prog, rank=1)) == [True, True]


def test_a_condition_on_a_rank_s_own_piece_is_not():
    body = [_loc(1, 10), _ar(2, 1)]
    prog = [_loc(3, 0), _loop(3, [_loc(11, 10)], 2, body)]           # the first check reads slot 3 (a piece)
    assert _agreed(_program_of(prog), _program_of(prog, rank=1)) == [False, False]


def test_a_carried_value_the_body_makes_differ_is_not():
    body = [_loc(1, 10, 0)]                                            # mixes in input slot 0 (a piece)
    prog = [_loc(3, 0), _ar(4, 3), _loop(4, [_loc(11, 10)], 1, body)]
    assert _agreed(_program_of(prog), _program_of(prog, rank=1)) == [False, False]


def test_a_large_allreduce_is_not_trusted_to_agree():
    body = [_loc(1, 10), _ar(2, 1, entries=SMALL + 1)]                # MPI's own reduction order
    prog = [_loc(3, 0), _ar(4, 3), _loop(4, [_loc(11, 10)], 2, body)]
    assert _agreed(_program_of(prog), _program_of(prog, rank=1)) == [False, False]


def test_replicated_planning_values_agree_and_every_rank_must_say_so():
    shared, mine, theirs = object(), object(), object()
    body = [_loc(1, 10), _ar(2, 1)]
    prog = [_loop(0, [_loc(11, 10)], 2, body)]
    assert _agreed(_program_of(prog, {0: shared}), _program_of(prog, {0: shared}, rank=1)) == [True, True]
    assert _agreed(_program_of(prog, {0: mine}), _program_of(prog, {0: theirs}, rank=1)) == [False, False]


def test_loops_stop_together_without_the_broadcast():
    """PageRank and label propagation at P = 2, 3: the same results as one process, with
    conditions marked agreed and no broadcast counted for them."""
    from dspla.frontend.parser import parse_file
    from dspla.function import Function
    rng = np.random.default_rng(5)
    A = sp.random_array((60, 60), density=0.06, random_state=rng, format="csr")
    for name, inputs in (("pagerank", {"A": A, "r0": np.ones((60, 1))}),
                         ("cc", {"A": A})):
        f = Function(parse_file(f"examples/{name}.dspla"))
        want = f(**inputs)
        for P in (2, 3):
            got, stats = run_dist(f, inputs, P, plan="p2p1d", partition="random", seed=P)
            for k in want:
                assert np.array_equal(got[k].present(), want[k].present()), (name, k)
                np.testing.assert_allclose(got[k].to_numpy(fill=0), want[k].to_numpy(fill=0), rtol=1e-12, atol=1e-15)
            c = f.plan(P, inputs, Options(plan="p2p1d", partition="random", seed=P))
            loops = [i for i in c.plan.programs[0].instrs + c.plan.programs[0].setup if isinstance(i, ir.Loop)]
            assert loops and all(lp.agreed for lp in loops), name
            assert all(lp.traffic(ir.Where(0, (P,)), 7) == ir.NO_TRAFFIC for lp in loops)


def test_ranks_planning_alone_compare_verdicts():
    """SPMD planning: each rank has only its program; a verdict one rank cannot confirm is
    dropped everywhere, and planning-time values are not trusted to agree."""
    import threading

    from dspla.plan.fuse import fuse
    from dspla.runtime.comm.sim import SimComm

    body = [_loc(1, 10), _ar(2, 1)]
    agreeing = [_loc(3, 0), _ar(4, 3), _loop(4, [_loc(11, 10)], 2, body)]
    differing = [_loc(3, 0), _loop(3, [_loc(11, 10)], 2, body)]
    for progs, want in (((agreeing, agreeing), True), ((agreeing, differing), False)):
        comms, got = SimComm.create(2), [None, None]

        def plan(r):
            (p,) = fuse([_program_of(progs[r], rank=r)], comm=comms[r])
            got[r] = p.instrs[-1].agreed
        threads = [threading.Thread(target=plan, args=(r,)) for r in range(2)]
        [t.start() for t in threads]
        [t.join(30) for t in threads]
        assert got == [want, want]
    shared = object()
    (p,) = fuse([_program_of([_loop(0, [_loc(11, 10)], 2, body)], {0: shared})], comm=SimComm.create(1)[0])
    assert not p.instrs[-1].agreed


# --------------------------------------------------------------- local work above waits
def _stack(out, a, own, *recvs):
    return ir.StackMxM(out, a, own, recvs, None)


def test_local_work_independent_of_a_wait_runs_before_it():
    from dspla.plan.fuse import hoist_list
    send = ir.Send(5, 1, 7, 3, "float64")
    got = hoist_list([_loc(1, 0), ir.Recv(4, 1, 7, 3, 1, "float64"), send, _stack(6, 2, 1, 4),
                      _loc(7, 6), _loc(8, 0), _loc(9, 8), ir.WaitSends((5,))])
    # 8 and 9 read neither the product's result nor the receive: they move above the product,
    # below the send; 7 reads the product and stays after it
    assert _shape(got) == [("Local", 1), ("Recv", 4), ("Send", None), ("Local", 8), ("Local", 9),
                           ("StackMxM", 6), ("Local", 7), ("WaitSends", None)]


def test_local_work_stays_below_what_it_depends_on_or_overwrites():
    from dspla.plan.fuse import hoist_list
    rows = [_stack(6, 2, 1, 4), _loc(1, 0)]          # overwrites the product's operand: stays after
    assert _shape(hoist_list(rows)) == [("StackMxM", 6), ("Local", 1)]
    rows = [ir.WaitSends((5,)), _loc(5, 0)]          # reuses the slot the wait lets go of
    assert _shape(hoist_list(rows)) == [("WaitSends", None), ("Local", 5)]
    rows = [ir.Send(5, 1, 7, 3, "float64"), _loc(8, 0)]   # never above a send (or any posting)
    assert _shape(hoist_list(rows)) == [("Send", None), ("Local", 8)]
    rows = [ir.SmallAllreduce((3,), (2,), (PLUS,), (1,)), _loc(8, 0)]   # nor above a collective
    assert _shape(hoist_list(rows)) == [("SmallAllreduce", (3,)), ("Local", 8)]


def test_scalar_allreduces_are_posted_early_and_completed_where_needed():
    from dspla.plan.fuse import post_list
    slots = iter(range(100, 110))
    sa = ir.SmallAllreduce((3,), (2,), (PLUS,), (1,))
    got = post_list([_loc(2, 0), ir.Recv(4, 1, 7, 3, 1, "float64"), _stack(6, 1, 0, 4), sa, _loc(7, 6),
                     _loc(8, 3)], lambda: next(slots))
    # posted right after its source (above the product's wait, below the receive's posting);
    # completed before the first reader of its result, after local work that does not read it
    assert _shape(got) == [("Local", 2), ("Recv", 4), ("ISmallAllreduce", (3,)), ("StackMxM", 6), ("Local", 7),
                           ("WaitAllreduce", (3,)), ("Local", 8)]
    assert got[2].req == got[5].req == 100
    vector = ir.SmallAllreduce((3,), (2,), (PLUS,), (4,))   # not scalars: left blocking
    assert _shape(post_list([_loc(2, 0), vector], lambda: next(slots)))[1] == ("SmallAllreduce", (3,))
