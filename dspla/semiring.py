"""Semirings by attribute: ``dp.semiring.plus_second``, ``dp.semiring.define(...)``, ``names()``."""
from .algebra import SEMIRINGS, Semiring, define_semiring, get_semiring


def define(name: str, monoid: str, op: str) -> Semiring:
    """A user-defined semiring: ``define("tropical", monoid="min", op="plus")``."""
    return define_semiring(name, monoid, op)


def names() -> list[str]:
    return sorted(SEMIRINGS)


def __getattr__(name: str) -> Semiring:
    if name.startswith("__") or name not in SEMIRINGS:
        # AttributeError keeps hasattr()/getattr(default) working; the text lists the valid names.
        raise AttributeError(f"unknown semiring {name!r}; valid semirings: {', '.join(names())}")
    return SEMIRINGS[name]


__all__ = ["Semiring", "define", "get_semiring", "names"]
