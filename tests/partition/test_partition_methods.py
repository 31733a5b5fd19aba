"""Row partitioners: balance within eps, determinism, errors, backends; expectations by loops."""
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DimensionMismatch, PlanError, UnknownNameError
from dspla.partition import METHODS, partition, random_parts
from dspla.partition.balance import rebalance

from conftest import dataset


def powerlaw_graph(n=400, seed=0, directed=True):
    """A small graph with hubs (degree ~ Zipf), self loops on some rows, some empty rows."""
    rng = np.random.default_rng(seed)
    deg = np.minimum(rng.zipf(2.0, n), n // 4)
    deg[rng.choice(n, n // 20, replace=False)] = 0
    src = np.repeat(np.arange(n), deg)
    dst = (rng.zipf(1.6, src.size) * 7919 + src) % n
    A = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    A.sum_duplicates()
    A.data[:] = 1
    return A if directed else ((A + A.T) > 0).astype(float).tocsr()


def part_weights_loop(parts, weights, P):
    out = [0] * P
    for p, w in zip(parts.tolist(), weights.tolist()):
        out[p] += w
    return out


def volume_loop(A, parts):
    """Connectivity-1 of the column-net model with the owner of row j of B as a pin, by sets."""
    C = sp.csc_matrix(A)
    return sum(len(set(parts[C.indices[C.indptr[j]:C.indptr[j + 1]]].tolist()) | {parts[j]}) - 1
               for j in range(A.shape[1]))


FAST = {"preset": "default"}
CASES = [("block", {}), ("random", {}), ("graph", {}), ("hypergraph", FAST),
         ("stochastic-hypergraph", {"preset": "default", "batch_size": 40})]


@pytest.mark.parametrize("method,params", CASES)
@pytest.mark.parametrize("P", [3, 8])
def test_balance_within_eps_and_deterministic(method, params, P):
    A = powerlaw_graph()
    eps = 0.03
    r1 = partition(A, P, method, eps=eps, seed=5, cache=False, **params)
    r2 = partition(A, P, method, eps=eps, seed=5, cache=False, **params)
    assert np.array_equal(r1.parts, r2.parts)
    assert r1.parts.dtype == np.int64 and r1.parts.shape == (A.shape[0],)
    assert r1.parts.min() >= 0 and r1.parts.max() < P
    weights = np.diff(A.indptr) if r1.weight == "nnz" else np.ones(A.shape[0], dtype=int)
    W = part_weights_loop(r1.parts, weights, P)
    L0 = max(sum(W) / P, max(weights))  # no partition can beat the heaviest row
    assert max(W) <= (1 + eps) * L0 + 1e-9
    assert r1.imbalance == pytest.approx(max(W) / L0 - 1)
    assert r1.imbalance_vs_average == pytest.approx(max(W) / (sum(W) / P) - 1)
    assert r1.method == method and r1.P == P and r1.seconds >= 0 and not r1.cached


def test_structure_aware_methods_beat_random():
    A = powerlaw_graph(600, seed=3, directed=False)
    vol = {m: volume_loop(A, partition(A, 8, m, seed=0, cache=False, **p).parts) for m, p in
           [("random", {}), ("graph", {}), ("hypergraph", FAST)]}
    assert vol["hypergraph"] < vol["random"] and vol["graph"] < vol["random"]


@pytest.mark.parametrize("backend", ["mtkahypar", "kahypar"])
def test_both_hypergraph_backends(backend):
    A = powerlaw_graph(300, seed=1)
    r = partition(A, 4, "hypergraph", seed=2, backend=backend, cache=False, refine=False,
                  **({"preset": "default"} if backend == "mtkahypar" else {}))
    assert r.backend == backend and r.imbalance <= 0.03 + 1e-9
    assert volume_loop(A, r.parts) < volume_loop(A, random_parts(300, 4, 2))


def test_hypergraph_on_real_graph_meets_eps_and_km1_is_volume():
    from dspla.analysis import comm_stats
    from dspla.formats.graph import load_graph

    A = sp.csr_matrix(load_graph(dataset("snap", "ca-HepPh.txt")).matrix)
    r = partition(A, 8, "hypergraph", seed=0, cache=False, preset="default")
    assert r.imbalance <= 0.03 + 1e-9 and r.imbalance_vs_average <= 0.03 + 1e-9  # no row is heavier than avg
    st = comm_stats(A, r.parts)
    assert st.km1 == st.volume_total == volume_loop(A, r.parts)
    rp = comm_stats(A, random_parts(A.shape[0], 8, 0))
    assert st.volume_total < 0.5 * rp.volume_total


def test_rectangular_hypergraph_and_block():
    A = sp.random(60, 90, density=0.08, random_state=4, format="csr")
    for m, p in [("hypergraph", FAST), ("block", {}), ("random", {})]:
        r = partition(A, 4, m, cache=False, **p)
        assert r.parts.shape == (60,) and r.imbalance <= 0.03 + 1e-9
    with pytest.raises(DimensionMismatch, match="square"):
        partition(A, 4, "graph", cache=False)


def test_random_is_the_runtime_function():
    A = powerlaw_graph(101)
    r = partition(A, 7, "random", seed=11)
    assert np.array_equal(r.parts, random_parts(101, 7, 11))
    counts = np.bincount(r.parts, minlength=7)
    assert counts.max() - counts.min() <= 1
    assert not np.array_equal(r.parts, random_parts(101, 7, 12))


def test_block_is_contiguous():
    parts = partition(sp.identity(10, format="csr"), 3, "block").parts
    assert parts.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_one_process():
    r = partition(powerlaw_graph(50), 1, "hypergraph")
    assert np.all(r.parts == 0) and r.imbalance == 0


def test_errors_are_clear():
    A = powerlaw_graph(30)
    with pytest.raises(UnknownNameError) as e:
        partition(A, 2, "metis")
    assert "hypergraph" in str(e.value) and "random" in str(e.value) and "graph" in str(e.value)
    with pytest.raises(PlanError, match="at least 1"):
        partition(A, 0, "random")
    with pytest.raises(PlanError, match="more than the 30 rows"):
        partition(A, 31, "random")
    with pytest.raises(PlanError, match="no backend 'patoh'"):
        partition(A, 2, "hypergraph", backend="patoh")
    with pytest.raises(PlanError, match="no parameter 'trials'"):
        partition(A, 2, "graph", trials=3)
    with pytest.raises(PlanError, match="scipy sparse"):
        partition(np.eye(4), 2, "random")
    with pytest.raises(UnknownNameError, match="quality"):
        partition(A, 2, "hypergraph", preset="best", cache=False)
    assert set(METHODS) >= {"block", "random", "graph", "hypergraph", "stochastic-hypergraph"}


def test_rebalance_moves_weight_out_of_overloaded_parts():
    w = np.array([5, 1, 1, 1, 1, 1, 1, 1, 4, 4])
    parts = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 2])  # part 0 weighs 12, average 20/3
    new, moved = rebalance(parts, w, 3, 0.1)
    W = part_weights_loop(new, w, 3)
    assert max(W) <= 1.1 * max(20 / 3, 5) + 1e-9 and moved > 0
    assert new[0] == 0 or W[new[0]] <= 1.1 * 20 / 3  # the heavy row may stay
    same, moved = rebalance(new, w, 3, 0.1)
    assert moved == 0 and np.array_equal(same, new)


def test_rebalance_exchanges_when_no_single_move_fits():
    # every part has room 0.3 only, less than any vertex: moves cannot help, two exchanges of a 4
    # for a 3 can
    w = np.array([4, 4, 4, 3, 3, 3, 3, 3, 3])
    parts = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])  # 12 / 9 / 9, bound 1.03 * 10
    new, moved = rebalance(parts, w, 3, 0.03)
    assert part_weights_loop(new, w, 3) == [10, 10, 10] and moved == 4


