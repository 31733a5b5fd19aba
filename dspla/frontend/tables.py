"""The expression-file parser, built once per grammar and kept: lark computes the LALR tables of
lang/dspla.lark in 0.1-0.4 s, every command that reads a file paid it, and its own cache is a
pickle of any object in the shared temporary folder. Here the tables go to the user cache,
keyed by the grammar, lark's version and the options, as a pickle of plain data read through an
unpickler that admits no class at all (so reading it runs no code; JSON, as before, took ten
times longer to read and rebuild); a file that is missing, stale or unreadable is rebuilt, and
one that cannot be written is not kept.
"""
from __future__ import annotations

import hashlib
import io
import os
import pickle
from typing import Any

import lark
from lark.grammar import Rule
from lark.lexer import TerminalDef

from ..formats.files import atomic_write

OPTIONS = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False}


def cache_folder() -> str:
    """$DSPLA_CACHE_DIR, else $XDG_CACHE_HOME/dspla, else ~/.cache/dspla (as the calibrations)."""
    return os.environ.get("DSPLA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "dspla")


def parser(grammar: str) -> lark.Lark:
    """The LALR parser of ``grammar``: its kept tables, else built (and kept)."""
    key = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sorted(OPTIONS.items())}".encode()).hexdigest()[:20]
    path = os.path.join(cache_folder(), f"grammar-{key}.pickle")
    try:
        with open(path, "rb") as fh:
            return lark.Lark.__new__(lark.Lark)._load(_PlainData(io.BytesIO(fh.read())).load())
    except Exception:  # noqa: BLE001 - missing, stale or damaged: built again below
        pass
    made = lark.Lark(grammar, **OPTIONS)
    try:
        data, memo = made.memo_serialize([TerminalDef, Rule])
        kept = {"data": data, "memo": memo}
        _check_plain(kept)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with atomic_write(path) as fh:
            pickle.dump(kept, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except (OSError, TypeError, ValueError):   # (a read-only cache: parse without keeping the tables)
        pass
    return made


class _PlainData(pickle.Unpickler):
    """Reads plain data only (dicts, lists, tuples, text, numbers): any class or function named in
    the file is refused, so nothing in it runs."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"the kept parser tables name {module}.{name}: not plain data")


def _check_plain(x: Any) -> None:
    """Lark's serialized parser is plain data (what _PlainData reads back); anything else is not kept."""
    if isinstance(x, dict):
        for k, v in x.items():
            _check_plain(k)
            _check_plain(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _check_plain(v)
    elif not (x is None or isinstance(x, (str, int, float, bool))):
        raise TypeError(f"cannot keep a {type(x).__name__} of the parser's tables")
