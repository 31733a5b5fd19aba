"""MatrixMarket reader (``.mtx``, ``.mtx.gz``), vectorised.

Supported: ``%%MatrixMarket matrix coordinate|array real|double|integer|pattern|complex
general|symmetric|skew-symmetric|hermitian`` (keywords case-insensitive), 1-based indices.

- coordinate -> ``scipy.sparse.csr_array`` (float64; int64 for ``integer``; complex128 for
  ``complex``; ``pattern`` entries are 1.0). Duplicate (i, j) entries are summed, as scipy and
  SuiteSparse do. Explicitly stored zeros stay stored (in GraphBLAS terms they are present).
- array -> a dense C-ordered ``numpy`` 2-D array (the file lists values column by column).
- symmetric/hermitian/skew-symmetric: the file holds one triangle (either one is accepted);
  each off-diagonal entry is mirrored (negated for skew, conjugated for hermitian), the diagonal
  is not doubled. A skew-symmetric file may not store diagonal entries.

The header is read line by line; the body goes to numpy's C tokenizer in one call. Any problem
makes a second, line-by-line pass that names the first bad line (error path only).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError
from ._textfile import loadtxt, numbered_lines, open_text, parse_float, parse_int, read_errors

FORMATS = ("coordinate", "array")
FIELDS = ("real", "double", "integer", "pattern", "complex")
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


class _Header:
    def __init__(self, fmt, field, symmetry, nrows, ncols, nnz, size_line):
        self.format, self.field, self.symmetry = fmt, field, symmetry
        self.nrows, self.ncols, self.nnz, self.size_line = nrows, ncols, nnz, size_line

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


def load_mtx(path):
    """Read a MatrixMarket file: csr_array (coordinate) or numpy 2-D array (array format)."""
    with open_text(path) as f, read_errors(path):
        h = _read_header(path, f)
    try:
        rec = loadtxt(path, h.size_line, _dtype(h), "%")
    except ValueError:
        rec = None
    if rec is None or len(rec) != h.expected:
        _raise_body_error(path, h)
    return _coordinate(path, h, rec) if h.format == "coordinate" else _array(path, h, rec)


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
        return np.ones(len(rec))
    if h.field == "complex":
        return rec["v"] + 1j * rec["im"]
    return rec["v"].copy()


def _coordinate(path, h: _Header, rec) -> sp.csr_array:
    i, j = rec["i"] - 1, rec["j"] - 1
    bad = (i < 0) | (i >= h.nrows) | (j < 0) | (j >= h.ncols)
    if h.symmetry == "skew-symmetric":
        bad |= i == j
    if bad.any():
        _raise_body_error(path, h)
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


def _array(path, h: _Header, rec) -> np.ndarray:
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
    banner = f.readline()
    toks = banner.split()
    if not toks or toks[0].lower() != "%%matrixmarket":
        raise DataFormatError(path, "not a MatrixMarket file: the first line must start with "
                              f"'%%MatrixMarket', found {banner.strip()[:60]!r}", line=1)
    if len(toks) != 5:
        raise DataFormatError(path, "the banner must be '%%MatrixMarket matrix FORMAT FIELD "
                              f"SYMMETRY', found {banner.strip()!r}", line=1)
    obj, fmt, field, sym = (t.lower() for t in toks[1:])
    for what, val, valid in (("object", obj, ("matrix",)), ("format", fmt, FORMATS),
                             ("field", field, FIELDS), ("symmetry", sym, SYMMETRIES)):
        if val not in valid:
            raise DataFormatError(path, f"unsupported {what} {val!r} in the banner; "
                                  f"valid: {', '.join(valid)}", line=1)
    if fmt == "array" and field == "pattern":
        raise DataFormatError(path, "the 'pattern' field is only valid for coordinate format", line=1)
    no, line = 1, ""
    for no, line in enumerate(f, 2):
        if line.strip() and not line.lstrip().startswith("%"):
            break
    else:
        raise DataFormatError(path, "the file ends before the size line", line=no + 1)
    size = line.split()
    want = ("rows", "columns", "entries") if fmt == "coordinate" else ("rows", "columns")
    if len(size) != len(want):
        raise DataFormatError(path, f"the size line must be '{' '.join(w.upper() for w in want)}' "
                              f"for {fmt} format, found {line.strip()!r}", line=no)
    dims = [parse_int(path, no, t, f"size-line {w[:-1] if w != 'entries' else 'entry count'}")
            for t, w in zip(size, want)]
    if min(dims) < 0:
        raise DataFormatError(path, f"negative number on the size line: {line.strip()!r}", line=no)
    if sym != "general" and dims[0] != dims[1]:
        raise DataFormatError(path, f"a {sym} matrix must be square, the size line says "
                              f"{dims[0]} x {dims[1]}", line=no)
    nnz = dims[2] if fmt == "coordinate" else None
    return _Header(fmt, field, sym, dims[0], dims[1], nnz, no)


def _raise_body_error(path, h: _Header):
    """Error path: re-read the body line by line and raise at the first bad line."""
    ncols = (2 if h.format == "coordinate" else 0) + h.n_values
    layout = " ".join((["ROW", "COL"] if h.format == "coordinate" else [])
                      + {0: [], 1: ["VALUE"], 2: ["REAL", "IMAG"]}[h.n_values])
    count, last = 0, h.size_line
    for no, line in numbered_lines(path, skip=h.size_line):
        toks = line.split("%", 1)[0].split()
        if not toks:
            continue
        last = no
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
                              f"has {count} (last entry on line {last})", line=h.size_line)
    raise DataFormatError(path, "malformed MatrixMarket body")
