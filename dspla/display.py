"""Rich display in Jupyter: HTML and Markdown for results (``Array``), explain text and run stats.

Nothing here gathers a distributed value: a notebook's display must not start a collective that
the other ranks never join, so a distributed result shows its metadata only.
"""
from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

PREVIEW = 6   # rows and columns of a result shown


def _cell(v: object) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    return str(v)


def preview_rows(values: NDArray[Any], present: NDArray[np.bool_], shape: Sequence[int]) -> list[list[str]]:
    """The top-left corner (``values``, ``present``) of a value of ``shape`` as text cells; a
    missing entry is '·' (not zero), and '…'/'⋮' say there is more."""
    r, c = values.shape
    rows = [[_cell(values[i, j]) if present[i, j] else "·" for j in range(c)] for i in range(r)]
    if c < shape[1]:
        rows = [row + ["…"] for row in rows]
    if r < shape[0]:
        rows.append(["⋮"] * len(rows[0]) if rows else ["⋮"])
    return rows


def table_html(header: Sequence[object] | None, rows: Sequence[Sequence[object]]) -> str:
    head = "" if header is None else "<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def table_markdown(header: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


class Text(str):
    """A report (explain's) that a notebook shows as preformatted text, not a quoted string."""

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"

    def _repr_markdown_(self) -> str:
        return f"```\n{self}\n```"


SUMMARY = ("plan", "partition", "P", "words_sent_total", "words_sent_max", "messages_sent_total",
           "messages_sent_max", "iteration_s_median", "planning_s", "peak_rss_bytes_max", "seconds")
PER_RANK = ("words_sent", "words_received", "messages_sent", "messages_received", "compute_s", "pack_s",
            "wait_s", "peak_rss_bytes")


class Stats(dict[str, Any]):
    """A run's stats (the dict ``--stats`` writes), shown as a summary and a per-rank table."""

    def _tables(self) -> tuple[list[list[Any]], list[str], list[list[Any]]]:
        summary = [[k, self[k]] for k in SUMMARY if k in self]
        ranks = self.get("per_rank") or []
        cols = [k for k in PER_RANK if any(k in r for r in ranks)]
        per = [[i, *(r.get(k, "") for k in cols)] for i, r in enumerate(ranks)]
        return summary, ["rank", *cols], per

    def _repr_html_(self) -> str:
        summary, header, per = self._tables()
        return table_html(None, summary) + (table_html(header, per) if per else "")

    def _repr_markdown_(self) -> str:
        summary, header, per = self._tables()
        return table_markdown(["stat", "value"], summary) + ("\n\n" + table_markdown(header, per) if per else "")
