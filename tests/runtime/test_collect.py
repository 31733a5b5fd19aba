"""What a run leaves in reference cycles is freed when it ends, without scanning every object
the program holds (runtime/process.py collect_run_garbage), and what outlives a run (results,
the inputs' conversions) is freed as soon as it is let go (kernels/acyclic.py)."""
import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.runtime import process
from dspla.runtime.process import collect_run_garbage, collections_so_far


class _Node:
    pass


def _cycle():
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_a_young_cycle_is_freed():
    before = collections_so_far()
    dead = _cycle()
    assert dead() is not None   # (held by its cycle only)
    collect_run_garbage(before)
    assert dead() is None


def test_a_cycle_moved_to_the_oldest_generation_during_the_run_is_freed():
    before = collections_so_far()
    a = _Node()
    a.me = a
    dead = weakref.ref(a)
    gc.collect(1)   # what the interpreter may do mid-run: a is alive, so it moves to generation 2
    del a
    gc.collect(1)   # (a young collection alone does not see it any more)
    assert dead() is not None
    collect_run_garbage(before)
    assert dead() is None


def test_a_cycle_moved_to_the_next_generation_during_the_run_is_freed():
    before = collections_so_far()
    a = _Node()
    a.me = a
    dead = weakref.ref(a)
    gc.collect(0)   # the interpreter's young collection mid-run: a is alive, so it moves to generation 1
    del a
    assert dead() is not None
    collect_run_garbage(before)
    assert dead() is None


def test_a_run_no_collection_interrupted_collects_the_youngest_generation_only():
    # (the common call: generation 1 holds what the caller's objects were promoted to since the
    # last run, which a collection of it would scan again for nothing)
    gens = []

    def seen(phase, info):
        if phase == "start":
            gens.append(info["generation"])
    before = collections_so_far()
    dead = _cycle()
    gc.callbacks.append(seen)
    try:
        collect_run_garbage(before)
    finally:
        gc.callbacks.remove(seen)
    assert dead() is None and gens in ([0], [2])   # (2: the periodic full collection fell due)


