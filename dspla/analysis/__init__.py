"""Exact communication analysis of 1D row-partitioned products (no MPI needed).

    plan = comm_plan(A, parts)        # p2p send lists, CSR-like over (src, dst) pairs
    st = comm_stats(A, parts, K=64)   # volumes, messages, load, KM1 (== volume_total)
"""
from .comm import CommPlan, auto_b_parts, comm_plan, connectivity_minus_one, send_lists
from .stats import CommStats, comm_stats, stats_from_plan

__all__ = ["CommPlan", "CommStats", "auto_b_parts", "comm_plan", "comm_stats", "connectivity_minus_one",
           "send_lists", "stats_from_plan"]
