"""The ``dspla`` command. Each subcommand is a module in dspla.cli with ``register(sub, common)``;
adding a command is adding its module name to COMMANDS."""
from __future__ import annotations

import argparse
import gc
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import signal
import sys
import traceback
import warnings

from .. import __version__
from ..errors import DsplaError, LoopBoundWarning, say_warning
from ..runtime.failure import STDOUT_CLOSED, fail, is_quiet, launched_by_dspla, message, stdout_failed
from ..runtime.launch import check_launcher_started_a_job, current_rank, in_mpi_job, world
from ..runtime.process import keep_freed_memory
from .arguments import Parser

# Each command, the module that implements it and its one line of help. Only the module of the
# command being run is imported (they import much of dspla: a run should not pay for training's,
# calibration's or plotting's modules); --help lists the others by this line.
COMMANDS = {
    "run": ("run", "run a .dspla program on data files, on 1 or P processes"),
    "check": ("check", "parse and type-check a .dspla file without data"),
    "explain": ("explain", "show the program after passes and, with --np, the plans considered for each product "
                           "and the choice"),
    "generate": ("generate", "write a generated graph and node arrays (R-MAT, random, SBM) to a folder"),
    "calibrate": ("calibrate", "measure this machine and fit the cost-model coefficients"),
    "train": ("train", "train a GCN step program (forward + backward in dspla)"),
    "demo": ("demo", "train a GCN on a generated graph with 2 MPI processes"),
    "bench": ("bench", "run a benchmark (from a source checkout)"),
    "partition": ("partition", "partition the rows of a graph over P processes"),
    "shard": ("shard", "partition inputs once and write per-process shards"),
    "comm-stats": ("comm_stats", "exact communication of 1D plans per partitioner"),
    "plot": ("plot", "draw a figure (PNG/SVG) from a dspla JSON file"),
    "scaling": ("scaling", "predicted GCN scaling on a described cluster"),
}


def build_parser(command: str | None = None, every: bool = True) -> argparse.ArgumentParser:
    """The command line's parser: every command's options (``every``), or ``command``'s only, the
    others listed by name and help."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show Python tracebacks for errors (also: DSPLA_DEBUG=1)")
    parser = Parser(prog="dspla", parents=[common],
                    description="A GraphBLAS-style sparse linear algebra language with distributed semirings.")
    parser.add_argument("--version", action="version", version=f"dspla {__version__}",
                        help="print dspla's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        if name == command or (every and command is None):
            importlib.import_module(f"dspla.cli.{module}").register(sub, common)
        else:
            sub.add_parser(name, help=help_, add_help=False)
    return parser


def _command(argv: list[str]) -> str | None:
    """The command named on the command line (its first word that is not an option), if known."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def _graphblas_without_numba(argv: list[str], command: str | None) -> None:
    """python-graphblas imports numba when it loads (0.2 to 0.5 s), for user-defined operators
    only. A command line's program has none unless a --plugin defines them (and benchmarks may):
    then graphblas loads as usual; else, when it loads (a process that only launches a job never
    loads it), it loads without numba support."""
    if command in (None, "bench") or any(a.startswith("--plugin") for a in argv) or "graphblas.core" in sys.modules \
            or "numba" in sys.modules:
        return
    sys.meta_path.insert(0, _NumbaFreeGraphblas())


def _numpy_helpers_on_use() -> None:
    """scipy (1.17) reads every public name of numpy when it loads, which imports numpy.f2py (its
    Fortran wrapper generator: hundreds of regular expressions) and numpy.testing (unittest): 0.1 s
    of a command's start-up (measured: import scipy.sparse 0.31 -> 0.21 s CPU). For the command
    line only, those two load when first used instead."""
    import numpy

    for name in ("numpy.f2py", "numpy.testing"):
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            continue
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        setattr(numpy, name.split(".")[1], module)


class _BeforeScipy(importlib.abc.MetaPathFinder):
    """Sets numpy's helpers up (_numpy_helpers_on_use) when scipy is first imported: a process
    that never loads scipy (one that only launches a job) loads no numpy for it."""

    def find_spec(self, name, path, target=None):
        if name == "scipy":
            sys.meta_path.remove(self)
            _numpy_helpers_on_use()
        return None   # (the usual finders find it)


class _NumbaFreeGraphblas(importlib.abc.MetaPathFinder):
    """Finds graphblas.core as usual, and runs it with numba's import failing."""

    def find_spec(self, name, path, target=None):
        if name != "graphblas.core":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _WithoutNumba(spec.loader)
        return spec


