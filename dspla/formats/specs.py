"""What an ``--input`` spec names, checked without reading it (and without loading numpy or the
readers: a command that only launches a job checks its inputs with this alone): the file and
its format by extension, FILE.npz:ARRAY, a graph file's reader options, and the values written
on the command line (``full:``, ``unit:``, a scalar)."""
from __future__ import annotations

import os

from ..errors import DsplaError, UnknownNameError

EDGE_LIST_EXTS = (".txt", ".edges", ".el")
MTX_EXTS = (".mtx",)

FORMATS_HELP = ".mtx[.gz], an edge list (.txt[.gz], .edges, .el), .npy or FILE.npz[:ARRAY]"

# Reader options of a graph file, after a colon: -i A=graph.txt:unweighted,duplicates=sum
GRAPH_OPTIONS = {"unweighted": ("weighted", False), "weighted": ("weighted", True),
                 "undirected": ("directed", False), "directed": ("directed", True),
                 "no-self-loops": ("self_loops", False)}
GRAPH_OPTIONS_HELP = ("unweighted (every edge 1), weighted (a third column required), undirected, "
                      "no-self-loops, duplicates=first|sum|error")
EDGE_LIST_ONLY = ("self_loops", "duplicates")


def split_spec(spec: str) -> tuple[str, str | None, dict]:
    """(path, .npz array name or None, reader options) of an input spec. Options follow a graph
    file's name after a colon, comma-separated; a colon whose tail is not a graph file's
    options belongs to the path."""
    if ".npz:" in spec:
        path, _, key = spec.rpartition(":")
        return path, key, {}
    head, colon, tail = spec.rpartition(":")
    if not colon or os.path.exists(spec):
        return spec, None, {}
    try:
        fmt = graph_format(head)
    except DsplaError:
        return spec, None, {}   # a colon in a path
    opts: dict = {}
    for word in tail.split(","):
        key, eq, val = word.partition("=")
        if key == "duplicates" and eq:
            opts["duplicates"] = val
        elif word in GRAPH_OPTIONS:
            opts[GRAPH_OPTIONS[word][0]] = GRAPH_OPTIONS[word][1]
        else:
            raise UnknownNameError("graph reader option", word, [*GRAPH_OPTIONS, "duplicates=first|sum|error"],
                                   context=f"in {spec!r}")
    if fmt != "edgelist" and any(k in opts for k in EDGE_LIST_ONLY):
        raise DsplaError(f"{spec}: {', '.join(k for k in EDGE_LIST_ONLY if k in opts)} apply to edge lists, "
                         f"not to {head}")
    return head, None, opts


def input_path(spec: str) -> str:
    """The file of an input spec, checked to exist and to have a known format (no reading)."""
    path = split_spec(spec)[0]
    if not os.path.exists(path):
        if os.path.lexists(path):   # the name is there: a link to nothing, or a loop of links
            raise DsplaError(f"input {path} is a symbolic link that leads to no file (broken, or a loop)")
        raise DsplaError(f"input file not found: {path}")
    if os.path.isdir(path):
        raise DsplaError(f"input {path} is a directory, not a data file")
    low = path.lower()
    if not low.endswith((".npy", ".npz")):
        try:
            graph_format(path)
        except DsplaError:
            raise DsplaError(f"{path}: unknown input format (use {FORMATS_HELP})") from None
    return path


def graph_format(path) -> str:
    """'mtx', 'edgelist' or 'npz', from the file name (``.gz`` is looked through)."""
    low = str(path).lower()
    base = low[:-3] if low.endswith(".gz") else low
    if base.endswith(MTX_EXTS):
        return "mtx"
    if base.endswith(EDGE_LIST_EXTS):
        return "edgelist"
    if low.endswith(".npz"):
        return "npz"
    raise DsplaError(f"{path}: unknown graph format; use .mtx[.gz], an edge list "
                     f"(.txt[.gz], .edges, .el) or a scipy .npz")


GENERATED_HELP = ("full:VALUE (every entry VALUE) or unit:ID (one entry, 1, in the row of node ID: an original "
                  "node id when a graph input read from an edge list numbers that dim, else the row number)")


def is_generated(spec: str) -> bool:
    return spec.startswith(("full:", "unit:")) or _literal(spec) is not None


def _literal(spec: str):
    """A scalar input's value written on the command line (``-i k=3``, ``-i tol=1e-6``, ``true``)."""
    if spec in ("true", "false"):
        return spec == "true"
    try:
        return int(spec)
    except ValueError:
        pass
    try:
        return float(spec) if any(ch.isdigit() for ch in spec) and "/" not in spec else None
    except ValueError:
        return None
