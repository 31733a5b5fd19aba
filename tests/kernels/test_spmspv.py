"""Direction-optimizing BFS (kernels/spmspv.py) and updates written in place (ops/update.py):
levels against scipy.sparse.csgraph's unweighted shortest paths on symmetric and directed
graphs, both directions taken and counted in the stats, the same levels at P = 1, 2, 4; the
push and pull kernels each against a dense numpy product; a loop's in-place update leaves its
starting value (an input, a value computed once) as it was."""
import sys
from pathlib import Path

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import dspla as dp
from dspla import algebra
from dspla.ir.types import DType
from dspla.kernels import spmspv
from tests.harness import run_dist

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from bfs import bfs_function, bfs_levels  # noqa: E402


def _graph(n, density, seed, symmetric):
    A = sp.random_array((n, n), density=density, format="csr", random_state=seed)
    if symmetric:
        A = A + A.T
    A = sp.csr_array(A)
    A.data[:] = 1.0
    return A


def _levels(A, src):
    d = csgraph.shortest_path(A, unweighted=True, indices=src, directed=True)   # A[i, j]: an edge i -> j
    return np.where(np.isinf(d), -1, d).astype(int)


@pytest.mark.parametrize("symmetric", [True, False])
def test_bfs_levels_equal_csgraph_and_both_directions_run(symmetric):
    A = _graph(3000, 0.003, 1, symmetric)
    f = bfs_function()
    for src in (0, 7, 2999):
        assert (bfs_levels(A, src, f) == _levels(A, src)).all()
    routes = f.last_stats["routes"]
    assert routes.get("spmspv-push", 0) > 0 and routes.get("spmspv-pull", 0) > 0, routes


@pytest.mark.parametrize("plan", ["p2p1d", "allgather1d"])
@pytest.mark.parametrize("symmetric", [True, False])
def test_bfs_distributed_equals_one_process_and_every_rank_chooses_alike(plan, symmetric):
    """Each rank pushes or pulls its block by the frontier's size over all ranks: every rank
    takes a direction at every level (the summed counts are P times one rank's, one product a
    level as in one process, which weighs the frontier's edges instead)."""
    A = _graph(3000, 0.003, 2, symmetric)
    n = A.shape[0]
    s = sp.csr_array(([True], ([3], [0])), shape=(n, 1))
    want = _levels(A, 3)
    f = bfs_function()
    f(A=A, s=s)
    one = f.last_stats["routes"]
    assert one.get("spmspv-push", 0) > 0 and one.get("spmspv-pull", 0) > 0, one
    for P in (2, 4):
        outs, stats = run_dist(bfs_function(), {"A": A, "s": s}, P, plan=plan)
        assert (outs["levels"].to_numpy(fill=-1)[:, 0] == want).all()
        routes = stats["routes"]
        assert all(v % P == 0 for v in routes.values()), (plan, P, routes)
        assert sum(routes.values()) == P * sum(one.values()), (plan, P, routes, one)
        assert routes.get("spmspv-push", 0) > 0 and routes.get("spmspv-pull", 0) > 0, routes


def _vec(idx, n):
    v = gb.Matrix(bool, n, 1)
    v.build(idx, np.zeros(len(idx), dtype=np.int64), np.ones(len(idx), dtype=bool))
    return v


@pytest.mark.parametrize("pull", [True, False])
def test_push_and_pull_kernels_equal_dense_product(pull):
    A = _graph(300, 0.02, 3, False)
    a = gb.io.from_scipy_sparse(A.T.tocsr().astype(bool))
    fr = spmspv.Frontier(a.T.new(), 300)
    rng = np.random.default_rng(0)
    q = _vec(rng.choice(300, 40, replace=False), 300)
    seen = _vec(rng.choice(300, 100, replace=False), 300)
    sr = algebra.get_semiring("any_pair")
    C = spmspv.product(fr, a, q, gb.semiring.any_pair[bool], gb.dtypes.BOOL, seen, True, pull)
    dense = (A.T.toarray() != 0) @ _dense(q) > 0
    dense[_dense(seen)] = False
    assert (_dense(C) == dense).all()
    assert spmspv.exact_either_way(sr, DType.bool)
    assert not spmspv.exact_either_way(algebra.get_semiring("plus_times"), DType.float64)


