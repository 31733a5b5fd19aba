"""SNAP-style edge lists (``.txt``, ``.txt.gz``, ``.edges``, ``.el``).

Format, as read here:

- one edge per line, ``SRC DST`` separated by any run of spaces/tabs; CRLF line endings are fine;
- comments start with ``#`` (SNAP), or with ``%`` when the file's first comment line does
  (KONECT/NetworkRepository); anything after the comment character on a line is ignored and
  blank lines are skipped;
- node ids are non-negative integers, not necessarily contiguous;
- an optional third column is the edge's value (its weight): every line must then have one, and
  it must be a finite number.

What you get (``load_snap``), a ``scipy.sparse.csr_array``:

- ``directed=True`` (default; SNAP social graphs are directed): A[i, j] = w for an edge i -> j
  of weight w. ``directed=False``: every edge is stored both ways, so A is symmetric.
- the weights are kept (``weighted=None``, the default: the third column when the file has one,
  else 1.0 for every edge). ``weighted=False`` drops them (every edge 1.0: a SNAP temporal graph's
  third column is a timestamp, not a weight); ``weighted=True`` requires the column.
- ids are relabelled to 0..n-1 in increasing order of the original id (``relabel=True``); pass
  ``return_ids=True`` to also get ``ids`` with ``ids[k]`` = the original id of node k.
  ``relabel=False`` keeps the ids as row numbers (n = largest id + 1).
- an edge listed more than once is merged by ``duplicates``: ``"first"`` (the default)
  keeps the value listed first, as SNAP's own loaders do (adding an edge that exists changes
  nothing) and as a graph has one edge per pair; ``"sum"`` adds the values up (a multigraph's
  edge counts as weights; what MatrixMarket files, scipy and GraphBLAS do with repeated entries);
  ``"error"`` refuses the file, naming the line. Listed more than once means the same SRC DST
  again; undirected (``directed=False``), the two directions of a pair are then compared: the
  same value both ways is one edge listed both ways (how undirected graphs are usually written:
  not a duplicate), different values are merged by the same rule. How many were merged:
  ``dspla.formats.graph.load_graph``'s ``Graph.merged``; ``dspla run`` says.
- self loops are kept by default (``self_loops=False`` drops them); they are data in the file and
  cost nothing in a 1D plan (a diagonal entry reads a local row).
"""
from __future__ import annotations

import re
from typing import NamedTuple

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


DUPLICATES = ("first", "sum", "error")


class EdgeList(NamedTuple):
    """What ``read_snap`` read: the matrix, the original id of each row (None: the rows are the
    ids, ``relabel=False``) and how many listed edges were merged into others (duplicates)."""
    matrix: sp.csr_array
    ids: np.ndarray | None
    merged: int


def load_snap(path, *, directed: bool = True, self_loops: bool = True, weighted: bool | None = None,
              duplicates: str = "first", relabel: bool = True, return_ids: bool = False):
    """Read an edge list into an n x n csr_array (see the module docstring for the rules).

    Returns ``A``, or ``(A, ids)`` with ``return_ids=True`` (``ids[k]``: the original id of
    node k). ``dspla.formats.graph.load_graph`` gives both, and the count of merged duplicates, as
    one ``Graph``."""
    got = read_snap(path, directed=directed, self_loops=self_loops, weighted=weighted, duplicates=duplicates,
                    relabel=relabel)
    if not return_ids:
        return got.matrix
    return got.matrix, got.ids if got.ids is not None else np.arange(got.matrix.shape[0], dtype=np.int64)


def read_snap(path, *, directed: bool = True, self_loops: bool = True, weighted: bool | None = None,
              duplicates: str = "first", relabel: bool = True, ids=None) -> EdgeList:
    """``load_snap``'s work: the matrix, the ids and the number of duplicates merged.
    ``ids``: the node ids to number the rows by, in that order (row k is node ids[k]; nodes
    without edges included); an edge naming a node not among them is an error."""
    if duplicates not in DUPLICATES:
        raise DsplaError(f"duplicates={duplicates!r}: the rule for an edge listed more than once is one of "
                         f"{', '.join(DUPLICATES)}")
    src, dst, w = read_edges(path, weighted=weighted)
    if ids is not None:
        ids = np.asarray(ids)
        src, dst = _number_by(path, ids, src, dst)
    elif relabel:
        ids, (src, dst) = _relabel(src, dst)
    n = len(ids) if ids is not None else int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
    if ids is None and n > 2**31:
        raise DsplaError(f"{path}: relabel=False would make a {n} x {n} matrix (largest node "
                         f"id {n - 1}); use relabel=True")
    if ids is None:
        check_sparse_dims(path, n, n, len(src))   # (ids far beyond the edges: relabel)
    A, merged, bad = merge_edges(src, dst, n, w, directed=directed, self_loops=self_loops, duplicates=duplicates)
    if bad is not None:
        line, text = _edge_line(path, bad)
        same = ((src[:bad] == src[bad]) & (dst[:bad] == dst[bad])).any()   # else: the other direction
        again = "again" if same else "in the other direction before, with another value"
        raise DataFormatError(path, f"an edge listed {again}: {text!r}; duplicates='error' refuses it "
                              "('first' keeps the value listed first, 'sum' adds the values up)", line=line)
    return EdgeList(A, ids, merged)


def read_edges(path, *, weighted: bool | None = None):
    """The raw edge arrays ``(src, dst, weights or None)`` of an edge list, validated.
    ``weighted``: None uses the third column when the file has one; False ignores it (it must
    still be a number); True requires it."""
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
    w = np.ascontiguousarray(rec["w"]) if ncols == 3 and weighted is not False else None
    if w is not None and not np.isfinite(w).all():   # (weights are values: refused as MatrixMarket's are)
        bad = ~np.isfinite(w)
        line, text = _edge_line(path, int(np.argmax(bad)))
        raise DataFormatError(path, f"{int(bad.sum())} NaN or infinite weight(s), the first on this line: "
                              f"{text[:80]!r}", line=line)
    return src, dst, w


