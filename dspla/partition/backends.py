"""One thin adapter over the KaHyPar family: ``partition_hypergraph(hg, P, eps, seed, backend)``.

- ``mtkahypar``: Mt-KaHyPar with a preset (default/quality/highest_quality/...).

Determinism: Mt-KaHyPar's result depends on thread scheduling with more than one thread, and
even on one thread a second call in the same process differs from the first (global state).
So every call runs single-threaded in a fresh worker process (worker.py: a clean child, never
a re-import of the user's script); several seeds (trials) run in parallel workers instead of
threads. This also contains KaHyPar, which exits the process on invalid input.
- ``kahypar``: sequential KaHyPar, configured by the .ini files in dspla/data (written for dspla
  from KaHyPar's documented option names; the wheel ships none).

Both bindings take Python lists, so building them is one list conversion per call.
KaHyPar terminates the process on invalid input (it calls exit), so everything is validated here.
"""
from __future__ import annotations

import os
import tempfile
from importlib import resources

import numpy as np

from ..errors import PlanError, UnknownNameError
from . import worker
from .hypergraph import Hypergraph

MTK_PRESETS = ("default", "quality", "highest_quality", "deterministic", "deterministic_quality", "large_k")
KAHYPAR_CONFIGS = ("km1_kway",)
BACKENDS = ("mtkahypar", "kahypar")

_mtk = None  # Mt-KaHyPar may be initialised once per process


def _mtkahypar_instance():
    global _mtk
    if _mtk is None:
        import mtkahypar  # native libraries, loaded in the partitioner's worker processes only

        _mtk = mtkahypar.initialize(1)
    return _mtk


def _check(hg: Hypergraph, P: int, eps: float) -> None:
    if hg.n and hg.node_weights.min() < 1:
        raise PlanError("hypergraph vertex weights must be >= 1 (KaHyPar rejects 0)")
    if hg.num_nets and hg.net_weights.min() < 1:
        raise PlanError("hypergraph net weights must be >= 1")
    if not 2 <= P <= hg.n:
        raise PlanError(f"cannot split {hg.n} vertices into {P} parts")
    if eps < 0:
        raise PlanError(f"eps must be >= 0, got {eps}")


def _nets_as_lists(hg: Hypergraph) -> list[list[int]]:
    flat = hg.pins.tolist()
    ptr = hg.ptr.tolist()
    return [flat[a:b] for a, b in zip(ptr[:-1], ptr[1:])]


def _mtkahypar(hg: Hypergraph, P: int, eps: float, seed: int, preset: str | None) -> np.ndarray:
    import mtkahypar  # (see _mtkahypar_instance)

    preset = (preset or "default").lower()
    if preset not in MTK_PRESETS:
        raise UnknownNameError("mtkahypar preset", preset, MTK_PRESETS)
    mtk = _mtkahypar_instance()
    mtkahypar.set_seed(int(seed))
    ctx = mtk.context_from_preset(getattr(mtkahypar.PresetType, preset.upper()))
    ctx.set_partitioning_parameters(int(P), float(eps), mtkahypar.Objective.KM1)
    ctx.logging = False
    h = mtk.create_hypergraph(ctx, hg.n, hg.num_nets, _nets_as_lists(hg), hg.node_weights.tolist(),
                              hg.net_weights.tolist())
    return np.asarray(h.partition(ctx).get_partition(), dtype=np.int64)


def kahypar_config_path(name: str = "km1_kway") -> str:
    if name not in KAHYPAR_CONFIGS:
        raise UnknownNameError("kahypar configuration", name, KAHYPAR_CONFIGS)
    return str(resources.files("dspla") / "data" / f"kahypar_{name}.ini")


