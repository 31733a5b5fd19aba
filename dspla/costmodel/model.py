"""Predicted time of a plan: the alpha-beta-gamma model on the exact per-rank counts, with the
plan's own overlap rule, taken at the slowest process."""
from __future__ import annotations

from typing import Callable

from .coefficients import Coefficients

# plan name -> combine(parts) -> seconds; parts are one rank's times by category (see split)
OVERLAP: dict[str, Callable] = {}


def overlap_rule(name: str):
    def register(fn):
        OVERLAP[name] = fn
        return fn
    return register


# seconds per multiply-add or output entry of a sparse x sparse product (SuiteSparse 9.4's saxpy
# on R-MAT 13/14's A @ A, one thread of this 2-core machine: 13-15 ns a multiply-add with its
# share of 35-39 ns an output entry; not yet part of calibration)
SPGEMM_S = 1.0e-8


def split(c: dict, k: Coefficients) -> dict:
    """One rank's counts as seconds, by what they cost: compute, bandwidth (comm), latency."""
    g = c.get
    return {
        # (an element-wise step streams its entries as packing does: beta_pack per entry touched)
        "local": k.gamma * g("local_nnzk", 0.0) + k.delta * g("local_out", 0.0) + k.beta_fill * g("fill_words", 0.0)
        + k.beta_pack * g("local_words", 0.0),
        "remote": k.gamma * g("remote_nnzk", 0.0) + k.delta * g("remote_out", 0.0) + SPGEMM_S * g("spgemm_work", 0.0),
        "async": k.gamma * g("async_nnzk", 0.0) + k.delta * g("async_out", 0.0),
        "overhead": k.kappa * g("calls", 0.0) + k.kappa_instr * g("instrs", 0.0),
        "pack": k.beta_pack * g("pack_words", 0.0),
        "p2p_bw": k.beta_p2p * g("p2p_words", 0.0),
        "p2p_lat": k.alpha_p2p * g("p2p_msgs", 0.0),
        "coll_bw": k.beta_coll * g("coll_words", 0.0),
        "coll_lat": k.alpha_coll * g("coll_steps", 0.0),
        "get_bw": k.beta_get * g("get_words", 0.0),
        "get_lat": k.alpha_get * g("get_msgs", 0.0),
    }


def _sum(t: dict) -> float:
    return sum(t.values())


@overlap_rule("p2p1d")
def _p2p1d(t: dict) -> float:
    """Demirci et al.'s Alg. 1: the local product runs while the messages are in flight. Packing the
    send buffers comes first, on the same thread."""
    return t["pack"] + max(t["local"], t["p2p_bw"] + t["p2p_lat"]) + t["remote"] + t["overhead"]


@overlap_rule("twoface")
def _twoface(t: dict) -> float:
    """The Two-Face thesis's Alg. 4.2 run from one thread: the sync half's collectives and the async half's
    gets are all posted before the local product, so both halves' transfers are in flight
    side by side with it (eq. 4.4 balances them); computing on what arrives follows."""
    sync_comm = t["coll_bw"] + t["coll_lat"]
    async_comm = t["get_bw"] + t["get_lat"]
    return t["pack"] + max(t["local"], sync_comm, async_comm) + t["remote"] + t["async"] + t["overhead"]


def rank_time(plan: str, counts: dict, k: Coefficients) -> tuple[float, dict]:
    t = split(counts, k)
    f = k.factor(plan)
    if f != 1.0:   # (every part alike: explain's compute / comm / latency still add up)
        t = {part: v * f for part, v in t.items()}
    return OVERLAP.get(plan, _sum)(t), t


def predict(plan: str, per_rank: list[dict], k: Coefficients) -> dict:
    """The candidate record explain shows: predicted seconds of the slowest rank, split into
    compute / comm (bandwidth) / latency, words and messages avg/max, memory per process."""
    times = [rank_time(plan, c, k) for c in per_rank]
    worst = max(range(len(times)), key=lambda r: times[r][0]) if times else 0
    total, t = times[worst] if times else (0.0, split({}, k))
    P = max(1, len(per_rank))
    shared = 0.0
    if k.cores and P > k.cores:
        # more processes than cores: they take turns, so the run lasts at least all their work
        # shared among the cores (what any one rank waits for is spent by another's compute)
        shared = sum(_sum(tr) for _, tr in times) / k.cores
        total = max(total, shared)
    words = [c.get("words_sent", 0) for c in per_rank] or [0]
    msgs = [c.get("messages_sent", 0) for c in per_rank] or [0]
    mem = [c.get("memory_bytes", 0) for c in per_rank] or [0]
    return {
        "plan": plan,
        "predicted_s": total,
        "compute_s": t["local"] + t["remote"] + t["async"],
        "comm_s": t["pack"] + t["p2p_bw"] + t["coll_bw"] + t["get_bw"],
        "latency_s": t["overhead"] + t["p2p_lat"] + t["coll_lat"] + t["get_lat"],
        "words_avg": sum(words) / P, "words_max": max(words),
        "messages_avg": sum(msgs) / P, "messages_max": max(msgs),
        "memory_bytes": int(max(mem)),
        "slowest_rank": worst,
        "oversubscribed": shared >= total > 0,
    }
