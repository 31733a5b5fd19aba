"""Fault injection for the failure tests (never set in normal use).

``DSPLA_FAULT=RANK:WHERE[:dspla]``: rank RANK fails at WHERE, either the number of a plan
instruction (the interpreter raises just before running it: after the first collectives) or
``start`` (``dspla run`` raises right after MPI starts, before any communication). With
``:dspla`` the failure is a DsplaError (a user error) instead of a RuntimeError (a crash).
"""
from __future__ import annotations

import os

from ..errors import DsplaError


def planned(rank: int) -> tuple[str, str] | None:
    """(where, kind) of the fault planned for this rank, or None."""
    spec = os.environ.get("DSPLA_FAULT")
    if not spec:
        return None
    parts = spec.split(":")
    if not parts[0].isdigit() or int(parts[0]) != rank:
        return None
    where = parts[1] if len(parts) > 1 and parts[1] else "0"
    return where, parts[2] if len(parts) > 2 else "runtime"


def at_instruction(rank: int) -> tuple[int, str] | None:
    f = planned(rank)
    return (int(f[0]), f[1]) if f is not None and f[0].isdigit() else None


def inject(rank: int, where: str, what: str = "") -> None:
    f = planned(rank)
    if f is not None and f[0] == where:
        raise_fault(f[1], f"fault injected by DSPLA_FAULT at {where}{' (' + what + ')' if what else ''}")


def raise_fault(kind: str, message: str):
    if kind == "dspla":
        raise DsplaError(message)
    raise RuntimeError(message)
