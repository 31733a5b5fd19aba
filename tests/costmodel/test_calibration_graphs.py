"""The generated graphs the calibration's plan runs time."""
import numpy as np

from dspla.calibration.plans import _spatial
from dspla.generate import random_geometric


def test_spatial_numbering_is_the_same_graph_with_near_ids_near():
    A, pts = random_geometric(4000, avg_degree=3, seed=4, return_coords=True)
    B = _spatial((A, pts))
    assert B.shape == A.shape and B.nnz == A.nnz and (B != B.T).nnz == 0
    # a renumbering: the same entries per row, in another order
    assert sorted(np.diff(A.indptr)) == sorted(np.diff(B.indptr))
    span = lambda M: np.abs(np.repeat(np.arange(M.shape[0]), np.diff(M.indptr)) - M.indices).mean()  # noqa: E731
    # drawn order: an edge's ends are ~n/3 apart; along rows of cells: a few rows of cells apart
    assert span(B) < span(A) / 10
