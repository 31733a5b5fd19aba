"""Shared plumbing for the text loaders (MatrixMarket, edge lists).

The fast path hands the whole body to numpy's C tokenizer (``np.loadtxt``), which is one pass
with no Python work per line. When it (or a later vectorised check) finds a problem, the
loader looks for the line to blame (see ``locate``): only on the error path.
"""
from __future__ import annotations

import gzip
import re
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


MAX_LINE = 1 << 20   # characters of a header or comment line that are kept (the rest is skipped)


def bounded_lines(f, start: int = 1) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, whether it was cut) of a text stream, holding at most MAX_LINE
    characters of any line: a 4 GB comment line costs 1 MB, not 4 GB."""
    no = start
    while True:
        line = f.readline(MAX_LINE)
        if not line:
            return
        cut = not line.endswith("\n") and len(line) == MAX_LINE
        while cut:   # skip the rest of an over-long line in pieces
            rest = f.readline(MAX_LINE)
            if not rest or rest.endswith("\n"):
                break
        yield no, line, cut
        no += 1


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


# ---- error path: find the first bad line of a file whose fast parse failed -------------------
# Python-checking every line costs ~2 us a line (10 s for 5M lines). Instead the whole text is
# searched with one regular expression for the first line that is not plainly valid (C speed);
# the Python validator then runs from there and words the error. The regex must reject at
# least every line the validator rejects (it may reject more: the validator then passes that
# line and carries on), so the first line it rejects is never after the first real error.

INT = r"[+-]?[0-9]{1,18}"  # 18 digits: always fits int64 (longer ones go to the validator)
SEP = r"[ \t]+"  # between fields
FLOAT = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def read_all(path) -> str:
    """The whole (decompressed) text, for the error path; refused beyond half the input limit
    (a compressed file can expand a thousandfold)."""
    from .limits import human, max_input_bytes  # (limits imports nothing of the loaders)

    cap = max_input_bytes()[0] // 2
    with open_text(path) as f, read_errors(path):
        text = f.read(cap + 1)
    if len(text) > cap:
        raise DataFormatError(path, f"malformed, and over {human(cap)} of text: too large to find the "
                              "first bad line (raise DSPLA_MAX_INPUT_BYTES to locate it)")
    return text


def line_offset(text: str, skip: int) -> int:
    """Offset of the start of line ``skip + 1`` (len(text) if the file is shorter)."""
    pos = 0
    for _ in range(skip):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return pos


def first_rejected(text: str, pos: int, valid_line: str) -> int:
    """Offset of the first line at or after ``pos`` not fully matching ``valid_line``."""
    m = re.compile(rf"^(?!(?:{valid_line})$)", re.M).search(text, pos)
    return len(text) if m is None else m.start()


def lines_from(text: str, pos: int, line_no: int) -> Iterator[tuple[int, str]]:
    """(line number, text) from offset ``pos``, which starts line ``line_no``."""
    return enumerate(text[pos:].split("\n"), line_no)


def locate(path, validate: Callable[[int, str], None], valid_line: str, skip: int = 0,
           fallback: str = "") -> None:
    """Raise the error for the first bad line: ``validate(line_no, text)`` raises the specific
    DataFormatError; it runs from the first line ``valid_line`` rejects. If no line is at
    fault, raise ``fallback`` against the whole file."""
    text = read_all(path)
    pos = line_offset(text, skip)
    jump = first_rejected(text, pos, valid_line)
    for no, line in lines_from(text, jump, skip + 1 + text.count("\n", pos, jump)):
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


__all__ = ["MAX_LINE", "bounded_lines",
           "open_text", "loadtxt", "locate", "read_all", "line_offset", "first_rejected", "lines_from",
           "parse_int", "parse_float", "read_errors", "INT", "FLOAT", "SEP"]
