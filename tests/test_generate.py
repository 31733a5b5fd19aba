"""Synthetic graph generators: determinism, sizes and degrees, symmetry, no self loops."""
import numpy as np
import pytest
import scipy.sparse as sp

from dspla.errors import DsplaError
from dspla.generate import SBMData, contextual_sbm, erdos_renyi, random_geometric, rmat


def same(A, B):
    return (A.shape == B.shape and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))


def check_pattern(A, n, symmetric=True):
    assert isinstance(A, sp.csr_array) and A.shape == (n, n) and A.dtype == np.float64
    assert A.nnz == 0 or set(np.unique(A.data)) == {1.0}
    assert A.diagonal().sum() == 0
    A.sum_duplicates()
    if symmetric:
        assert (A != A.T).nnz == 0


@pytest.mark.parametrize("make", [
    lambda s: rmat(10, seed=s),
    lambda s: rmat(9, seed=s, directed=True),
    lambda s: erdos_renyi(3000, 8, seed=s),
    lambda s: random_geometric(3000, avg_degree=8, seed=s),
    lambda s: contextual_sbm(3000, seed=s, n_test=500).adjacency,
])
def test_deterministic_for_a_seed(make):
    assert same(make(3), make(3))
    assert not same(make(3), make(4))


def test_seed_can_be_a_generator():
    a = erdos_renyi(500, 4, seed=np.random.default_rng(7))
    assert same(a, erdos_renyi(500, 4, seed=np.random.default_rng(7)))


def test_rmat_size_and_skew():
    A = rmat(12, edge_factor=8, seed=1)
    n = 4096
    check_pattern(A, n)
    assert 0.6 * 2 * 8 * n < A.nnz <= 2 * 8 * n  # duplicates and loops removed, still most
    deg = np.diff(A.indptr)
    assert deg.max() > 20 * deg.mean()  # power-law-ish, unlike G(n, p)
    D = rmat(12, edge_factor=8, seed=1, directed=True)
    check_pattern(D, n, symmetric=False)
    assert (D != D.T).nnz > 0


@pytest.mark.parametrize("a, b, c, edge", [(0, 1, 0, (0, 7)), (0, 0, 1, (7, 0))])
def test_rmat_quadrants(a, b, c, edge):
    """All probability on one quadrant: every sampled edge is the same corner of the matrix."""
    A = rmat(3, edge_factor=2, a=a, b=b, c=c, seed=0, directed=True, permute=False)
    assert A.nnz == 1 and tuple(int(x) for x in np.argwhere(A.toarray())[0]) == edge
    assert rmat(3, a=1, b=0, c=0, seed=0, permute=False).nnz == 0  # only (0,0): a self loop


def test_erdos_renyi_degree():
    n, d = 20000, 12
    A = erdos_renyi(n, d, seed=2)
    check_pattern(A, n)
    assert abs(A.nnz / n - d) < 0.05 * d
    D = erdos_renyi(n, d, seed=2, directed=True)
    check_pattern(D, n, symmetric=False)
    assert abs(D.nnz / n - d) < 0.05 * d
    assert erdos_renyi(1, 5).shape == (1, 1) and erdos_renyi(50, 0).nnz == 0
    assert erdos_renyi(30, 100).nnz == 30 * 29  # p capped at 1: complete graph


def test_random_geometric_matches_brute_force():
    A, pts = random_geometric(400, radius=0.08, seed=5, return_coords=True)
    d2 = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
    want = (d2 < 0.08 ** 2) & ~np.eye(400, dtype=bool)
    np.testing.assert_array_equal(A.toarray() != 0, want)


def test_random_geometric_degree():
    n = 20000
    A = random_geometric(n, avg_degree=10, seed=6)
    check_pattern(A, n)
    assert 0.9 * 10 < A.nnz / n <= 10.5  # boundary effects lower it by a few percent
    with pytest.raises(DsplaError, match="give radius or avg_degree"):
        random_geometric(10, radius=0.1, avg_degree=3)


def test_contextual_sbm_structure():
    d = contextual_sbm(6000, n_classes=5, avg_degree=8, homophily=0.7, n_features=16, seed=3)
    assert isinstance(d, SBMData)
    check_pattern(d.adjacency, 6000)
    assert abs(d.adjacency.nnz / 6000 - 8) < 0.5
    assert abs(d.homophily - 0.7) < 0.03
    assert d.features.shape == (6000, 16) and d.features.dtype == np.float32
    assert d.labels.dtype == np.int64 and set(np.unique(d.labels)) == set(range(5))
    assert len(d.train_idx) == 100 and len(d.val_idx) == 500 and len(d.test_idx) == 1000
    np.testing.assert_array_equal(np.bincount(d.labels[d.train_idx]), [20] * 5)
    all_idx = np.concatenate([d.train_idx, d.val_idx, d.test_idx])
    assert len(np.unique(all_idx)) == len(all_idx)


def test_contextual_sbm_p_in_p_out():
    n, k = 4000, 4
    d = contextual_sbm(n, n_classes=k, p_in=0.01, p_out=0.001, seed=4)
    # expected degree 0.01 * (1000 - 1) + 0.001 * 3000 ~ 13, homophily ~ 9.99 / 12.99
    assert abs(d.adjacency.nnz / n - 12.99) < 0.6
    assert abs(d.homophily - 9.99 / 12.99) < 0.03


def _centroid_accuracy(F, d):
    """Nearest class mean, means estimated on the training nodes only."""
    means = np.stack([F[d.train_idx][d.labels[d.train_idx] == c].mean(0) for c in range(d.n_classes)])
    pred = ((F[d.test_idx][:, None, :] - means[None]) ** 2).sum(-1).argmin(1)
    return (pred == d.labels[d.test_idx]).mean()


def test_contextual_sbm_needs_graph_and_features():
    d = contextual_sbm(8000, seed=5)  # defaults: 7 classes, degree 10, homophily 0.8
    A = d.adjacency + sp.eye_array(d.n_nodes)
    s = 1 / np.sqrt(np.asarray(A.sum(axis=1)).ravel())
    Ah = sp.diags_array(s) @ A @ sp.diags_array(s)  # the GCN propagation matrix
    X = d.features.astype(np.float64)
    alone = _centroid_accuracy(X, d)
    two_hops = _centroid_accuracy(Ah @ (Ah @ X), d)
    assert 1 / 7 < alone < 0.45  # features carry signal but are noisy
    assert two_hops > 0.85 and two_hops > alone + 0.4  # the graph helps a lot


def test_contextual_sbm_errors():
    with pytest.raises(DsplaError, match="cannot hold"):
        contextual_sbm(500, seed=0)
    with pytest.raises(DsplaError, match="homophily must be in"):
        contextual_sbm(5000, homophily=1.5)
    with pytest.raises(DsplaError, match="give both p_in and p_out"):
        contextual_sbm(5000, p_in=0.1)
