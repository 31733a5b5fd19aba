"""The module-level lookup shared by ``dp.semiring``, ``dp.monoid``, ``dp.binary``, ``dp.unary``."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .errors import did_you_mean, meant_text, plural

T = TypeVar("T")


def of(table: dict[str, T], kind: str) -> tuple[Callable[[], list[str]], Callable[[str], T]]:
    def names() -> list[str]:
        return sorted(table)

    def getattr_(name: str) -> T:
        if name.startswith("__") or name not in table:
            # AttributeError keeps hasattr()/getattr(default) working; the text lists the valid names.
            raise AttributeError(f"unknown {kind} {name!r}{meant_text(did_you_mean(name, table))}; valid "
                                 f"{plural(kind)}: {', '.join(names())}")
        return table[name]

    return names, getattr_
