"""Argument parsing helpers shared by subcommands."""
from __future__ import annotations

from ..errors import DsplaError


def parse_inputs(specs) -> dict[str, str]:
    """``--input NAME=PATH[:KEY]`` list -> {NAME: "PATH[:KEY]"}."""
    out = {}
    for spec in specs or []:
        name, eq, path = spec.partition("=")
        if not eq or not name.isidentifier() or not path:
            raise DsplaError(f"--input takes NAME=PATH (or NAME=FILE.npz:ARRAY), got {spec!r}")
        if name in out:
            raise DsplaError(f"--input {name} given twice")
        out[name] = path
    return out
