"""Partitioning step: every symbolic dim of a sparse input is row-partitioned. The partitioner
runs on the static square matrices that are left operands of products (their union pattern)."""
from __future__ import annotations

import time

import graphblas as gb
import numpy as np
import scipy.sparse as sp

from ..errors import PlanError
from ..instr.layout import DimPart
from ..ir import Node, Op
from ..ir.types import Kind
from ..partition.simple import block_parts
from . import spgemm_size
from .options import Options
from .static import Static


def partition_dims(order: list[Node], static: Static, sizes: dict, P: int, opt: Options, given: dict | None = None):
    """(dims: symbol -> DimPart, info: symbol -> {method, seconds, imbalance}). ``given``: input
    name -> the distribution of a value passed already distributed; its owners are adopted for
    its dim (values stay where they are), unless a partition is given explicitly (parts)."""
    adopted = {}
    for n in order:
        d = (given or {}).get(n.attr("name")) if n.op is Op.INPUT else None
        if d is not None and d.kind in ("row", "col") and opt.parts is None:
            sym = n.type.shape[0 if d.kind == "row" else 1]
            if isinstance(sym, str) and d.part.size == sizes.get(sym) and d.part.P == P:
                adopted.setdefault(sym, d.part)
    syms = []
    for n in order:
        if n.op is Op.INPUT and n.type.kind is Kind.sparse:
            for d in n.type.shape:
                if isinstance(d, str) and d not in syms:
                    syms.append(d)
    syms += [d for d in adopted if d not in syms]   # a value's dim stays distributed as it is
    by_id = {id(n): n for n in order}
    dims: dict[str, DimPart] = {}
    info: dict[str, dict] = {}
    for d in syms:
        size = sizes[d]
        squares = [static.values[id(n.args[0])] for n in order
                   if n.op is Op.MXM and id(n.args[0]) in static.values and n.args[0].type.shape == (d, d)]
        if not squares:
            squares = [v for i, v in static.values.items() if by_id[i].type.shape == (d, d)]
        t0 = time.perf_counter()
        edges = None
        if d in adopted:
            dims[d] = adopted[d]
            info[d] = {"method": f"{adopted[d].method} (kept from the input)", "seconds": 0.0}
            continue
        if opt.parts is not None and not info and squares:
            parts = np.asarray(opt.parts, dtype=np.int64)
            if parts.size != size or (parts.size and (parts.min() < 0 or parts.max() >= P)):
                raise PlanError(f"the partition file has {parts.size} entries with ids "
                                f"{parts.min() if parts.size else '-'}..{parts.max() if parts.size else '-'}, "
                                f"but dim {d!r} has {size} indices and P = {P}")
            method = "file"
        elif squares and opt.partition == "auto" and P > 1 and _sparse_products(order, d):
            cut = block_by_work if _sparse_products(order, d) == "work" else block_by_entries
            parts, info[d] = cut(union_pattern(squares), P)
            method = info[d]["method"]
        elif squares and opt.partition == "auto" and P > 1:
            from . import partition_choice  # (its cost model and partitioners: only when it chooses)
            parts, info[d] = partition_choice.choose(union_pattern(squares), P, _width(order, static, d, sizes), opt,
                                                     loops=any(n.op is Op.WHILE for n in order))
            method = info[d]["method"]
        elif squares and opt.partition != "block" and P > size:
            # no more rows than processes: each row alone on a process whatever the method (the
            # partitioners refuse so few rows)
            parts, method = block_parts(size, P), "block"
            info[d] = {"method": method, "note": f"{size} rows for {P} processes: {opt.partition} not run"}
        elif squares and opt.partition != "block" and P > 1:
            from ..partition import partition  # (the partitioners: only when one runs)
            res = partition(union_pattern(squares), P, opt.partition, eps=opt.eps, seed=opt.seed, cache=opt.cache,
                            progress=opt.progress)
            parts, method = res.parts, opt.partition
            info[d] = {"method": method, "imbalance": float(res.imbalance)}
            from ..partition.vertex_owners import EDGE_OF, edge_table  # (with the partitioners)
            if method in EDGE_OF:   # the edge partition goes with the rows: vertexcut plans on it
                edges = edge_table(union_pattern(squares), P, method, opt.eps, opt.seed, cache=opt.cache)
        else:
            parts, method = block_parts(size, P), "block"
        dims[d] = DimPart(d, parts, P, method, edges)
        info.setdefault(d, {"method": method})
        info[d]["seconds"] = time.perf_counter() - t0
    return dims, info


