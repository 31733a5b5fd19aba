"""The expression-file parser, built once per grammar and kept: lark computes the LALR tables of
lang/dspla.lark in 0.1-0.4 s, every command that reads a file paid it, and its own cache is a
pickle in the shared temporary folder. Here the tables go to the user cache as JSON (plain data:
reading it runs no code), keyed by the grammar, lark's version and the options; a file that is
missing, stale or unreadable is rebuilt, and one that cannot be written is not kept.
"""
from __future__ import annotations

import hashlib
import json
import os
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
    path = os.path.join(cache_folder(), f"grammar-{key}.json")
    try:
        with open(path) as fh:
            return lark.Lark.__new__(lark.Lark)._load(_decode(json.load(fh)))
    except Exception:  # noqa: BLE001 - missing, stale or damaged: built again below
        pass
    made = lark.Lark(grammar, **OPTIONS)
    try:
        data, memo = made.memo_serialize([TerminalDef, Rule])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with atomic_write(path, "w") as fh:
            json.dump(_encode({"data": data, "memo": memo}), fh)
    except (OSError, TypeError, ValueError):   # (a read-only cache: parse without keeping the tables)
        pass
    return made


def _encode(x: Any) -> Any:
    """JSON for lark's serialized parser: dicts with other keys than strings, and tuples, tagged."""
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x) and not {"__items__", "__tuple__"} & set(x):
            return {k: _encode(v) for k, v in x.items()}
        return {"__items__": [[_encode(k), _encode(v)] for k, v in x.items()]}
    if isinstance(x, tuple):
        return {"__tuple__": [_encode(v) for v in x]}
    if isinstance(x, list):
        return [_encode(v) for v in x]
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    raise TypeError(f"cannot keep a {type(x).__name__} of the parser's tables")


def _decode(x: Any) -> Any:
    if isinstance(x, dict):
        if len(x) == 1 and "__items__" in x:
            return {_decode(k): _decode(v) for k, v in x["__items__"]}
        if len(x) == 1 and "__tuple__" in x:
            return tuple(_decode(v) for v in x["__tuple__"])
        return {k: _decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_decode(v) for v in x]
    return x
