"""A traversal loop fused at its first run (runtime/interp/fused.py): BFS levels against
scipy.sparse.csgraph's unweighted shortest paths, the same levels, iterations and routes as the
interpreter gives with the fusion off, and loops that are not the pattern left to the
interpreter."""
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import dspla as dp
from dspla.kernels import spmspv
from dspla.runtime.interp import fused

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from bfs import bfs_function, bfs_levels  # noqa: E402


def _graph(n, density, seed, symmetric):
    A = sp.random_array((n, n), density=density, format="csr", random_state=seed)
    A = sp.csr_array(A + A.T if symmetric else A)
    A.data[:] = 1.0
    return A


def _levels(A, src):
    d = csgraph.shortest_path(A, unweighted=True, indices=src, directed=True)
    return np.where(np.isinf(d), -1, d).astype(int)


def _kinds(f):
    return [type(v).__name__ for v in f.session().runtime.traversals.values()]


@pytest.mark.parametrize("symmetric", [True, False])
def test_fused_bfs_equals_csgraph(symmetric):
    A = _graph(2500, 0.002, 11, symmetric)
    f = bfs_function()
    for src in (0, 17, 2499):
        assert (bfs_levels(A, src, f) == _levels(A, src)).all()
    assert _kinds(f) == ["Traversal"]


def test_fused_and_interpreted_agree(monkeypatch):
    A = _graph(3000, 0.003, 12, True)
    s = sp.csr_array(([True], ([5], [0])), shape=(3000, 1))
    on = bfs_function()
    got_on = on(A=A, s=s)
    monkeypatch.setattr("dspla.runtime.interp.loops.recognize", lambda rt, loop: None)
    off = bfs_function()
    got_off = off(A=A, s=s)
    assert (got_on["levels"].to_numpy(fill=-1) == got_off["levels"].to_numpy(fill=-1)).all()
    assert got_on["iterations"].to_numpy()[0, 0] == got_off["iterations"].to_numpy()[0, 0]
    assert on.last_stats["routes"] == off.last_stats["routes"]
    assert on.last_stats["loops"][0]["iterations"] == off.last_stats["loops"][0]["iterations"]
    assert _kinds(on) == ["Traversal"] and _kinds(off) == ["NoneType"]


def test_float_depth_and_a_bound_that_stops_it():
    """Depths in float64 by 0.5, and a loop bound of 2 levels: stopped there, as interpreted."""
    A = _graph(400, 0.01, 13, True)
    n = A.shape[0]
    a = dp.sparse("A", ("n", "n"))
    s = dp.sparse("s", ("n", 1), "bool")
    lv = dp.cast(s, "float64") * 0
    depth = dp.reduce_all(lv, "max")

    def level(fr, lv, d):
        d = d + 0.5
        fr = dp.mxm(dp.cast(a.T, "bool"), fr, "any_pair", mask=lv, complement=True, structure=True)
        return fr, dp.update(lv, d, mask=fr, structure=True), d

    (_, lv, _), its = dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level, (s, lv, depth), 2, count=True)
    f = dp.function({"levels": lv, "iterations": its}, inputs=[a, s])
    src = sp.csr_array(([True], ([0], [0])), shape=(n, 1))
    with pytest.warns(dp.LoopBoundWarning if hasattr(dp, "LoopBoundWarning") else Warning):
        out = f(A=A, s=src)
    want = _levels(A, 0)
    got = out["levels"].to_numpy(fill=-1)[:, 0]
    near = want <= 2
    assert (got[near] == np.where(want[near] >= 0, want[near] * 0.5, -1)).all() and (got[~near] == -1).all()
    assert out["iterations"].to_numpy()[0, 0] == 2
    assert _kinds(f) == ["Traversal"]


def test_other_loops_are_interpreted():
    """An update that accumulates is not the pattern: the interpreter runs it."""
    A = _graph(300, 0.02, 14, True)
    n = A.shape[0]
    a = dp.sparse("A", ("n", "n"))
    s = dp.sparse("s", ("n", 1), "bool")
    lv = dp.cast(s, "int64") * 0
    depth = dp.reduce_all(lv, "max")

    def level(fr, lv, d):
        d = d + 1
        fr = dp.mxm(dp.cast(a.T, "bool"), fr, "any_pair", mask=lv, complement=True, structure=True)
        return fr, dp.update(lv, d, accum="plus", mask=fr, structure=True), d

    (_, lv, _), _ = dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level, (s, lv, depth), "n", count=True)
    f = dp.function({"levels": lv}, inputs=[a, s])
    got = f(A=A, s=sp.csr_array(([True], ([3], [0])), shape=(n, 1)))["levels"].to_numpy(fill=-1)[:, 0]
    assert (got == _levels(A, 3)).all()
    assert _kinds(f) == ["NoneType"]
    assert fused.recognize is not None


def _bfs_with_depth(extra):
    """BFS whose final depth is an output (``extra``: and its depth plus one, a step after the loop)."""
    a, s = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1), "bool")
    _, lv, d = _bfs_loop(a, s)
    return dp.function({"levels": lv, "depth": d + 1 if extra else d}, inputs=[a, s])


