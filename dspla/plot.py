"""Figures of what dspla measured, from the JSON its commands write (matplotlib, Agg backend):

- ``comm_stats``, from ``dspla comm-stats ... --json``: volume and messages per process vs P, one
  line per method (average solid, maximum dashed): Demirci et al.'s Table 2 as a figure;
- ``stats``, from ``dspla run ... --stats``: per rank, words and messages sent and received,
  compute/pack/wait time, peak memory;
- ``train``, from ``dspla train ... --json``: loss and accuracy per epoch;
- ``planner``, from ``dspla bench planner ... --json``: predicted vs measured time per plan, and
  measured (solid) and predicted (dashed) time vs K per graph and P.

Each takes the JSON's content (or a path to it) and returns a ``matplotlib.figure.Figure``;
``save(fig, path)`` writes PNG or SVG by the path's suffix. ``dspla plot KIND FILE -o OUT`` does both.
"""
from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias, Union

from .errors import DsplaError, UnknownNameError
from .formats import files as _files

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PlotData: TypeAlias = Union[str, os.PathLike[str], dict[str, Any], list[dict[str, Any]]]
"""A plot's data: the path of the JSON a dspla command wrote, or its content (loaded with ``json``)."""

KINDS = ("comm-stats", "stats", "train", "planner", "scaling")


