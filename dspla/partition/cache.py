"""On-disk cache of partitions, keyed by (matrix structure hash, P, method, eps, seed, backend, params).

Location: $DSPLA_CACHE_DIR, else $XDG_CACHE_HOME/dspla/partitions, else ~/.cache/dspla/partitions.
Entries are .npz files holding plain arrays and a JSON string (loaded with allow_pickle=False).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DsplaError
from ..formats.files import atomic_write
from ..formats.npy import check_npz_members

# Bumped whenever an algorithm changes so that old entries are not reused.
CACHE_VERSION = 5


def cache_dir() -> Path:
    env = os.environ.get("DSPLA_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dspla" / "partitions"


def matrix_hash(A: sp.csr_matrix) -> str:
    """Hash of the sparsity structure (shape, indptr, indices): values do not affect partitions."""
    h = hashlib.blake2b(digest_size=16)
    h.update(np.asarray(A.shape, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(A.indptr, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(A.indices, dtype=np.int32 if A.shape[1] < 2**31 else np.int64).tobytes())
    return h.hexdigest()


def entry_key(mhash: str, **fields) -> str:
    blob = json.dumps({"v": CACHE_VERSION, "matrix": mhash, **fields}, sort_keys=True, default=str)
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def load(key: str) -> tuple[dict[str, np.ndarray], dict] | None:
    path = cache_dir() / f"{key}.npz"
    if not path.exists():
        return None
    try:
        check_npz_members(path)   # damaged: recompute rather than allocate what a header claims
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k != "_meta"}
            meta = json.loads(str(z["_meta"]))
        return arrays, meta
    except (OSError, KeyError, ValueError, DsplaError):
        return None  # missing or damaged entry: recompute


def store(key: str, arrays: dict[str, np.ndarray], meta: dict) -> None:
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        # write then rename, so a concurrent reader never sees half a file; a failed write
        # (full disk) leaves nothing behind
        with atomic_write(d / f"{key}.npz") as f:
            np.savez(f, _meta=np.array(json.dumps(meta, default=str)), **arrays)
    except OSError:
        pass  # a read-only or full cache must not fail the partitioning
