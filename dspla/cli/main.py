"""The ``dspla`` command. Each subcommand is a module in dspla.cli with ``register(sub, common)``;
adding a command is adding its module name to COMMANDS."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..errors import DsplaError
from ..runtime.launch import in_mpi_job, world
from ..runtime.process import keep_freed_memory

COMMANDS = ["run", "check", "explain", "calibrate", "train", "demo", "bench", "partition", "comm_stats"]


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
    args = parser.parse_args(argv)
    keep_freed_memory()
    debug = args.debug or os.environ.get("DSPLA_DEBUG") == "1"
    try:
        return int(args.func(args) or 0)
    except DsplaError as e:
        if debug:
            raise
        if in_mpi_job():
            w = world()
            if w is not None and w.rank != 0:
                return 2  # rank 0 reports the error once
        print(f"dspla: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dspla: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
