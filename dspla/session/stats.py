"""What a run reports: each rank's counts (``rank_stats``), gathered to rank 0 and summed up
against the plan's predictions (``summary``): words and messages, times, loops, peak memory."""
from __future__ import annotations

import os
import resource
import statistics
import sys
import threading
from collections import Counter

from ..runtime.process import proc_fd, resident_bytes


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (simulated ranks share one process, so they
    report the same number). Linux: its memory's own high-water mark (VmHWM), for 2 us instead
    of the 7-30 us of reading /proc/self/status where it can: getrusage's peak is the larger of
    that mark and the peak of the process image it exec'd from (a `dspla run` started by a
    Python script holding 300 MB reported 300 MB at least), which is fixed for the process's
    life and at most any getrusage reading; so a reading above the smallest one, or taken while
    the mark is known to be above that (``reset_peak_rss``), is the mark. (getrusage leaves out
    the resident pages still in per-CPU counts, which the status file adds up: the resident size
    now is the larger then; a peak in the past is the kernel's stored mark in both.)"""
    global _FLOOR
    with _RESET:
        peak, exact = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, _EXACT
    if sys.platform == "darwin":
        return int(peak)
    if exact or peak > _FLOOR:
        return max(peak * 1024, resident_bytes() or 0)
    _FLOOR = peak   # (any reading is at least the inherited peak: no lock needed)
    hwm = _status_hwm_kb()
    return (peak if hwm is None else hwm) * 1024


def _status_hwm_kb() -> int | None:
    """VmHWM from /proc/self/status (kB), or None."""
    try:
        text = os.pread(proc_fd("/proc/self/status", os.O_RDONLY), 16384, 0)
        at = text.find(b"\nVmHWM:")
        if at >= 0:
            return int(text[at + 7:text.index(b"kB", at)])
    except (OSError, ValueError):
        pass
    return None


def reset_peak_rss() -> int:
    """This process's peak resident memory so far, then the kernel's high-water mark reset (Linux:
    /proc/self/clear_refs), so that peak_rss_bytes afterwards is what the run that follows
    reached (planning's peak is often higher: the run's own is what a plan's memory decides)."""
    global _SEEN, _EXACT
    _SEEN = max(_SEEN, peak_rss_bytes())   # (the process's peak over every reset so far)
    with _RESET:   # (simulated ranks are threads: no reading sees a flag older than the reset)
        _EXACT = False
        try:
            os.write(proc_fd("/proc/self/clear_refs", os.O_WRONLY), b"5")
        except OSError:
            return _SEEN
        # the mark restarts at the resident size and only grows until the next reset: once that
        # size is at least the smallest getrusage reading, so is the mark, and getrusage reads it.
        # getrusage now reads the larger of the inherited peak and that size: above the smallest
        # reading, the size is (a system call, where /proc/self/statm's read costs a few more us)
        if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > _FLOOR:
            _EXACT = True
        else:
            now = resident_bytes()
            _EXACT = now is not None and now >= _FLOOR * 1024
    return _SEEN


_SEEN = 0
_FLOOR = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # (kB) at least the peak inherited over exec
_EXACT = False   # whether the high-water mark is known to be at least _FLOOR (reset_peak_rss)
_RESET = threading.Lock()


def _loop_predicted(plan, k: int) -> dict:
    """Loop k's words per iteration as planned, all ranks together (DistPlan.loop_words, summed
    once at planning): the products', those outside products (scalar allreduces, the
    condition's broadcast), and whether the sum is exact or the most a sparse operand can move."""
    products, outside, exact = plan.loop_words.get(k, (0, 0, True))
    return {"words_predicted_per_iteration": products + outside, "words_predicted_products": products,
            "words_predicted_outside_products": outside, "loop_words_predicted": "exact" if exact else "at most"}


def run_counts(rt) -> tuple:
    """What this rank's runtime counted in its last run, as the objects it counted in: a run
    counts in new ones (Runtime.reset_counters), so these stay as they are after it."""
    return (rt.counters, rt.times, rt.product_times, rt.iterations, rt.at_bound, rt.loop_s, rt.loop_words,
            rt.routes, rt.shm_sends, rt.data_dependent)


def rank_stats(counts: tuple) -> dict:
    """A run's counts (``run_counts``) as figures: traffic, times, iterations, routes."""
    counters, times, product_s, iterations, at_bound, loop_s, loop_words, routes, shm_sends, dependent = counts
    per_product = {k: t._asdict() for k, t in counters.items()}
    total = {"words_sent": 0, "words_received": 0, "messages_sent": 0, "messages_received": 0}
    for c in per_product.values():
        for k in total:
            total[k] += c[k]
    return {**total, **times, "products": per_product, "product_s": dict(product_s),
            "iterations": dict(iterations), "at_bound": dict(at_bound), "loop_s": dict(loop_s),
            "loop_words": dict(loop_words), "routes": dict(routes), "shm_sends": shm_sends,
            "data_dependent": sorted(dependent)}


def summary(plan, per_rank: list, planning_s: float, times: list, requested_plan: str) -> dict:
    """The stats of a run (rank 0): every rank's figures (``rank_stats``) against the plan's
    predictions, per product and per loop."""
    P = len(per_rank)

    def agg(rows, key):
        v = [r[key] for r in rows]
        return sum(v), (sum(v) / P if P else 0), max(v) if v else 0

    chosen = sorted({p.plan for p in plan.products})
    name = chosen[0] if len(chosen) == 1 else ("+".join(chosen) if chosen else
                                                requested_plan if isinstance(requested_plan, str) else "auto")
    out = {"plan": name, "requested_plan": requested_plan, "partition": _partition_name(plan), "P": P}
    for key in ("words_sent", "messages_sent"):
        tot, avg, mx = agg(per_rank, key)
        out[f"{key}_total"], out[f"{key}_avg"], out[f"{key}_max"] = tot, avg, mx
    out["per_rank"] = [{k: r[k] for k in ("words_sent", "words_received", "messages_sent", "messages_received",
                                          "compute_s", "pack_s", "wait_s", "peak_rss_bytes", "run_peak_rss_bytes",
                                          "planning_s", "first_iteration_s", "shm_sends")} for r in per_rank]
    # who planned: every rank its own program (sharded inputs), or rank 0 all of them
    out["planning"] = plan.planning
    if plan.planning_note:
        out["planning_note"] = plan.planning_note
    rss = [r["peak_rss_bytes"] for r in per_rank]
    out["peak_rss_bytes_max"], out["peak_rss_bytes_median"] = max(rss), statistics.median(rss)
    iterations = per_rank[0]["iterations"]   # every rank runs a loop the same number of times
    # per loop: iterations, seconds (the slowest rank), and the words all ranks sent in each
    # iteration (a BFS's words follow its frontier)
    out["loops"] = [{"loop": k, "iterations": v, "seconds": max(r["loop_s"].get(k, 0.0) for r in per_rank),
                     "words_per_iteration": [int(sum(w)) for w in
                                             zip(*(r["loop_words"].get(k, []) for r in per_rank))],
                     "stopped_at_bound": k in per_rank[0]["at_bound"], **_loop_predicted(plan, k)}
                    for k, v in sorted(iterations.items())]
    products = []
    data_dependent = set().union(*(r["data_dependent"] for r in per_rank))
    for p in plan.products:
        rows = [r["products"].get(p.index, {"words_sent": 0, "words_received": 0, "messages_sent": 0,
                                            "messages_received": 0}) for r in per_rank]
        rec = {"index": p.index, "expr": p.expr, "plan": p.plan, "K": p.K, "predicted": p.predicted,
               "notes": p.notes, "why": p.why,
               # "exact": measured words equal the predicted ones; "at most": a sparse operand's
               # messages carry its present entries only, so the prediction is a bound
               "words_predicted": "at most" if p.index in data_dependent else "exact",
               "measured_s_max": max(r["product_s"].get(p.index, 0.0) for r in per_rank),
               "measured_s_avg": sum(r["product_s"].get(p.index, 0.0) for r in per_rank) / max(1, P)}
        for key in ("words_sent", "messages_sent"):
            tot, avg, mx = agg(rows, key)
            rec[f"{key}_total"], rec[f"{key}_avg"], rec[f"{key}_max"] = tot, avg, mx
        if p.loop is not None:   # a product in a loop body ran once per iteration
            rec["loop"] = p.loop
            its = max(1, iterations.get(p.loop, 0))
            rec["iterations"] = iterations.get(p.loop, 0)
            rec["words_sent_per_iteration"] = rec["words_sent_total"] / its
            rec["messages_sent_per_iteration"] = rec["messages_sent_total"] / its
        products.append(rec)
    out["products"] = products
    # the local products' routes (kernels/routes.py), summed over ranks: which kernel ran how often
    out["routes"] = dict(sum((Counter(r.get("routes", {})) for r in per_rank), Counter()))
    out["planning_s"] = planning_s
    part_s = sum(info.get("seconds", 0.0) for info in plan.partition.values()) if planning_s else 0.0
    out["partition_s"] = part_s
    out["planning_without_partition_s"] = max(0.0, planning_s - part_s)
    # the compiler's steps, each timed (the size-dependent passes and the planning steps)
    out["compile_s"] = dict(plan.steps_s) if planning_s else {}
    out["iteration_s"] = times
    out["iteration_s_median"] = statistics.median(times)
    return out


def _partition_name(plan) -> str:
    methods = {d: info.get("method") for d, info in plan.partition.items()}
    vals = sorted(set(methods.values()))
    return vals[0] if len(vals) == 1 else ",".join(f"{d}:{m}" for d, m in methods.items()) if vals else "none"
