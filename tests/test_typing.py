"""The public API is typed: every function in ``dspla.__all__`` (and in the modules it exports:
the operator namespaces, plot, errors) and every method and property of the classes a user gets
back has each parameter and its return annotated. mypy checks that the hints are right
(``make check``, [tool.mypy] in pyproject.toml); this is the coverage check that none is missing,
so a new public function cannot arrive untyped. tests/typecheck/usage_ok.py, the typed user
script mypy checks at --strict level, also has to run."""
from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import types
from pathlib import Path

import dspla as dp
from dspla._types import RunOptions
from dspla.display import Stats, Text
from dspla.plan.options import Options
from dspla.runtime.comm.mpi import MPIComm
from dspla.values import Dist, LocalPiece

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(dp.__file__).resolve().parent
# classes a user gets back from the functions in __all__ without naming them
RETURNED = (LocalPiece, Dist, MPIComm, Text, Stats)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _missing(fn, where: str) -> list[str]:
    """The parameters (and the return) of ``fn`` without an annotation."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    out = [f"{where}: parameter {p.name!r}" for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        out.append(f"{where}: return")
    return out


def _written(fn) -> bool:
    """Written in dspla's source (not generated, as a dataclass's __eq__ is)."""
    return Path(fn.__code__.co_filename).resolve().is_relative_to(PACKAGE)


def _class_members(cls) -> list[tuple[str, object]]:
    """The methods and properties ``cls`` defines itself (inherited ones are checked where defined)."""
    out = []
    for name, member in vars(cls).items():
        if _is_private(name):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if isinstance(member, property):
            out.append((f"{cls.__qualname__}.{name} (property)", member.fget))
        elif inspect.isfunction(member) and _written(member):
            out.append((f"{cls.__qualname__}.{name}", member))
    return out


def _module_members(mod: types.ModuleType) -> list[tuple[str, object]]:
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    out = [(f"{mod.__name__}.{n}", getattr(mod, n)) for n in names]
    if "__getattr__" in vars(mod):
        out.append((f"{mod.__name__}.__getattr__", mod.__getattr__))
    return out


def _public_surface() -> list[tuple[str, object]]:
    """(name, callable) of every public function, method and property."""
    todo = [(f"dspla.{n}", getattr(dp, n)) for n in dp.__all__] + [(c.__qualname__, c) for c in RETURNED]
    seen, out = set(), []
    while todo:
        where, obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, types.ModuleType):
            todo += [(w, o) for w, o in _module_members(obj)
                     if isinstance(o, (types.FunctionType, type)) and getattr(o, "__module__", "").startswith("dspla")]
        elif inspect.isclass(obj):
            if obj.__module__.startswith("dspla"):
                out += _class_members(obj)
        elif inspect.isfunction(obj):
            out.append((where, obj))
    return out


def test_the_surface_is_found():
    names = {w for w, _ in _public_surface()}
    for expected in ("dspla.mxm", "dspla.function", "dspla.load_shards", "dspla.world", "dspla.quiet",
                     "dspla.semiring.define", "dspla.monoid.define", "dspla.binary.define", "dspla.unary.define",
                     "dspla.semiring.__getattr__", "dspla.plot.comm_stats", "dspla.plot.save", "dspla.relu",
                     "Function.__call__", "Function.run", "Function.explain", "Expr.__matmul__", "Expr.__eq__",
                     "Expr.shape (property)", "Array.to_numpy", "Array.to_scipy", "Array.local (property)",
                     "UnknownNameError.__init__", "MPIComm.bcast", "Semiring.dtypes"):
        assert expected in names, expected
    assert len(names) > 150


def test_every_public_function_is_annotated():
    missing = [m for where, fn in _public_surface() for m in _missing(fn, where)]
    assert not missing, "unannotated in the public API:\n" + "\n".join(missing)


def test_run_options_name_every_option():
    """``**options`` of configure/run/session are typed by RunOptions: the same names as Options."""
    assert set(RunOptions.__annotations__) == {f.name for f in dataclasses.fields(Options)}


def test_the_typed_user_script_runs(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "typecheck" / "usage_ok.py")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Function(A, X, W -> H" in r.stdout