def _sparse_products(order: list[Node], d: str) -> str | None:
    """How rows are cut when the program multiplies two sparse d x d values: "work" without a mask
    (A @ A: a row's work and output follow its neighbours' degrees, not its own), "entries" when
    every such product is masked (a triangle count's L·L in L: the mask bounds the output, and
    what a rank holds follows its rows' entries; equal rows put 73 % of soc-Slashdot0902's
    entries on the first of 4 processes); None without one."""
    found = [n for n in order if n.op is Op.MXM and
             all(x.type.kind is Kind.sparse and x.type.shape == (d, d) for x in n.args[:2])]
    if any(n.attr("mask") is None for n in found):
        return "work"
    return "entries" if found else None


def block_by_entries(S: sp.csr_array, P: int) -> tuple[np.ndarray, dict]:
    """Consecutive rows, cut where each process gets an equal share of S's entries (plus one a row):
    from the degrees alone, no estimate made."""
    work = np.diff(sp.csr_array(S).indptr) + 1
    if work.size == 0:
        return np.zeros(0, np.int64), {"method": "block-by-entries", "imbalance": 1.0}
    cum = np.cumsum(work)
    parts = np.minimum((cum - work) * P // cum[-1], P - 1).astype(np.int64)
    per = np.bincount(parts, weights=work, minlength=P)
    return parts, {"method": "block-by-entries", "imbalance": float(per.max() / max(per.mean(), 1.0))}


def block_by_work(S: sp.csr_array, P: int) -> tuple[np.ndarray, dict]:
    """Consecutive rows, cut where each process gets an equal share of S·S's output entries
    (Cohen's estimate per row, plan/spgemm_size.py) and of S's own: each then holds about as
    much of the product. Equal rows put soc-Slashdot0902's hub rows, 1.3 GB of A @ A's 1.7, on
    the first of 4 processes; equal multiply-adds left the last one 40 % over its share."""
    S = sp.csr_array(S)
    if S.shape[0] == 0:   # (no rows: nothing to split)
        return np.zeros(0, np.int64), {"method": "block-by-work", "work_imbalance": 1.0}
    G = gb.io.from_scipy_sparse(S)
    work = spgemm_size.row_entries(G, spgemm_size.row_summary(G)[0]) + np.diff(S.indptr) + 1
    spgemm_size._keys.cache_clear()
    cum = np.cumsum(work)
    parts = np.minimum((cum - work) * P // cum[-1], P - 1).astype(np.int64)   # (a row where its work starts)
    per = np.bincount(parts, weights=work, minlength=P)
    return parts, {"method": "block-by-work", "work_imbalance": float(per.max() / max(per.mean(), 1.0))}


def _width(order: list[Node], static: Static, d: str, sizes: dict, outside: dict | None = None,
           times: int = 1) -> int:
    """The sum of K over the products whose left operand is a planning-time d x d matrix: the
    words a row of d moves each time the program runs. A loop's products count at the loop's
    bound (PageRank's one product, 200 times): the loop's own placeholders for values from
    outside (``outside``) are followed to those values, so its product on Aᵀ is found. A bound
    that is a dim's size (BFS's ``max n``: a safety bound, not an expected count) counts as
    log2 of it, about the levels of a small-world graph: the bound itself priced a 9-level BFS
    on an 82k-node graph at 82k exchanges, enough to make any partitioner look repaid."""
    outside = outside or {}
    total = 0
    for n in order:
        if n.op is Op.MXM:
            a, b = (outside.get(id(x), x) for x in n.args[:2])
            if id(a) in static.values and a.type.shape == (d, d) and id(b) not in static.values:
                k = n.args[1].type.ncols
                total += times * (k if isinstance(k, int) else int(sizes.get(k, 1)))
        elif n.op is Op.WHILE:
            k, bound = n.attr("carried"), n.attr("max_iter")
            bound = bound if isinstance(bound, int) else max(1, int(np.ceil(np.log2(max(2, sizes.get(bound, 2))))))
            for prog, runs in ((n.attr("cond"), bound + 1), (n.attr("body"), bound)):
                inner = dict(outside)
                inner.update({id(h): outside.get(id(a), a) for h, a in zip(prog.declared[k:], n.args[k:])})
                total += _width(prog.toposort(), static, d, sizes, inner, times * runs)
    return total


def union_pattern(mats) -> sp.csr_array:
    out = None
    for M in mats:
        S = gb.io.to_scipy_sparse(M, format="csr")
        S = sp.csr_array((np.ones(S.nnz), S.indices, S.indptr), shape=S.shape)
        out = S if out is None else out + S
    out.sum_duplicates()
    return out


def describe(dims: dict) -> str:
    rows = [f"  dim {d}: {dp.size} indices, partition {dp.method}, rows per process "
            f"{dp.counts.min()}..{dp.counts.max()}" for d, dp in dims.items()]
    return "partitioned dims:\n" + ("\n".join(rows) if rows else "  (none)")
