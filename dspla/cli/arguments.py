"""The command line's arguments as the subcommands share them (inputs, dims, plans, plugins, a
dataset's flags, what re-launched ranks get): the parser every command uses (an option given
twice is an error, every option's help shows its default, a misspelt name gets "did you mean",
the error is printed once per job), and the value checks of the options."""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import re
import sys

from ..errors import DsplaError, did_you_mean, meant_text


class HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the text already says what it is."""

    def _get_help_string(self, action):
        text = action.help or ""
        unset = action.default is None or action.default is False or action.default == [] or \
            action.default is argparse.SUPPRESS
        if "default" in text or unset or not action.option_strings:
            return text
        return text + " (default: %(default)s)"


class StoreOnce(argparse.Action):
    """An option that takes one value: given twice is an error (the last would silently win)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in seen:
            raise argparse.ArgumentError(self, "given twice; give it once")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class Parser(argparse.ArgumentParser):
    """The command line's parser (every subcommand's too)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        ns, extra = super().parse_known_args(args, namespace)
        ns.__dict__.pop("_given_once", None)
        return ns, extra

    def error(self, message):
        """argparse's message with the closest valid name, printed by one rank of a job."""
        message = _with_suggestion(self, message)
        from ..runtime.launch import current_rank, in_mpi_job
        if not (in_mpi_job() and current_rank() != 0):
            self.print_usage(sys.stderr)
            sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def _with_suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        valid = re.findall(r"'([^']*)'", m.group(2)) or [v.strip() for v in m.group(2).split(",")]
        meant = meant_text(did_you_mean(m.group(1), valid))
        return message.replace(m.group(0), f"invalid choice: '{m.group(1)}'{meant} (choose from {m.group(2)})")
    m = re.match(r"unrecognized arguments: (.*)", message)
    if m:
        options = [o for a in parser._actions for o in a.option_strings]
        first = next((a for a in m.group(1).split() if a.startswith("-")), None)
        if first:
            return message + meant_text(did_you_mean(first.split("=")[0], options))
    return message


def integer(lo: int | None = None, hi: int | None = None):
    """An argparse type: an int in [lo, hi], with a message naming the range."""
    def parse(text: str) -> int:
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {_range(lo, hi)}, got {text!r}") from None
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"must be {_range(lo, hi)}, got {text}")
        return v
    return parse


def _range(lo, hi) -> str:
    if lo is not None and hi is not None:
        return f"a whole number from {lo} to {hi}"
    if lo is not None:
        return f"a whole number of at least {lo}"
    return f"a whole number of at most {hi}" if hi is not None else "a whole number"


def number(lo: float | None = None, hi: float | None = None, lo_open: bool = False, hi_open: bool = False):
    """An argparse type: a finite float in [lo, hi] (or open at either end)."""
    import math

    bounds = " and ".join(x for x in ("" if lo is None else f"{'above' if lo_open else 'at least'} {lo:g}",
                                      "" if hi is None else f"{'below' if hi_open else 'at most'} {hi:g}") if x)

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        if not math.isfinite(v) or (lo is not None and (v <= lo if lo_open else v < lo)) or \
                (hi is not None and (v >= hi if hi_open else v > hi)):
            raise argparse.ArgumentTypeError(f"must be a number {bounds}, got {text!r}")
        return v
    return parse


def int_list(lo: int = 1, hi: int | None = None):
    """An argparse type: comma-separated ints, each in [lo, hi]."""
    one = integer(lo, hi)

    def parse(text: str) -> list[int]:
        try:
            got = [one(p.strip()) for p in text.split(",") if p.strip()]
        except argparse.ArgumentTypeError:
            got = []
        if not got:
            raise argparse.ArgumentTypeError(f"must be comma-separated whole numbers, each {_range(lo, hi)[15:]}, "
                                             f"got {text!r}")
        return got
    return parse


