"""Source spans for expressions written in Python: the user's file, line and column."""
from __future__ import annotations

import functools
import linecache
import os
import sys

from ...errors import Span

_OPS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PKG = os.path.dirname(_OPS)
# the builders' own modules: the ops' definitions and the front ends
_DSL = (_OPS + os.sep, os.path.join(_PKG, "frontend") + os.sep)
# a code object's file name -> (inside the package, inside the DSL itself); abspath is ~3 us a
# call and every DSL call walks several frames
_KIND: dict[str, tuple[bool, bool]] = {}
_COMMAND = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "dspla")


def _kind(filename: str) -> tuple[bool, bool]:
    got = _KIND.get(filename)
    if got is None:
        path = os.path.abspath(filename)
        # the interpreter's own (runpy, importlib), and the `dspla` command's entry-point script
        frozen = filename.startswith("<frozen ") or path == _COMMAND
        got = _KIND[filename] = (frozen or path.startswith(_PKG + os.sep),
                                 frozen or path.startswith(_DSL))
    return got


@functools.lru_cache(maxsize=256)
def _positions(code) -> tuple:
    """A code object's instruction positions, kept: walking them to an instruction costs its
    offset, and a user's function of a hundred lines calls the DSL many times."""
    return tuple(code.co_positions())


def caller_span() -> Span | None:
    """The first frame outside the dspla package: where the user wrote the expression. A
    program dspla builds itself (the GCN step of ``dspla demo`` / ``train``) has no such frame
    below the interpreter's own: its span is then the dspla line that wrote it."""
    f = sys._getframe(1)
    mine = None   # the first frame outside the DSL's own modules
    while f is not None:
        ours, dsl = _kind(f.f_code.co_filename)
        if not ours:
            break
        if mine is None and not dsl:
            mine = f
        f = f.f_back
    f = f if f is not None else mine
    if f is None:
        return None
    fname, line, col, end = f.f_code.co_filename, f.f_lineno, 1, None
    try:  # Python 3.11+: the column of the instruction being executed
        pos = _positions(f.f_code)[f.f_lasti // 2]
        if pos[0] == line and pos[2] is not None:
            col, end = pos[2] + 1, (pos[3] + 1 if pos[1] == line and pos[3] is not None else None)
    except (AttributeError, IndexError):
        pass
    return Span(fname, line or 0, col, end, linecache.getline(fname, line or 0) or None)
