"""Plan choice: every candidate of every product is costed by the cost model from its own
instructions (counts per rank), the fastest that fits in memory is kept (or the one named by
--plan), and its instructions replace the product's Choice placeholder on every rank. Group
and window numbers local to a candidate are renumbered into the program's."""
from __future__ import annotations

import dataclasses
import gc

from ..errors import PlanError
from ..instr import Choice, Loop, RankProgram
from ..instr.layout import canonical
from ..ir import Op
from .distplan import DistPlan
from .pricing import count, record, select


def gather(ctx) -> None:
    """SPMD planning: every rank's counts of a candidate just lowered (one small allgather; every
    rank lowers the same candidates in the same order)."""
    pl = ctx.product.pl
    mine = count(ctx, pl.me)
    ctx.every = pl.comm.allgather(mine) if pl.P > 1 else [mine]


def keep_leader(candidates: list, opt, P: int) -> None:
    """SPMD planning: drop the program and pieces of every lowered candidate but the one the
    choice would keep so far. Each candidate holds its own copy of the rank's rows of A (blocks,
    stripes, stacks): holding all six at once put a rank's planning peak above one process's for
    the whole graph. The counts stay (choice and explain need only them), and the kept candidate
    is the one lowered, never lowered again."""
    lowered = [c for c in candidates if not c.reason and c.every is not None]
    best = select([(c, record(c, c.every, opt, P)[1]) for c in lowered])
    freed = False
    for c in lowered:
        if (best is None or c is not best[0]) and c.progs is not None:
            c.progs = c.consts = None
            freed = True
    if freed:
        gc.collect()   # (a python-graphblas Matrix sits in a reference cycle: only the collector frees it)


def lowered(ctx, candidates: list) -> None:
    """SPMD planning, as each candidate is lowered (lowering calls it; compile hands it in, since
    lowering may not import choice): gather its counts, keep only the leader's pieces."""
    gather(ctx)
    keep_leader(candidates, ctx.opt, ctx.P)


def pick(info, candidates, opt, P: int, counted: dict | None = None):
    """Cost the candidates of one product, record them on ``info``; return the chosen one.
    ``counted``: plan name -> every rank's counts (SPMD planning gathers them)."""
    records = []
    for ctx in candidates:
        if ctx.reason:
            info.candidates.append({"plan": ctx.name, "skipped": ctx.reason})
            continue
        info.counts[ctx.name], cand = record(ctx, (counted or {}).get(ctx.name), opt, P)
        info.candidates.append(cand)
        records.append((ctx, cand))
    best = select(records)
    if best is None:
        raise PlanError(f"no plan can run {info.expr}: " + "; ".join(f"{c['plan']}: {c.get('skipped')}"
                                                                      for c in info.candidates))
    ctx, cand, over = best
    if over:  # nothing fits: the named plan anyway, or the smallest
        info.notes.append(f"every plan exceeds the memory cap; using the smallest, {ctx.name}")
    if ctx.progs is None:
        raise PlanError(f"internal: plan {ctx.name} for {info.expr} was chosen after SPMD planning dropped it")
    info.plan = cand["plan"]
    info.predicted = {k: cand[k] for k in ("predicted_s", "words_max", "messages_max", "memory_bytes") if k in cand}
    info.predicted.update(ctx.info.predicted)
    info.predicted.update(words=cand["words"], messages=cand["messages"])
    info.notes.extend(ctx.info.notes)
    others = sorted((c for c in info.candidates if "predicted_s" in c and c is not cand),
                    key=lambda c: c["predicted_s"])
    if info.requested != "auto":   # (a plan asked for that cannot run it is an error: product.cannot_run)
        info.why = f"requested with --plan {info.requested}"
    elif len(candidates) == 1:   # (a sampled product: its one plan)
        info.why = "the only plan for this product"
    else:
        info.why = "lowest predicted time" + (f" ({cand['predicted_s'] * 1e3:.2f} ms vs {others[0]['plan']} "
                                              f"{others[0]['predicted_s'] * 1e3:.2f} ms)" if others else "")
    return ctx


def _renumber(instr, groups: int, windows: int):
    kw = {}
    if getattr(instr, "group", 0):
        kw["group"] = instr.group + groups
    if hasattr(instr, "win"):
        kw["win"] = instr.win + windows
    return dataclasses.replace(instr, **kw) if kw else instr


def gathered_counts(pl) -> list:
    """SPMD planning: per product, plan name -> every rank's counts: those gathered as each
    candidate was lowered (gather), the rest from one allgather of each rank's counts of its own
    candidates (small: a few numbers per candidate), so every rank feeds the cost model the same
    inputs and makes the same choice."""
    mine = [{c.name: count(c, pl.me) for c in cands if not c.reason and c.every is None} for cands in pl.candidates]
    every = pl.comm.allgather(mine) if pl.P > 1 else [mine]
    return [{c.name: c.every if c.every is not None else [per[i][c.name] for per in every]
             for c in cands if not c.reason} for i, cands in enumerate(pl.candidates)]


def choose(pl, partition_info: dict) -> DistPlan:
    """The chosen plan of every product spliced in: one RankProgram per rank (SPMD planning:
    this rank's only)."""
    counted = gathered_counts(pl) if pl.me is not None else [None] * len(pl.products)
    # the products' records, made anew: the lowering's stay as lowering left them
    products = [dataclasses.replace(i, notes=list(i.notes), predicted=dict(i.predicted), candidates=list(i.candidates),
                                    counts=dict(i.counts)) for i in pl.products]
    chosen = [pick(info, cands, pl.opt, pl.P, got) for info, cands, got in zip(products, pl.candidates, counted)]
    progs = [[] for _ in range(pl.P)]
    consts = [dict(c) for c in pl.consts]
    splits, windows = list(pl.splits), list(pl.windows)
    offsets = []
    for ctx in chosen:   # sub-communicators and windows in product order, as every rank creates them
        offsets.append((len(splits), len(windows)))
        splits.extend(ctx.splits)
        windows.extend(ctx.windows)
    def splice(instrs: list, r: int) -> list:
        out = []
        for instr in instrs:
            if type(instr) is Loop:
                out.append(dataclasses.replace(instr, cond=splice(instr.cond, r), body=splice(instr.body, r)))
            elif type(instr) is Choice:
                ctx, (g0, w0) = chosen[instr.product], offsets[instr.product]
                out.extend(_renumber(i, g0, w0) for i in ctx.progs[r])
                consts[r].update(ctx.consts[r])
            else:
                out.append(instr)
        return out

    setup = {r: splice(pl.setup[r], r) for r in pl.ranks}
    for r in pl.ranks:
        progs[r] = splice(pl.progs[r], r)
    programs = [RankProgram(r, pl.P, progs[r], pl.n_slots, consts[r], dict(pl.inputs), dict(pl.outputs),
                            [s[r] for s in splits], [w[r] for w in windows], setup=setup[r],
                            products={p.index: p.expr for p in pl.products}) for r in pl.ranks]
    out_layouts = {name: canonical(n.type, pl.dims) for name, n in pl.program.outputs}
    input_layouts = {n.attr("name"): canonical(n.type, pl.dims) for n in pl.order
                     if n.op is Op.INPUT and n.attr("name") in pl.inputs}
    static = frozenset(name for name, n in pl.program.outputs if id(n) in pl.static)
    return DistPlan(pl.P, programs, pl.dims, input_layouts, out_layouts, products, partition_info, 0.0,
                    pl.program, static, planning="spmd" if pl.me is not None else "rank 0")
