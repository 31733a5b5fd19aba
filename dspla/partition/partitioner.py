"""``partition(A, P, method, eps, seed)``: validation, disk cache, balance fix-up, result object."""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import DimensionMismatch, PlanError
from ..formats.files import atomic_write
from . import balance
from . import cache as _cache
from .progress import as_progress
from .registry import EDGE_METHODS, METHODS, Job, Method, get, load_methods


@dataclass(frozen=True)
class PartitionResult:
    """A row partition: ``parts[i]`` is the process that owns row i."""

    parts: np.ndarray
    P: int
    method: str
    eps: float
    seed: int
    backend: str | None
    imbalance: float  # max part weight / max(average, heaviest row) - 1, by ``weight``
    imbalance_vs_average: float  # max part weight / average - 1
    weight: str  # "rows" or "nnz"
    seconds: float  # partitioning time (of the original run when loaded from the cache)
    cached: bool = False
    moved: int = 0  # vertices the balance fix-up moved after the backend
    info: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> np.ndarray:
        """Rows per process."""
        return np.bincount(self.parts, minlength=self.P)

    def save(self, path) -> str:
        """Write ``parts`` as .npy (what ``dspla partition --out`` writes), atomically; like
        numpy.save, ``.npy`` is appended to a name without it. Returns the path written."""
        path = os.fspath(path)
        path = path if path.endswith(".npy") else path + ".npy"
        with atomic_write(path) as fh:
            np.save(fh, self.parts)
        return path

    def __repr__(self) -> str:
        return (f"PartitionResult(method={self.method!r}, P={self.P}, n={self.parts.size}, "
                f"imbalance={self.imbalance:.4f}, seconds={self.seconds:.2f}, cached={self.cached})")


def as_pattern(A) -> sp.csr_matrix:
    """Canonical CSR pattern (sorted indices, no duplicates or explicit zeros kept as-is)."""
    if not sp.issparse(A):
        raise PlanError(f"partition needs a scipy sparse matrix, got {type(A).__name__}")
    A = sp.csr_matrix(A)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()  # also sorts indices
    return A


def weights_of(A: sp.csr_matrix, kind: str) -> np.ndarray:
    if kind == "nnz":
        return np.diff(A.indptr).astype(np.int64)
    return np.ones(A.shape[0], dtype=np.int64)


def _check_request(A: sp.csr_matrix, P, eps, method: Method, backend, items: int, what: str):
    if isinstance(P, bool) or not isinstance(P, (int, np.integer)):
        raise PlanError(f"P must be an integer, got {P!r}")
    if P < 1:
        raise PlanError(f"P must be at least 1, got {P}")
    if P > items:
        raise PlanError(f"P = {P} is more than the {items} {what} to partition")
    if not (isinstance(eps, (int, float, np.floating)) and 0 <= eps < 10):
        raise PlanError(f"eps must be a number in [0, 10), got {eps!r}")
    if method.square_only and A.shape[0] != A.shape[1]:
        raise DimensionMismatch(f"method {method.name!r} needs a square matrix, got {A.shape[0]}x{A.shape[1]}")
    if backend is not None and backend not in method.backends:
        valid = ", ".join(method.backends) if method.backends else "none (it takes no backend)"
        raise PlanError(f"method {method.name!r} has no backend {backend!r}; valid: {valid}")
    return backend if backend is not None else (method.backends[0] if method.backends else None)


def _params_key(params: dict) -> tuple[dict, bool]:
    """JSON-able view of the parameters, and whether it identifies them (no object addresses)."""
    out = {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)) for k, v in params.items()}
    return out, all(" at 0x" not in str(v) for v in out.values())


def _unknown_params(method: Method, params: dict) -> None:
    extra = sorted(set(params) - set(method.params))
    if extra:
        valid = ", ".join(method.params) if method.params else "none"
        raise PlanError(f"method {method.name!r} takes no parameter {', '.join(map(repr, extra))}; "
                        f"its parameters: {valid}")


