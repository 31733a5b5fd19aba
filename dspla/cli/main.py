"""The ``dspla`` command. Each subcommand is a module in dspla.cli with ``register(sub, common)``;
adding a command is adding its module name to COMMANDS."""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import traceback
import warnings

from ..errors import DsplaError, LoopBoundWarning, say_warning
from ..runtime.failure import STDOUT_CLOSED, fail, is_quiet, launched_by_dspla, message, stdout_failed
from ..runtime.launch import check_launcher_started_a_job, current_rank, in_mpi_job, world
from ..runtime.process import keep_freed_memory

COMMANDS = ["run", "check", "explain", "calibrate", "train", "demo", "bench", "partition", "shard", "comm_stats",
            "plot"]


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    parser = argparse.ArgumentParser(prog="dspla", parents=[common],
                                     description="A GraphBLAS-style sparse linear algebra language with "
                                                 "distributed semirings.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"dspla.cli.{name}").register(sub, common)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.error(_unrecognized(args, extra))
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


def _unrecognized(args, extra: list) -> str:
    """argparse's complaint, or what was meant when an input lacks its '=' (-i A graph.mtx)."""
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
