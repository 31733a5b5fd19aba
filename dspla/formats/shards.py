"""Shard sets: a problem partitioned once, written so that each of P processes reads only its own
files (``dspla shard``, ``dspla.load_shards``).

A shard set is a directory:

    manifest.json                  format name and version, P, the partitioned dim and its size,
                                   the method and its parameters, every input's kind, global
                                   shape and dtype, and every file's size and BLAKE2b checksum
    parts.npy                      the ownership map: row -> process (int32), memory-mappable
    ids.npy                        (optional) the original node id of each row, when the graph was
                                   read with ids (an edge list); memory-mappable
    rank00000/rows.npy             the global ids of this rank's rows, ascending (int64)
    rank00000/A.indptr.npy         a sparse input's rows as CSR, with global column ids
    rank00000/A.indices.npy        (int64) and values in the input's dtype
    rank00000/A.data.npy
    rank00000/X.npy                a dense input's rows (C order)
    rank00000/edges.keys.npy       (a set sharded on an edge partition, for vertexcut) the undirected
    rank00000/edges.parts.npy      edges incident to this rank's rows, u * n + v with u < v,
                                   ascending (int64), and each one's part (int64)

Every file is an uncompressed ``.npy``: a rank maps its pieces (``np.load(mmap_mode='r')``)
instead of reading a container. The ownership map is replicated (4 bytes a row: 4 MB for a
million rows, against the ~100 bytes a row of the graph and features): every rank knows the
owner of every column it references without a directory service.

A set written for one process (``-P 1``) is a binary CSR file: a job of any size reads it by
contiguous blocks of rows (``partition='block'``) or a seeded random assignment, each rank
mapping only its own rows' entries, so the input never passes through one process.

This module knows files only (no processes): ``dspla.runtime.shards`` loads a set inside a job.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import tokenize

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError
from .files import atomic_write
from .limits import check_sparse_dims
from .npy import HEADER_LOCK

FORMAT, VERSION = "dspla-shards", 1
MANIFEST = "manifest.json"
PARTS = "parts.npy"
IDS = "ids.npy"
CHUNK = 1 << 24   # bytes hashed at a time


class ShardError(DsplaError):
    """A shard set that is missing, damaged, or does not fit the job."""


def rank_dir(r: int) -> str:
    return f"rank{r:05d}"


def checksum(path: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while True:
            b = fh.read(CHUNK)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def _save(folder: str, rel: str, arr: np.ndarray, files: dict):
    path = os.path.join(folder, rel)
    with atomic_write(path, "wb") as fh:
        np.lib.format.write_array(fh, np.ascontiguousarray(arr), allow_pickle=False)
    files[rel] = {"bytes": os.path.getsize(path), "blake2b": checksum(path)}


def _kind(value) -> str:
    return "sparse" if sp.issparse(value) else "dense"


def _prepare(out: str, P: int):
    """Make ``out`` ready for a set of P: a new or empty directory, or an earlier shard set (its
    manifest removed first, so a half-rewritten set never looks complete; rank folders beyond P
    removed). Anything else is refused rather than mixed with."""
    os.makedirs(out, exist_ok=True)
    names = os.listdir(out)
    ours = [x for x in names if x in (MANIFEST, PARTS, IDS) or x.startswith("rank") and x[4:].isdigit()]
    if names and MANIFEST not in names and len(ours) != len(names):
        raise ShardError(f"{out} exists and holds other files than a shard set: choose a new --out")
    if MANIFEST in names:
        os.remove(os.path.join(out, MANIFEST))
        if IDS in names:   # (a set written again without ids must not keep the old ones)
            os.remove(os.path.join(out, IDS))
        for x in ours:
            if x.startswith("rank") and int(x[4:]) >= P:
                shutil.rmtree(os.path.join(out, x))


def edge_share(edges: tuple, rows: np.ndarray, n: int) -> tuple:
    """The entries of an edge table (keys lo * n + hi ascending, parts) whose edges are incident
    to ``rows``: a rank's share of an edge partition."""
    mine = np.zeros(n, dtype=bool)
    mine[rows] = True
    keep = mine[edges[0] // n] | mine[edges[0] % n]
    return edges[0][keep], edges[1][keep]


def write_shards(out: str, inputs: dict, parts: np.ndarray, P: int, *, dim: str = "n", method: str = "?",
                 params: dict | None = None, progress: bool = True, extra: dict | None = None,
                 ids: np.ndarray | None = None, edges: tuple | None = None) -> dict:
    """Write ``inputs`` (name -> scipy sparse matrix or 2-D numpy array, all with ``len(parts)``
    rows) row-partitioned by ``parts`` (row -> process in 0..P-1) to the directory ``out``;
    returns the manifest. One rank's pieces exist at a time (besides the inputs and the map).
    ``extra``: more manifest entries (a training dataset's name and description). ``ids``: the
    original node id of each row (numbers or strings), kept in the set. ``edges``: an edge
    partition (keys u * n + v ascending, parts; partition.vertex_owners.edge_table), each rank
    given the edges incident to its rows."""
    parts = np.asarray(parts)
    n = parts.size
    if ids is not None and (len(ids) != n or np.asarray(ids).dtype.kind not in "iuU"):
        raise ShardError(f"ids: one number or string for each of the {n} rows, got {len(ids)} of "
                         f"{np.asarray(ids).dtype}")
    if P < 1:
        raise ShardError(f"P must be at least 1, got {P}")
    if parts.size and (parts.min() < 0 or parts.max() >= P):
        raise ShardError(f"the partition holds process ids {parts.min()}..{parts.max()}, but P = {P}")
    meta = {}
    for name, v in inputs.items():
        if not name.isidentifier():
            raise ShardError(f"input name {name!r} is not an identifier")
        shape = tuple(int(x) for x in v.shape)
        if len(shape) != 2:
            raise ShardError(f"input {name!r} has shape {shape}: shards hold 2-D inputs (a vector as n x 1)")
        if shape[0] != n:
            raise ShardError(f"input {name!r} has {shape[0]} rows but the partition covers {n}: only inputs whose "
                             "rows are the partitioned dim are sharded (give small parameters with -i at run time)")
        meta[name] = {"kind": _kind(v), "shape": list(shape), "dtype": np.dtype(v.dtype).name}
        if sp.issparse(v):
            meta[name]["nnz"] = int(v.nnz)
    _prepare(out, P)
    files: dict = {}
    order = np.argsort(parts, kind="stable")
    counts = np.bincount(parts, minlength=P)
    offsets = np.r_[0, np.cumsum(counts)]
    _save(out, PARTS, parts.astype(np.int32 if P < 2**31 else np.int64), files)
    if ids is not None:
        _save(out, IDS, np.asarray(ids), files)
    csr = {k: sp.csr_array(v) for k, v in inputs.items() if sp.issparse(v)}
    for A in csr.values():
        A.sum_duplicates()
    t0, last = time.perf_counter(), 0.0
    tty = sys.stderr.isatty()
    for r in range(P):
        rows = order[offsets[r]:offsets[r + 1]]
        d = rank_dir(r)
        os.makedirs(os.path.join(out, d), exist_ok=True)
        _save(out, f"{d}/rows.npy", rows.astype(np.int64), files)
        if edges is not None:
            keys, eparts = edge_share(edges, rows, n)
            _save(out, f"{d}/edges.keys.npy", np.asarray(keys, dtype=np.int64), files)
            _save(out, f"{d}/edges.parts.npy", np.asarray(eparts, dtype=np.int64), files)
        for name, v in inputs.items():
            if name in csr:
                B = csr[name][rows]
                _save(out, f"{d}/{name}.indptr.npy", B.indptr.astype(np.int64), files)
                _save(out, f"{d}/{name}.indices.npy", B.indices.astype(np.int64), files)
                _save(out, f"{d}/{name}.data.npy", B.data, files)
                del B
            else:
                _save(out, f"{d}/{name}.npy", np.asarray(v)[rows], files)
        now = time.perf_counter()
        if progress and (r == P - 1 or tty and now - last > 0.5):   # (a log gets the last line only)
            last = now
            print(f"\rdspla shard: {r + 1}/{P} ranks written ({now - t0:.1f} s)", end="" if r < P - 1 else "\n",
                  file=sys.stderr, flush=True)
    manifest = {"format": FORMAT, "version": VERSION, "P": int(P), "dim": dim, "rows": int(n),
                "method": method, "params": params or {}, "inputs": meta,
                "counts": [int(c) for c in counts], **(extra or {}), **({"ids": IDS} if ids is not None else {}),
                **({"edges": method} if edges is not None else {}), "files": files}
    with atomic_write(os.path.join(out, MANIFEST), "w") as fh:   # last: the set is complete
        json.dump(manifest, fh, indent=1)
    return manifest


def read_manifest(folder: str) -> dict:
    """The manifest of the shard set in ``folder``, checked for format and version."""
    path = os.path.join(folder, MANIFEST)
    if not os.path.isdir(folder):
        raise ShardError(f"shard directory not found: {folder}")
    if not os.path.isfile(path):
        raise ShardError(f"{folder} is not a complete shard set: {MANIFEST} is missing (write one with dspla shard)")
    try:
        with open(path) as fh:
            m = json.load(fh)
    except (OSError, ValueError) as e:
        raise DataFormatError(path, f"not a readable manifest ({e})") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise DataFormatError(path, f"not a {FORMAT} manifest")
    if m.get("version") != VERSION:
        raise DataFormatError(path, f"shard format version {m.get('version')}; this dspla reads version {VERSION} "
                              "(write the set again with this dspla's dspla shard)")
    for key in ("P", "rows", "dim", "inputs", "files", "counts"):
        if key not in m:
            raise DataFormatError(path, f"the manifest has no {key!r}")
    _check_sizes(folder, path, m)
    return m


def _check_sizes(folder: str, path: str, m: dict) -> None:
    """The sizes the manifest declares against what the set holds, before anything of that size
    is made: the ownership map has an entry per row (4 bytes or more each), and a sparse input's
    shape obeys the readers' rule for its entries (io/limits.py)."""
    try:
        rows, held = int(m["rows"]), os.path.getsize(os.path.join(folder, PARTS))
    except (TypeError, ValueError, OSError):
        raise DataFormatError(path, "the manifest's rows or the ownership map is unreadable") from None
    if rows < 0 or 4 * rows > held:
        raise DataFormatError(path, f"declares {rows} rows, but the ownership map {PARTS} has {held} bytes "
                              f"(fewer than {4 * rows}): a damaged or edited set")
    for name, info in m["inputs"].items():
        shape = info.get("shape") if isinstance(info, dict) else None
        if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(x, int) and x >= 0 for x in shape)):
            raise DataFormatError(path, f"input {name!r} has no valid shape")
        if info.get("kind") == "sparse":
            check_sparse_dims(path, shape[0], shape[1], int(info.get("nnz", 0)))


