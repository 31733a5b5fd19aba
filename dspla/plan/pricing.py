"""Pricing a lowered candidate: its per-rank counts from its own instructions, the cost model's
prediction, and the one rule that picks among candidates (the lowest predicted time that fits
the memory cap). Choice uses it for every product; a plan that weighs its own variants (15d_sparse's
c) uses the same rule, so a variant is priced as a candidate would be."""
from __future__ import annotations

from ..costmodel import RankView, count_rank, load, predict
from .options import memory_cap


def count(ctx, r: int) -> dict:
    """Rank r's cost-model counts of a lowered candidate (its memory: with the product's
    operands that rank holds)."""
    c = count_rank(RankView(ctx.progs[r], ctx.consts[r], r, ctx.P, ctx.K, ctx.group_sizes(r), ctx.compute))
    held = getattr(ctx.product, "operand_bytes", None)   # (a sampled product's operands are priced as moved)
    c["memory_bytes"] = c.get("memory_bytes", 0) + (held(r) if held else 0)
    return c


def cost(ctx, counts: list | None = None) -> tuple[list, dict]:
    """(per-rank counts, the candidate record explain shows) of a lowered candidate. ``counts``:
    every rank's, when each rank counted its own (SPMD planning)."""
    counts = counts or [count(ctx, r) for r in range(ctx.P)]
    cand = predict(ctx.name, counts, ctx.opt.coefficients or load(ctx.P))
    # the words and messages of all ranks together: the instructions' own traffic (the one account)
    cand["words"] = int(sum(c.get("words_sent", 0) for c in counts))
    cand["messages"] = int(sum(c.get("messages_sent", 0) for c in counts))
    cand.update({k: v for k, v in ctx.info.predicted.items() if k not in cand})
    cand["notes"] = list(ctx.info.notes)
    return counts, cand


def record(ctx, counts: list | None, opt, P: int) -> tuple[list, dict]:
    """cost(ctx, counts), the candidate marked skipped when it needs more memory than the cap."""
    counts, cand = cost(ctx, counts)
    cap = memory_cap(opt, P)
    if cand["memory_bytes"] > cap:
        cand["skipped"] = f"needs {cand['memory_bytes'] / 2**20:.0f} MiB per process, over the cap " \
                          f"of {cap / 2**20:.0f} MiB"
    return counts, cand


def select(records: list) -> tuple | None:
    """(ctx, record, over the cap) of the chosen among (ctx, record) pairs in candidate order: the
    lowest predicted time that fits, else the smallest; None when none can run. The one rule for
    pick and for keep_leader, so the candidate SPMD planning keeps is the one picked."""
    best = None
    for ctx, cand in records:
        if "skipped" not in cand and (best is None or cand["predicted_s"] < best[1]["predicted_s"]):
            best = (ctx, cand)
    if best is not None:
        return best + (False,)
    fits = [(ctx, cand) for ctx, cand in records if "predicted_s" in cand]
    return min(fits, key=lambda t: t[1]["memory_bytes"]) + (True,) if fits else None