def _figure(nrows: int, ncols: int, size: tuple[float, float], **kw: Any) -> tuple[Figure, Any]:
    """A figure outside pyplot: no global state, no display backend (saving renders with Agg;
    Jupyter shows a returned figure with its own formatter)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplots(nrows, ncols, **kw)


def _load(data: PlotData, what: str, path_hint: str = "") -> tuple[Any, str]:
    if isinstance(data, (str, os.PathLike)):
        try:
            with open(data) as f:
                return json.load(f), str(data)
        except FileNotFoundError:
            raise DsplaError(f"{what}: no such file: {data}") from None
        except json.JSONDecodeError as e:
            raise DsplaError(f"{data}: not JSON ({e.msg} at line {e.lineno})") from None
    return data, path_hint or what


def _need(cond: object, where: str, what: str) -> None:
    if not cond:
        raise DsplaError(f"{where}: not {what}")


def comm_stats(data: PlotData) -> Figure:
    recs, where = _load(data, "comm-stats records")
    _need(isinstance(recs, list) and all(isinstance(r, dict) and {"method", "P", "volume_avg", "messages_avg"} <= set(r)
                                         for r in recs) and recs, where, "the records of dspla comm-stats --json")
    fig, axes = _figure(1, 2, (10, 4))
    by: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        by[r["method"]].append(r)
    for (ax, key, label) in ((axes[0], "volume", "volume (rows sent) per process"),
                             (axes[1], "messages", "messages sent per process")):
        for i, (method, rows) in enumerate(sorted(by.items())):
            rows = sorted(rows, key=lambda r: r["P"])
            Ps = [r["P"] for r in rows]
            color = f"C{i}"
            ax.plot(Ps, [r[f"{key}_avg"] for r in rows], "o-", color=color, label=f"{method} avg")
            ax.plot(Ps, [r[f"{key}_max"] for r in rows], "s--", color=color, label=f"{method} max")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("P (processes)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("communication per process vs P, per partitioning method")
    return fig


def stats(data: PlotData) -> Figure:
    s, where = _load(data, "run stats")
    _need(isinstance(s, dict) and isinstance(s.get("per_rank"), list) and s["per_rank"], where,
          "the stats of dspla run --stats")
    ranks = s["per_rank"]
    x = list(range(len(ranks)))
    fig, axes = _figure(2, 2, (10, 7))

    def pair(ax: Axes, a: str, b: str, ylabel: str) -> None:
        w = 0.4
        ax.bar([i - w / 2 for i in x], [r.get(a, 0) for r in ranks], w, label=a.replace("_", " "))
        ax.bar([i + w / 2 for i in x], [r.get(b, 0) for r in ranks], w, label=b.replace("_", " "))
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)

    pair(axes[0, 0], "words_sent", "words_received", "words")
    pair(axes[0, 1], "messages_sent", "messages_received", "messages")
    bottom = [0.0] * len(ranks)
    for key in ("compute_s", "pack_s", "wait_s"):
        vals = [r.get(key, 0.0) for r in ranks]
        axes[1, 0].bar(x, vals, 0.6, bottom=bottom, label=key[:-2])
        bottom = [b + v for b, v in zip(bottom, vals)]
    axes[1, 0].set_ylabel("seconds (last iteration)")
    axes[1, 0].legend(fontsize=8)
    axes[1, 1].bar(x, [r.get("peak_rss_bytes", 0) / 2 ** 20 for r in ranks], 0.6, label="peak RSS")
    axes[1, 1].set_ylabel("peak memory (MiB)")
    for ax in axes.flat:
        ax.set_xticks(x)
        ax.set_xlabel("rank")
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"P={s.get('P', len(ranks))}, plan {s.get('plan', '?')}, partition {s.get('partition', '?')}")
    return fig


def train(data: PlotData) -> Figure:
    r, where = _load(data, "training result")
    _need(isinstance(r, dict) and isinstance(r.get("epochs"), list) and r["epochs"], where,
          "the result of dspla train --json")
    ep = r["epochs"]
    e = [row["epoch"] for row in ep]
    fig, (ax1, ax2) = _figure(1, 2, (10, 4))
    for key, label in (("loss", "training loss"), ("val_loss", "validation loss")):
        if all(key in row for row in ep):
            ax1.plot(e, [row[key] for row in ep], label=label)
    for key, label in (("train_acc", "train"), ("val_acc", "validation"), ("test_acc", "test")):
        if all(key in row for row in ep):
            ax2.plot(e, [row[key] for row in ep], label=label)
    ax1.set_ylabel("loss")
    ax2.set_ylabel("accuracy")
    for ax in (ax1, ax2):
        ax.set_xlabel("epoch")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    name = (r.get("dataset") or {}).get("name", "") if isinstance(r.get("dataset"), dict) else ""
    fig.suptitle(f"training {name} on P={r.get('P', '?')}".replace("  ", " "))
    return fig


def planner(data: PlotData) -> Figure:
    d, where = _load(data, "planner benchmark")
    rows: Any = d.get("rows") if isinstance(d, dict) else d   # (checked by _need)
    _need(isinstance(rows, list) and rows and all({"plan", "K", "predicted_s", "measured_s"} <= set(r) for r in rows),
          where, "the result of dspla bench planner --json")
    cells = sorted({(str(r.get("graph", "")), r.get("P", 0)) for r in rows})
    fig, axes = _figure(1, 1 + len(cells), (5 * (1 + len(cells)), 4), squeeze=False)
    axes = axes[0]
    plans = sorted({r["plan"] for r in rows if r["plan"] != "auto"})
    color = {p: f"C{i}" for i, p in enumerate(plans)}
    ax = axes[0]
    for p in plans:
        mine = [r for r in rows if r["plan"] == p]
        ax.plot([r["measured_s"] for r in mine], [r["predicted_s"] for r in mine], "o", color=color[p], label=p)
    both = [v for r in rows for v in (r["measured_s"], r["predicted_s"]) if v > 0]
    if both:
        lo, hi = min(both), max(both)
        ax.plot([lo, hi], [lo, hi], "k:", label="predicted = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured s per iteration")
    ax.set_ylabel("predicted s per iteration")
    ax.legend(fontsize=8)
    for ax, (graph, P) in zip(axes[1:], cells):
        for p in plans:
            mine = sorted((r for r in rows if r["plan"] == p and str(r.get("graph", "")) == graph
                           and r.get("P", 0) == P), key=lambda r: r["K"])
            if mine:
                Ks = [r["K"] for r in mine]
                ax.plot(Ks, [r["measured_s"] for r in mine], "o-", color=color[p], label=f"{p} measured")
                ax.plot(Ks, [r["predicted_s"] for r in mine], "--", color=color[p], label=f"{p} predicted")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("K (columns of the dense operand)")
        ax.set_ylabel("s per iteration")
        ax.set_title(f"{os.path.basename(graph)} P={P}".strip())
        ax.legend(fontsize=7)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.suptitle("cost model: predicted vs measured" + (f" (commit {d['commit']})" if isinstance(d, dict)
                                                         and d.get("commit") else ""))
    return fig


def scaling(data: PlotData) -> Figure:
    """``dspla scaling --json`` (or ``dspla bench scaling --json``: one panel per case): predicted
    seconds per epoch vs P, one line per plan (CAGNET's four dashed, dspla's solid), the choice circled."""
    d, where = _load(data, "scaling rows")
    cases: list = [d]
    if isinstance(d, dict) and isinstance(d.get("cases"), list):
        cases = d["cases"]
    _need(isinstance(cases, list) and cases and all(isinstance(c, dict) and c.get("rows") for c in cases), where,
          "the result of dspla scaling --json")
    ncol = min(3, len(cases))
    fig, axes = _figure((len(cases) + ncol - 1) // ncol, ncol, (5.5 * ncol, 4.2 * ((len(cases) + ncol - 1) // ncol)),
                        squeeze=False)
    for ax, case in zip(axes.flat, cases):
        _scaling_panel(ax, case)
    for ax in list(axes.flat)[len(cases):]:
        ax.set_visible(False)
    return fig


def _scaling_panel(ax: Axes, d: dict) -> None:
    lines: dict = defaultdict(list)
    for r in d["rows"]:
        for c in r["candidates"]:
            name = re.sub(r" \d+x\d+x\d+$", "", c["plan"])   # (3d's grid dropped: it changes with P)
            lines[(c["family"], name)].append((r["P"], c["predicted_s"]))
    for i, ((fam, plan), pts) in enumerate(sorted(lines.items())):
        ax.plot(*zip(*pts), "--" if fam == "cagnet" else "-", marker=".", color=f"C{i % 10}",
                label=plan)
    ax.plot([r["P"] for r in d["rows"]], [min(c["predicted_s"] for c in r["candidates"]) for r in d["rows"]], "o",
            mfc="none", ms=11, color="k", label="chosen")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("P (ranks)")
    ax.set_ylabel("predicted s per epoch")
    ax.set_title(f"{d.get('graph', '')} ({d.get('partition', '')}) on {d.get('cluster', '')}"
                 + (" (weak)" if d.get("weak") else ""), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    ax.set_ylim(top=min(ax.get_ylim()[1], 30 * min(c["predicted_s"] for r in d["rows"] for c in r["candidates"])))


PLOTS: dict[str, Callable[[PlotData], Figure]] = {"comm-stats": comm_stats, "stats": stats, "train": train,
                                                  "planner": planner, "scaling": scaling}


def save(fig: Figure, path: str | os.PathLike[str]) -> str:
    """Write ``fig`` as PNG or SVG (by the suffix)."""
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".png", ".svg"):
        raise DsplaError(f"a figure is written as .png or .svg, got {path}")
    with _files.atomic_write(path) as fh:   # (a link followed, a device written in place, as every output)
        fig.savefig(fh, format=ext[1:], dpi=120)
    return str(path)


def plot(kind: str, data: PlotData, out: str | os.PathLike[str] | None = None) -> Figure:
    """``dspla plot KIND FILE -o OUT`` from Python: the figure, written to ``out`` when given."""
    if kind not in PLOTS:
        raise UnknownNameError("plot", kind, PLOTS)
    fig = PLOTS[kind](data)
    if out is not None:
        save(fig, out)
    return fig
