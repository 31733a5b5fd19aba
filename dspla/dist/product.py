"""Lowering one sparse x dense product: its candidate plans, their predicted times, the choice.

Each candidate plan lowers into its own ProductContext (per-rank instruction buffers), so
lowering is also how a plan is costed: the cost model counts the candidate's instructions.
With ``--plan auto`` every plan that applies and fits in memory is predicted and the fastest
is kept; with a named plan only that one is lowered (and still predicted, for explain).
"""
from __future__ import annotations

import os

import scipy.sparse as sp

from ..exec import gbops
from ..ir import Node
from .layout import canonical
from .planir import CastTo
from .plans import PLANS, get_plan, plan_names


class ProductContext:
    """What a plan sees: the static sparse A (whole, on the planning rank), how A's rows and B's
    rows are distributed, B's slot and width K, and emission helpers writing into this
    candidate's own buffers."""

    def __init__(self, pl, n: Node, index: int, info):
        a, b = n.args
        self.pl, self.node, self.index, self.info = pl, n, index, info
        self.P = pl.P
        self.semiring = n.attr("semiring")
        self.compute, self.out_dtype = self.semiring.dtypes(a.type.dtype, b.type.dtype)
        self.rows = pl.dims[a.type.nrows]
        self.cols = pl.dims[a.type.ncols]
        self.K = pl.concrete(b.type.ncols)
        self.b = pl.value(b)
        self.b_full = pl.facts[id(b)].full
        self.b_dtype = b.type.dtype
        self.opt = pl.opt
        self.tag = 16 + 8 * index
        self._A = pl.static[id(a)]
        self._csr = pl.__dict__.setdefault("_csr_cache", {})
        self.progs = [[] for _ in range(self.P)]
        self.consts = [dict() for _ in range(self.P)]
        self.splits: list = []
        self.windows: list = []
        self.out = pl.slot()

    # -- emission into this candidate's buffers
    def emit(self, x):
        for r in range(self.P):
            out = x(r) if callable(x) else x
            if out is None:
                continue
            (self.progs[r].extend if isinstance(out, list) else self.progs[r].append)(out)

    def emit_rank(self, r: int, instrs: list):
        self.progs[r].extend(instrs)

    def slot(self) -> int:
        return self.pl.slot()

    def const(self, rank: int, value) -> int:
        s = self.pl.slot()
        self.consts[rank][s] = value
        return s

    def const_all(self, fn) -> int:
        s = self.pl.slot()
        for r in range(self.P):
            self.consts[r][s] = fn(r)
        return s

    def add_split(self, colors) -> int:
        self.splits.append(list(colors))
        return len(self.pl.splits) + len(self.splits)

    def add_window(self, specs) -> int:
        """A one-sided window: specs[r] = (nrows, row_bytes) rank r exposes. Returns its index."""
        self.windows.append(list(specs))
        return len(self.pl.windows) + len(self.windows) - 1

    @property
    def coefficients(self):
        from ..costmodel import load
        return self.opt.coefficients or load(self.P)

    @property
    def A(self) -> sp.csr_array:
        """A as scipy CSR in the compute dtype, original indexing (shared by the candidates)."""
        key = (id(self._A), self.compute)
        if key not in self._csr:
            import graphblas as gb
            M = gbops.cast(self._A, self.compute)
            self._csr[key] = sp.csr_array(gb.io.to_scipy_sparse(M, format="csr")) if M.nvals else \
                sp.csr_array(M.shape, dtype=self.compute.np)
        return self._csr[key]

    def gb(self, csr):
        from .local import csr_piece
        return csr_piece(csr, self.compute)

    # -- costing and committing
    def group_sizes(self, r: int) -> list[int]:
        sizes = [self.P]
        for colors in list(self.pl.splits) + self.splits:
            c = colors[r]
            sizes.append(sum(1 for x in colors if x == c) if c is not None else 0)
        return sizes

    def counts(self) -> list[dict]:
        from ..costmodel import RankView, count_rank
        return [count_rank(RankView(self.progs[r], self.consts[r], r, self.P, self.K, self.group_sizes(r),
                                    self.compute.np.itemsize)) for r in range(self.P)]

    def predict(self, plan: str, per_rank: list | None = None) -> dict:
        from ..costmodel import predict
        return predict(plan, per_rank if per_rank is not None else self.counts(), self.coefficients)

    def commit(self):
        pl = self.pl
        for r in range(self.P):
            pl.progs[r].extend(self.progs[r])
            pl.consts[r].update(self.consts[r])
        pl.splits.extend(self.splits)
        pl.windows.extend(self.windows)