def _file(folder: str, m: dict, rel: str, verify: bool, mmap: bool = True, index: bool = False) -> np.ndarray:
    """One member of the set, checked against the manifest (size always; checksum when ``verify``).
    Not ``mmap``: read into memory, int64 as uint64 when ``index`` (GraphBLAS's index type)."""
    path = os.path.join(folder, rel)
    want = m["files"].get(rel)
    if want is None:
        raise ShardError(f"{folder}: the manifest does not list {rel}")
    if not os.path.isfile(path):
        raise ShardError(f"{folder}: {rel} is missing")
    size = os.path.getsize(path)
    if size != want["bytes"]:
        raise ShardError(f"{path}: {size} bytes, the manifest says {want['bytes']} (a damaged or mixed shard set)")
    if verify and checksum(path) != want["blake2b"]:
        raise ShardError(f"{path}: checksum mismatch (the file changed after dspla shard wrote it)")
    try:
        if not mmap:
            return _read_owned(path, index)
        with HEADER_LOCK:   # (see io/npy.py)
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError, SyntaxError, tokenize.TokenError) as e:   # (a damaged header)
        raise DataFormatError(path, f"not a valid .npy array ({e})") from None
    return arr


def _read_owned(path: str, index: bool = False) -> np.ndarray:
    """The .npy file read into an array that owns its memory, so that GraphBLAS can take it over
    as it is (dspla.load_shards). np.load's array is a reshaped view of the buffer it read, which
    GraphBLAS cannot own: every piece was copied once more, a rank's peak held its share twice.
    ``index``: int64 read as uint64, the bytes unchanged (GraphBLAS would copy to convert)."""
    with open(path, "rb") as fh:
        with HEADER_LOCK:   # (see io/npy.py)
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(fh)
        if dtype.hasobject or fortran:   # never in a set dspla shard wrote
            raise ValueError("a shard file must be a plain C-order array")
        arr = np.empty(shape, np.uint64 if index and dtype == np.int64 else dtype)
        if arr.nbytes > os.path.getsize(path) - fh.tell():
            raise ValueError(f"the header says shape {shape} {dtype} but fewer bytes follow it")
        if arr.nbytes and fh.readinto(memoryview(arr.reshape(-1)).cast("B")) != arr.nbytes:
            raise ValueError("the file ended early")
    return arr


