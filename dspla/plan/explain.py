"""explain: the program after passes and, for every product, the plans considered with their
predicted time (compute / communication / latency), words and messages, memory, and the choice.

Planning needs no MPI: the planner builds every rank's program in one process, so ``explain``
works for any P. Inputs not given are synthesised from their declared shapes (``dims`` gives
symbolic sizes; sparse inputs get a seeded random pattern of ``density``).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from ..costmodel import load
from ..errors import InputError
from ..formats.limits import check_memory
from ..instr import FetchGather, FetchMxM, Where, walk
from ..ir.node import Op
from ..ir.types import Kind
from ..kernels import routes
from .options import Options
from .partition_choice import describe

CANDIDATE_KEYS = ("plan", "predicted_s", "compute_s", "comm_s", "latency_s", "words_avg", "words_max",
                  "messages_avg", "messages_max", "memory_bytes")


def synthesize(declared, given: dict, dims: Mapping[str, int] | None = None, density: float | None = None,
               seed: int = 0):
    """Inputs for planning: the given ones, and stand-ins for the rest from their declarations
    (``declared``: the program's INPUT nodes)."""
    dims = dict(dims or {})
    for n in declared:  # sizes the given inputs fix
        v = given.get(n.attr("name"))
        if v is not None:
            for d, size in zip(n.type.shape, np.shape(v) if not sp.issparse(v) else v.shape):
                if isinstance(d, str):
                    dims.setdefault(d, int(size))
    missing: dict[str, str] = {}
    for n in declared:
        if n.attr("name") not in given:
            for d in n.type.shape:
                if isinstance(d, str) and d not in dims:
                    missing.setdefault(d, n.attr("name"))
    if missing:
        raise MissingDims(missing)
    rng = np.random.default_rng(seed)
    out = dict(given)
    for n in declared:
        name = n.attr("name")
        if name in out:
            continue
        shape = [dims[d] if isinstance(d, str) else d for d in n.type.shape]
        dt = n.type.dtype.np
        if n.type.kind is Kind.sparse:
            dens = density if density is not None else min(1.0, 16.0 / max(1, shape[1]))
            check_memory(int(24 * dens * shape[0] * shape[1] + 8 * shape[0]), f"a stand-in for input {name!r} "
                         f"({shape[0]} x {shape[1]}, density {dens:.3g})")
            A = sp.random_array(tuple(shape), density=dens, random_state=rng, format="csr", dtype=np.float64)
            out[name] = A.astype(dt)
        else:
            check_memory(dt.itemsize * shape[0] * shape[1], f"a stand-in for input {name!r} ({shape[0]} x {shape[1]})")
            out[name] = np.ones(tuple(shape), dtype=dt)
    return out


class MissingDims(InputError):
    """Planning needs sizes no given input fixes. ``missing``: dim -> an input that has it. The
    message says how to give them from Python; ``cli_message`` from the command line."""

    def __init__(self, missing: dict):
        self.missing = dict(missing)
        names = ", ".join(repr(d) for d in missing)
        inputs = sorted(set(missing.values()))
        self.lead = (f"cannot plan without a size for dimension{'s' if len(missing) > 1 else ''} {names} "
                     f"(of input{'s' if len(inputs) > 1 else ''} {', '.join(map(repr, inputs))})")
        sizes = ", ".join(f'"{d}": SIZE' for d in missing)
        super().__init__(f"{self.lead}: pass {' and '.join(f'{i}=...' for i in inputs)}, or dims={{{sizes}}}")

    def cli_message(self) -> str:
        dims = " ".join(f"--dim {d}=SIZE" for d in self.missing)
        inputs = " ".join(f"-i {i}=FILE" for i in sorted(set(self.missing.values())))
        return f"{self.lead}: give {inputs}, or {dims}"


def _source(options: Options, P: int) -> str:
    return (options.coefficients or load(P)).source


def loop_words(plan) -> dict:
    """loop -> (products' words, words outside products, exact) per iteration, all ranks
    together, from the planned programs (ir.RankProgram.loop_words). Once the programs have gone
    to their ranks (a session's plan), the sums kept then (DistPlan.loop_words), which a run's
    stats show beside the words measured."""
    progs = plan.programs or ()
    if not progs or len(progs) != progs[0].P:
        return dict(plan.loop_words)   # (kept when the programs went to their ranks)
    all_splits = [[p.splits[g] for p in progs] for g in range(len(progs[0].splits))]
    return summed([prog.loop_words(Where(prog.rank, prog.group_sizes(all_splits))) for prog in progs])


def summed(per_rank: list) -> dict:
    """Ranks' loop_words added up: loop -> (products', outside products', all exact)."""
    out: dict = {}
    for words in per_rank:
        for k, (a, b, exact) in words.items():
            pa, pb, pe = out.get(k, (0, 0, True))
            out[k] = (pa + a, pb + b, pe and exact)
    return out


def data_dependent(plan) -> set:
    """The products of the chosen plan whose words depend on the data on some rank (a sparse
    operand's messages carry its present entries only): the words predicted are a bound."""
    return set().union(*(prog.data_dependent() for prog in plan.programs or ()))   # (None once sent out)


DATA_NOTE = ("words depend on the data: a sparse operand's messages carry only its present entries, "
             "so the words shown are the most it can move (messages are exact)")


def as_json(plan, P: int, options: Options) -> dict:
    products = []
    dynamic = data_dependent(plan)
    for p in plan.products:
        cands = []
        for c in p.candidates:
            if "skipped" in c and "predicted_s" not in c:
                cands.append({"plan": c["plan"], "skipped": c["skipped"]})
                continue
            rec = {k: c.get(k) for k in CANDIDATE_KEYS}
            if "skipped" in c:
                rec["skipped"] = c["skipped"]
            cands.append(rec)
        products.append({"expr": p.expr, "chosen": p.plan, "why": p.why, "K": p.K, "notes": p.notes,
                         "candidates": cands, "loop": p.loop,
                         "words_predicted": "at most" if p.index in dynamic else "exact"})
    dims = {d: {"size": int(dp.size), "partition": dp.method, "rows_min": int(dp.counts.min()),
                "rows_max": int(dp.counts.max()), **{k: v for k, v in plan.partition.get(d, {}).items()
                                                     if k in ("imbalance",)}, **_choice_json(plan.partition.get(d, {}))}
            for d, dp in plan.dims.items()}
    loops = [{"loop": k, "words_per_iteration": a + b, "products": a, "outside_products": b,
              "words_predicted": "exact" if exact else "at most"}
             for k, (a, b, exact) in sorted(loop_words(plan).items())]
    return {"P": P, "coefficients": _source(options, P), "dims": dims, "products": products, "loops": loops,
            "local_routes": local_routes(plan.program),
            "planning": plan.planning, "planning_note": plan.planning_note}


def _choice_json(info: dict) -> dict:
    """The partitioning time and, under --partition auto, the choice: candidates with their
    times and exchange per iteration, the saving per iteration over block, the break-even count."""
    out = {"partition_s": float(info.get("seconds", 0.0))}
    if info.get("auto"):
        out.update({"partition_choice": {k: info[k] for k in ("horizon", "width", "loops", "seconds_all",
                                                               "saving_per_iteration_s", "break_even_iterations",
                                                               "candidates")}})
    return out


def partition_lines(plan) -> list[str]:
    """The progress line: per partitioned dim, the method and its time; under auto the saving
    per iteration and the break-even count (explain has the candidates)."""
    if plan is None:
        return []
    out = []
    for d, info in plan.partition.items():
        more = describe(info)
        if more:
            out.append(f"dim {d}: {more[0]}")
        elif "seconds" in info and info.get("method") not in (None, "block"):
            out.append(f"dim {d}: partition {info['method']} in {info['seconds']:.2f} s")
    return out


def local_routes(program) -> list[dict]:
    """Every product of the program (loop bodies too) with the local route kernels/routes.py takes for
    it when its dense operands are full at run time, and the one it takes if they are not."""
    out = []

    def walk(prog, where):
        names = prog.names()
        for n in prog.toposort():
            if n.op is Op.WHILE:
                walk(n.attr("body"), f"in loop {len(out)}" if where is None else where)
            if n.op is not Op.MXM:
                continue
            a, b = n.args[0].type, n.args[1].type
            sr = n.attr("semiring")
            compute = sr.dtypes(a.dtype, b.dtype)[0]
            k = b.ncols if isinstance(b.ncols, int) else 0   # (a symbolic K: taken as wide)
            full, gaps, covered = routes.expected(sr, compute, a.kind is Kind.dense, b.kind is Kind.dense,
                                                  bool(n.attr("mask")), k)
            out.append({"product": f"{names[id(n)]} = {names[id(n.args[0])]} {sr.name} {names[id(n.args[1])]}",
                        "at": str(n.span) if n.span else None, "in_loop": where is not None,
                        "route": full.name, "says": full.says, "else": gaps.name if gaps else None,
                        "covered": covered.name if covered else None})

    walk(program, None)
    return out


def route_lines(program) -> list[str]:
    rows = local_routes(program)
    if not rows:
        return []
    lines = ["  local products, by the route the kernel table (kernels/routes.py) takes:"]
    for r in rows:
        lines.append(f"    {r['product']}{'  (in a loop)' if r['in_loop'] else ''}"
                     + (f"  # {r['at']}" if r["at"] else ""))
        lines.append(f"      {r['route']}: {r['says']}"
                     + (f"; if a dense operand has missing entries at run time: {r['else']}" if r["else"] else "")
                     + (f"; if B misses entries only where A reads none (proved at planning): {r['covered']}"
                        if r["covered"] else ""))
    return lines


def _ms(x):
    return f"{x * 1e3:9.3f} ms" if x is not None else " " * 12


def as_text(plan, P: int, options: Options) -> str:
    lines = ["program after passes:", *("  " + ln for ln in str(plan.program).splitlines()),
             f"distributed plan for P = {P} (cost model: {_source(options, P)})"]
    if getattr(plan, "planning", "rank 0") == "spmd":
        lines.append("  planning: SPMD, every rank planned its own program from its rows (sharded inputs)")
    elif getattr(plan, "planning_note", None):
        lines.append(f"  planning: {plan.planning_note}")
    for d, dp in plan.dims.items():
        imb = plan.partition.get(d, {}).get("imbalance")
        lines.append(f"  dim {d}: {dp.size} indices, partition {dp.method}"
                     + (f" (imbalance {imb:.3f})" if imb is not None else "")
                     + f", rows per process {dp.counts.min()}..{dp.counts.max()}")
        lines += ["    " + ln for ln in describe(plan.partition.get(d, {}))]
    if not plan.products:
        lines.append("  no distributed sparse x dense products (everything is local or computed at planning)")
    kinds = {type(i) for prog in plan.programs or () for i in walk(prog.setup + prog.instrs)}
    if FetchMxM in kinds:
        lines.append("  a carried value times a fixed sparse one: the fixed one's rows the value names are fetched "
                     "from their owners, one owner at a time (FetchMxM); it is never gathered whole")
    if FetchGather in kinds:
        lines.append("  gather: each rank asks the owners of the positions it holds for their entries (FetchGather); "
                     "neither vector is gathered whole")
    dynamic = data_dependent(plan)
    for p in plan.products:
        lines.append(f"  product {p.index}: {p.expr}   [{p.a} x {p.b}]"
                     + (f"   in loop {p.loop}: costs per iteration" if p.loop is not None else ""))
        lines.append(f"      {'plan':<12} {'predicted':>12} {'compute':>12} {'comm':>12} {'latency':>12} "
                     f"{'words avg/max':>21} {'msgs avg/max':>14} {'memory':>9}")
        for c in p.candidates:
            mark = "*" if c.get("plan") == p.plan and "predicted_s" in c and "skipped" not in c else " "
            if "predicted_s" not in c:
                lines.append(f"    {mark} {c['plan']:<12} skipped: {c['skipped']}")
                continue
            lines.append(f"    {mark} {c['plan']:<12} {_ms(c['predicted_s'])} {_ms(c['compute_s'])} "
                         f"{_ms(c['comm_s'])} {_ms(c['latency_s'])} "
                         f"{c['words_avg']:>10.0f}/{c['words_max']:<10.0f} {c['messages_avg']:>6.1f}/"
                         f"{c['messages_max']:<7.0f} {c['memory_bytes'] / 2**20:>7.1f}MB"
                         + (f"  (C in {c['batches']} column batches)" if c.get("batches", 1) > 1 else "")
                         + (f"  (over cap: {c['skipped']})" if "skipped" in c else "")
                         + ("  (P > cores: all processes' work shared by the cores)"
                            if c.get("oversubscribed") else ""))
        lines.append(f"      chosen: {p.plan} — {p.why}")
        for note in p.notes:
            lines.append(f"      note: {note}")
        if p.index in dynamic:
            lines.append(f"      note: {DATA_NOTE}")
    for k, (a, b, exact) in sorted(loop_words(plan).items()):
        lines.append(f"  loop {k}: words sent per iteration, all ranks: {'' if exact else 'at most '}{a + b} "
                     f"(products {a}, outside products {b}: scalar allreduces, redistributions, the "
                     f"condition's broadcast)")
    lines += route_lines(plan.program) + exchange_lines(plan)
    for name, lay in plan.output_layouts.items():
        lines.append(f"  output {name}: {lay}" + (", computed once at planning (static)"
                                                    if name in plan.static_outputs else ""))
    return "\n".join(lines)


def exchange_lines(plan) -> list[str]:
    """What rank 0's program moves outside products and loops, by kind of instruction (an op's
    operands gathered, extracted rows brought from their owners, reductions combined), and the
    words those instructions send on all ranks together, from their own ``traffic`` (the account
    the stats measure when they run)."""
    progs = plan.programs or ()
    kinds: dict[str, list] = {}
    for i in progs[0].instrs if progs else ():
        if _exchange(i):
            kinds.setdefault(type(i).__name__, []).append(i.dynamic)
    if not kinds:
        return []
    parts = [f"{k} x{len(v)}" + (" (the entries present, counted when it runs)" if all(v) else "")
             for k, v in sorted(kinds.items())]
    line = "  moved outside products (each rank): " + ", ".join(parts)
    if len(progs) != progs[0].P:   # (one rank's program: the others' group sizes are not known here)
        return [line]
    all_splits = [[p.splits[g] for p in progs] for g in range(len(progs[0].splits))]
    words = sum(i.traffic(Where(p.rank, p.group_sizes(all_splits))).words_sent
                for p in progs for i in p.instrs if _exchange(i))
    most = "at most " if any(i.dynamic for p in progs for i in p.instrs if _exchange(i)) else ""
    return [line + f"; words sent, all ranks: {most}{words}"]


def _exchange(i) -> bool:
    return i.product is None and type(i).__module__.rsplit(".", 1)[-1] in ("collectives", "messages", "onesided")


def compare(stats: dict) -> str:
    """Predicted next to measured, per product, from a run's --stats file."""
    lines = [f"P = {stats['P']}, plan {stats['plan']}, partition {stats['partition']}; iteration "
             f"{stats['iteration_s_median'] * 1e3:.3f} ms (median of {len(stats['iteration_s'])})",
             f"  {'product':<40} {'plan':<12} {'predicted':>12} {'measured max':>14} {'ratio':>7}"]
    for lp in stats.get("loops", []):
        lines.append(f"  loop {lp['loop']}: {lp['iterations']} iterations in {lp['seconds'] * 1e3:.3f} ms "
                     f"({lp['seconds'] / max(1, lp['iterations']) * 1e3:.3f} ms per iteration)")
        got = lp.get("words_per_iteration") or []
        if "words_predicted_per_iteration" in lp and got:
            bound = "at most " if lp.get("loop_words_predicted") == "at most" else ""
            seen = f"{min(got)}" if min(got) == max(got) else f"{min(got)}..{max(got)}"
            lines.append(f"      words sent per iteration, all ranks: predicted {bound}"
                         f"{lp['words_predicted_per_iteration']} (products {lp['words_predicted_products']}, "
                         f"outside products {lp['words_predicted_outside_products']}), measured {seen}")
    for p in stats["products"]:
        pred = p.get("predicted", {}).get("predicted_s")
        meas = p.get("measured_s_max")
        if meas and p.get("iterations"):   # a product in a loop: predicted per iteration
            meas = meas / p["iterations"]
        ratio = f"{pred / meas:7.2f}" if pred and meas else "      -"
        lines.append(f"  {p['expr'][:40]:<40} {p['plan']:<12} {_ms(pred)} {_ms(meas):>14} {ratio}")
        pw = p.get("predicted", {}).get("words")
        # a prediction is a bound only where the words depend on the data (a sparse operand)
        bound = "at most " if p.get("words_predicted", "at most") == "at most" else ""
        if pw is not None and "loop" in p:
            lines.append(f"      in loop {p['loop']}, {p['iterations']} iterations: words sent per iteration: "
                         f"predicted {bound}{pw}, measured {p['words_sent_per_iteration']:.1f}")
        elif pw is not None:
            lines.append(f"      words sent: predicted {bound}{pw}, measured {p['words_sent_total']}")
    return "\n".join(lines)


__all__ = ["MissingDims", "as_json", "as_text", "compare", "partition_lines", "synthesize"]
