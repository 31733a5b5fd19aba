"""Loading a shard set on every rank of a job: each rank reads only its own files and gets
distributed ``Array``s (rows of the partitioned dim on their owners), usable as inputs of any
function. The format is ``dspla.formats.shards``'s.

    values = dp.load_shards("graph.shards")          # every rank calls it
    out = f(A=values["A"], X=values["X"], W=w)      # A and X never pass through one process

A set written for P processes loads on a job of P. A set written for one process (a binary CSR
file) loads on any job by blocks of rows (``partition='block'``) or a seeded random assignment
(``partition='random'``). Every check (the set against the job: P, names, sizes, checksums)
runs before any data moves; a failure on one rank is agreed on by all (one message).
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Literal

import graphblas as gb
import numpy as np
from numpy.typing import NDArray

from ..formats.shards import ShardError, node_ids, ownership, read_edges, read_manifest, read_rank, read_rows
from ..instr.layout import DimPart
from ..ir.types import DType
from ..partition.simple import block_parts, random_parts
from ..values import Array, Dist, meet
from .comm import Comm
from .failure import agree
from .launch import one_process, world

_Require = Literal["C", "W", "O"]


def _piece(value: tuple[NDArray[Any], NDArray[Any], NDArray[Any], tuple[int, int]] | NDArray[Any],
           dtype: str) -> gb.Matrix:
    """A GraphBLAS matrix that takes over the arrays read (no copy: a rank's piece is in memory
    once, not twice, while it loads). Only arrays that own their memory, with GraphBLAS's types
    (indices uint64), are taken as they are: formats.shards reads them so; anything else is copied."""
    own: list[_Require] = ["C", "W", "O"]   # contiguous, writable, owned: GraphBLAS may take them as they are
    if isinstance(value, tuple):   # CSR: indptr, indices, data, shape
        indptr, indices, data, shape = value
        t = DType.of_numpy(np.dtype(dtype))
        if not data.size:
            return gb.Matrix(t.gb, *shape)
        return gb.Matrix.ss.import_csr(nrows=shape[0], ncols=shape[1], indptr=np.require(indptr, np.uint64, own),
                                       col_indices=np.require(indices, np.uint64, own),
                                       values=np.require(data, t.np, own), take_ownership=True, sorted_cols=False)
    arr = np.require(value, requirements=own)
    if not arr.size:
        return gb.Matrix.from_dense(arr, dtype=arr.dtype)
    return gb.Matrix.ss.import_fullr(values=arr, take_ownership=True)


def load_shards(folder: str, comm: Comm | None = None, *, partition: Literal["block", "random"] | None = None,
                seed: int = 0, names: Iterable[str] | None = None, verify: bool = True,
                function: Any = None) -> dict[str, Array]:
    """name -> distributed ``Array`` of every input in the shard set ``folder`` (or of ``names``,
    or of the inputs ``function`` takes: ``f(**dp.load_shards(DIR, function=f), W=w)`` serves a
    program that uses some of the set). A collective: every rank of ``comm`` (default: the MPI
    world, else one process) calls it.

    ``partition``: None reads the set as written (its P must be the job's; a one-process set is
    read by blocks of rows on any job); 'block' or 'random' (with ``seed``) read a one-process set
    by rows. ``verify`` checks each file's checksum as it is read (sizes are always checked).
    ``load_shards.last_seconds`` holds this rank's load time."""
    comm = comm or world() or one_process()
    meet(comm, f"load_shards({folder!r})")
    t0 = time.perf_counter()

    def load() -> tuple[dict[str, Any], NDArray[np.int64], NDArray[np.int64], dict[str, Any], str, list[str],
                        tuple[Any, ...] | None]:
        m = read_manifest(folder)
        want = list(m["inputs"]) if names is None else list(names)
        if function is not None:
            takes = set(function.input_names)
            want = [k for k in want if k in takes]
            if not want:
                raise ShardError(f"{folder} holds {', '.join(m['inputs']) or 'no inputs'}, none of which the "
                                 f"function takes ({', '.join(function.input_names)})")
        unknown = [k for k in want if k not in m["inputs"]]
        if unknown:
            raise ShardError(f"{folder} holds {', '.join(m['inputs']) or 'no inputs'}, not "
                             f"{', '.join(map(repr, unknown))}")
        n, P = int(m["rows"]), comm.size
        how = partition
        if how is None and m["P"] == 1 and P != 1:
            how = "block"   # a one-process set on a larger job: by blocks of rows, as `dspla run --shards` reads it
        if how is None:
            if m["P"] != P:
                raise ShardError(f"{folder} was sharded for P = {m['P']} processes but this job has {P}: shard again "
                                 f"with -P {P} (or with -P 1, which any job reads by rows)")
            parts = ownership(folder, m, verify)
            rows, pieces = read_rank(folder, m, comm.rank, want, verify, raw=True)
            method = m["method"]
            edges = read_edges(folder, m, comm.rank, verify)   # (a set sharded on an edge partition: vertexcut)
        elif how in ("block", "random"):
            parts = block_parts(n, P) if how == "block" else random_parts(n, P, seed)
            rows = np.flatnonzero(parts == comm.rank)
            pieces = read_rows(folder, m, rows, want, raw=True)
            method, edges = how, None
        else:
            raise ShardError(f"partition {partition!r}: a shard set is read as written (None), or a one-process set "
                             "by 'block' or 'random'")
        return m, parts, rows, pieces, method, want, edges

    m, parts, rows, pieces, method, want, edges = agree(comm, load)
    ids = agree(comm, lambda: node_ids(folder, m, verify))   # (the graph's original node ids, if the set has them)
    part = DimPart(m["dim"], parts, comm.size, method, edges)

    def check() -> None:
        if not np.array_equal(part.owned[comm.rank], rows):
            raise ShardError(f"{folder}: rank {comm.rank}'s rows disagree with the ownership map (a damaged set)")
    agree(comm, check)
    out: dict[str, Array] = {}
    for name in want:
        info = m["inputs"][name]
        shape = tuple(info["shape"])
        out[name] = Array(_piece(pieces.pop(name), info["dtype"]), name, Dist("row", m["dim"], part, comm), shape,
                          ids=ids, col_ids=ids if ids is not None and shape[1] == shape[0] else None)
    load_shards.last_seconds = time.perf_counter() - t0  # type: ignore[attr-defined]  # (a function attribute)
    return out


load_shards.last_seconds = 0.0  # type: ignore[attr-defined]


def manifest(folder: str) -> dict[str, Any]:
    """The shard set's manifest (no processes involved): P, the dim, the inputs' shapes and dtypes."""
    return read_manifest(folder)


__all__ = ["load_shards", "manifest"]