def ownership(folder: str, m: dict, verify: bool = True) -> np.ndarray:
    parts = np.asarray(_file(folder, m, PARTS, verify), dtype=np.int64)
    if parts.shape != (m["rows"],):
        raise ShardError(f"{folder}/{PARTS}: {parts.shape} entries, the manifest says {m['rows']} rows")
    return parts


def node_ids(folder: str, m: dict, verify: bool = True) -> np.ndarray | None:
    """The original node id of each row (memory-mapped), or None when the set has none."""
    if "ids" not in m:
        return None
    ids = _file(folder, m, IDS, verify)
    if ids.shape != (m["rows"],):
        raise ShardError(f"{folder}/{IDS}: {ids.shape} entries, the manifest says {m['rows']} rows")
    return ids


def read_rank(folder: str, m: dict, r: int, names=None, verify: bool = True, raw: bool = False
              ) -> tuple[np.ndarray, dict]:
    """(global row ids, name -> piece) of rank r's files: a sparse piece as scipy CSR (rows x the
    global columns, global column ids), a dense one as an array (memory-mapped). ``raw``: read
    into memory, a sparse piece as its (indptr, indices, data, shape), for a library to take
    over without a copy (dspla.load_shards; indptr and indices as uint64)."""
    d = rank_dir(r)
    rows = np.asarray(_file(folder, m, f"{d}/rows.npy", verify))
    out = {}
    for name in names if names is not None else m["inputs"]:
        info = m["inputs"][name]
        if info["kind"] == "sparse":
            indptr, indices, data = (_file(folder, m, f"{d}/{name}.{x}.npy", verify, mmap=not raw, index=x != "data")
                                     for x in ("indptr", "indices", "data"))
            if indptr.shape != (rows.size + 1,) or indices.shape != data.shape or \
                    (indptr.size and indptr[-1] != indices.size):
                raise ShardError(f"{folder}/{d}: {name}'s CSR arrays do not agree with each other and {rows.size} rows")
            shape = (rows.size, info["shape"][1])
            out[name] = (indptr, indices, data, shape) if raw else sp.csr_array((data, indices, indptr), shape=shape)
        else:
            out[name] = _file(folder, m, f"{d}/{name}.npy", verify, mmap=not raw)
            if out[name].shape != (rows.size, info["shape"][1]):
                raise ShardError(f"{folder}/{d}/{name}.npy has shape {out[name].shape}, expected "
                                 f"({rows.size}, {info['shape'][1]})")
    return rows, out