def memory_cap(opt, P: int) -> float:
    """Bytes a process may use for a product's buffers: --memory-cap, else half the machine's
    memory shared by the P processes."""
    if opt.memory_cap:
        return float(opt.memory_cap)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 << 30
    return 0.5 * total / max(1, P)


def lower_product(pl, n: Node):
    from .planner import ProductInfo

    a, b = n.args
    index = len(pl.products)
    sr = n.attr("semiring")
    info = ProductInfo(index, f"{pl.label(n)} = mxm[{sr}]({pl.label(a)}, {pl.label(b)})", "?",
                       f"sparse[{pl.concrete(a.type.nrows)}x{pl.concrete(a.type.ncols)}]",
                       f"dense[{pl.concrete(b.type.nrows)}x{pl.concrete(b.type.ncols)}]", pl.concrete(b.type.ncols))
    pl.products.append(info)
    names = plan_names() if pl.opt.plan == "auto" else [get_plan(pl.opt.plan).name]
    cap = memory_cap(pl.opt, pl.P)
    best = None
    for name in names:
        spec = PLANS[name]
        probe = ProductContext(pl, n, index, _Scratch())
        reason = spec.check(probe) if spec.check else None
        if reason:
            info.candidates.append({"plan": name, "skipped": reason})
            if pl.opt.plan != "auto":  # the named plan cannot run: fall back, and say so
                info.notes.append(f"{name} cannot run here ({reason}); using allgather1d")
                names.append("allgather1d")
            continue
        spec.lower(probe)
        info.counts[name] = probe.counts()
        cand = probe.predict(name, info.counts[name])
        cand.update({k: v for k, v in probe.info.predicted.items() if k not in cand})
        cand["notes"] = list(probe.info.notes)
        if cand["memory_bytes"] > cap:
            cand["skipped"] = f"needs {cand['memory_bytes'] / 2**20:.0f} MiB per process, over the cap " \
                              f"of {cap / 2**20:.0f} MiB"
        info.candidates.append(cand)
        if "skipped" not in cand and (best is None or cand["predicted_s"] < best[1]["predicted_s"]):
            best = (probe, cand)
        if pl.opt.plan != "auto" and "skipped" not in cand:
            break
    if best is None:  # nothing fits: the named plan anyway, or the smallest
        fits = [c for c in info.candidates if "predicted_s" in c]
        raise_if = not fits
        if raise_if:
            from ..errors import PlanError
            raise PlanError(f"no plan can run {info.expr}: " + "; ".join(f"{c['plan']}: {c.get('skipped')}"
                                                                          for c in info.candidates))
        name = min(fits, key=lambda c: c["memory_bytes"])["plan"]
        probe = ProductContext(pl, n, index, _Scratch())
        PLANS[name].lower(probe)
        best = (probe, next(c for c in fits if c["plan"] == name))
        info.notes.append(f"every plan exceeds the memory cap; using the smallest, {name}")
    probe, cand = best
    info.plan = cand["plan"]
    info.predicted = {k: cand[k] for k in ("predicted_s", "words_max", "messages_max") if k in cand}
    info.predicted.update({k: v for k, v in probe.info.predicted.items()})
    info.notes.extend(probe.info.notes)
    others = sorted((c for c in info.candidates if "predicted_s" in c and c is not cand),
                    key=lambda c: c["predicted_s"])
    if pl.opt.plan == "auto":
        info.why = "lowest predicted time" + (f" ({cand['predicted_s'] * 1e3:.2f} ms vs {others[0]['plan']} "
                                              f"{others[0]['predicted_s'] * 1e3:.2f} ms)" if others else "")
    else:
        info.why = f"requested with --plan {pl.opt.plan}"
    probe.commit()
    out = probe.out
    if probe.out_dtype is not probe.compute:
        cast = pl.slot()
        pl.emit(CastTo(cast, out, probe.out_dtype.value))
        out = cast
    pl.set(n, out, canonical(n.type, pl.dims))


class _Scratch:
    """A candidate's own notes and predictions until it is chosen."""

    def __init__(self):
        self.predicted: dict = {}
        self.notes: list = []