def _edge_line(path, k: int) -> tuple[int, str]:
    """(line number, text) of the k-th edge (0-based) of an edge list (error path: reads the
    text again)."""
    _, comment, first = _sniff(path)
    text = read_all(path)
    for no, line in lines_from(text, line_offset(text, first - 1), first):
        if _data_tokens(line, comment):
            if k == 0:
                return no, line.strip()
            k -= 1
    return first, ""


def _number_by(path, ids: np.ndarray, src, dst):
    """Edges' node ids -> positions in ``ids`` (any order, no repeats); an id not among them is
    an error naming its line."""
    order = np.argsort(ids, kind="stable")
    ranked = ids[order]
    if len(ranked) > 1 and (ranked[1:] == ranked[:-1]).any():
        raise DsplaError(f"{path}: the ids given to number the nodes by (ids=) repeat one")
    out = []
    for ends in (src, dst):
        at = np.searchsorted(ranked, ends).clip(0, max(len(ranked) - 1, 0))
        found = ranked[at] == ends if len(ranked) else np.zeros(len(ends), dtype=bool)
        if not found.all():
            k = int(np.argmin(found))
            line, text = _edge_line(path, k)
            raise DataFormatError(path, f"node {ends[k]} is not among the {len(ids)} ids given (ids=): {text!r}",
                                  line=line)
        out.append(order[at] if len(ranked) else at)
    return out[0], out[1]


def merge_edges(src, dst, n: int, w=None, *, directed=True, self_loops=True, duplicates="first"):
    """Edges (0-based) -> ``(A, merged, bad)``: the n x n csr_array, how many listed edges were
    merged into another, and with ``duplicates="error"`` the index of the first edge that
    repeats one (then A is None), else None.

    An edge is listed more than once when the same (src, dst) pair comes again; in an
    undirected graph also when a pair comes in both directions with different values (both
    directions with the same value is how an undirected graph is usually listed: one edge).
    ``duplicates``: "first" keeps the value listed first, "sum" adds them up, "error" refuses."""
    pos = None   # each edge's place in the list (for the error's line), when self loops are dropped
    if not self_loops:
        keep = src != dst
        src, dst = src[keep], dst[keep]
        w = None if w is None else w[keep]
        pos = np.flatnonzero(keep)
    if w is None and duplicates == "first":   # a pattern: collapsed by scipy's counting sort, in C++
        D = edges_to_csr(src, dst, n)
        return (D if directed else _pattern_both_ways(D)), len(src) - D.nnz, None
    w = np.ones(len(src)) if w is None else w
    if directed and duplicates != "error":   # scipy's counting sort, in C++, adds duplicates up: the answer
        D = sp.csr_array((w, (src, dst)), shape=(n, n))   # for "sum", and for "first" when there are none
        if D.nnz == len(src) or duplicates == "sum":
            return D, len(src) - D.nnz, None
    pos = np.arange(len(src), dtype=np.int64) if pos is None else pos
    key = src * np.int64(n) + dst
    order = np.argsort(key, kind="stable")     # by edge, then by line
    key, w, pos = key[order], w[order], pos[order]
    start = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    merged = int(len(key) - start.sum())
    bad = int(pos[~start].min()) if merged and duplicates == "error" else None
    heads = np.flatnonzero(start)
    w = np.add.reduceat(w, heads) if duplicates == "sum" and len(heads) else w[heads]
    key, pos = key[heads], pos[heads]
    if not directed:   # (with "error", on to find the earliest offending line of either kind)
        key, w, more, other = _both_ways(key, w, pos, n, duplicates)
        merged += more
        bad = other if bad is None or other is not None and other < bad else bad
    if bad is not None:
        return None, merged, bad
    rows, cols = (key // n, key % n) if n else (key, key)
    return sp.csr_array((w, (rows, cols)), shape=(n, n)), merged, None


def _pattern_both_ways(D: sp.csr_array) -> sp.csr_array:
    U = (D + D.T).tocsr()
    U.data[:] = 1.0
    return U


def _both_ways(key, w, pos, n: int, duplicates: str):
    """Distinct directed edges -> an undirected graph's entries, both directions, a pair listed
    both ways with different values merged by the rule. Returns (keys, values, merged, the
    index of the first offending edge or None)."""
    if not len(key):
        return key, w, 0, None
    u, v = key // n, key % n
    pair = np.minimum(u, v) * np.int64(n) + np.maximum(u, v)
    order = np.argsort(pair, kind="stable")
    pair, w, pos = pair[order], w[order].copy(), pos[order]
    second = np.flatnonzero(pair[1:] == pair[:-1]) + 1    # the other direction of a pair listed both ways
    one = second - 1
    differ = w[one] != w[second]
    merged = int(differ.sum())
    if merged and duplicates == "error":
        return None, None, merged, int(np.maximum(pos[one], pos[second])[differ].min())
    if duplicates == "sum":
        w[one] = np.where(differ, w[one] + w[second], w[one])
    else:   # first: the value of the direction listed first
        w[one] = np.where(pos[one] <= pos[second], w[one], w[second])
    keep = np.ones(len(pair), dtype=bool)
    keep[second] = False
    lo, hi, w = (pair // n)[keep], (pair % n)[keep], w[keep]
    off = lo != hi
    rows, cols = np.concatenate([lo, hi[off]]), np.concatenate([hi, lo[off]])
    return rows * np.int64(n) + cols, np.concatenate([w, w[off]]), merged, None


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