def read_edges(folder: str, m: dict, r: int, verify: bool = True) -> tuple | None:
    """Rank r's share of the set's edge partition (keys, parts), or None when it has none."""
    if "edges" not in m:
        return None
    d = rank_dir(r)
    keys, parts = (np.asarray(_file(folder, m, f"{d}/edges.{x}.npy", verify, mmap=False)) for x in ("keys", "parts"))
    if keys.shape != parts.shape or keys.ndim != 1:
        raise ShardError(f"{folder}/{d}: edges.keys.npy and edges.parts.npy disagree ({keys.shape}, {parts.shape})")
    return keys, parts


def read_rows(folder: str, m: dict, rows: np.ndarray, names=None, raw: bool = False) -> dict:
    """name -> the rows ``rows`` (global ids, ascending) of a one-process set (a binary CSR file),
    read through memory maps: only those rows' entries are touched. Sizes are checked against
    the manifest; whole-file checksums are not (a block read does not see the whole file)."""
    if m["P"] != 1:
        raise ShardError(f"{folder} holds {m['P']} shards; reading by rows needs a set written with -P 1")
    d = rank_dir(0)
    out = {}
    for name in names if names is not None else m["inputs"]:
        info = m["inputs"][name]
        if info["kind"] == "sparse":
            indptr, indices, data = (_file(folder, m, f"{d}/{name}.{x}.npy", False)
                                     for x in ("indptr", "indices", "data"))
            lo, hi = np.asarray(indptr[rows]), np.asarray(indptr[rows + 1])
            lens = hi - lo
            ptr = np.r_[0, np.cumsum(lens)].astype(np.int64)
            if rows.size and np.all(np.diff(rows) == 1):   # a block: one contiguous slice
                take = slice(int(lo[0]), int(hi[-1]))
            else:   # every entry of the rows, without a loop per row
                take = np.repeat(lo - ptr[:-1], lens) + np.arange(ptr[-1])
            got = (ptr.astype(np.uint64) if raw else ptr, _gather(indices.view(np.uint64) if raw else indices, take),
                   _gather(data, take), (rows.size, info["shape"][1]))
            out[name] = got if raw else sp.csr_array(got[2::-1], shape=got[3])
        else:
            out[name] = _gather(_file(folder, m, f"{d}/{name}.npy", False), rows)
    return out


def _gather(arr: np.ndarray, take: slice | np.ndarray) -> np.ndarray:
    """arr[take] (a slice, or indices along axis 0) as a new array that owns its memory, which
    GraphBLAS takes over as it is (numpy's fancy indexing gives a view of a new buffer, and
    np.array of it a second copy)."""
    if isinstance(take, slice):
        return np.array(arr[take])
    return np.take(arr, take, axis=0, out=np.empty((len(take),) + arr.shape[1:], arr.dtype))


__all__ = ["FORMAT", "VERSION", "ShardError", "node_ids", "ownership", "read_manifest", "read_rank", "read_rows",
           "write_shards"]