def partition(A, P: int, method: str = "hypergraph", eps: float = 0.03, seed: int = 0, *,
              backend: str | None = None, cache: bool = True, progress=None, cached_only: bool = False,
              **params) -> PartitionResult | None:
    """Partition the rows of A over P processes.

    method: a name in ``dspla.partition.METHODS`` (block, random, graph, hypergraph,
    stochastic-hypergraph, ...). eps: allowed imbalance of the method's weight (row nonzeros for
    graph/hypergraph, row counts for block/random). seed: same seed, same partition.
    backend: e.g. "mtkahypar" or "kahypar" for hypergraph. cache: reuse/store the result under
    $DSPLA_CACHE_DIR (default $XDG_CACHE_HOME/dspla/partitions). progress: True/False/None (auto:
    phases are printed to stderr once a run takes more than a couple of seconds).
    Extra keyword parameters go to the method (see ``METHODS[name].params``). ``cached_only``:
    return the cached result, or None without partitioning.
    """
    m = get(method)
    _unknown_params(m, params)
    A = as_pattern(A)
    n = A.shape[0]
    backend = _check_request(A, P, eps, m, backend, n, "rows")
    P, eps, seed = int(P), float(eps), int(seed)
    w = weights_of(A, m.weight)
    pkey, keyable = _params_key(params)
    prog = as_progress(progress, f"partition {method} P={P}")

    key = None
    if cache and m.cacheable and keyable and P > 1:
        with prog.phase("hash matrix"):
            mhash = _cache.matrix_hash(A)
        key = _cache.entry_key(mhash, kind="rows", P=P, method=method, eps=eps, seed=seed, backend=backend,
                               params=pkey)
        hit = _cache.load(key)
        if hit is not None and hit[0].get("parts", np.zeros(0)).size == n:
            arrays, meta = hit
            prog.note(f"cache hit ({_cache.cache_dir()})")
            return _result(arrays["parts"], P, method, eps, seed, backend, m, w, meta["seconds"], True,
                           meta.get("moved", 0), meta.get("info", {}), pkey)
    if cached_only:
        return None

    t0 = time.perf_counter()
    if P == 1:
        parts, info = np.zeros(n, dtype=np.int64), {}
    else:
        job = Job(A=A, P=P, eps=eps, seed=seed, backend=backend, params=dict(params), progress=prog, cache=cache)
        parts = np.asarray(m.run(job), dtype=np.int64)
        info = job.info
    if parts.shape != (n,) or (n and (parts.min() < 0 or parts.max() >= P)):
        raise PlanError(f"method {method!r} returned an invalid partition (shape {parts.shape})")
    moved = 0
    if balance.imbalance(parts, w, P) > eps + 1e-12:
        with prog.phase("balance fix-up"):
            parts, moved = balance.rebalance(parts, w, P, eps)
    seconds = time.perf_counter() - t0
    if key is not None:
        _cache.store(key, {"parts": parts}, {"seconds": seconds, "moved": moved, "info": _jsonable(info),
                                              "method": method, "P": P})
    return _result(parts, P, method, eps, seed, backend, m, w, seconds, False, moved, info, pkey)


def _jsonable(info: dict) -> dict:
    return json.loads(json.dumps(info, default=lambda o: o.item() if hasattr(o, "item") else repr(o)))


def _result(parts, P, method, eps, seed, backend, m: Method, w, seconds, cached, moved, info, pkey):
    return PartitionResult(parts=parts, P=P, method=method, eps=eps, seed=seed, backend=backend,
                           imbalance=balance.imbalance(parts, w, P),
                           imbalance_vs_average=balance.imbalance_vs_average(parts, w, P),
                           weight=m.weight, seconds=float(seconds), cached=cached, moved=int(moved),
                           info=dict(info), params=pkey)


def methods() -> list[str]:
    load_methods()
    return sorted(METHODS)


def edge_methods() -> list[str]:
    load_methods()
    return sorted(EDGE_METHODS)