@pytest.mark.parametrize("seed", range(6))
def test_rebalance_meets_the_bound_with_heavy_rows(seed):
    # a few heavy rows per part against a tight bound (ca-HepPh at P = 512: rows of 250-490
    # nonzeros, average part 463); whatever the start, the fix-up ends within (1 + eps) L0
    rng = np.random.default_rng(seed)
    P = 32
    w = np.concatenate([rng.integers(150, 260, 3 * P), rng.integers(1, 20, 20 * P)]).astype(float)
    parts = rng.integers(0, P, w.size)
    parts[: 3 * P][rng.random(3 * P) < 0.5] = 0  # heavy rows piled onto part 0 and its neighbours
    new, moved = rebalance(parts, w, P, 0.03)
    L0 = max(w.sum() / P, w.max())
    assert max(part_weights_loop(new, w, P)) <= 1.03 * L0 + 1e-9
    assert np.array_equal(rebalance(parts, w, P, 0.03)[0], new)  # deterministic
    assert rebalance(new, w, P, 0.03)[1] == 0


@pytest.mark.data
def test_graph_partition_of_ca_hepph_honours_eps_at_large_P():
    # METIS leaves parts of 3-4 clique rows (about 250-430 nonzeros each) over the bound at P = 256
    # and 512; the fix-up must still end within eps (it used to stop at 0.16 and 0.50)
    from dspla.formats.graph import load_graph
    A = sp.csr_matrix(load_graph(dataset("snap", "ca-HepPh.txt")).matrix)
    for P in (256, 512):
        r = partition(A, P, "graph", eps=0.03, seed=1, cache=False)
        assert r.imbalance <= 0.03 + 1e-9 and r.moved > 0


def test_block_parts_is_row_times_p_over_n():
    from dspla.partition.simple import block_parts
    for n in [0, 1, 2, 3, 7, 63, 64, 65, 1000, 82168]:
        for P in [1, 2, 3, 4, 7, 64, 100]:
            want = np.array([i * P // n for i in range(n)], dtype=np.int64)   # the definition, row by row
            got = block_parts(n, P)
            assert got.dtype == np.int64 and np.array_equal(got, want), (n, P)
