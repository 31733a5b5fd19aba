"""Steps that read only the plan's static values and inputs passed again as the same numpy or
scipy objects are computed once and their results kept (runtime/interp/kept.py): a BFS's levels
start from its sources and its depth from them. The oracle is scipy's shortest paths."""
import sys
from pathlib import Path

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import dspla as dp
from dspla.instr import Local
from dspla.runtime.comm.sim import run_simulated
from dspla.runtime.interp import EXEC
from dspla.session import DistSession

from harness import gather

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from bfs import bfs_function  # noqa: E402


def _graph(n=40, seed=3):
    A = sp.random_array((n, n), density=0.06, random_state=seed, format="csr")
    return ((A + A.T) > 0).astype(np.float64).tocsr()


def _source(n, src):
    return sp.csr_array(([True], ([src], [0])), shape=(n, 1))


def _want(A, src):
    d = shortest_path(A, unweighted=True, indices=src)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _top_level_steps(monkeypatch):
    """How many Local steps outside loops each call computes."""
    counts = []
    real = EXEC[Local]

    def spy(rt, i):
        if any(i is j for j in rt.program.instrs):
            counts[-1] += 1
        return real(rt, i)
    monkeypatch.setitem(EXEC, Local, spy)
    return counts


def test_steps_on_an_unchanged_source_are_computed_once(monkeypatch):
    A, f = _graph(), bfs_function()
    counts = _top_level_steps(monkeypatch)
    s = _source(40, 0)
    for src in (0, 0, 0, 0, "new object", 7, 7, 7):
        if src == "new object":
            s, src = _source(40, 0), 0
        elif src != int(s.tocoo().row[0]):
            s = _source(40, src)
        counts.append(0)
        got = f(A=A, s=s)["levels"].to_numpy(fill=-1)[:, 0]
        np.testing.assert_array_equal(got, _want(A, src))
    # planned (nothing kept); unchanged, computed and kept; then put back; each new object alike
    assert counts[:4] == [3, 3, 0, 0] and counts[4:6] == [3, 3] and counts[6:] == [3, 0], counts


def test_a_python_graphblas_source_written_in_place_is_seen():
    A, f = _graph(), bfs_function()
    s = gb.io.from_scipy_sparse(_source(40, 0))   # (bound as it is: the caller's own matrix)
    for _ in range(3):
        np.testing.assert_array_equal(f(A=A, s=s)["levels"].to_numpy(fill=-1)[:, 0], _want(A, 0))
    del s[0, 0]
    s[9, 0] = True
    np.testing.assert_array_equal(f(A=A, s=s)["levels"].to_numpy(fill=-1)[:, 0], _want(A, 9))


def test_a_kept_result_reaching_an_output_is_handed_out_as_a_copy():
    # no source: the loop runs no iteration and its result is the kept start itself
    A, s = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1), "bool")
    start = dp.cast(s, "int64") + 1
    _, x = dp.while_loop(lambda f, x: dp.nvals(f) > 0,
                         lambda f, x: (dp.mxm(dp.cast(A.T, "bool"), f, "any_pair"), x + 1), (s, start), "n")
    f = dp.function({"x": x}, inputs=[A, s])
    a, none = _graph(), sp.csr_array((40, 1), dtype=bool)
    for _ in range(4):
        got = f(A=a, s=none)["x"]
        assert got.nvals == 0
        got.to_graphblas()[3, 0] = 5   # (the caller's copy: the next call's start is not this)
    assert f.session().runtime.memo


@pytest.mark.parametrize("P", [2, 3, 4])
def test_every_rank_keeps_what_it_may(P):
    A = _graph()
    sources = [0, 0, 0, 11, 11]
    objects = {src: _source(40, src) for src in set(sources)}

    def body(comm):
        s = DistSession(bfs_function().compiled, comm)
        got = []
        for src in sources:
            out = gather(s.run({"A": A, "s": objects[src]} if comm.rank == 0 else None))
            got.append(out["levels"].to_numpy(fill=-1)[:, 0])
        return got
    for rank in run_simulated(P, body, timeout=120):
        for src, levels in zip(sources, rank):
            np.testing.assert_array_equal(levels, _want(A, src))


def test_no_step_writes_into_a_kept_result():
    # x is kept; the update is x's only reader, so it would write into x in place if let
    s, t = dp.sparse("s", ("n", 1), "bool"), dp.sparse("t", ("n", 1), "bool")
    x = dp.cast(s, "int64") * 0
    one = dp.reduce_all(dp.cast(t, "int64"), "max")
    f = dp.function({"y": dp.update(x, one, mask=t, structure=True)}, inputs=[s, t])
    src = _source(12, 2)
    for k in range(5):
        marks = sp.csr_array(([True], ([k + 5], [0])), shape=(12, 1))
        want = np.full(12, -1)
        want[2], want[k + 5] = 0, 1
        np.testing.assert_array_equal(f(s=src, t=marks)["y"].to_numpy(fill=-1)[:, 0], want)
    assert f.session().runtime.memo