def _bfs_loop(a, s):
    """(the last frontier, the levels, the depth) of examples/bfs.py's loop, as expressions."""
    lv = dp.cast(s, "int64") * 0

    def level(fr, lv, d):
        d = d + 1
        fr = dp.mxm(dp.cast(a.T, "bool"), fr, "any_pair", mask=lv, complement=True, structure=True)
        return fr, dp.update(lv, d, mask=fr, structure=True), d

    return dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level, (s, lv, dp.reduce_all(lv, "max")), "n")


@pytest.mark.parametrize("extra", [False, True])
def test_a_depth_read_after_the_loop_is_its_last(extra):
    A = _graph(500, 0.006, 15, True)
    f = _bfs_with_depth(extra)
    for src in (0, 9):
        out = f(A=A, s=sp.csr_array(([True], ([src], [0])), shape=(500, 1)))
        want = _levels(A, src)
        assert (out["levels"].to_numpy(fill=-1)[:, 0] == want).all()
        # the loop ends after a level finds no node: its depth is one past the deepest level
        assert out["depth"].to_numpy()[0, 0] == want.max() + 1 + extra
    assert _kinds(f) == ["Traversal"]


def test_no_one_by_one_value_is_made_that_nothing_reads(monkeypatch):
    """A BFS reads neither its depth nor its test's values after the loop: the fused loop makes
    no 1 x 1 value for them."""
    A = _graph(300, 0.02, 16, True)
    s = sp.csr_array(([True], ([4], [0])), shape=(300, 1))
    f = bfs_function()
    for _ in range(2):
        f(A=A, s=s)
    made = []
    real = fused._item.scalar
    monkeypatch.setattr(fused._item, "scalar", lambda *a, **k: made.append(a) or real(*a, **k))
    out = f(A=A, s=s)
    assert made == [] and (out["levels"].to_numpy(fill=-1)[:, 0] == _levels(A, 4)).all()


def test_the_iteration_count_is_written_into_one_no_one_holds():
    n = 12   # a path: 12 levels from one end, 7 from the middle
    A = sp.csr_array((np.ones(2 * n - 2), (np.r_[0:n - 1, 1:n], np.r_[1:n, 0:n - 1])), shape=(n, n))
    f = bfs_function()
    s = {src: sp.csr_array(([True], ([src], [0])), shape=(n, 1)) for src in (0, 5)}
    held = [(src, f(A=A, s=s[src])["iterations"]) for src in (0, 5, 0, 5)]   # every result held
    assert [int(a.to_numpy()[0, 0]) for _, a in held] == [12, 7, 12, 7]
    made = [weakref.ref(a._piece) for _, a in held]
    del held
    for src, want in ((5, 7), (0, 12), (5, 7)):   # each let go at once
        out = f(A=A, s=s[src])["iterations"]
        assert int(out.to_numpy()[0, 0]) == want
        assert any(out._piece is m() for m in made)   # an earlier one, written into
        del out


def test_the_last_level_is_made_a_matrix_only_when_read(monkeypatch):
    A = _graph(300, 0.02, 18, True)
    s = sp.csr_array(([True], ([2], [0])), shape=(300, 1))
    a, src = dp.sparse("A", ("n", "n")), dp.sparse("s", ("n", 1), "bool")
    fr, lv, _ = _bfs_loop(a, src)
    with_frontier, bfs = dp.function({"levels": lv, "frontier": fr}, inputs=[a, src]), bfs_function()
    made = []
    real = spmspv.Handle.matrix
    monkeypatch.setattr(spmspv.Handle, "matrix", lambda h: made.append(h) or real(h))
    outs = [f(A=A, s=s) for f in (with_frontier, bfs)]
    assert all((out["levels"].to_numpy(fill=-1)[:, 0] == _levels(A, 2)).all() for out in outs)
    assert outs[0]["frontier"].shape == (300, 1) and outs[0]["frontier"].nvals == 0   # (the loop ran dry)
    assert len(made) == 1   # the output frontier's; the BFS's last level is let go
    assert _kinds(with_frontier) == _kinds(bfs) == ["Traversal"]


@pytest.mark.parametrize("min_nodes", [0, 10**9])
def test_pulled_levels_stamped_or_written_equal_csgraph(min_nodes, monkeypatch):
    """The Python loop's levels (the compiled one is tests/runtime/test_traverse.py's): pulled
    levels stamped and written when the loop ends (kernels/levels.py), or each written by
    GraphBLAS (a graph under MIN_NODES): csgraph's levels either way."""
    from dspla.kernels import levels
    monkeypatch.setattr(levels, "MIN_NODES", min_nodes)
    monkeypatch.setattr(fused, "_compiled", lambda *a: None)
    stamped = []
    finish = levels.LevelWriter.finish

    def spy(self, C):
        stamped.append(self.levels)
        return finish(self, C)
    monkeypatch.setattr(levels.LevelWriter, "finish", spy)
    A = _graph(4000, 0.004, 21, True)
    f = bfs_function()
    for src in (0, 1234):
        assert (bfs_levels(A, src, f) == _levels(A, src)).all()
    assert f.last_stats["routes"].get("spmspv-pull", 0) > 0
    assert (max(stamped) > 0) == (min_nodes == 0)
