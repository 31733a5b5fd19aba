"""Structure-blind partitioners: ``block`` (contiguous rows) and ``random`` (RP in Demirci et al.)."""
from __future__ import annotations

import numpy as np

from .registry import Method, register


def block_parts(n: int, P: int) -> np.ndarray:
    """Contiguous runs of rows; run sizes differ by at most one."""
    return (np.arange(n, dtype=np.int64) * P) // n


def random_parts(n: int, P: int, seed: int) -> np.ndarray:
    """Rows to processes uniformly at random with balanced counts (sizes differ by at most one).

    This is the function the distributed runtime calls for ``--partition random``: the result
    depends only on (n, P, seed).
    """
    rng = np.random.default_rng(seed)
    return rng.permutation(np.arange(n, dtype=np.int64) % P)


register(Method("block", lambda job: block_parts(job.A.shape[0], job.P), weight="rows",
                summary="contiguous blocks of rows, equal counts", cacheable=False))
register(Method("random", lambda job: random_parts(job.A.shape[0], job.P, job.seed), weight="rows",
                summary="rows to processes uniformly at random, equal counts (RP)", cacheable=False))