class _WithoutNumba(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        sys.modules["numba"] = None   # (an import of it fails while this is set: graphblas then goes without)
        try:
            self.loader.exec_module(module)
        finally:
            del sys.modules["numba"]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command(argv)
    collecting = gc.isenabled()
    if command in _LOAD_THEN_WORK:
        gc.disable()   # until the work begins (arguments.work_begins): loading makes no garbage
    try:
        return _main(argv, command)
    finally:
        if collecting:
            gc.enable()


# Commands that load most of dspla before their work (the collector's passes over what loading
# makes cost a tenth of their start-up); each turns it back on where its work begins.
_LOAD_THEN_WORK = {"run", "check", "explain", "train"}


def _main(argv: list[str], command: str | None) -> int:
    _graphblas_without_numba(argv, command)
    if "scipy" not in sys.modules:
        sys.meta_path.insert(0, _BeforeScipy())
    parser = build_parser(command, every=False)
    try:   # (argparse exits: 2 for a bad option, 0 for --help; main returns the status instead)
        args, extra = parser.parse_known_args(argv)
        if extra:
            sub = _subparser(parser, args.command)
            sub.error(_unrecognized(args, extra, sub))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    keep_freed_memory()
    debug = args.debug or os.environ.get("DSPLA_DEBUG") == "1"
    if debug:
        os.environ["DSPLA_DEBUG"] = "1"   # ranks and helpers word their messages the same way
    if in_mpi_job():
        _rank_signals()
    warnings.showwarning = _show_warning
    try:
        check_launcher_started_a_job()
        if not isinstance(sys.stdout, _Stdout):
            sys.stdout = _Stdout(sys.stdout)
        code = int(args.func(args) or 0)
        sys.stdout.flush()   # a closed (or full) stdout is found here, not by the interpreter at exit
        return code
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as e:  # noqa: BLE001 - every failure ends with one message and a non-zero status
        return _failed(e, debug)


class StdoutRefused(OSError):
    """Standard output refused the bytes (a full device or disk): reported as such (_failed)."""


class _Stdout:
    """The command's standard output: a write it refuses (a full device or disk) raises
    StdoutRefused, reported as one dspla error that says so; a closed pipe stays a
    BrokenPipeError (the caller's own message)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _refused(e) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _refused(e) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _refused(e: OSError) -> StdoutRefused:
    return StdoutRefused(e.errno, e.strerror)


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _unrecognized(args, extra: list, command: argparse.ArgumentParser) -> str:
    """argparse's complaint (with the option meant, when one is close), or what was meant when an
    input lacks its '=' (-i A graph.mtx)."""
    bare = [spec for spec in getattr(args, "input", None) or [] if "=" not in spec]
    if bare and not extra[0].startswith("-"):
        return f"--input takes NAME=PATH: write -i {bare[0]}={extra[0]} (got -i {bare[0]} {extra[0]})"
    return f"unrecognized arguments: {' '.join(extra)}"


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """dspla's own warnings as the command's messages: they carry their position in the user's
    file themselves (Python's would name the command's entry point, e.g. <frozen runpy>:88)."""
    if issubclass(category, LoopBoundWarning):
        say_warning(str(message), file)
    else:
        _default_show(message, category, filename, lineno, file, line)


_default_show = warnings.showwarning


def _failed(e: BaseException, debug: bool) -> int:
    """One message for the failure, on one rank; the whole job ends (see runtime/failure.py)."""
    comm = world() if in_mpi_job() else None
    if isinstance(e, BrokenPipeError):
        _silence_stdout()
        e = DsplaError(STDOUT_CLOSED)
    elif isinstance(e, StdoutRefused):
        _silence_stdout()   # (the interpreter's last flush at exit would fail the same way)
        e = DsplaError(stdout_failed(e))
    if comm is None or comm.size == 1:
        if debug:
            traceback.print_exception(e)
        else:
            print(message(e, None), file=sys.stderr)
        return 2
    if getattr(e, "agreed", False) or is_quiet(e):
        # every rank knows (on_root / agree): the reporter prints, all leave normally
        if not is_quiet(e):
            print(message(e, comm.rank), file=sys.stderr, flush=True)
        return 2
    fail(comm, e, 2)   # only this rank knows: print, and end every rank
    return 2


def _interrupted() -> int:
    if in_mpi_job():
        # every rank gets the signal: rank 0 says it once, or dspla's launcher does
        if current_rank() == 0 and not launched_by_dspla():
            print("dspla: interrupted", file=sys.stderr, flush=True)
        _silence_stdout()
        os._exit(130)   # skip MPI's finalize: the other ranks may be inside a collective
    print("dspla: interrupted", file=sys.stderr)
    return 130


def _rank_signals():
    """Ctrl-C in a job: a rank stops at once and silently (a KeyboardInterrupt could surface
    anywhere, even in a destructor, as a traceback); rank 0 of a job not started by dspla's
    launcher says so once (otherwise the launcher does)."""
    if current_rank() != 0 or launched_by_dspla():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        return

    def interrupted(signum, frame):
        print("dspla: interrupted", file=sys.stderr, flush=True)
        _silence_stdout()
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


def _silence_stdout():
    """Point stdout at /dev/null, so the interpreter's final flush of a closed pipe is silent."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
