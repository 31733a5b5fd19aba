"""``--partition auto`` (the default): the partition whose partitioning time is repaid within the run.

The candidates, cheapest first: ``block`` (free), ``graph`` (METIS, about a second per million
entries) and ``hypergraph`` (Mt-KaHyPar's quality preset with the bottleneck refinement: the least
volume, about 30 s per million entries). A partition changes what the products move each
iteration, so the planner prices it as what the 1D exchange costs: the busiest process's rows
sent or received, times the widths K of the products over this dim each iteration, times the
cost model's per-word cost (point-to-point plus packing). Over a run of ``iterations`` (a
training run's epochs, ``--repeat``; unknown: HORIZON) a candidate is run only if its predicted
time is repaid by its predicted saving over the best partition so far, and the partition with
the least exchange among those computed (or found in the partition cache, which costs
nothing) is used. Predictions for a candidate not yet run use measured ratios (EXPECTED).

Everything decided is recorded for explain and the progress line: each candidate's time
(measured, cached, or predicted and not run), its exchange per iteration, the saving per
iteration over ``block`` and the iterations needed to repay the partitioning.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..costmodel import load
from ..partition.simple import block_parts
from .options import Options

HORIZON = 100   # iterations assumed when the run's length is unknown
# seconds per stored entry, measured on a 2-core machine (soc-Slashdot0902, a 100k-node SBM):
# METIS 0.36-0.51 s per million entries; Mt-KaHyPar quality 23-32 s per million pins (26-49 s
# on a loaded machine)
RATE_S = {"graph": 0.6e-6, "hypergraph": 35e-6}
FIXED_S = {"graph": 0.02, "hypergraph": 1.5}   # the hypergraph partitioner starts a worker process
# the busiest process's volume relative to block's, measured (same graphs): METIS 0.45-0.78 x
# block, the hypergraph partitioner 0.87-0.89 x METIS
EXPECTED = {"graph": 0.75, "hypergraph": 0.75 * 0.88}
CANDIDATES = ("block", "graph", "hypergraph")


def word_seconds(P: int, opt: Options) -> float:
    """Seconds per word a process sends and receives in the 1D exchange."""
    c = opt.coefficients or load(P)
    return 2.0 * (c.beta_p2p + c.beta_pack)


def choose(S: sp.csr_array, P: int, width: int, opt: Options, loops: bool = False):
    """(parts, info) for the square pattern ``S`` split over P processes; ``width``: the sum of
    the products' K over this dim per iteration (a run of the program); ``loops``: the program
    has loops, whose products ``width`` counts at their bound (the text then says per run)."""
    # (the communication analysis and the partitioners: loaded when a partition is chosen, not
    # by every run, which imports this module with explain)
    from ..analysis import comm_stats
    from ..partition import partition

    unit = "run" if loops else "iteration"
    horizon = int(opt.iterations) if opt.iterations else HORIZON
    per_word = word_seconds(P, opt) * max(1, width)
    rows: list[dict] = []

    def exchange(parts) -> float:
        s = comm_stats(S, parts, P).summary()
        return max(s["volume_max"], s["volume_recv_max"]) * per_word

    t0 = time.perf_counter()
    parts = block_parts(S.shape[0], P)
    best = {"method": "block", "seconds": time.perf_counter() - t0, "ran": True, "exchange_s": exchange(parts),
            "parts": parts}
    rows.append(best)
    for method in CANDIDATES[1:] if S.shape[0] >= 2 * P else ():
        predicted = FIXED_S[method] + RATE_S[method] * (S.nnz + S.shape[0])
        rec = {"method": method, "predicted_s": predicted}
        hit = partition(S, P, method, eps=opt.eps, seed=opt.seed, cache=opt.cache, progress=False,
                        cached_only=True) if opt.cache else None
        expected = EXPECTED[method] * rows[0]["exchange_s"]
        saving = best["exchange_s"] - expected
        if hit is None and predicted > horizon * saving:
            if saving > 0:
                why = f"not run: ~{saving * 1e3:.3g} ms saved per {unit} would repay it after " \
                      f"~{_fmt(_count(predicted, saving))} {unit}s, more than the {horizon} of this run"
            else:
                why = f"not run: expected to exchange ~{expected * 1e3:.3g} ms per {unit}, " \
                      f"no less than {best['method']}"
            rec.update(ran=False, expected_exchange_s=expected, why=why)
            rows.append(rec)
            continue
        t1 = time.perf_counter()
        res = hit or partition(S, P, method, eps=opt.eps, seed=opt.seed, cache=opt.cache, progress=opt.progress)
        rec.update(ran=True, cached=hit is not None, seconds=0.0 if hit is not None else time.perf_counter() - t1,
                   exchange_s=exchange(res.parts), parts=res.parts, imbalance=float(res.imbalance))
        rows.append(rec)
        if rec["exchange_s"] < best["exchange_s"]:
            best = rec
    block = rows[0]["exchange_s"]
    spent = sum(r.get("seconds", 0.0) for r in rows[1:])
    saving = block - best["exchange_s"]
    info = {"method": best["method"], "auto": True, "horizon": horizon, "width": int(width), "loops": loops,
            "seconds_all": spent, "saving_per_iteration_s": saving,
            "break_even_iterations": _count(spent, saving) if spent > 0 and best is not rows[0] else 0,
            "candidates": [{k: v for k, v in r.items() if k != "parts"} for r in rows]}
    if "imbalance" in best:
        info["imbalance"] = best["imbalance"]
    return np.asarray(best["parts"], dtype=np.int64), info


def _count(seconds: float, saving: float):
    """Iterations after which ``saving`` per iteration repays ``seconds`` (None: never)."""
    if saving <= 0:
        return None
    return int(np.ceil(seconds / saving))


def describe(info: dict) -> list[str]:
    """Lines for explain and the progress line: what auto chose and why."""
    if not info.get("auto"):
        return []
    unit = "run" if info.get("loops") else "iteration"
    head = (f"partition auto, for {info['horizon']} runs (products' K total {info['width']} per run, loops at their "
            f"bound, log2 of a dim's size for one bounded by it): " if info.get("loops") else
            f"partition auto, for a run of {info['horizon']} iterations (products' K total {info['width']}): ") \
        + info["method"]
    if info["method"] == "block":
        head += " (no partitioner repays its time within the run)"
    else:
        chosen = next(c for c in info["candidates"] if c["method"] == info["method"])
        cached = " (the cached one)" if chosen.get("cached") else ""
        head += (f"{cached}, partitioning {info['seconds_all']:.2f} s, saving "
                 f"{info['saving_per_iteration_s'] * 1e3:.3g} ms per {unit} over block"
                 + (f": repaid after {_fmt(info['break_even_iterations'])} {unit}s"
                    if info["seconds_all"] > 0 else ""))
    out = [head]
    for c in info["candidates"]:
        if c.get("ran"):
            how = "cached (free)" if c.get("cached") else f"{c['seconds']:.2f} s"
            out.append(f"    {c['method']:<11} {how:>14}  exchange {c['exchange_s'] * 1e3:9.3f} ms per {unit}"
                       + ("  <- chosen" if c["method"] == info["method"] else ""))
        else:
            out.append(f"    {c['method']:<11} {'~' + format(c['predicted_s'], '.2f') + ' s':>14}  {c['why']}")
    return out


def _fmt(n) -> str:
    return "never" if n is None else f"{n:,}"


__all__ = ["CANDIDATES", "EXPECTED", "HORIZON", "RATE_S", "choose", "describe"]