def _kahypar(hg: Hypergraph, P: int, eps: float, seed: int, preset: str | None) -> np.ndarray:
    import kahypar  # a native library, loaded in the partitioner's worker processes only

    config = kahypar_config_path(preset or "km1_kway")
    h = kahypar.Hypergraph(hg.n, hg.num_nets, hg.ptr.tolist(), hg.pins.tolist(), int(P),
                           hg.net_weights.tolist(), hg.node_weights.tolist())
    ctx = kahypar.Context()
    ctx.loadINIconfiguration(config)
    ctx.setK(int(P))
    ctx.setEpsilon(float(eps))
    ctx.setSeed(int(seed))
    ctx.suppressOutput(True)
    # read the result back from KaHyPar's partition file: one number per line, no per-vertex calls
    fd, path = tempfile.mkstemp(suffix=".part")
    os.close(fd)
    try:
        ctx.setPartitionFileName(path)
        ctx.writePartitionFile(True)
        kahypar.partition(h, ctx)
        parts = np.loadtxt(path, dtype=np.int64, ndmin=1)
    finally:
        os.unlink(path)
    if parts.size != hg.n:
        raise PlanError(f"kahypar returned {parts.size} block ids for {hg.n} vertices")
    return parts


_IMPL = {"mtkahypar": _mtkahypar, "kahypar": _kahypar}


def run_request(req: dict, arrays: dict) -> np.ndarray:
    """Executed in a worker process (worker.py): one partition of the hypergraph in ``arrays``."""
    hg = Hypergraph(n=int(req["n"]), ptr=arrays["ptr"], pins=arrays["pins"], node_weights=arrays["node_weights"],
                    net_weights=arrays["net_weights"])
    return _IMPL[req["backend"]](hg, int(req["P"]), float(req["eps"]), int(req["seed"]), req["preset"])


def default_workers() -> int:
    return max(1, min(int(os.environ.get("DSPLA_PARTITION_WORKERS", "0")) or (os.cpu_count() or 1), 8))


def partition_hypergraph_many(hg: Hypergraph, P: int, eps: float, seeds, backend: str = "mtkahypar",
                              preset: str | None = None, workers: int | None = None) -> list[np.ndarray]:
    """One partition per seed, each computed in a fresh single-threaded worker process (see the
    module note on determinism, and worker.py on how the processes start), up to ``workers`` at
    a time."""
    if backend not in _IMPL:
        raise UnknownNameError("hypergraph backend", backend, BACKENDS)
    if backend == "mtkahypar" and (preset or "default").lower() not in MTK_PRESETS:
        raise UnknownNameError("mtkahypar preset", preset, MTK_PRESETS)
    if backend == "kahypar":
        kahypar_config_path(preset or "km1_kway")
    _check(hg, P, eps)
    seeds = [int(s) for s in seeds]
    if hg.num_nets == 0:  # nothing to cut: any balanced split is optimal
        return [_greedy_balanced(hg.node_weights, P) for _ in seeds]
    requests = [{"backend": backend, "n": hg.n, "P": int(P), "eps": float(eps), "seed": s, "preset": preset}
                for s in seeds]
    arrays = {"ptr": hg.ptr, "pins": hg.pins, "node_weights": hg.node_weights, "net_weights": hg.net_weights}
    try:
        return worker.run(requests, arrays, min(len(seeds), workers or default_workers()))
    except worker.WorkerError as e:
        if e.kind == "died":
            raise PlanError(f"the {backend} worker process died ({e.message}): invalid input or out of memory") \
                from None
        raise PlanError(f"{backend} failed: {e.message}") from None


def partition_hypergraph(hg: Hypergraph, P: int, eps: float, seed: int = 0, backend: str = "mtkahypar",
                         preset: str | None = None) -> np.ndarray:
    """Minimise connectivity-1 of ``hg`` over P parts of weight <= (1 + eps) * ceil(total / P)."""
    return partition_hypergraph_many(hg, P, eps, [seed], backend, preset, workers=1)[0]


def _greedy_balanced(w: np.ndarray, P: int) -> np.ndarray:
    """Contiguous split of vertices into P runs of about equal weight (for net-free inputs)."""
    c = np.cumsum(w) - w / 2.0
    return np.minimum((c * P / max(float(w.sum()), 1.0)).astype(np.int64), P - 1)
