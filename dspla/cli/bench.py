"""dspla bench NAME [args]: run a benchmark from the source checkout's bench/ folder."""
from __future__ import annotations

import importlib
import os
import sys

from ..errors import DsplaError, UnknownNameError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def register(sub, common):
    p = sub.add_parser("bench", parents=[common], help="run a benchmark (from a source checkout)",
                       description="Benchmarks print medians and ratios; see bench/ in the source tree.")
    p.add_argument("name", help="benchmark name: a module in bench/ (e.g. local, partition), or 'list'")
    p.add_argument("args", nargs="...", help="arguments passed to the benchmark")
    p.set_defaults(func=run)


def _available():
    d = os.path.join(ROOT, "bench")
    # (common.py and _private.py modules are helpers of the benchmarks, not benchmarks)
    return sorted(f[:-3] for f in os.listdir(d) if f.endswith(".py") and f != "common.py" and not f.startswith("_"))


def run(args):
    if not os.path.isdir(os.path.join(ROOT, "bench")):
        raise DsplaError("benchmarks run from a source checkout (bench/ is not installed with the package)")
    names = _available()
    if args.name == "list":
        print("\n".join(names))
        return 0
    if args.name not in names:
        raise UnknownNameError("benchmark", args.name, names)
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    return importlib.import_module(f"bench.{args.name}").main(args.args) or 0
