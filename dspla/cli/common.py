"""Argument parsing helpers shared by subcommands."""
from __future__ import annotations

import importlib.util
import os
import sys

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


def parse_dims(specs) -> dict[str, int]:
    """``--dim NAME=SIZE`` list -> {NAME: SIZE}."""
    out = {}
    for spec in specs or []:
        name, _, size = spec.partition("=")
        if not name.isidentifier() or not size.isdigit():
            raise DsplaError(f"--dim takes NAME=SIZE, got {spec!r}")
        out[name] = int(size)
    return out


def input_files(*paths, dirs=()) -> list[str]:
    """The files a command reads (those of the given paths that name one; every file under
    ``dirs``), for the outputs to be checked against before any work: no output replaces an
    input."""
    out = [os.fspath(p) for p in paths if p]
    for d in dirs:
        if d and os.path.isdir(d):
            out += [os.path.join(root, f) for root, _, files in os.walk(d) for f in files]
    return out


def add_plugin_option(p):
    p.add_argument("--plugin", action="append", metavar="MODULE.py",
                   help="load user-defined operators from this Python module first (it calls "
                        "dspla.semiring.define, dspla.binary.define, ...); may be repeated")


def load_plugins(paths) -> list:
    """Run each --plugin module (the user's own Python, named by the user: unlike a .dspla file,
    which is never evaluated). Under MPI every rank loads it, since every rank gets the same
    arguments, so every rank knows the operators a plan names."""
    mods = []
    for path in paths or []:
        if not os.path.isfile(path):
            raise DsplaError(f"--plugin: no such file: {path}")
        name = "dspla_plugin_" + "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
        spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
        if spec is None or spec.loader is None:
            raise DsplaError(f"--plugin: {path} is not a Python module (.py)")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except DsplaError as e:
            raise DsplaError(f"--plugin {path}: {e}") from None
        except Exception as e:  # noqa: BLE001 - the user's module failed: say where, keep it short
            raise DsplaError(f"--plugin {path} failed: {type(e).__name__}: {e}") from None
        mods.append(mod)
    return mods