def test_rule_by_hand():
    """n = 1000, ALPHA 16, BETA 256: growing, pull past 62.5 nodes; shrinking, push at 3 or fewer."""
    fr = spmspv.Frontier(gb.Matrix(bool, 1000, 1000), 1000)
    got = [spmspv.pulls(fr, nq) for nq in (1, 50, 70, 400, 5, 3, 1)]
    assert got == [False, False, True, True, True, False, False]


def test_edge_rule_by_hand():
    """One process, LAGraph's rule: n = 1024, a clique of 64 nodes (4032 edges). Pull once a
    growing frontier's edges exceed the unexplored / 8; while pulling, push again once it shrinks
    to n / 512; after a pull, pull again when it grows past n / 8; never pull with fewer than n
    edges in the graph."""
    n = 1024
    r, c = np.nonzero(~np.eye(64, dtype=bool))
    fr = spmspv.Frontier(gb.Matrix.from_coo(r, c, True, nrows=n, ncols=n), n)
    assert fr.unexplored == 4032
    q = [_vec([0], n), _vec(list(range(1, 11)), n)] + [_vec([0], n)] * 6
    sizes = [1, 10, 20, 5, 2, 3, 100, 200]
    got = [spmspv.pulls_by_edges(fr, v, k) for v, k in zip(q, sizes)]
    # 63 * 8 <= 3969; 630 * 8 > 3339; growing; 5 * 512 > n; 2 * 512 <= n; 3, 100 * 8 <= n; 200 * 8 > n
    assert got == [False, True, True, True, False, False, False, True], got
    assert fr.unexplored == 4032 - 63 - 630
    fr.start()
    assert (fr.unexplored, fr.pushing, fr.last) == (4032, True, 0)
    star = gb.Matrix.from_coo(np.r_[np.zeros(9, int), np.arange(1, 10)], np.r_[np.arange(1, 10), np.zeros(9, int)],
                              True, nrows=n, ncols=n)
    fr = spmspv.Frontier(star, n)   # 18 edges < n: pushed to the end
    assert [spmspv.pulls_by_edges(fr, _vec([0], n), k) for k in (1, 500)] == [False, False]


def _dense(v):
    out = np.zeros(v.nrows, dtype=bool)
    out[v.to_coo()[0]] = True
    return out


def test_in_place_update_leaves_its_start_alone():
    """levels starts as an input and is written into in place each iteration: the input the
    caller gave (and the next call's start) is unchanged."""
    A = _graph(200, 0.02, 4, True)
    n = A.shape[0]
    a = dp.sparse("A", ("n", "n"))
    lv0 = dp.sparse("lv", ("n", 1), "int64")
    s = dp.sparse("s", ("n", 1), "bool")

    def level(frontier, levels, depth):
        depth = depth + 1
        frontier = dp.mxm(dp.cast(a.T, "bool"), frontier, "any_pair", mask=levels, complement=True, structure=True)
        return frontier, dp.update(levels, dp.ewise_mult(frontier, depth, "second"), mask=frontier,
                                   structure=True), depth

    depth = dp.reduce_all(lv0, "max")
    (_, levels, _), _ = dp.while_loop(lambda f, lv, d: dp.nvals(f) > 0, level, (s, lv0, depth), "n", count=True)
    f = dp.function({"levels": levels}, inputs=[a, lv0, s])
    start = sp.csr_array((np.array([0], dtype=np.int64), ([5], [0])), shape=(n, 1))
    src = sp.csr_array(([True], ([5], [0])), shape=(n, 1))
    for _ in range(2):
        got = f(A=A, lv=start, s=src)["levels"].to_numpy(fill=-1)[:, 0]
        assert (got == _levels(A, 5)).all()
        assert start.nnz == 1 and start.toarray()[5, 0] == 0