def _case(n=60, k=4):
    A = sp.random_array((n, n), density=0.1, random_state=0, format="csr")
    X = np.random.default_rng(0).random((n, k))
    f = dp.function(outputs={"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    return f, A, X


def _full_collections(calls):
    full = []

    def seen(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(info)
    gc.callbacks.append(seen)
    try:
        calls()
    finally:
        gc.callbacks.remove(seen)
    return len(full)


def test_plain_calls_collect_the_oldest_generation_only_now_and_then(monkeypatch):
    # with the user's objects made after the plan, a full collection on every call scanned
    # them all (14 ms per call with 100,000, 175 ms with a million)
    f, A, X = _case()
    for _ in range(3):
        f(A=A, X=X)
    user = [{"i": [i]} for i in range(20_000)]
    monkeypatch.setattr(process, "FULL_EVERY", 10**6)

    def calls(n):
        for _ in range(n):
            np.testing.assert_allclose(f(A=A, X=X)["C"].to_numpy(fill=0.0), A @ X)
    assert _full_collections(lambda: calls(20)) == 0 and len(user) == 20_000
    monkeypatch.setattr(process, "FULL_EVERY", 5)   # the bound on what else may wait for one
    assert _full_collections(lambda: calls(12)) >= 2


def test_a_result_let_go_is_freed_at_once():
    # the function keeps its last two outputs to write into again (kernels/recycle.py); with every
    # result held across the calls, the third call makes its own and lets go of the first, which
    # is then the caller's alone
    n, k = 300_000, 4
    rng = np.random.default_rng(0)
    A = sp.csr_array((rng.random(n), (rng.integers(0, n, n), rng.integers(0, n, n))), shape=(n, n))
    X = rng.random((n, k))
    f = dp.function(outputs={"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    f(A=A, X=X)
    first = f(A=A, X=X)
    freed = weakref.ref(first["C"].gb)
    gc.disable()
    try:
        second = f(A=A, X=X)
        third = f(A=A, X=X)
        assert freed() is not second["C"].gb and freed() is not third["C"].gb
        del first
        assert freed() is None
        np.testing.assert_allclose(third["C"].to_numpy(fill=0.0), A @ X)
        np.testing.assert_allclose(second["C"].to_numpy(fill=0.0), A @ X)
    finally:
        gc.enable()


def test_a_numpy_inputs_conversion_is_freed_when_a_new_one_replaces_it():
    # a new array on every call: each call's copy used to wait in the oldest generation for a
    # full collection (the heap grew by one copy per call)
    f, A, X = _case(200, 8)
    f(A=A, X=X)             # (the plan keeps the inputs it was made with)
    f(A=A, X=X + 0.5)
    conv = weakref.ref(f.session().inputs.conv["X"][1])
    gc.disable()
    try:
        for i in range(3):
            np.testing.assert_allclose(f(A=A, X=X + i + 1)["C"].to_numpy(fill=0.0), A @ (X + i + 1))
        assert conv() is None
    finally:
        gc.enable()


def test_the_heap_is_trimmed_after_planning_only_when_planning_freed_much(monkeypatch):
    """A fresh function's planning trims the heap (malloc_trim) unless the process has run a plan
    and planning grew it by less than PLANNING_GARBAGE (the heap's free memory is then the last
    run's buffers, which the run takes back), or planning kept what it grew by (the heap holds
    less than PLANNING_GARBAGE free)."""
    trims = []

    class Libc:
        def malloc_trim(self, pad):
            trims.append(pad)

    big = process.PLANNING_GARBAGE
    monkeypatch.setattr(process, "_libc", lambda: Libc())
    monkeypatch.setattr(process, "resident_bytes", lambda: 5 << 20)
    monkeypatch.setattr(process, "heap_free_bytes", lambda: 2 * big)
    process.release_freed_memory(since=4 << 20)   # grew by 1 MB: kept
    assert trims == []
    process.release_freed_memory(since=None)       # the process's first plan: trimmed
    monkeypatch.setattr(process, "resident_bytes", lambda: (4 << 20) + big)
    process.release_freed_memory(since=4 << 20)    # grew by 64 MB, 128 MB free: trimmed
    monkeypatch.setattr(process, "heap_free_bytes", lambda: big // 2)
    process.release_freed_memory(since=4 << 20)    # grew by 64 MB but kept most of it: not trimmed
    assert trims == [0, 0]


def test_the_resident_size_is_read_and_planning_marks_it_once_a_plan_ran():
    f = dp.function({"y": dp.sparse("A", ("n", "n")) * 2.0})
    f(A=sp.random_array((20, 20), density=0.2, format="csr", random_state=0))
    assert process._RAN
    got = process.resident_bytes()
    if got is None:
        pytest.skip("the resident size needs /proc/self/statm")
    with open("/proc/self/status") as fh:   # the kernel's own report of it, in kB
        rss = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS:"))
    assert abs(got - rss) < 8 << 20
    assert process.planning_mark() is not None


def _graph(n, seed):
    return sp.random_array((n, n), density=0.05, random_state=seed, format="csr")


def _held_matrices(f):
    """Weak references to the GraphBLAS matrices the function's current plan holds (its static
    values: the graph's transpose and what depends on it)."""
    import graphblas as gb
    slots = f.session().runtime.slots
    return [weakref.ref(m) for m in (slots.values() if isinstance(slots, dict) else slots) if isinstance(m, gb.Matrix)]


@pytest.mark.parametrize("settled", ["not", "own", "another's"])
def test_a_replaced_plan_is_freed_when_the_new_one_is_made(settled):
    # a new graph every call: each replaced plan's values waited in the oldest generation (or,
    # frozen, for good), 20 MB a call on soc-Slashdot0902's connected components
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "k"))
    f = dp.function(outputs={"C": (A.T @ A) @ X})
    g = dp.function(outputs={"C": A @ X})
    x = np.ones((80, 3))
    A1, A2 = _graph(80, 1), _graph(80, 2)
    f(A=A1, X=x)
    if settled == "own":
        f(A=A1, X=x)   # (its second run settles the plan: frozen out of the collector's view)
    elif settled == "another's":
        g(A=A2, X=x)
        g(A=A2, X=x)   # (freezes every object alive, f's plan among them)
    held = _held_matrices(f)
    assert held
    gc.disable()
    try:
        got = f(A=A2, X=x)["C"].to_numpy(fill=0.0)
        assert all(r() is None for r in held)
    finally:
        gc.enable()
    np.testing.assert_allclose(got, (A2.T @ A2) @ x)


def test_a_long_loop_collects_the_next_generation_when_due():
    # collecting generation 0 by hand after every iteration reset the count that triggers the
    # interpreter's own collections of generation 1, which then never came during a loop
    n = 4 * gc.get_threshold()[1]
    path = sp.csr_array((np.ones(n - 1), (np.arange(1, n), np.arange(n - 1))), shape=(n, n))
    A, x = dp.sparse("A", ("n", "n")), dp.sparse("x", ("n", 1))
    (step,) = dp.while_loop(lambda v: dp.nvals(v) < n, lambda v: (dp.ewise_add(v, dp.mxm(A, v, "any_pair"), "any"),),
                            (x,), "n")
    f = dp.function({"v": step})
    x0 = sp.csr_array(([1.0], ([0], [0])), shape=(n, 1))
    f(A=path, x=x0)
    before = gc.get_stats()[1]["collections"]
    assert f(A=path, x=x0)["v"].nvals == n
    assert gc.get_stats()[1]["collections"] - before >= 2


def test_a_call_after_a_failed_plan_plans_again(monkeypatch):
    # the replaced plan is dropped before the new one is made: a failure in between must not
    # leave the next call with no plan, or with the old graph's
    from dspla import compiler
    A = dp.sparse("A", ("n", "n"))
    f = dp.function(outputs={"C": A @ dp.dense("X", ("n", "k"))})
    x = np.ones((80, 3))
    A1, A2 = _graph(80, 1), _graph(80, 2)
    f(A=A1, X=x)
    real = compiler.distribute

    def broken(*args, **kwargs):
        raise RuntimeError("planning failed")
    monkeypatch.setattr(compiler, "distribute", broken)
    with pytest.raises(RuntimeError, match="planning failed"):
        f(A=A2, X=x)
    monkeypatch.setattr(compiler, "distribute", real)
    np.testing.assert_allclose(f(A=A2, X=x)["C"].to_numpy(fill=0.0), A2 @ x)