def grid3(text: str) -> tuple[int, int, int]:
    """An argparse type: a process grid XxYxZ of whole numbers of at least 1 (2x2x2)."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) >= 1 for p in parts):
        raise argparse.ArgumentTypeError(f"must be a grid XxYxZ of whole numbers of at least 1 (e.g. 2x2x2), "
                                         f"got {text!r}")
    x, y, z = (int(p) for p in parts)
    return x, y, z


MAX_DIM = 1 << 60            # GraphBLAS's largest dimension (GrB_INDEX_MAX + 1)
MAX_SEED = (1 << 31) - 1     # what every partitioner takes as a seed (a C int)
POSITIVE = integer(1)
NON_NEGATIVE = integer(0)
SEED = integer(0, MAX_SEED)
NP = integer(1, 1 << 20)


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
    """``--dim NAME=SIZE`` list -> {NAME: SIZE}: each name once, each size a whole number from 1 to
    2^60 (GraphBLAS's largest dimension)."""
    out: dict[str, int] = {}
    for spec in specs or []:
        name, eq, size = spec.partition("=")
        if not eq or not name.isidentifier():
            raise DsplaError(f"--dim takes NAME=SIZE, got {spec!r}")
        if not size.strip().isdigit() or not 1 <= int(size) <= MAX_DIM:
            raise DsplaError(f"--dim takes NAME=SIZE with SIZE a whole number from 1 to 2^60 = {MAX_DIM} "
                             f"(GraphBLAS's largest dimension), got {spec!r}")
        if name in out:
            raise DsplaError(f"--dim {name} given twice ({name}={out[name]} and {name}={size}); give it once")
        out[name] = int(size)
    return out


PLAN_HELP = ("the product plan: auto (the lowest predicted time), or one of p2p1d, allgather1d, shift1d, twoface, "
             "15d, 2d for every product; per product, PRODUCT=PLAN (repeatable; PRODUCT is the name of the "
             "product's output or value, e.g. --plan T=p2p1d); a plan that cannot run a product is an error")


def add_plan_option(p):
    p.add_argument("--plan", action="append", metavar="PLAN|PRODUCT=PLAN", help=PLAN_HELP + " (default: auto)")


def add_plan_tuning(p):
    """The plans' own settings, the same for a run and for its explain."""
    p.add_argument("--replication", "-c", type=POSITIVE, help="replication factor c of shift1d / 15d / 15d_sparse, "
                   "a divisor of P (default: 2 when it divides P, else 1; 15d: 2 only from P = 4; 15d_sparse: the c "
                   "with c^2 <= P the model predicts fastest)")
    p.add_argument("--stripe-width", type=POSITIVE, metavar="W", help="twoface stripe width W, at least 1 "
                   "(default: the plan's choice from the graph)")
    p.add_argument("--grid", type=grid3, metavar="XxYxZ", help="3d: the process grid, X*Y*Z = P and Z <= the "
                   "product's width (default: the grid closest to a cube)")
    p.add_argument("--memory-cap", "--memory-per-rank", type=number(0, lo_open=True), metavar="BYTES",
                   help="bytes per process a product's buffers may use (auto skips plans over it; twoface turns "
                        "sync stripes async to stay under it) (default: half the machine's memory over P)")
    p.add_argument("--message-bytes", type=POSITIVE, default=32 << 20, metavar="BYTES", help="p2p1d: rows bigger "
                   "than this travel in chunks of it, two posted at a time (bounds what a rank holds of the rows "
                   "it receives)")
    p.add_argument("--ranks-per-node", type=POSITIVE, metavar="R", help="p2p1d_node: R consecutive ranks share a "
                   "node; rows bound for another node are gathered, sent once per node pair and scattered "
                   "(default: every rank on one node)")


def parse_plan(specs) -> str | dict[str, str]:
    """``--plan NAME`` (every product) or ``--plan PRODUCT=NAME ...`` (per product) -> the plan
    option: a name, or a dict product -> name."""
    if not specs:
        return "auto"
    bare = [s for s in specs if "=" not in s]
    if bare and len(specs) > 1:
        raise DsplaError("--plan takes one plan for every product (--plan 2d) or one per product (--plan T=2d "
                         f"--plan Z=p2p1d), not both or twice: got {' '.join('--plan ' + s for s in specs)}")
    if bare:
        return bare[0]
    out: dict[str, str] = {}
    for spec in specs:
        name, _, plan = spec.partition("=")
        if not name.isidentifier() or not plan:
            raise DsplaError(f"--plan takes PLAN or PRODUCT=PLAN, got {spec!r}")
        if name in out:
            raise DsplaError(f"--plan {name}= given twice")
        out[name] = plan
    return out


def partition_ids(parts, path: str, P: int, rows: int | None = None):
    """A --partition-file's array checked as a partition: 1-D, whole-number process ids in
    0..P-1 (and ``rows`` of them when known), as int64; else an error naming the option and what
    a partition is."""
    import numpy as np

    what = f"--partition-file {path}: a partition is a 1-D array of process ids 0..{P - 1}, one per row"
    parts = np.asarray(parts)
    if parts.ndim != 1:
        raise DsplaError(f"{what}; this one has shape {parts.shape}")
    if parts.dtype.kind == "f":
        whole = np.isfinite(parts) & (parts == np.round(parts))
        if not whole.all():
            i = int(np.flatnonzero(~whole)[0])
            raise DsplaError(f"{what}; entry {i} is {parts[i]}, not a whole number")
    elif parts.dtype.kind not in "iub":
        raise DsplaError(f"{what}; this one holds {parts.dtype} values")
    if rows is not None and parts.size != rows:
        raise DsplaError(f"{what}; this one has {parts.size} entries for {rows} rows")
    if parts.size and (parts.min() < 0 or parts.max() >= P):
        bad = parts.min() if parts.min() < 0 else parts.max()
        raise DsplaError(f"{what}; it holds {bad:g}, outside 0..{P - 1} for P = {P}")
    return parts.astype(np.int64)


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
                        "dspla.semiring.define, dspla.binary.define, ...); may be repeated (default: none)")


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


def add_dataset_options(group, train: bool = False) -> None:
    """The flags naming a node-classification dataset (``dspla train``, ``dspla shard --dataset``):
    one definition, so both commands take and describe them alike."""
    group.add_argument("--dataset", help="cora, citeseer, pubmed (Planetoid files in --data-dir) or sbm (generated) "
                       + ("(default: none; or --graph, or --shards)" if train else "(default: none)"))
    group.add_argument("--data-dir", help="the folder with the Planetoid ind.<name>.* files (default: none)")
    group.add_argument("--nodes", type=integer(2), default=10000, help="sbm: number of nodes")
    group.add_argument("--classes", type=integer(2), default=7, help="sbm, or random labels: number of classes")
    group.add_argument("--feature-dim", type=POSITIVE, help="sbm, or random features: their width (default 64 for "
                       "sbm, 128 for random features)")
    group.add_argument("--avg-degree", type=number(0, lo_open=True), default=10.0, help="sbm: average degree")
    group.add_argument("--data-seed", type=SEED, default=0, help="seed of generated graphs, features, labels, splits")


def without_options(argv, flags):
    """argv without the given options (and their values): what the re-launched ranks get."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in flags:
            skip = "=" not in a
            continue
        out.append(a)
    return out


def work_begins() -> None:
    """A command's loading is done (dspla.cli.main turned the collector off for it): on again,
    with every object loading made set aside for good (gc.freeze: never scanned again)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
