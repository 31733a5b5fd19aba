"""SNAP-style edge lists (``.txt``, ``.txt.gz``, ``.edges``, ``.el``).

Format, as read here:

- one edge per line, ``SRC DST`` separated by any run of spaces/tabs; CRLF line endings are fine;
- comments start with ``#`` (SNAP), or with ``%`` when the file's first comment line does
  (KONECT/NetworkRepository); anything after the comment character on a line is ignored and
  blank lines are skipped;
- node ids are non-negative integers, not necessarily contiguous;
- an optional third column is allowed (SNAP temporal graphs carry a timestamp there, weighted
  lists a weight). It must be numeric and every line must have the same number of columns.
  It is used as the edge value only with ``weighted=True``; otherwise it is checked and ignored.

What you get (``load_snap``), a ``scipy.sparse.csr_array``:

- ``directed=True`` (default; SNAP social graphs are directed): A[i, j] = 1 for an edge i -> j.
  ``directed=False``: every edge is stored both ways, so A is symmetric.
- ids are relabelled to 0..n-1 in increasing order of the original id (``relabel=True``); pass
  ``return_ids=True`` to also get ``ids`` with ``ids[k]`` = the original id of node k.
  ``relabel=False`` keeps the ids as row numbers (n = largest id + 1).
- duplicate edges collapse to one entry of value 1.0 (with ``weighted=True``: the largest of the
  listed weights, so an undirected edge listed in both directions is still one edge).
- self loops are kept by default (``self_loops=False`` drops them); they are data in the file and
  cost nothing in a 1D plan (a diagonal entry reads a local row).
"""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from ._textfile import (
    FLOAT,
    SEP,
    bounded_lines,
    check_bom,
    line_offset,
    lines_from,
    loadtxt,
    locate,
    open_text,
    parse_float,
    parse_int,
    read_all,
    read_errors,
)
from .limits import check_sparse_dims

COMMENT_CHARS = ("#", "%")


def load_snap(path, *, directed: bool = True, self_loops: bool = True, weighted: bool = False,
              relabel: bool = True, return_ids: bool = False):
    """Read an edge list into an n x n csr_array (see the module docstring for the rules).

    Returns ``A``, or ``(A, ids)`` with ``return_ids=True``."""
    src, dst, w = read_edges(path, weighted=weighted)
    if relabel:
        ids, (src, dst) = _relabel(src, dst)
    else:
        n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        if n > 2**31:
            raise DsplaError(f"{path}: relabel=False would make a {n} x {n} matrix (largest node "
                             f"id {n - 1}); use relabel=True")
        check_sparse_dims(path, n, n, len(src))   # (ids far beyond the edges: relabel)
        ids = np.arange(n, dtype=np.int64)
    A = edges_to_csr(src, dst, len(ids), w, directed=directed, self_loops=self_loops)
    return (A, ids) if return_ids else A


def read_edges(path, *, weighted: bool = False):
    """The raw edge arrays ``(src, dst, weights or None)`` of an edge list, validated."""
    ncols, comment, first = _sniff(path)
    if weighted and ncols != 3:
        raise DataFormatError(path, "weighted=True but the file has no third (weight) column")
    dtype = [("u", np.int64), ("v", np.int64)] + ([("w", np.float64)] if ncols == 3 else [])
    try:
        rec = loadtxt(path, first - 1, dtype, comment)
    except ValueError:
        rec = None
    if rec is None or (len(rec) and min(rec["u"].min(), rec["v"].min()) < 0):
        locate(path, _line_validator(path, ncols, comment), _valid_line(ncols, comment),
               fallback="malformed edge list")
    src, dst = np.ascontiguousarray(rec["u"]), np.ascontiguousarray(rec["v"])
    w = np.ascontiguousarray(rec["w"]) if weighted else None
    if w is not None and not np.isfinite(w).all():   # (weights are values: refused as MatrixMarket's are)
        _nonfinite_weight(path, first, comment, int(np.argmax(~np.isfinite(w))), int((~np.isfinite(w)).sum()))
    return src, dst, w


def _nonfinite_weight(path, first: int, comment: str | None, k: int, count: int):
    """Name the line of the k-th edge (0-based), whose weight is NaN or infinite (error path)."""
    text = read_all(path)
    for no, line in lines_from(text, line_offset(text, first - 1), first):
        body = line.strip()
        if not body or (comment and body.startswith(comment)):
            continue
        if k == 0:
            raise DataFormatError(path, f"{count} NaN or infinite weight(s), the first on this line: "
                                  f"{body[:80]!r}", line=no)
        k -= 1
    raise DataFormatError(path, f"{count} NaN or infinite weight(s)")


