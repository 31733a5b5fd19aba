"""Kernel modules loaded on first use: the ops' definitions name them at import (``import dspla``
reads every definition, for the namespace and the parser's table), but only evaluation and
lowering run them, and loading the kernels loads python-graphblas, numba and scipy (about 0.8 s
of CPU). ``kernel("gbops")`` is the module ``dspla.kernels.gbops``, executed when an attribute
of it is first read; from then on it is the plain module."""
from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType

_KERNELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "kernels")


def library(name: str, path: str | None = None) -> ModuleType:
    """The module ``name`` (``suitesparse_graphblas``), executed on first use; ``path``: made
    from that file instead of found by name (find_spec of ``dspla.kernels.X`` would import the
    kernels package, which loads graphblas)."""
    if name in sys.modules:
        return sys.modules[name]
    if path is None:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        loader = spec.loader
    else:
        loader = importlib.machinery.SourceFileLoader(name, path)
        spec = importlib.util.spec_from_loader(name, loader)
        assert spec is not None
    lazy = importlib.util.LazyLoader(loader)
    spec.loader = lazy
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    lazy.exec_module(module)
    return module


def kernel(name: str) -> ModuleType:
    return library(f"dspla.kernels.{name}", os.path.join(_KERNELS, f"{name}.py"))
