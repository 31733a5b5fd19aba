"""What a run leaves in reference cycles is freed when it ends, without scanning every object
the program holds (runtime/process.py collect_run_garbage)."""
import gc
import weakref

import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla.runtime.process import collect_run_garbage, older_collections


class _Node:
    pass


def _cycle():
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_a_young_cycle_is_freed():
    before = older_collections()
    dead = _cycle()
    assert dead() is not None   # (held by its cycle only)
    collect_run_garbage(before)
    assert dead() is None


def test_a_cycle_moved_to_the_oldest_generation_during_the_run_is_freed():
    before = older_collections()
    a = _Node()
    a.me = a
    dead = weakref.ref(a)
    gc.collect(1)   # what the interpreter may do mid-run: a is alive, so it moves to generation 2
    del a
    gc.collect(1)   # (a young collection alone does not see it any more)
    assert dead() is not None
    collect_run_garbage(before)
    assert dead() is None


def test_plain_calls_never_collect_the_oldest_generation():
    # with the user's objects made after the plan, a full collection on every call scanned
    # them all (14 ms per call with 100,000, 175 ms with a million)
    A = sp.random_array((60, 60), density=0.1, random_state=0, format="csr")
    X = np.random.default_rng(0).random((60, 4))
    f = dp.function(outputs={"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    for _ in range(3):
        f(A=A, X=X)
    user = [{"i": [i]} for i in range(20_000)]
    full = []

    def seen(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(info)
    gc.callbacks.append(seen)
    try:
        for _ in range(20):
            np.testing.assert_allclose(f(A=A, X=X)["C"].to_numpy(fill=0.0), A @ X)
    finally:
        gc.callbacks.remove(seen)
    assert not full and len(user) == 20_000
