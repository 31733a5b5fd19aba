"""One exception hierarchy for everything a user can get wrong.

Every error a user can cause derives from DsplaError; the CLI prints ``str(err)`` (no
traceback unless --debug). Errors that point into source carry a Span and render the
offending line with a caret under it, lark-style.
"""
from __future__ import annotations

import copy
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from types import FrameType
from typing import Any, TextIO


@dataclass(frozen=True)
class Span:
    """Where something was written: an expression file position or a Python call site."""

    file: str
    line: int
    col: int
    end_col: int | None = None
    text: str | None = None  # the whole source line, for the caret display

    def __str__(self) -> str:
        return f"{_short(self.file)}:{self.line}:{self.col}"

    def caret(self) -> str:
        if not self.text:
            return ""
        line = self.text.rstrip("\n")
        width = max(1, (self.end_col or self.col + 1) - self.col)
        return f"    {line}\n    {' ' * (self.col - 1)}{'^' * width}"


def _short(path: str) -> str:
    """A path relative to the working directory when that is shorter (for messages)."""
    try:
        return _relative(path, os.getcwd())
    except OSError:   # (the working directory was removed)
        return path


@functools.lru_cache(maxsize=256)
def _relative(path: str, cwd: str) -> str:
    # (kept: planning labels every message with its span, relpath costs ~15 us a call)
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return rel if len(rel) < len(path) else path


class DsplaError(Exception):
    """Base of every error dspla raises for bad programs, data or options."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        self.message = message
        self.span = span
        super().__init__(self._render())

    def at(self, span: Span) -> "DsplaError":
        """The same error, located at ``span``."""

        new = copy.copy(self)
        new.span = span
        new.args = (new._render(),)
        return new

    def _render(self) -> str:
        if self.span is None:
            return self.message
        caret = self.span.caret()
        return f"{self.span}: {self.message}" + (f"\n{caret}" if caret else "")

    def __reduce__(self) -> tuple[Any, ...]:
        # copied (at()) and pickled from its state, not by calling __init__ again: subclasses'
        # __init__ take other arguments (UnknownNameError's kind, name and valid names)
        return (_rebuild, (type(self), dict(self.__dict__)))


def _rebuild(cls: type[DsplaError], state: dict[str, Any]) -> DsplaError:
    err = cls.__new__(cls)
    err.__dict__.update(state)
    err.args = (err._render(),)
    return err


class DsplaSyntaxError(DsplaError):
    """An expression file does not parse."""


class UnknownNameError(DsplaError):
    """An unknown semiring, operator, function, variable or plan; the message lists valid names.

    ``context`` says where the name was used, after it: ``UnknownNameError("argument", "msk",
    names, context="of mxm()")`` reads "unknown argument 'msk' of mxm(); valid arguments: ..."."""

    def __init__(self, kind: str, name: str, valid: Iterable[str], span: Span | None = None, *,
                 context: str = "") -> None:
        self.kind, self.name, self.valid = kind, name, sorted(valid)
        where = f" {context}" if context else ""
        listed = f"valid {plural(kind)}: {', '.join(self.valid)}" if self.valid else f"there are no {plural(kind)}"
        self.suggestions = did_you_mean(name, self.valid)
        super().__init__(f"unknown {kind} {name!r}{where}{meant_text(self.suggestions)}; {listed}", span)


def did_you_mean(name: str, valid: Iterable[str]) -> list[str]:
    """The valid names closest to a misspelt one (difflib's similarity at least 0.6, case ignored):
    the best, and a second only when it is as close."""
    import difflib

    if not isinstance(name, str):
        return []
    scored = sorted(((difflib.SequenceMatcher(None, name.lower(), v.lower()).ratio(), v) for v in valid),
                    key=lambda t: -t[0])
    return [v for r, v in scored[:2] if r >= 0.6 and r >= scored[0][0] - 0.02]


def meant_text(suggestions: list[str]) -> str:
    """`` (did you mean 'x'?)``, or nothing without a suggestion."""
    return f" (did you mean {' or '.join(map(repr, suggestions))}?)" if suggestions else ""


def plural(noun: str) -> str:
    """The plural of a kind of name ("binary operator", "axis", "partitioning method")."""
    if noun.endswith("is"):
        return noun[:-2] + "es"   # axis -> axes
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


class DimensionMismatch(DsplaError, ValueError):
    """Operand shapes do not agree (names both shapes and where the expression was written)."""


class DomainMismatch(DsplaError, TypeError):
    """Operand dtypes are not valid for an operator or semiring."""


class InputError(DsplaError, ValueError):
    """A run-time input is missing, extra, of the wrong kind, dtype or shape."""


class DataFormatError(DsplaError, ValueError):
    """A data file is malformed; the message names the file and the line (or pickle class)."""

    def __init__(self, path: str | os.PathLike[str], message: str, line: int | None = None) -> None:
        self.path, self.line = str(path), line
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")


class VerificationError(DsplaError):
    """An IR or plan failed verification after a pass: a compiler bug, not a user error."""


class PlanError(DsplaError):
    """A requested plan, partition or layout cannot be used for this program or process count."""


class NoGradient(Exception):
    """An op (as used) has no gradient: raised by a gradient rule, with why and what to do
    instead; reverse mode reports it as a NoGradientError naming where the op was written."""


class LoopBoundWarning(UserWarning):
    """A loop ran as many iterations as its bound allows (``max N``): its result is whatever
    the last iteration gave, which may not be the fixed point the condition waits for."""


def say_warning(text: str, file: TextIO | None = None) -> None:
    """One warning line as the command line words them, ``dspla: warning: TEXT``, on stderr (for
    what the user runs by command, where a Python warning would name dspla's own line)."""
    import sys

    out = sys.stderr if file is None else file
    out.write(f"dspla: warning: {text}\n")
    out.flush()


def warn(warning: Warning) -> None:
    """Issue a warning attributed to the first caller outside dspla (the user's line)."""
    import sys
    import warnings

    pkg = os.path.dirname(os.path.abspath(__file__))
    level = 2
    f: FrameType | None = sys._getframe(1)   # stacklevel 1 is this function; 2 its caller
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg + os.sep):
        level, f = level + 1, f.f_back
    warnings.warn(warning, stacklevel=level)
