"""Shared plumbing for the text loaders (MatrixMarket, edge lists).

The fast path hands the whole body to numpy's C tokenizer (``np.loadtxt``), which is one pass
with no Python work per line. When it (or a later vectorised check) finds a problem, the
loader re-reads the file line by line with a Python validator to name the exact line: that
slow scan happens only on the error path.
"""
from __future__ import annotations

import gzip
import warnings
import zlib
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

import numpy as np

from ..errors import DataFormatError, DsplaError


def open_text(path) -> TextIO:
    """Open a text file, transparently gunzipping ``*.gz``. latin-1 never fails to decode, so
    a stray byte in a comment is not an error; universal newlines accept CRLF files."""
    path = str(path)
    try:
        if path.lower().endswith(".gz"):
            with open(path, "rb") as raw:
                if raw.read(2) != b"\x1f\x8b":
                    raise DataFormatError(path, "not a gzip file (the name ends in .gz)")
            return gzip.open(path, "rt", encoding="latin-1", newline=None)
        return open(path, "rt", encoding="latin-1", newline=None)
    except FileNotFoundError:
        raise DsplaError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise DsplaError(f"{path} is a directory, not a data file") from None


@contextmanager
def read_errors(path):
    """Turn I/O-level failures while reading (a truncated or corrupt gzip stream, which
    gzip reports lazily) into a DataFormatError naming the file."""
    try:
        yield
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise DataFormatError(path, f"corrupt or truncated compressed data ({e})") from None


def loadtxt(path, skiprows: int, dtype, comment: str) -> np.ndarray:
    """``np.loadtxt`` on the file after its first ``skiprows`` lines (1-D; structured when
    ``dtype`` is); ValueError if any line does not fit ``dtype``.

    Given the path (not a Python file object) and a single comment string, numpy reads in C,
    gunzipping ``.gz`` itself: 5M lines in well under a second. A file object or several
    comment strings make it fall back to much slower Python-side line handling."""
    path = str(path)
    with read_errors(path), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "input contained no data"
        if path.lower().endswith(".gz") and not path.endswith(".gz"):
            # numpy only recognises a lower-case .gz; decompress here (slower, but correct)
            with open_text(path) as f:
                return np.loadtxt(f, dtype=dtype, comments=comment, skiprows=skiprows, ndmin=1)
        return np.loadtxt(path, dtype=dtype, comments=comment, skiprows=skiprows,
                          ndmin=1, encoding="latin-1")


def numbered_lines(path, skip: int = 0) -> Iterator[tuple[int, str]]:
    """(line number, text) for every line of the file after the first ``skip`` lines."""
    with open_text(path) as f, read_errors(path):
        for no, line in enumerate(f, 1):
            if no > skip:
                yield no, line


def locate(path, validate: Callable[[int, str], None], skip: int = 0, fallback: str = "") -> None:
    """Error path: run ``validate(line_no, text)`` over every line (it raises the specific
    DataFormatError). If no line is at fault, raise ``fallback`` against the whole file."""
    for no, line in numbered_lines(path, skip=skip):
        validate(no, line)
    raise DataFormatError(path, fallback or "malformed file")


def parse_int(path, no: int, tok: str, what: str) -> int:
    try:
        return int(tok)
    except ValueError:
        raise DataFormatError(path, f"{what} {tok!r} is not an integer", line=no) from None


def parse_float(path, no: int, tok: str, what: str) -> float:
    try:
        return float(tok)
    except ValueError:
        raise DataFormatError(path, f"{what} {tok!r} is not a number", line=no) from None


__all__ = ["open_text", "loadtxt", "locate", "numbered_lines", "parse_int", "parse_float", "read_errors"]
