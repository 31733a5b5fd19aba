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
    except OSError as e:   # permission denied, a symlink loop, ...: a DsplaError, not a traceback
        raise DsplaError(f"cannot read {path}: {e.strerror or e}") from None


MAX_LINE = 1 << 20   # characters of a header or comment line that are kept (the rest is skipped)

# Byte-order marks as latin-1 decodes them: an editor's UTF-8 mark would otherwise reach the
# user as mojibake glued to the first token ("'ï»¿0' is not an integer").
_BOMS = {"\xef\xbb\xbf": "a UTF-8 byte-order mark (BOM)", "\xff\xfe": "a UTF-16 byte-order mark",
         "\xfe\xff": "a UTF-16 byte-order mark"}


def check_bom(path, first_line: str) -> None:
    """Refuse a text file that starts with a byte-order mark, saying so (line 1)."""
    for mark, what in _BOMS.items():
        if first_line.startswith(mark):
            raise DataFormatError(path, f"the file starts with {what}: save it as plain ASCII/UTF-8 "
                                  "text without the mark", line=1)


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


READ_CHUNK = 1 << 24   # characters read at a time on the error path


def read_all(path) -> str:
    """The whole (decompressed) text, for the error path; refused beyond half the input limit
    (a compressed file can expand a thousandfold)."""
    from .limits import human, max_input_bytes  # (limits imports nothing of the loaders)

    cap = max_input_bytes()[0] // 2
    # In pieces: read(cap + 1) reserves cap + 1 bytes at once (half the machine's memory, for a
    # 3-line file), which a virtual-memory limit (ulimit -v) refuses with a bare MemoryError.
    parts, total = [], 0
    with open_text(path) as f, read_errors(path):
        while total <= cap:
            part = f.read(min(READ_CHUNK, cap + 1 - total))
            if not part:
                break
            parts.append(part)
            total += len(part)
    if total > cap:
        raise DataFormatError(path, f"malformed, and over {human(cap)} of text: too large to find the "
                              "first bad line (raise DSPLA_MAX_INPUT_BYTES to locate it)")
    return "".join(parts)


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
    """(line number, text) from offset ``pos``, which starts line ``line_no``; one line at a
    time (splitting the rest at once made a string object of every line: 10M short lines of a
    body longer than declared took 900 MB to report line 4)."""
    while True:
        nl = text.find("\n", pos)
        yield line_no, text[pos:] if nl < 0 else text[pos:nl]
        if nl < 0:
            return
        pos, line_no = nl + 1, line_no + 1


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


# Python's int() and float() accept digit separators ("1_000") that numpy's tokenizer refuses:
# the validator must refuse them too, or a file numpy rejected ends with no line named.
def parse_int(path, no: int, tok: str, what: str) -> int:
    try:
        if "_" in tok:
            raise ValueError(tok)
        v = int(tok)
    except ValueError:
        raise DataFormatError(path, f"{what} {tok!r} is not an integer", line=no) from None
    if not -2**63 <= v < 2**63:   # numpy reads int64: a bigger number fails there, not as a range
        raise DataFormatError(path, f"{what} {tok} does not fit in 64 bits", line=no)
    return v


def parse_float(path, no: int, tok: str, what: str) -> float:
    try:
        if "_" in tok:
            raise ValueError(tok)
        return float(tok)
    except ValueError:
        raise DataFormatError(path, f"{what} {tok!r} is not a number", line=no) from None


__all__ = ["MAX_LINE", "bounded_lines", "check_bom",
           "open_text", "loadtxt", "locate", "read_all", "line_offset", "first_rejected", "lines_from",
           "parse_int", "parse_float", "read_errors", "INT", "FLOAT", "SEP"]
