"""MatrixMarket reader (``.mtx``, ``.mtx.gz``), vectorised.

Supported: ``%%MatrixMarket matrix coordinate|array real|double|integer|pattern|complex
general|symmetric|skew-symmetric|hermitian`` (keywords case-insensitive), 1-based indices.

- coordinate -> ``scipy.sparse.csr_array`` (float64; int64 for ``integer``; complex128 for
  ``complex``; bool for ``pattern``, every entry true, as GraphBLAS reads one: an input declared
  bool takes it, one declared a number gets 1 by the declared dtype's conversion). Duplicate
  (i, j) entries are summed, as scipy and SuiteSparse do. Explicitly stored zeros stay stored
  (in GraphBLAS terms they are present).
- array -> a dense C-ordered ``numpy`` 2-D array (the file lists values column by column).
- symmetric/hermitian/skew-symmetric: the file holds one triangle (either one is accepted);
  each off-diagonal entry is mirrored (negated for skew, conjugated for hermitian), the diagonal
  is not doubled. A skew-symmetric file may not store diagonal entries.

The header is read line by line; the body goes to numpy's C tokenizer in one call. Any problem
makes a second, line-by-line pass that names the first bad line (error path only).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, say_warning
from ._textfile import (
    FLOAT,
    INT,
    MAX_LINE,
    SEP,
    bounded_lines,
    check_bom,
    first_rejected,
    line_offset,
    lines_from,
    loadtxt,
    open_text,
    parse_float,
    parse_int,
    read_all,
    read_errors,
)
from .limits import INT64_MAX, check_bytes, check_sparse_dims

FORMATS = ("coordinate", "array")
FIELDS = ("real", "double", "integer", "pattern", "complex")
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


@dataclass(frozen=True)
class _Header:
    format: str
    field: str
    symmetry: str
    nrows: int
    ncols: int
    nnz: int | None  # coordinate only
    size_line: int   # line number of the size line; the body starts after it

    @property
    def n_values(self) -> int:
        """Value columns per entry."""
        return {"pattern": 0, "complex": 2}.get(self.field, 1)

    @property
    def expected(self) -> int:
        """How many entries the body must have."""
        if self.format == "coordinate":
            return self.nnz
        n = self.nrows
        return {"general": n * self.ncols, "skew-symmetric": n * (n - 1) // 2}.get(
            self.symmetry, n * (n + 1) // 2)


def load_mtx(path, *, allow_nonfinite: bool | None = False):
    """Read a MatrixMarket file: csr_array (coordinate) or numpy 2-D array (array format).
    NaN and infinite values are refused (naming the line) unless ``allow_nonfinite`` (True:
    accepted with a warning; None: not checked)."""
    path = str(path)
    with open_text(path) as f, read_errors(path):
        h = _read_header(path, f)
    try:
        rec = loadtxt(path, h.size_line, _dtype(h), "%")
    except ValueError:
        _raise_body_error(path, h)  # some line does not parse
    bad = _first_bad_entry(h, rec)
    if bad is not None or len(rec) != h.expected:
        _raise_body_error(path, h, n_read=len(rec), bad_entry=bad)
    # the body held what the size line declares (checked above, without allocating by its
    # counts); now the matrix the file really holds must fit
    if h.format == "coordinate":
        check_sparse_dims(path, h.nrows, h.ncols, len(rec) * (1 if h.symmetry == "general" else 2),
                          line=h.size_line)
    else:
        check_bytes(path, 2 * rec.nbytes + 8 * h.nrows * h.ncols, f"a dense {h.nrows} x {h.ncols} array",
                    line=h.size_line)
    if allow_nonfinite is not None and h.field in ("real", "double", "complex"):
        _check_finite(path, h, rec, allow_nonfinite)
    return _coordinate(h, rec) if h.format == "coordinate" else _array(h, rec)


def _check_finite(path, h: _Header, rec, allow: bool):
    vals = rec["v"] if h.field != "complex" else rec["v"] + rec["im"]
    bad = ~np.isfinite(vals)
    if not bad.any():
        return
    what = f"{int(bad.sum())} NaN or infinite value(s)"
    if allow:
        say_warning(f"{path}: {what} accepted (--allow-nonfinite)")
        return
    text = read_all(path)   # error path: find the line of the first one
    pos = line_offset(text, h.size_line)
    m = next(itertools.islice(_DATA_LINE.finditer(text, pos), int(np.argmax(bad)), None))
    shown = text[m.start():text.find("\n", m.start())].strip()[:80]
    no = h.size_line + 1 + text.count("\n", pos, m.start())
    raise DataFormatError(path, f"{what}, the first on this line: {shown!r}; pass --allow-nonfinite "
                          "(allow_nonfinite=True) to accept them", line=no)


def _dtype(h: _Header):
    cols = [("i", np.int64), ("j", np.int64)] if h.format == "coordinate" else []
    if h.field == "integer":
        cols.append(("v", np.int64))
    elif h.field == "complex":
        cols += [("v", np.float64), ("im", np.float64)]
    elif h.field != "pattern":
        cols.append(("v", np.float64))
    return cols


def _values(h: _Header, rec):
    if h.field == "pattern":
        return np.ones(len(rec), bool)
    if h.field == "complex":
        return rec["v"] + 1j * rec["im"]
    return rec["v"].copy()


def _first_bad_entry(h: _Header, rec) -> int | None:
    """Index of the first entry with an index out of range (or a skew-symmetric diagonal)."""
    if h.format != "coordinate" or len(rec) == 0:
        return None
    i, j = rec["i"], rec["j"]
    bad = (i < 1) | (i > h.nrows) | (j < 1) | (j > h.ncols)
    if h.symmetry == "skew-symmetric":
        bad |= i == j
    k = int(np.argmax(bad))
    return k if bad[k] else None


def _coordinate(h: _Header, rec) -> sp.csr_array:
    i, j = rec["i"] - 1, rec["j"] - 1
    v = _values(h, rec)
    if h.symmetry != "general":
        off = i != j
        mirror = v[off]
        if h.symmetry == "skew-symmetric":
            mirror = -mirror
        elif h.symmetry == "hermitian":
            mirror = np.conj(mirror)
        i, j, v = np.concatenate([i, j[off]]), np.concatenate([j, i[off]]), np.concatenate([v, mirror])
    A = sp.csr_array((v, (i, j)), shape=(h.nrows, h.ncols))
    A.sum_duplicates()
    return A


def _array(h: _Header, rec) -> np.ndarray:
    v = _values(h, rec)
    m, n = h.nrows, h.ncols
    if h.symmetry == "general":
        return np.ascontiguousarray(v.reshape(n, m).T)
    # Column-major lower triangle of an m x m matrix = row-major upper triangle, transposed.
    r, c = np.triu_indices(m, k=1 if h.symmetry == "skew-symmetric" else 0)
    out = np.zeros((m, m), dtype=v.dtype)
    mirror = {"skew-symmetric": -v, "hermitian": np.conj(v)}.get(h.symmetry, v)
    out[r, c] = mirror
    out[c, r] = v
    return out


def _read_header(path, f) -> _Header:
    lines = bounded_lines(f)
    no, banner, _ = next(lines, (1, "", False))
    check_bom(path, banner)
    toks = banner.split()
    if not toks or toks[0].lower() != "%%matrixmarket":
        raise DataFormatError(path, "not a MatrixMarket file: the first line must start with "
                              f"'%%MatrixMarket', found {banner.strip()[:60]!r}", line=1)
    if len(toks) != 5:
        raise DataFormatError(path, "the banner must be '%%MatrixMarket matrix FORMAT FIELD "
                              f"SYMMETRY', found {banner.strip()[:200]!r}", line=1)
    obj, fmt, field, sym = (t.lower() for t in toks[1:])
    for what, val, valid in (("object", obj, ("matrix",)), ("format", fmt, FORMATS),
                             ("field", field, FIELDS), ("symmetry", sym, SYMMETRIES)):
        if val not in valid:
            raise DataFormatError(path, f"unsupported {what} {val[:60]!r} in the banner; "
                                  f"valid: {', '.join(valid)}", line=1)
    if fmt == "array" and field == "pattern":
        raise DataFormatError(path, "the 'pattern' field is only valid for coordinate format", line=1)
    if field == "pattern" and sym in ("skew-symmetric", "hermitian"):   # (no value to negate or conjugate)
        raise DataFormatError(path, f"the 'pattern' field cannot be {sym} (MatrixMarket: general or symmetric)",
                              line=1)
    line = ""
    for no, line, cut in lines:  # noqa: B007 - the line number is used after the loop
        if line.strip() and not line.lstrip().startswith("%"):
            if cut:
                raise DataFormatError(path, f"the size line is longer than {MAX_LINE} characters", line=no)
            break
    else:
        raise DataFormatError(path, "the file ends before the size line", line=no + 1)
    size = line.split()
    want = ("rows", "columns", "entries") if fmt == "coordinate" else ("rows", "columns")
    if len(size) != len(want):
        raise DataFormatError(path, f"the size line must be '{' '.join(w.upper() for w in want)}' "
                              f"for {fmt} format, found {line.strip()[:200]!r}", line=no)
    dims = [parse_int(path, no, t, f"size-line {w[:-1] if w != 'entries' else 'entry count'}")
            for t, w in zip(size, want)]
    if min(dims) < 0:
        raise DataFormatError(path, f"negative number on the size line: {line.strip()!r}", line=no)
    if max(dims) > INT64_MAX:
        raise DataFormatError(path, f"a number on the size line does not fit in 64 bits: {line.strip()[:200]!r}",
                              line=no)
    if sym != "general" and dims[0] != dims[1]:
        raise DataFormatError(path, f"a {sym} matrix must be square, the size line says "
                              f"{dims[0]} x {dims[1]}", line=no)
    nnz = dims[2] if fmt == "coordinate" else None
    return _Header(fmt, field, sym, dims[0], dims[1], nnz, no)


# A line holding an entry (not blank, not a comment).
_DATA_LINE = re.compile(r"^[ \t]*[^%\s]", re.M)


def _valid_line(h: _Header) -> str:
    """A regex for a plainly valid body line (see _textfile.locate): stricter than the
    line-by-line check below, never laxer."""
    val = INT if h.field == "integer" else FLOAT
    fields = ([r"[0-9]{1,18}"] * 2 if h.format == "coordinate" else []) + [val] * h.n_values
    return rf"[ \t]*(?:{SEP.join(fields)}[ \t]*)?(?:%[^\n]*)?"


def _raise_body_error(path, h: _Header, n_read: int | None = None, bad_entry: int | None = None):
    """Error path: find the first bad body line and raise a DataFormatError naming it.

    ``n_read``: entries numpy parsed (None when a line did not parse); ``bad_entry``: the first
    entry the vectorised checks rejected. Rather than checking every line in Python, jump to
    the suspect line -- the first one the regex rejects, or the culprit entry -- and check
    from there (counting the entries skipped over)."""
    if n_read is not None and bad_entry is None and n_read < h.expected:
        raise DataFormatError(path, f"the size line declares {h.expected} entries but the file "
                              f"has {n_read}", line=h.size_line)
    text = read_all(path)
    pos = line_offset(text, h.size_line)
    if n_read is None:
        jump = first_rejected(text, pos, _valid_line(h))
        count = sum(1 for _ in _DATA_LINE.finditer(text, pos, jump))
    else:
        count = min(k for k in (bad_entry, h.expected if n_read > h.expected else None)
                    if k is not None)
        jump = next(itertools.islice(_DATA_LINE.finditer(text, pos), count, None)).start()
    _check_lines(path, h, lines_from(text, jump, h.size_line + 1 + text.count("\n", pos, jump)),
                 count)
    raise DataFormatError(path, "malformed MatrixMarket body")


def _check_lines(path, h: _Header, lines, count: int):
    """Check body lines in order (``count`` entries came before them); raise at the first bad one."""
    ncols = (2 if h.format == "coordinate" else 0) + h.n_values
    layout = " ".join((["ROW", "COL"] if h.format == "coordinate" else [])
                      + {0: [], 1: ["VALUE"], 2: ["REAL", "IMAG"]}[h.n_values])
    for no, line in lines:
        toks = line.split("%", 1)[0].split()
        if not toks:
            continue
        count += 1
        if count > h.expected:
            raise DataFormatError(path, f"more entries than the {h.expected} declared "
                                  f"(size line {h.size_line})", line=no)
        if len(toks) != ncols:
            few = "too few" if len(toks) < ncols else "too many"
            raise DataFormatError(path, f"{few} columns: expected '{layout}' ({ncols}), found "
                                  f"{len(toks)}: {line.strip()!r}", line=no)
        if h.format == "coordinate":
            for tok, what, top in ((toks[0], "row index", h.nrows), (toks[1], "column index", h.ncols)):
                k = parse_int(path, no, tok, what)
                if not 1 <= k <= top:
                    raise DataFormatError(path, f"{what} {k} out of range 1..{top}", line=no)
            if h.symmetry == "skew-symmetric" and int(toks[0]) == int(toks[1]):
                raise DataFormatError(path, "a skew-symmetric file may not store diagonal "
                                      f"entries, found ({toks[0]}, {toks[1]})", line=no)
        for tok in toks[ncols - h.n_values:]:
            if h.field == "integer":
                parse_int(path, no, tok, "value")
            else:
                parse_float(path, no, tok, "value")
    if count < h.expected:
        raise DataFormatError(path, f"the size line declares {h.expected} entries but the file "
                              f"has {count}", line=h.size_line)