def edges_to_csr(src, dst, n: int, w=None, *, directed=True, self_loops=True) -> sp.csr_array:
    """Edges (0-based) -> n x n csr_array, duplicates collapsed (value 1.0, or max weight)."""
    if not self_loops:
        keep = src != dst
        src, dst = src[keep], dst[keep]
        w = None if w is None else w[keep]
    if not directed:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = None if w is None else np.concatenate([w, w])
    if w is None:
        if max(n, len(src)) < 2**31:  # int32 indices: half the memory, faster downstream
            src, dst = src.astype(np.int32), dst.astype(np.int32)
        # scipy's coo->csr is a counting sort in C++; the summed duplicates are reset to 1.0.
        A = sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n))
        A.sum_duplicates()
        A.data[:] = 1.0
        return A
    key = src * np.int64(n) + dst
    order = np.lexsort((w, key))  # by edge, then weight: the last of each run is the max
    key, w = key[order], w[order]
    last = np.flatnonzero(np.r_[key[1:] != key[:-1], True])
    key, w = key[last], w[last]
    A = sp.csr_array((w, (key // n, key % n)), shape=(n, n))
    return A


def _relabel(src, dst):
    """Original ids -> 0..n-1 in increasing id order. A presence bitmap when ids are not much
    sparser than the edges (O(E + max id)), sorting otherwise."""
    if len(src) == 0:
        return np.zeros(0, np.int64), (src, dst)
    top = int(max(src.max(), dst.max()))
    if top < 4 * (len(src) + len(dst)) + 1024:
        present = np.zeros(top + 1, dtype=bool)
        present[src] = True
        present[dst] = True
        ids = np.flatnonzero(present)
        new = np.cumsum(present, dtype=np.int64) - 1
        return ids, (new[src], new[dst])
    ids = np.sort(np.concatenate([src, dst]))  # sort-based unique: faster than np.unique
    ids = ids[np.r_[True, ids[1:] != ids[:-1]]]
    return ids, (np.searchsorted(ids, src), np.searchsorted(ids, dst))


def _data_tokens(line: str, comment: str) -> list[str]:
    return line.split(comment, 1)[0].split()


def _sniff(path) -> tuple[int, str, int]:
    """(columns of the first edge line: 2 or 3, the comment character, that line's number);
    reads only the header."""
    comment, no = None, 0
    with open_text(path) as f, read_errors(path):
        for no, line, _ in bounded_lines(f):
            if no == 1:
                check_bom(path, line)
            stripped = line.lstrip()
            if stripped[:1] in COMMENT_CHARS:
                comment = comment or stripped[0]  # the first comment line decides
                continue
            toks = _data_tokens(stripped, comment or "#")   # a trailing comment is no column
            if toks:
                if len(toks) not in (2, 3):
                    raise DataFormatError(
                        path, f"expected 'SRC DST' or 'SRC DST VALUE', found {len(toks)} "
                        f"column{'s' if len(toks) != 1 else ''}: {line.strip()[:200]!r}", line=no)
                return len(toks), comment or "#", no
    return 2, comment or "#", no + 1  # no edges at all: an empty graph


def _valid_line(ncols: int, comment: str) -> str:
    """A regex for a plainly valid line (see _textfile.locate): never laxer than the
    validator below (no sign, at most 18 digits, so every id it passes fits in int64)."""
    fields = [r"[0-9]{1,18}"] * 2 + ([FLOAT] if ncols == 3 else [])
    return rf"[ \t]*(?:{SEP.join(fields)}[ \t]*)?(?:{re.escape(comment)}[^\n]*)?"


def _line_validator(path, ncols: int, comment: str):
    def check(no: int, line: str) -> None:
        toks = _data_tokens(line, comment)
        if not toks:
            return
        if len(toks) != ncols:
            raise DataFormatError(path, f"expected {ncols} columns like the first edge line, "
                                  f"found {len(toks)}: {line.strip()!r}", line=no)
        for tok, what in zip(toks[:2], ("source node id", "target node id")):
            v = parse_int(path, no, tok, what)
            if v < 0:
                raise DataFormatError(path, f"{what} {tok} is negative", line=no)
            if v >= 2**63:
                raise DataFormatError(path, f"{what} {tok} does not fit in 64 bits", line=no)
        if ncols == 3:
            parse_float(path, no, toks[2], "edge value")
    return check
