"""Source spans for expressions written in Python: the user's file, line and column."""
from __future__ import annotations

import itertools
import linecache
import os
import sys

from ..errors import Span

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OURS: dict[str, bool] = {}   # a code object's file name -> inside the package (abspath: ~3 us a call)


def _ours(filename: str) -> bool:
    got = _OURS.get(filename)
    if got is None:
        got = _OURS[filename] = os.path.abspath(filename).startswith(_PKG + os.sep)
    return got


def caller_span() -> Span | None:
    """The first frame outside the dspla package: where the user wrote the expression."""
    f = sys._getframe(1)
    while f is not None and _ours(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return None
    fname, line, col, end = f.f_code.co_filename, f.f_lineno, 1, None
    try:  # Python 3.11+: the column of the instruction being executed
        pos = next(itertools.islice(f.f_code.co_positions(), f.f_lasti // 2, None))
        if pos[0] == line and pos[2] is not None:
            col, end = pos[2] + 1, (pos[3] + 1 if pos[1] == line and pos[3] is not None else None)
    except (AttributeError, StopIteration):
        pass
    return Span(fname, line or 0, col, end, linecache.getline(fname, line or 0) or None)
